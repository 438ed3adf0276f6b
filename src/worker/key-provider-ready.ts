/**
 * A worker with a KMS makes its first data key before it polls: a worker that cannot seal cannot
 * complete a task, and the SDK stops a worker whose task completion fails to encode. Started while
 * the KMS is down, it waits here (its health endpoint answers 503 INITIALIZED with the KMS's reason)
 * and asks again with a growing pause, until the KMS answers or the process is told to stop. Once it
 * has a key, a later outage does not stop it: the last data key keeps sealing (envelope-keys.ts).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { KeySource } from '../codec/key-source.js';
import { KeyProviderUnavailableError } from '../codec/payload-errors.js';
import { backoffMs } from '../retry/backoff.js';

const PAUSE = { firstMs: 1_000, maxMs: 30_000 };
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export class KeyProviderWaitAbortedError extends Error {
  override readonly name = 'KeyProviderWaitAbortedError';
  constructor(
    readonly keyId: string,
    readonly signal: string,
    options: { cause: unknown },
  ) {
    super(
      `stopped (${signal}) while waiting for the key provider of ${keyId} to make a data key: ${options.cause instanceof Error ? options.cause.message : String(options.cause)}`,
      options,
    );
  }
}

export interface KeyProviderWaitOptions {
  readonly warn: (message: string) => void;
  readonly info: (message: string) => void;
  /** Ends the wait as a stop signal does (besides SIGINT and SIGTERM). */
  readonly abort?: AbortSignal;
}

/** Resolves once `source` holds a data key; throws KeyProviderWaitAbortedError on SIGINT/SIGTERM while waiting, any other failure at once. */
export async function waitForFirstDataKey(source: KeySource, { warn, info, abort }: KeyProviderWaitOptions): Promise<void> {
  let stopped: string | undefined;
  const stop = new AbortController();
  const onStop = (signal: string) => {
    stopped = signal;
    stop.abort();
  };
  for (const signal of STOP_SIGNALS) process.once(signal, onStop);
  const onAbort = () => onStop(String(abort?.reason ?? 'aborted'));
  if (abort?.aborted) onAbort();
  abort?.addEventListener('abort', onAbort, { once: true });
  try {
    for (let attempt = 1; ; attempt += 1) {
      const pause = backoffMs(attempt, PAUSE);
      try {
        await source.sealingKey(0);
        if (attempt > 1) info(`key provider ${source.keyId} made a data key after ${attempt} attempts: the worker starts polling`);
        return;
      } catch (error) {
        if (!(error instanceof KeyProviderUnavailableError)) throw error;
        if (stopped) throw new KeyProviderWaitAbortedError(source.keyId, stopped, { cause: error });
        warn(`${error.message}; the worker waits for it before polling (attempt ${attempt}, next in ${pause / 1000} s)`);
        await delay(pause, undefined, { signal: stop.signal }).catch(() => undefined);
        if (stopped) throw new KeyProviderWaitAbortedError(source.keyId, stopped, { cause: error });
      }
    }
  } finally {
    for (const signal of STOP_SIGNALS) process.off(signal, onStop);
    abort?.removeEventListener('abort', onAbort);
  }
}
