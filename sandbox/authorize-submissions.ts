/**
 * Counts of Authorize submissions per tenant, so tests can assert that no MFA answer reached the
 * sandbox twice (a retried answer can lock an end user out at a real institution). An answer is
 * remembered only as a hash of (RequestId, SecurityResponses canonicalised): never the answer itself.
 */
import { createHash } from 'node:crypto';
import type { SecurityResponses } from '../src/aggregator/schemas.js';

export interface SubmissionCounts {
  /** Authorize calls carrying SecurityResponses. */
  answers: number;
  /** Authorize calls carrying credentials: a live first call or a live refresh. */
  credentials: number;
  /** Per hash of (RequestId, canonical SecurityResponses): how often it was submitted. */
  readonly byAnswer: Map<string, { readonly requestId: string; count: number }>;
}

/** The shape of GET /sandbox/authorize-submissions. */
export interface AuthorizeSubmissions {
  readonly answers: number;
  readonly credentials: number;
  /** The same (customerId, RequestId, SecurityResponses) submitted more than once. */
  readonly duplicates: readonly { readonly customerId: string; readonly requestId: string; readonly count: number }[];
}

export function emptySubmissionCounts(): SubmissionCounts {
  return { answers: 0, credentials: 0, byAnswer: new Map() };
}

/** Records one answer submission; keys sorted so key order alone never hides a duplicate, values as given. */
export function recordAnswer(counts: SubmissionCounts, requestId: string, responses: SecurityResponses): void {
  counts.answers += 1;
  const canonical = JSON.stringify(
    Object.keys(responses)
      .sort()
      .map((key) => [key, responses[key]]),
  );
  const hash = createHash('sha256')
    .update(JSON.stringify([requestId, canonical]))
    .digest('base64url');
  const entry = counts.byAnswer.get(hash);
  if (entry) entry.count += 1;
  else counts.byAnswer.set(hash, { requestId, count: 1 });
}

/** What a summary reads of the sandbox's state (state.ts's SandboxState): each tenant's counts. */
export interface SubmittingTenants {
  readonly tenants: ReadonlyMap<string, { readonly id: string; readonly submissions: SubmissionCounts }>;
}

/** Totals and duplicates over every tenant, or over one (an unknown tenant has none). */
export function summarizeSubmissions(state: SubmittingTenants, customerId?: string): AuthorizeSubmissions {
  const tenants = customerId === undefined ? [...state.tenants.values()] : [state.tenants.get(customerId)].filter((tenant) => tenant !== undefined);
  let answers = 0;
  let credentials = 0;
  const duplicates: { customerId: string; requestId: string; count: number }[] = [];
  for (const tenant of tenants) {
    answers += tenant.submissions.answers;
    credentials += tenant.submissions.credentials;
    for (const { requestId, count } of tenant.submissions.byAnswer.values()) {
      if (count > 1) duplicates.push({ customerId: tenant.id, requestId, count });
    }
  }
  return { answers, credentials, duplicates };
}
