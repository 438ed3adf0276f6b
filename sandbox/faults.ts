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
 *   unusable            answer HTTP 200 with a JSON body the product cannot act on: accounts detail
 *                       echoing an applicant's data (UNUSABLE_REPLY_MARKERS) but without RequestId
 */
import { SERVICE_CODES } from '../src/aggregator/failure-table.js';
import type { DataFaultKind } from './scenarios.js';
import type { Account } from './spec-shapes.js';

/** The statuses the service uses for TOO_MANY_REQUESTS, from the one table of codes. */
const RATE_LIMIT_STATUSES: readonly number[] = SERVICE_CODES.TOO_MANY_REQUESTS.httpStatus;

export const FAULT_HEADER = 'x-sandbox-fault';
const MAX_LATENCY_MS = 60_000;

export type FaultAction =
  | { readonly kind: 'reset' }
  | { readonly kind: 'status'; readonly status: number }
  | { readonly kind: 'rate-limit'; readonly status: number }
  | { readonly kind: 'malformed' }
  | { readonly kind: 'unusable' };

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
  for (const directive of text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)) {
    const [name = '', argument] = directive.split('=', 2).map((part) => part.trim());
    const number = argument === undefined ? undefined : Number(argument);
    switch (name) {
      case 'latency':
        if (number === undefined || !Number.isInteger(number) || number < 0 || number > MAX_LATENCY_MS)
          return `${FAULT_HEADER}: latency needs an integer 0..${MAX_LATENCY_MS}`;
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
      case 'unusable':
        action = { kind: 'unusable' };
        break;
      default:
        return `${FAULT_HEADER}: unknown directive "${name}" (latency=<ms>, status=<code>, reset, rate-limit[=<code>], malformed, unusable)`;
    }
  }
  return action ? { latencyMs, action } : { latencyMs };
}

/** The action a scenario's data fault stands for. */
export function scenarioFault(kind: DataFaultKind): FaultAction {
  switch (kind) {
    case 'status-503':
      return { kind: 'status', status: 503 };
    case 'reset':
      return { kind: 'reset' };
    case 'rate-limit':
      return { kind: 'rate-limit', status: 429 };
    case 'malformed':
      return { kind: 'malformed' };
    case 'unusable':
      return { kind: 'unusable' };
  }
}

/** The truncated body of a `malformed` answer: valid JSON cut in the middle. */
export const MALFORMED_BODY = '{"HttpStatusCode":200,"Accounts":[{"Id":"';

/**
 * What an `unusable` answer echoes of an applicant: values distinctive enough to be searched for
 * wherever the product may have copied the answer (history, logs), and found nowhere else.
 */
export const UNUSABLE_REPLY_MARKERS = {
  holderName: 'Unusable-Reply Holder Qz7Kw',
  email: 'unusable-reply.qz7kw@applicant.example',
  transactionDescription: 'UNUSABLE-REPLY-QZ7KW rent to landlord',
} as const;

const UNUSABLE_ACCOUNT: Account = {
  Id: '7f3c2a1e-5b6d-4e8f-9a0b-1c2d3e4f5a6b',
  TransitNumber: '00042',
  InstitutionNumber: '001',
  OverdraftLimit: 0,
  Title: 'Chequing',
  AccountNumber: '4242-0042',
  Balance: { Available: 1250.5, Current: 1250.5, Limit: null },
  Category: 'Operations',
  Type: 'Chequing',
  Currency: 'CAD',
  Holder: {
    Name: UNUSABLE_REPLY_MARKERS.holderName,
    Address: { CivicAddress: '42 Rue Marker', City: 'Trois-Rivieres', Province: 'QC', PostalCode: 'G9A 1Y4', POBox: null, Country: 'CA' },
    Email: UNUSABLE_REPLY_MARKERS.email,
    PhoneNumber: '514-555-0142',
  },
  Transactions: [
    {
      Id: '0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
      Date: '2026-11-01',
      Code: null,
      Description: UNUSABLE_REPLY_MARKERS.transactionDescription,
      Debit: 1400,
      Credit: null,
      Balance: 1250.5,
    },
    {
      Id: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
      Date: '2026-10-28',
      Code: null,
      Description: `${UNUSABLE_REPLY_MARKERS.transactionDescription} (deposit back)`,
      Debit: null,
      Credit: 200,
      Balance: 2650.5,
    },
  ],
};

/**
 * The body of an `unusable` answer: an accounts-detail answer (HTTP 200, an applicant's holder and
 * transactions) whose envelope breaks: no RequestId, so a client cannot tie it to its session and
 * must not act on it. About 1 KB, so the product's 4 KiB excerpt of it holds every marker.
 */
export const UNUSABLE_BODY = JSON.stringify({
  HttpStatusCode: 200,
  Accounts: [UNUSABLE_ACCOUNT],
  Login: {
    Id: '2d3e4f5a-6b7c-4d8e-9f0a-1b2c3d4e5f6a',
    Username: 'unusable_reply',
    IsScheduledRefresh: false,
    LastRefresh: '2026-11-01T08:00:00',
    Type: 'Personal',
  },
  Institution: 'SandboxBank',
});
