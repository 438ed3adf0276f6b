/**
 * TEMPORAL_API_KEY_FILE: the Temporal token in a file that a sidecar renews (a Kubernetes projected
 * service-account token, a Vault agent template), read at start and re-read every few seconds; a
 * changed token is handed to the live connections with the SDK's `setApiKey` (NativeConnection's,
 * async; Connection's, sync), so the worker keeps polling and the clients keep calling past the first
 * token's expiry without a restart. A file that becomes unreadable, empty or malformed later keeps the
 * last token (logged once, and once more when it recovers): a sidecar's hiccup never stops a worker.
 * The token itself is never logged, nor put in an error.
 */
import { readApiKeyFileNow } from '../settings/temporal-api-key-file.js';

/** A live connection whose token can change: the worker's NativeConnection and the clients' Connection both are. */
export interface ApiKeyHolder {
  setApiKey(apiKey: string): void | Promise<void>;
}

/** Where the watcher says what happened: the worker's logger, or a line on stderr for the clients. Never handed the token. */
export interface ApiKeyFileLog {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

export interface ApiKeyFileWatchOptions {
  readonly path: string;
  /** How often the file is read again (TEMPORAL_API_KEY_FILE_RECHECK_MS). */
  readonly recheckMs: number;
  /** The token the connections were opened with. */
  readonly current: string;
  readonly holders: readonly ApiKeyHolder[];
  readonly log: ApiKeyFileLog;
}

export interface ApiKeyFileWatch {
  /** Reads the file once now and applies a changed token (what the timer does every recheckMs). */
  check(): Promise<void>;
  /** Stops re-reading; a check under way finishes. */
  stop(): void;
}

/**
 * Re-reads the token file every `recheckMs` and gives a changed token to every holder. The timer is
 * unref'd (a CLI that is done exits) and never overlaps itself. A read that fails keeps the last
 * token: its problem is logged once (not again until the file has recovered) and the recovery too.
 */
export function watchApiKeyFile({ path, recheckMs, current, holders, log }: ApiKeyFileWatchOptions): ApiKeyFileWatch {
  let token = current;
  let failing: string | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  const meta = { file: path };

  const apply = async (next: string): Promise<boolean> => {
    const outcomes = await Promise.allSettled(holders.map(async (holder) => holder.setApiKey(next)));
    const refused = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    if (refused === undefined) return true;
    // The SDK's message, which names no token (it never echoes the key it was given).
    const said = refused.reason instanceof Error ? refused.reason.message : String(refused.reason);
    log.warn(`TEMPORAL_API_KEY_FILE: the connections did not take the renewed token from ${path} (${said}); trying again at the next check`, meta);
    return false;
  };

  const checkOnce = async (): Promise<void> => {
    const read = await readApiKeyFileNow(path);
    if ('problem' in read) {
      if (failing === undefined) log.warn(`TEMPORAL_API_KEY_FILE: ${read.problem}; keeping the last token until the file holds one again`, meta);
      failing = read.problem;
      return;
    }
    if (failing !== undefined) {
      failing = undefined;
      log.info(`TEMPORAL_API_KEY_FILE: ${path} holds a token again${read.token === token ? ' (unchanged)' : ''}`, meta);
    }
    if (read.token === token || stopped) return;
    if (await apply(read.token)) {
      token = read.token;
      log.info(`TEMPORAL_API_KEY_FILE: renewed the Temporal token from ${path}`, meta);
    }
  };

  const check = (): Promise<void> => (running ??= checkOnce().finally(() => (running = undefined)));

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      void check()
        .catch((error: unknown) => log.warn(`TEMPORAL_API_KEY_FILE: checking ${path} failed: ${error instanceof Error ? error.message : String(error)}`, meta))
        .finally(schedule);
    }, recheckMs);
    timer.unref();
  };
  schedule();

  return {
    check,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}

/** The settings renewApiKey reads: the `temporal` section's transport. */
interface RenewableTransport {
  readonly apiKey?: string;
  readonly apiKeyFile?: { readonly path: string; readonly recheckMs: number };
}

/**
 * Keeps `holders` (the process's live connections) on the token in TEMPORAL_API_KEY_FILE, starting
 * from `opened`, the token they were opened with; undefined when the token is not given by a file.
 */
export function renewApiKey(transport: RenewableTransport, holders: readonly ApiKeyHolder[], log: ApiKeyFileLog, opened?: string): ApiKeyFileWatch | undefined {
  const file = transport.apiKeyFile;
  const current = opened ?? transport.apiKey;
  if (!file || current === undefined) return undefined;
  return watchApiKeyFile({ path: file.path, recheckMs: file.recheckMs, current, holders, log });
}

/** The clients' log when none is given: one line on stderr (the pipeline's own process, the CLI, the console). */
export const STDERR_API_KEY_FILE_LOG: ApiKeyFileLog = {
  info: (message) => void process.stderr.write(`${message}\n`),
  warn: (message) => void process.stderr.write(`${message}\n`),
};
