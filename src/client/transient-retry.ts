/**
 * Riding out Temporal's transient refusals in the pipeline client's long waits.
 *
 * The SDK's connection already retries a refused call about ten times (≈ 20 s with its default
 * backoff). A caller waiting for a connection's result can wait for minutes, though, and a server
 * restart, a rate limit under load (RESOURCE_EXHAUSTED) or an expired long poll (DEADLINE_EXCEEDED)
 * outlasts that budget: the wait failed while the connection itself ran on. This wrapper keeps
 * waiting through those codes, with a capped backoff, for as long as the caller allows.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { ServiceError } from '@temporalio/client';
import { jitteredBackoffMs } from '../retry/backoff.js';

/** gRPC codes (numbers fixed by the gRPC spec) that say "not now", never "no": the call may be made again unchanged. */
const TRANSIENT_CODES: ReadonlyMap<number, string> = new Map([
  [4, 'DEADLINE_EXCEEDED'],
  [8, 'RESOURCE_EXHAUSTED'],
  [14, 'UNAVAILABLE'],
]);

/** The name of the transient gRPC code behind an error the SDK threw, or undefined if it is not one. */
export function transientCodeOf(error: unknown): string | undefined {
  if (!(error instanceof ServiceError)) return undefined;
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? TRANSIENT_CODES.get(code) : undefined;
}

/** One retry about to happen: what failed and when the next try is. */
export interface TransientRetry {
  /** 1 for the first retry. */
  readonly attempt: number;
  /** UNAVAILABLE, RESOURCE_EXHAUSTED or DEADLINE_EXCEEDED. */
  readonly code: string;
  readonly retryInMs: number;
  readonly error: Error;
}

export interface TransientRetryOptions {
  /**
   * Give up once transient errors have gone on this long without a call getting through; default
   * 10 minutes (a server restart takes seconds, a rate limit passes in seconds).
   */
  readonly giveUpAfterMs?: number;
  /** Called before each retry, for logs and counters. */
  readonly onRetry?: (retry: TransientRetry) => void;
  /** Stops waiting: the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

export const DEFAULT_GIVE_UP_AFTER_MS = 10 * 60_000;
const BACKOFF = { firstMs: 500, maxMs: 10_000 };

/** Thrown when transient errors outlasted `giveUpAfterMs`: the caller's wait failed, not the work it waited on. */
export class TransientRetryExhaustedError extends Error {
  override readonly name = 'TransientRetryExhaustedError';
  constructor(
    readonly attempts: number,
    readonly lastCode: string,
    readonly elapsedMs: number,
    options: { cause: unknown },
  ) {
    super(`Temporal kept refusing the call (${lastCode}) for ${Math.round(elapsedMs / 1000)} s over ${attempts} attempts`, options);
  }
}

/** Runs `call`, again after each transient refusal, until it settles otherwise or the budget is spent. */
export async function retryTransient<T>(call: () => Promise<T>, options: TransientRetryOptions = {}): Promise<T> {
  const giveUpAfterMs = options.giveUpAfterMs ?? DEFAULT_GIVE_UP_AFTER_MS;
  let firstFailureAt: number | undefined;
  let attempt = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    try {
      return await call();
    } catch (error) {
      const code = transientCodeOf(error);
      if (code === undefined) throw error;
      const now = Date.now();
      firstFailureAt ??= now;
      attempt += 1;
      const elapsedMs = now - firstFailureAt;
      if (elapsedMs >= giveUpAfterMs) throw new TransientRetryExhaustedError(attempt, code, elapsedMs, { cause: error });
      const retryInMs = Math.min(jitteredBackoffMs(attempt, BACKOFF), giveUpAfterMs - elapsedMs);
      options.onRetry?.({ attempt, code, retryInMs, error: error as Error });
      await delay(retryInMs, undefined, options.signal ? { signal: options.signal } : {});
    }
  }
}
