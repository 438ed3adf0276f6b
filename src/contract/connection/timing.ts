/**
 * A connection's default timing, without zod: the connection input's schema applies it, and
 * workflow code (which keeps zod out of its bundle) reads it too.
 */

/** The spec's limits: poll every 10 s, give up a pending operation after 30 min. */
export const DEFAULT_TIMING = {
  pollIntervalMs: 10_000,
  pollTimeoutMs: 30 * 60_000,
  /** How long an unanswered challenge waits for an operator before the connection ends. */
  answerTimeoutMs: 15 * 60_000,
  /** Answers the service may reject before the connection ends as InvalidSecurityResponse. */
  maxAnswerAttempts: 3,
} as const;
