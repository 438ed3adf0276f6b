/** Options of a sandbox instance and their defaults (deterministic data, the service's real limits). */

export interface SandboxOptions {
  /** TCP port; 0 picks a free one. */
  readonly port: number;
  readonly host: string;
  /** Header carrying the calling application's secret. */
  readonly authHeader: string;
  /** When set, /v3 requests without this exact header value answer 401 ACCESS_DENIED. */
  readonly authSecret: string | undefined;
  /** The date generated data ends on (YYYY-MM-DD); fixed so data is deterministic. */
  readonly asOf: string;
  /** A RequestId unused for longer than this answers SESSION_NONEXISTENT (the service: about 8 min). */
  readonly sessionIdleMs: number;
  /** Data requests on a session older than this answer SESSION_EXPIRED (the service: 30 min). */
  readonly processingLimitMs: number;
  /**
   * Wall-clock length of one pending poll: an operation pending for N polls is also complete once
   * N × this has passed since it started, so an operation nobody polls still finishes on its own
   * (default: the spec's 10 s polling interval, so a client polling at that pace sees N 202s).
   */
  readonly pendingPollMs: number;
  /** After an Authorize 200, data requests answer SESSION_LOADING for this long (scenario `loading` counts requests instead). */
  readonly loadingMs: number;
  /** How long a slow reply takes (scenarios slow_answer, slow_authorize): the service's 75 s by default, beyond a 60 s client timeout. */
  readonly slowReplyMs: number;
  /**
   * Initial request limit of every tenant, in requests per whole second of `now` (rate-limits.ts);
   * undefined: unlimited. Changed at run time through POST /sandbox/rate-limits.
   */
  readonly rateLimitPerSecond: number | undefined;
  /**
   * Where the sandbox keeps its state (state-file.ts): read at start, written after every change,
   * before the reply. Undefined: in memory only, a restart forgets everything.
   */
  readonly stateFile: string | undefined;
  /** The clock (ms since epoch); tests inject a fake one. */
  readonly now: () => number;
}

export const DEFAULT_OPTIONS: SandboxOptions = {
  port: 0,
  host: '127.0.0.1',
  authHeader: 'x-api-key',
  authSecret: undefined,
  asOf: '2026-10-31',
  sessionIdleMs: 8 * 60_000,
  processingLimitMs: 30 * 60_000,
  pendingPollMs: 10_000,
  loadingMs: 0,
  slowReplyMs: 75_000,
  rateLimitPerSecond: undefined,
  stateFile: undefined,
  now: () => Date.now(),
};
