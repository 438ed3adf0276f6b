/**
 * The verdicts of a chaos run:
 * - each connection's end against its flow's expectation (completed as expected, unexpected, stuck);
 * - each completed connection's data against what the sandbox itself serves for that login, fetched
 *   directly from the sandbox (not through the proxy or a worker) with the project's own client;
 * - duplicate answer submissions, from the sandbox's counter when it has one, else from the proxy's.
 */
import { isDeepStrictEqual } from 'node:util';
import { setTimeout as delay } from 'node:timers/promises';
import { AggregatorError } from '../../src/aggregator/errors.js';
import { createAggregatorClient } from '../../src/aggregator/client.js';
import type { DataResult } from '../../src/aggregator/exchange.js';
import type { AttributesRequest } from '../../src/aggregator/schemas.js';
import type { Sandbox } from '../../sandbox/server.js';
import type { DriveRecord } from './driver.js';
import type { ProxyStats } from './proxy.js';

export type Verdict = 'expected' | 'unexpected' | 'stuck' | 'unknown';

export interface Judgement {
  readonly verdict: Verdict;
  /** What happened, when it is not what was expected. */
  readonly detail?: string;
}

/** The connection's end against its flow's expectation. */
export function judge(record: DriveRecord): Judgement {
  const { expect } = record.plan.flow;
  const end = record.end;
  switch (end.kind) {
    case 'completed': {
      if (expect.status !== 'Completed') return { verdict: 'unexpected', detail: `completed; expected Failed ${expect.failureType}` };
      const missing = expect.products.filter((product) => end.result[product] === undefined);
      return missing.length === 0 ? { verdict: 'expected' } : { verdict: 'unexpected', detail: `completed without ${missing.join(', ')}` };
    }
    case 'failed': {
      const got = `Failed ${end.type}${end.serviceCode ? ` (${end.serviceCode})` : ''}: ${end.message}`;
      if (expect.status === 'Failed' && expect.failureType === end.type) return { verdict: 'expected' };
      return { verdict: 'unexpected', detail: `${got}; expected ${expect.status === 'Completed' ? 'Completed' : `Failed ${expect.failureType}`}` };
    }
    case 'running': {
      const state = end.state;
      const where = state
        ? `${state.status}${state.pending ? `, ${state.pending.operation} pending after ${state.pending.pollCount} polls` : ''}${state.challengeSet ? `, challenge set ${state.challengeSet.id}` : ''}${state.lastRejection ? `, last rejection: ${state.lastRejection.message}` : ''}`
        : `state unreadable: ${end.stateError ?? 'unknown'}`;
      return { verdict: 'stuck', detail: `still running at the deadline (${where})` };
    }
    case 'not-found':
      return { verdict: 'unexpected', detail: `lost: Temporal has no such workflow (${end.message})` };
    case 'unknown':
      return { verdict: 'unknown', detail: end.message };
  }
}

// ---- data ---------------------------------------------------------------------------------------

/** Where two JSON values first differ ("$.Accounts[2].Balance: 10.5 vs 11"), or undefined. */
export function firstDifference(actual: unknown, expected: unknown, path = '$'): string | undefined {
  if (isDeepStrictEqual(actual, expected)) return undefined;
  if (Array.isArray(actual) && Array.isArray(expected)) {
    if (actual.length !== expected.length) return `${path}: ${actual.length} items vs ${expected.length}`;
    for (let i = 0; i < actual.length; i++) {
      const found = firstDifference(actual[i], expected[i], `${path}[${i}]`);
      if (found) return found;
    }
  } else if (
    typeof actual === 'object' &&
    actual !== null &&
    typeof expected === 'object' &&
    expected !== null &&
    !Array.isArray(actual) &&
    !Array.isArray(expected)
  ) {
    const a = actual as Record<string, unknown>;
    const b = expected as Record<string, unknown>;
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(key in a)) return `${path}.${key}: missing (sandbox has ${short(b[key])})`;
      if (!(key in b)) return `${path}.${key}: not served by the sandbox (got ${short(a[key])})`;
      const found = firstDifference(a[key], b[key], `${path}.${key}`);
      if (found) return found;
    }
  }
  return `${path}: ${short(actual)} vs sandbox ${short(expected)}`;
}

function short(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** Both sides as they would travel as JSON (the result did, through Temporal). */
function json(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/**
 * Repeats a data request until it is ready: pending answers are polled, and the sandbox's scenario
 * faults (loading, 503, resets, malformed bodies, rate limits) are waited out, as the workflow does.
 */
async function untilReady<T>(what: string, first: () => Promise<DataResult<T>>, poll: () => Promise<DataResult<T>> = first): Promise<T> {
  let call = first;
  for (let attempt = 0; attempt < 300; attempt++) {
    try {
      const result = await call();
      if (result.kind === 'ready') return result.data;
      call = poll;
      await delay(10);
    } catch (error) {
      if (error instanceof AggregatorError && (error.retryable || error.remedy === 'poll')) {
        await delay(error.serviceCode === 'TOO_MANY_REQUESTS' ? 1_000 : 50);
        continue;
      }
      throw error;
    }
  }
  throw new Error(`${what}: still not ready from the sandbox after 300 attempts`);
}

/**
 * The completed connection's data against the sandbox's own, for the same login: a cached session
 * opened directly on the sandbox, the same requests, the data members compared (RequestId and the
 * login's refresh time belong to the session, not to the data). Returns the differences.
 */
export async function checkData(sandbox: Sandbox, record: DriveRecord): Promise<string[]> {
  if (record.end.kind !== 'completed') return [];
  const result = record.end.result;
  const { flow, customerId } = record.plan;
  const problems: string[] = [];
  const expectedLoginId = sandbox.state.loginIdFor(customerId, flow.username);
  if (result.loginId !== expectedLoginId) problems.push(`loginId ${result.loginId} is not the sandbox's login of ${flow.username} (${expectedLoginId})`);
  if (result.customerId !== customerId) problems.push(`customerId ${result.customerId}, expected ${customerId}`);

  const client = createAggregatorClient({ baseUrl: sandbox.url, customerId, timeoutMs: 10_000 });
  const authorized = await untilReady('cached Authorize', async () => {
    const answer = await client.authorizeCached(expectedLoginId);
    if (answer.kind === 'challenge') throw new Error('the sandbox answered a cached Authorize with a challenge');
    return answer;
  });
  const requestId = authorized.RequestId;
  const compare = (what: string, actual: unknown, expected: unknown) => {
    const difference = firstDifference(json(actual), json(expected), what);
    if (difference) problems.push(difference);
  };

  const { products } = flow;
  if (products.accountsDetail !== undefined || products.attributes !== undefined) {
    const options = products.accountsDetail ?? {};
    const detail = await untilReady(
      'accounts detail',
      () => client.getAccountsDetail(requestId, options),
      () => client.getAccountsDetailAsync(requestId),
    );
    if (products.accountsDetail !== undefined) {
      if (!result.accountsDetail) problems.push('accountsDetail: missing from the result');
      else {
        compare('accountsDetail.Accounts', result.accountsDetail.Accounts, detail.Accounts);
        compare('accountsDetail.Institution', result.accountsDetail.Institution, detail.Institution);
        compare('accountsDetail.Login.Id', result.accountsDetail.Login.Id, detail.Login.Id);
      }
    }
  }
  if (products.investments) {
    const investments = await untilReady('investments', () => client.getInvestments(expectedLoginId, requestId));
    if (!result.investments) problems.push('investments: missing from the result');
    else {
      for (const member of ['Accounts', 'Securities', 'Value', 'Cash', 'Institution'] as const) {
        compare(`investments.${member}`, result.investments[member], investments[member]);
      }
    }
  }
  if (products.attributes !== undefined) {
    const product = products.attributes;
    const attributes = await untilReady('attributes', () =>
      'package' in product
        ? client.getPackageAttributes(expectedLoginId, requestId, product.package)
        : client.getCustomAttributes(expectedLoginId, requestId, product.custom as AttributesRequest),
    );
    if (!result.attributes) problems.push('attributes: missing from the result');
    else compare('attributes.Groups', result.attributes.Groups, attributes.Groups);
  }
  return problems;
}

// ---- duplicate answers --------------------------------------------------------------------------

export interface DuplicateEntry {
  readonly customerId: string;
  readonly requestId: string;
  readonly count: number;
}

export interface SubmissionCount {
  readonly answers: number;
  readonly credentials: number;
  readonly duplicates: readonly DuplicateEntry[];
  /** Submissions beyond the first of each: what the summary line counts. */
  readonly extra: number;
}

export interface DuplicateReport {
  /** The figure of the summary line. */
  readonly count: number;
  readonly source: 'sandbox' | 'proxy';
  readonly sandbox?: SubmissionCount | undefined;
  readonly proxy: SubmissionCount;
  /** Why the sandbox's counter was not used, when it was not. */
  readonly sandboxNote?: string | undefined;
  /** Set when the two counters disagree. */
  readonly disagreement?: string | undefined;
}

function extraOf(duplicates: readonly DuplicateEntry[]): number {
  return duplicates.reduce((sum, entry) => sum + Math.max(0, entry.count - 1), 0);
}

function parseSandboxCounter(body: unknown): SubmissionCount | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { answers, credentials, duplicates } = body as Record<string, unknown>;
  if (typeof answers !== 'number' || !Array.isArray(duplicates)) return undefined;
  const entries: DuplicateEntry[] = [];
  for (const entry of duplicates as unknown[]) {
    const { customerId, requestId, count } = (entry ?? {}) as Record<string, unknown>;
    if (typeof count !== 'number') return undefined;
    entries.push({ customerId: String(customerId), requestId: String(requestId), count });
  }
  return { answers, credentials: typeof credentials === 'number' ? credentials : Number.NaN, duplicates: entries, extra: extraOf(entries) };
}

/**
 * The sandbox's authoritative counter (`GET /sandbox/authorize-submissions`) when it exists (the
 * proxy's when it answers 404), and both when they disagree.
 */
export async function countDuplicates(sandboxUrl: string, proxyStats: ProxyStats): Promise<DuplicateReport> {
  const proxy: SubmissionCount = {
    answers: proxyStats.answers,
    credentials: proxyStats.credentials,
    duplicates: proxyStats.duplicates,
    extra: extraOf(proxyStats.duplicates),
  };
  let sandbox: SubmissionCount | undefined;
  let sandboxNote: string | undefined;
  try {
    const response = await fetch(`${sandboxUrl}/sandbox/authorize-submissions`);
    if (response.status === 404) sandboxNote = 'the sandbox has no /sandbox/authorize-submissions (404): the proxy counted';
    else if (!response.ok) sandboxNote = `the sandbox's counter answered HTTP ${response.status}: the proxy counted`;
    else {
      sandbox = parseSandboxCounter(await response.json());
      if (!sandbox) sandboxNote = "the sandbox's counter answered an unexpected shape: the proxy counted";
    }
  } catch (error) {
    sandboxNote = `the sandbox's counter could not be read (${error instanceof Error ? error.message : String(error)}): the proxy counted`;
  }
  if (!sandbox) return { count: proxy.extra, source: 'proxy', proxy, sandboxNote };
  const differences: string[] = [];
  if (sandbox.extra !== proxy.extra) differences.push(`duplicate answers: sandbox ${sandbox.extra}, proxy ${proxy.extra}`);
  if (sandbox.answers !== proxy.answers) differences.push(`answer submissions: sandbox ${sandbox.answers}, proxy ${proxy.answers}`);
  if (Number.isFinite(sandbox.credentials) && sandbox.credentials !== proxy.credentials)
    differences.push(`credential submissions: sandbox ${sandbox.credentials}, proxy ${proxy.credentials}`);
  return { count: sandbox.extra, source: 'sandbox', sandbox, proxy, disagreement: differences.length > 0 ? differences.join('; ') : undefined };
}
