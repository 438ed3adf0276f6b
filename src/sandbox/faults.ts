/**
 * Fault injection for reliability tests, by request header or by scenario. A faulted request never
 * reaches the service state (except `latency`, which only delays it), so a client retrying after a
 * fault sees exactly what it would have seen without it.
 *
 * Header `x-sandbox-fault`, comma-separated directives:
 *   latency=<ms>        delay the answer (then answer normally unless another directive applies)
 *   status=<code>       answer this HTTP status (4xx/5xx) with an error body, no service code
 *   reset               destroy the socket without answering
 *   rate-limit[=<code>] answer 429 (or 403/401) TOO_MANY_REQUESTS with Retry-After: 1
 *   malformed           answer HTTP 200 with a truncated JSON body
 */
import { SERVICE_CODES } from '../aggregator/failure-table.js';
import type { DataFaultKind } from './scenarios.js';

/** The statuses the service uses for TOO_MANY_REQUESTS, from the one table of codes. */
const RATE_LIMIT_STATUSES: readonly number[] = SERVICE_CODES.TOO_MANY_REQUESTS.httpStatus;

export const FAULT_HEADER = 'x-sandbox-fault';
const MAX_LATENCY_MS = 60_000;

export type FaultAction =
  | { readonly kind: 'reset' }
  | { readonly kind: 'status'; readonly status: number }
  | { readonly kind: 'rate-limit'; readonly status: number }
  | { readonly kind: 'malformed' };

export interface FaultPlan {
  readonly latencyMs: number;
  readonly action?: FaultAction;
}

/** Parses the header; an unparseable directive is an error message (answered 400 INVALID_REQUEST). */
export function parseFaultHeader(value: string | string[] | undefined): FaultPlan | string | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  let latencyMs = 0;
  let action: FaultAction | undefined;
  for (const directive of text.split(',').map((part) => part.trim()).filter(Boolean)) {
    const [name = '', argument] = directive.split('=', 2).map((part) => part.trim());
    const number = argument === undefined ? undefined : Number(argument);
    switch (name) {
      case 'latency':
        if (number === undefined || !Number.isInteger(number) || number < 0 || number > MAX_LATENCY_MS) return `${FAULT_HEADER}: latency needs an integer 0..${MAX_LATENCY_MS}`;
        latencyMs = number;
        break;
      case 'status':
        if (number === undefined || !Number.isInteger(number) || number < 400 || number > 599) return `${FAULT_HEADER}: status needs a code 400..599`;
        action = { kind: 'status', status: number };
        break;
      case 'reset':
        action = { kind: 'reset' };
        break;
      case 'rate-limit':
        if (number !== undefined && !RATE_LIMIT_STATUSES.includes(number)) return `${FAULT_HEADER}: rate-limit takes ${RATE_LIMIT_STATUSES.join(', ')}`;
        action = { kind: 'rate-limit', status: number ?? 429 };
        break;
      case 'malformed':
        action = { kind: 'malformed' };
        break;
      default:
        return `${FAULT_HEADER}: unknown directive "${name}" (latency=<ms>, status=<code>, reset, rate-limit[=<code>], malformed)`;
    }
  }
  return action ? { latencyMs, action } : { latencyMs };
}

/** The action a scenario's data fault stands for. */
export function scenarioFault(kind: DataFaultKind): FaultAction {
  switch (kind) {
    case 'status-503': return { kind: 'status', status: 503 };
    case 'reset': return { kind: 'reset' };
    case 'rate-limit': return { kind: 'rate-limit', status: 429 };
    case 'malformed': return { kind: 'malformed' };
  }
}

/** The truncated body of a `malformed` answer: valid JSON cut in the middle. */
export const MALFORMED_BODY = '{"HttpStatusCode":200,"Accounts":[{"Id":"';
