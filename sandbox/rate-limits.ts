/**
 * The per-tenant request limit of the sandbox and its per-tenant request counts, for tests and
 * benchmarks that need the service to push back (the spec and FACTS.md give no rate limit values;
 * FACTS.md names the code, TOO_MANY_REQUESTS, and that it is worth retrying with backoff).
 *
 * Two shapes of limit, as services count (`mode`):
 * - `window` (the default): fixed whole seconds. Second `s` is the window [s × 1000, (s + 1) × 1000)
 *   ms of the sandbox clock (`options.now`), i.e. whole seconds since the epoch. A tenant with a
 *   limit of n gets at most n requests accepted in each such second; the next ones in that second
 *   are refused (they do not use up room). So, with the limit unchanged during a second, that
 *   second's `accepted` never exceeds it. A refusal's Retry-After is the rest of the current
 *   second, rounded up to whole seconds (so always 1).
 * - `bucket`: a token bucket per tenant: it fills at n a second up to `burst` (null: one second's
 *   worth, n) and starts full; a request takes one token or, with less than one there, is refused
 *   (and takes none). In any span of t seconds a tenant gets at most burst + n × t accepted. A
 *   refusal's Retry-After is the time until the next token, rounded up to whole seconds. A change of
 *   the settings fills every bucket again.
 * Either way the configured `retryAfterSeconds` is sent instead when longer, and the counts are per
 * whole second of the same clock (both shapes count accepted and refused requests alike).
 *
 * What counts: every /v3 request of the tenant that passed calling-application auth and the
 * customer-id check, whatever its answer afterwards (an injected fault or 404 included). The limit
 * applies before the request body is read or any state is looked at, so a refused request changes
 * nothing (no session, no challenge answer, no pending poll, no Authorize submission count).
 */

/** How many whole seconds of counts are kept per tenant (the current one included). */
export const RATE_HISTORY_SECONDS = 600;
/** Largest limit accepted (requests per second per tenant). */
export const MAX_RATE_LIMIT_PER_SECOND = 1_000_000;
/** Largest Retry-After the sandbox may be told to send. */
export const MAX_RETRY_AFTER_SECONDS = 3_600;
export const RATE_WINDOW_MS = 1_000;
/** Largest bucket accepted (requests). */
export const MAX_RATE_BURST = 1_000_000;

/** How the sandbox counts a tenant's requests against its limit. */
export type RateLimitMode = 'window' | 'bucket';

/** Tokens short of one that still count as one (float noise of the refill, never a real request). */
const TOKEN_EPSILON = 1e-9;

interface Bucket {
  tokens: number;
  at: number;
}

interface SecondCount {
  readonly second: number;
  accepted: number;
  refused: number;
}

export type Admission = { readonly admitted: true } | { readonly admitted: false; readonly limitPerSecond: number; readonly retryAfterSeconds: number };

/** What GET and POST /sandbox/rate-limits answer. */
export interface RateLimitSettings {
  /** window: at most the limit in each whole second; bucket: a token bucket of the limit a second holding `burst`. */
  readonly mode: RateLimitMode;
  /** Bucket mode: the bucket's size for every tenant; null: one second's worth of each tenant's limit. */
  readonly burst: number | null;
  /** The limit of every tenant without a limit of its own; null: unlimited. */
  readonly defaultPerSecond: number | null;
  /** Per-tenant limits, which replace the default for that tenant. */
  readonly tenants: Readonly<Record<string, number>>;
  /** The Retry-After (s) sent when longer than the time until the window has room; null: that time only. */
  readonly retryAfterSeconds: number | null;
  readonly windowMs: number;
}

/** A change of the settings: a value sets, null clears, an absent member leaves as is. */
export interface RateLimitUpdate {
  readonly mode?: RateLimitMode | undefined;
  readonly burst?: number | null | undefined;
  readonly defaultPerSecond?: number | null | undefined;
  readonly tenants?: Readonly<Record<string, number | null>> | undefined;
  readonly retryAfterSeconds?: number | null | undefined;
}

/** One tenant in GET /sandbox/request-rates. */
export interface TenantRequestRates {
  /** The limit in force now (its own, else the default); null: unlimited. */
  readonly limitPerSecond: number | null;
  /** Totals over the seconds reported. */
  readonly accepted: number;
  readonly refused: number;
  /** The largest count of one whole second over the seconds reported. */
  readonly maxAcceptedPerSecond: number;
  readonly maxRefusedPerSecond: number;
  readonly maxRequestsPerSecond: number;
  /** Seconds (since the epoch, sandbox clock) with at least one request, oldest first; the last may be the current, unfinished one. */
  readonly perSecond: readonly { readonly second: number; readonly accepted: number; readonly refused: number }[];
}

/** What GET /sandbox/request-rates answers. */
export interface RequestRates {
  readonly windowMs: number;
  /** The sandbox clock (ms) when read, and its whole second. */
  readonly now: number;
  readonly currentSecond: number;
  /** The seconds reported: currentSecond - seconds + 1 .. currentSecond. */
  readonly seconds: number;
  readonly tenants: Readonly<Record<string, TenantRequestRates>>;
}

export class RateLimiter {
  private defaultPerSecond: number | undefined;
  private retryAfterSeconds: number | undefined;
  private mode: RateLimitMode = 'window';
  private burst: number | undefined;
  /** Bucket mode: per tenant, the tokens left at a time (absent: a full bucket). */
  private readonly buckets = new Map<string, Bucket>();
  private readonly limits = new Map<string, number>();
  /** Per tenant, the seconds with requests, oldest first, none older than RATE_HISTORY_SECONDS. */
  private readonly history = new Map<string, SecondCount[]>();

  constructor(
    private readonly now: () => number,
    defaultPerSecond?: number,
  ) {
    this.defaultPerSecond = defaultPerSecond;
  }

  limitOf(customerId: string): number | undefined {
    return this.limits.get(customerId) ?? this.defaultPerSecond;
  }

  /** Counts one request of the tenant and says whether it may go on. */
  admit(customerId: string): Admission {
    const now = this.now();
    const second = Math.floor(now / RATE_WINDOW_MS);
    const count = this.countOf(customerId, second);
    const limit = this.limitOf(customerId);
    if (limit === undefined) {
      count.accepted += 1;
      return { admitted: true };
    }
    const untilRoomMs = this.mode === 'bucket' ? this.takeToken(customerId, limit, now) : count.accepted < limit ? 0 : (second + 1) * RATE_WINDOW_MS - now;
    if (untilRoomMs === 0) {
      count.accepted += 1;
      return { admitted: true };
    }
    count.refused += 1;
    const untilRoom = Math.max(1, Math.ceil(untilRoomMs / 1_000));
    return { admitted: false, limitPerSecond: limit, retryAfterSeconds: Math.max(untilRoom, this.retryAfterSeconds ?? 0) };
  }

  /** Bucket mode: takes one token of the tenant's bucket and answers 0, or answers the ms until it holds one. */
  private takeToken(customerId: string, limit: number, now: number): number {
    const size = this.burst ?? limit;
    const bucket = this.buckets.get(customerId) ?? { tokens: size, at: now };
    // A clock that went back refills nothing.
    bucket.tokens = Math.min(size, bucket.tokens + (Math.max(0, now - bucket.at) * limit) / 1_000);
    bucket.at = now;
    this.buckets.set(customerId, bucket);
    if (bucket.tokens >= 1 - TOKEN_EPSILON) {
      bucket.tokens = Math.max(0, bucket.tokens - 1);
      return 0;
    }
    return Math.max(1, ((1 - bucket.tokens) * 1_000) / limit);
  }

  settings(): RateLimitSettings {
    return {
      mode: this.mode,
      burst: this.burst ?? null,
      defaultPerSecond: this.defaultPerSecond ?? null,
      tenants: Object.fromEntries([...this.limits].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      retryAfterSeconds: this.retryAfterSeconds ?? null,
      windowMs: RATE_WINDOW_MS,
    };
  }

  /**
   * Applies a change at once: the next request of a tenant is judged by the new limit (in window
   * mode against what its current second already accepted; in bucket mode every bucket starts full).
   */
  update(change: RateLimitUpdate): RateLimitSettings {
    if (change.mode !== undefined) this.mode = change.mode;
    if (change.burst !== undefined) this.burst = change.burst ?? undefined;
    this.buckets.clear();
    if (change.defaultPerSecond !== undefined) this.defaultPerSecond = change.defaultPerSecond ?? undefined;
    if (change.retryAfterSeconds !== undefined) this.retryAfterSeconds = change.retryAfterSeconds ?? undefined;
    for (const [customerId, limit] of Object.entries(change.tenants ?? {})) {
      if (limit === null) this.limits.delete(customerId);
      else this.limits.set(customerId, limit);
    }
    return this.settings();
  }

  /** Forgets a tenant's counts (DELETE /sandbox/{customerId}); its limit is configuration and stays. */
  forgetCounts(customerId: string): void {
    this.history.delete(customerId);
    this.buckets.delete(customerId);
  }

  /** Counts per whole second for the last `seconds` seconds: every tenant with requests in them, or the one asked for (zeros if none). */
  rates(customerId?: string, seconds = RATE_HISTORY_SECONDS): RequestRates {
    const span = Math.min(Math.max(1, Math.floor(seconds)), RATE_HISTORY_SECONDS);
    const now = this.now();
    const currentSecond = Math.floor(now / RATE_WINDOW_MS);
    const oldest = currentSecond - span + 1;
    const ids = customerId === undefined ? [...this.history.keys()].sort() : [customerId];
    const tenants: Record<string, TenantRequestRates> = {};
    for (const id of ids) {
      const perSecond = (this.history.get(id) ?? [])
        .filter((count) => count.second >= oldest && count.second <= currentSecond)
        .map(({ second, accepted, refused }) => ({ second, accepted, refused }));
      if (customerId === undefined && perSecond.length === 0) continue;
      let accepted = 0;
      let refused = 0;
      let maxAccepted = 0;
      let maxRefused = 0;
      let maxRequests = 0;
      for (const count of perSecond) {
        accepted += count.accepted;
        refused += count.refused;
        maxAccepted = Math.max(maxAccepted, count.accepted);
        maxRefused = Math.max(maxRefused, count.refused);
        maxRequests = Math.max(maxRequests, count.accepted + count.refused);
      }
      tenants[id] = {
        limitPerSecond: this.limitOf(id) ?? null,
        accepted,
        refused,
        maxAcceptedPerSecond: maxAccepted,
        maxRefusedPerSecond: maxRefused,
        maxRequestsPerSecond: maxRequests,
        perSecond,
      };
    }
    return { windowMs: RATE_WINDOW_MS, now, currentSecond, seconds: span, tenants };
  }

  /** The count of (tenant, second), created if needed; seconds older than the history are dropped. */
  private countOf(customerId: string, second: number): SecondCount {
    let counts = this.history.get(customerId);
    if (!counts) {
      counts = [];
      this.history.set(customerId, counts);
    }
    const last = counts.at(-1);
    if (last?.second === second) return last;
    if (last === undefined || second > last.second) {
      const count = { second, accepted: 0, refused: 0 };
      counts.push(count);
      let stale = 0;
      while (stale < counts.length && (counts[stale]?.second ?? second) <= second - RATE_HISTORY_SECONDS) stale += 1;
      if (stale > 0) counts.splice(0, stale);
      return count;
    }
    // The clock went back (a wall-clock step, or a test's clock): find or insert that second in order.
    let index = counts.length - 1;
    while (index >= 0 && (counts[index]?.second ?? second) > second) index -= 1;
    const found = counts[index];
    if (found?.second === second) return found;
    const count = { second, accepted: 0, refused: 0 };
    counts.splice(index + 1, 0, count);
    return count;
  }
}
