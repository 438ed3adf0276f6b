/**
 * The sandbox-only admin API (outside /v3, never part of the real service): the scenario listing
 * with every answer, fast creation of saved logins for tests and benchmarks, tenant reset, and the
 * per-tenant request limit with its per-second counts.
 */
import { z } from 'zod';
import { ATTRIBUTE_DEFINITIONS, ATTRIBUTE_PACKAGES } from './attributes.js';
import { summarizeSubmissions } from './authorize-submissions.js';
import { CUSTOMER_ID_PATTERN, SANDBOX_CUSTOMER_ID } from './customer.js';
import { FAULT_HEADER } from './faults.js';
import { MAX_BODY_BYTES, SandboxError, parseWith, type Reply } from './http.js';
import type { SandboxOptions } from './options.js';
import {
  CORRECT_IMAGE_INDEX,
  SANDBOX_PASSWORD,
  SCENARIOS,
  SCENARIO_PATTERNS,
  ScenarioParameterError,
  describeScenario,
  resolveScenario,
  type Scenario,
} from './scenarios.js';
import type { SandboxState } from './state.js';
import type { DataCache } from './data-cache.js';
import { VARIATIONS, VARIATION_HEADER } from './variations.js';
import { MAX_RATE_BURST, MAX_RATE_LIMIT_PER_SECOND, MAX_RETRY_AFTER_SECONDS, RATE_HISTORY_SECONDS, type RateLimiter } from './rate-limits.js';

const CreateLoginRequest = z.strictObject({
  username: z.string().min(1),
  pendingPolls: z.number().int().min(0).max(1_000_000).optional(),
  pendingMs: z.number().int().min(0).max(86_400_000).optional(),
});

const PerSecond = z.number().int().min(1).max(MAX_RATE_LIMIT_PER_SECOND);
/** A value sets, null clears, an absent member leaves as is. */
const RateLimitsRequest = z.strictObject({
  mode: z.enum(['window', 'bucket']).optional(),
  burst: z.number().int().min(1).max(MAX_RATE_BURST).nullable().optional(),
  defaultPerSecond: PerSecond.nullable().optional(),
  tenants: z
    .record(z.string().regex(CUSTOMER_ID_PATTERN, { message: 'must be a customer id (1 to 128 of A-Z a-z 0-9 . _ -)' }), PerSecond.nullable())
    .optional(),
  retryAfterSeconds: z.number().int().min(1).max(MAX_RETRY_AFTER_SECONDS).nullable().optional(),
});

/** Everything a test or demo needs to drive every flow (served as JSON, built once). */
function scenarioListing(options: SandboxOptions) {
  return {
    asOf: options.asOf,
    defaultCustomerId: SANDBOX_CUSTOMER_ID,
    password: SANDBOX_PASSWORD,
    authHeader: options.authSecret === undefined ? null : options.authHeader,
    limits: {
      sessionIdleMs: options.sessionIdleMs,
      processingLimitMs: options.processingLimitMs,
      loadingMs: options.loadingMs,
      pendingPollMs: options.pendingPollMs,
      slowReplyMs: options.slowReplyMs,
      requestBodyBytes: MAX_BODY_BYTES,
    },
    notes: [
      'The username selects the scenario; Institution and Password must match the entry.',
      'QuestionAndAnswer answers are compared trimmed and case-insensitively; prompt keys exactly.',
      'Reset-question challenges (QuestionAndAnswer with Iterables) are answered [chosenQuestion, answer].',
      'A challenge type the spec does not name (unknown_challenge: SmsCode; unknown_challenge_mixed: PlainQuestion) is answered by its prompt with free text, compared as QuestionAndAnswer answers are.',
      'Slow replies (slow_answer, slow_authorize): the Authorize is processed, and answered, only after limits.slowReplyMs, whether or not the caller still waits; a caller that timed out never hears the outcome, but it happened.',
      'A wrong answer (401 INVALID_SECURITY_RESPONSE), a missing prompt (401 SECURITYRESPONSES_INCOMPLETE) or an unasked key (401 UNKNOWN_CHALLENGE_KEY) leaves the challenge pending.',
      'Transactions are listed newest first; in date order Balance_i = Balance_{i-1} + Credit - Debit.',
      'Attributes need a RequestId from a cached Authorize and a GetAccountsDetail on it; they answer 202 while accounts detail for the card is still processing in any session (not superseded: see the next notes).',
      'A live refresh of a saved login (LoginId, MostRecentCached false, Save true) asks its challenges again only for two-step and trusted-device logins (endUserVerification; unattendedRefresh false): they cannot be refreshed automatically. Other saved logins refresh without challenges.',
      'DeleteCard answers 400 CARD_IN_USE while a data operation of the card is still processing in any session: pending, not yet complete on its own clock, and not superseded. An operation is superseded once a later operation of the same kind on the login, in another session, was delivered and nobody polled the earlier one since (its session abandoned it). 401 INVALID_LOGIN once the login is deleted.',
      'A data operation runs on its own clock: pending_ms_<n> for n ms; pendingPolls n until n polls were made or n × limits.pendingPollMs passed since it started, whichever comes first. An operation nobody polls still finishes, so it never keeps the card busy (attributes 202, DeleteCard CARD_IN_USE) longer than that, and no longer at all once superseded.',
    ],
    imageSelection: { images: 16, correctIndex: CORRECT_IMAGE_INDEX },
    scenarios: SCENARIOS.map(describeScenario),
    patterns: SCENARIO_PATTERNS,
    variations: {
      header: VARIATION_HEADER,
      usage: `${VARIATION_HEADER}: <name>[,<name>...] on any /v3 request varies its 200/202/203 answer (never an error body), whatever the scenario, after the scenario's own variations; slash-dates and iso-datetimes together answer 400 INVALID_REQUEST. Scenarios variant_* apply them to every answer of their sessions. Only the representation changes: ids, amounts, balances and which records exist stay as generated.`,
      names: VARIATIONS,
    },
    faults: {
      header: FAULT_HEADER,
      directives: {
        'latency=<ms>': 'delay the answer',
        'status=<code>': 'answer this status with an error body (request not processed)',
        reset: 'destroy the socket (request not processed)',
        'rate-limit[=<401|403|429>]': 'answer TOO_MANY_REQUESTS, default 429, with Retry-After: 1 (request not processed)',
        malformed: 'answer 200 with a truncated JSON body (request not processed)',
        unusable: "answer 200 with an accounts-detail body echoing an applicant's data but without RequestId (request not processed)",
      },
    },
    rateLimit: {
      window:
        'mode window (the default): fixed whole seconds of the sandbox clock, second s = [s*1000, (s+1)*1000) ms since the epoch, at most the limit accepted in each; the counts use the same seconds in either mode',
      bucket:
        "mode bucket: a token bucket per tenant filling at the limit a second up to burst (null: one second's worth, the limit), full at the start and after every change; a request takes one token or is refused",
      initialDefaultPerSecond: options.rateLimitPerSecond ?? null,
      refusal:
        '429 { HttpStatusCode: 429, Message, ServiceCode: TOO_MANY_REQUESTS } with Retry-After: whole seconds until the window has room (1) or the bucket a token, or retryAfterSeconds when longer; the request is not processed (no state changes, safe to resend)',
      counted: 'every /v3 request of the tenant past auth and the customer-id check; refused requests do not use up room',
    },
    attributes: {
      definitions: Object.fromEntries(Object.entries(ATTRIBUTE_DEFINITIONS).map(([name, definition]) => [name, definition.doc])),
      packages: ATTRIBUTE_PACKAGES,
    },
    admin: {
      'GET /sandbox/scenarios': 'this listing',
      'POST /sandbox/{customerId}/logins': 'body { username, pendingPolls?, pendingMs? }: create (idempotently) a saved login, answer { LoginId }',
      'DELETE /sandbox/{customerId}':
        'forget the tenant: its logins, sessions, attempt counters, Authorize submission counts and request counts (not its request limit)',
      'GET /sandbox/authorize-submissions[?customerId=X]':
        'Authorize calls seen: { answers (with SecurityResponses), credentials (live first call or live refresh), duplicates: [{ customerId, requestId, count }] }; a duplicate is the same RequestId and SecurityResponses (keys sorted) sent more than once; answers are kept only as hashes',
      'GET /sandbox/rate-limits':
        "the request limits in force: { mode (window or bucket), burst (null: one second's worth), defaultPerSecond (null: unlimited), tenants: { customerId: perSecond }, retryAfterSeconds (null: until the window has room or the bucket a token), windowMs }",
      'POST /sandbox/rate-limits': `body { mode?: window | bucket, burst?, defaultPerSecond?, tenants?: { customerId: perSecond }, retryAfterSeconds? }: integers (perSecond 1..${MAX_RATE_LIMIT_PER_SECOND}, burst 1..${MAX_RATE_BURST}, retryAfterSeconds 1..${MAX_RETRY_AFTER_SECONDS}); a value sets, null clears, an absent member is left as is; takes effect with the next request (every bucket full again); answers the limits in force`,
      'GET /sandbox/request-rates[?customerId=X][&seconds=N]': `per tenant, requests per whole second over the last N seconds (1..${RATE_HISTORY_SECONDS}, default ${RATE_HISTORY_SECONDS}, the current one included): { windowMs, now, currentSecond, seconds, tenants: { customerId: { limitPerSecond, accepted, refused, maxAcceptedPerSecond, maxRefusedPerSecond, maxRequestsPerSecond, perSecond: [{ second, accepted, refused }] } } }; without customerId, the tenants with requests in those seconds`,
      'GET /sandbox/health': 'liveness',
    },
  };
}

export class Admin {
  private listingJson: string | undefined;

  constructor(
    private readonly state: SandboxState,
    private readonly cache: DataCache,
    private readonly options: SandboxOptions,
    private readonly rateLimiter: RateLimiter,
  ) {}

  scenarios(): Reply {
    this.listingJson ??= JSON.stringify(scenarioListing(this.options));
    return { status: 200, raw: this.listingJson };
  }

  createLogin(customerId: string, body: unknown): Reply {
    const request = parseWith(CreateLoginRequest, body, 'Create login');
    let scenario: Scenario | undefined;
    try {
      scenario = resolveScenario(request.username);
    } catch (error) {
      if (error instanceof ScenarioParameterError) throw new SandboxError('INVALID_REQUEST', `Create login: username: ${error.message}`);
      throw error;
    }
    if (!scenario) throw new SandboxError('INVALID_REQUEST', `Create login: username: unknown scenario "${request.username}"`);
    const tenant = this.state.tenant(customerId);
    const login = this.state.loginFor(tenant, scenario, this.options.now());
    login.saved = true;
    // Each call states the login's pending behaviour anew: without an override, the scenario's.
    login.pending =
      request.pendingPolls !== undefined || request.pendingMs !== undefined
        ? { pendingPolls: request.pendingPolls ?? 0, pendingMs: request.pendingMs }
        : undefined;
    return { status: 200, body: { LoginId: login.id, Username: scenario.username, Institution: scenario.institution } };
  }

  authorizeSubmissions(customerId: string | undefined): Reply {
    return { status: 200, body: summarizeSubmissions(this.state, customerId) };
  }

  resetTenant(customerId: string): Reply {
    const tenant = this.state.tenants.get(customerId);
    if (tenant) for (const loginId of tenant.logins.keys()) this.cache.drop(loginId);
    this.state.tenants.delete(customerId);
    this.rateLimiter.forgetCounts(customerId);
    return { status: 200, body: { reset: customerId } };
  }

  rateLimits(): Reply {
    return { status: 200, body: this.rateLimiter.settings() };
  }

  updateRateLimits(body: unknown): Reply {
    return { status: 200, body: this.rateLimiter.update(parseWith(RateLimitsRequest, body, 'Rate limits')) };
  }

  /** `customerId` and `seconds` as the query gave them (validated here). */
  requestRates(customerId: string | undefined, seconds: string | undefined): Reply {
    if (customerId !== undefined && !CUSTOMER_ID_PATTERN.test(customerId))
      throw new SandboxError('INVALID_REQUEST', `Request rates: customerId: invalid customer id "${customerId}"`);
    let span: number | undefined;
    if (seconds !== undefined) {
      span = /^\d+$/.test(seconds) ? Number(seconds) : Number.NaN;
      if (!(span >= 1 && span <= RATE_HISTORY_SECONDS))
        throw new SandboxError('INVALID_REQUEST', `Request rates: seconds: must be an integer 1..${RATE_HISTORY_SECONDS}, got "${seconds}"`);
    }
    return { status: 200, body: this.rateLimiter.rates(customerId, span) };
  }
}
