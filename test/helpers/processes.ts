/**
 * Product processes started as a user starts them (`node --import tsx <entry>`), with their output
 * kept, for tests that kill them, read their logs, or need them out of the test's own process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { registerWorker } from '../../scripts/lib/suite-registry.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';
import { isKmsEncryption } from '../../src/codec/key-provider.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import { tempAuditFile } from './audit.js';

const ENTRIES = {
  worker: fileURLToPath(new URL('../../src/worker.ts', import.meta.url)),
  console: fileURLToPath(new URL('../../src/console/server.ts', import.meta.url)),
} as const;

/** What a started process printed each time it said it was ready. */
const READY_LINE = { worker: '"worker started"', console: 'operator console on ' } as const;

export interface ProductProcess {
  readonly child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
}

const running = new Set<ChildProcess>();

/** Starts the worker or the console with exactly `env` (plus PATH) and resolves once it says it is ready. */
export async function startProcess(kind: keyof typeof ENTRIES, env: Record<string, string>): Promise<ProductProcess> {
  if (kind === 'worker') registerWorkerProcess(env);
  // A console's audit trail goes to a file of its own unless the test names one.
  const audit = kind === 'console' && env.AUDIT_STORE === undefined ? { AUDIT_STORE: `file:${tempAuditFile()}` } : {};
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRIES[kind]], {
    env: { PATH: process.env.PATH, ...audit, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(READY_LINE[kind])) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${kind} exited with ${code} before it was ready:\n${output}`)));
  });
  return { child, output: () => output };
}

/**
 * For npm test's closing replay (scripts/lib/suite-registry.ts): the worker's task queue, keys and
 * store, read from its environment by the worker's own config parser.
 */
function registerWorkerProcess(env: Record<string, string>): void {
  if (!loadTestConfig().workerRegistryDir) return;
  let config;
  try {
    config = loadWorkerConfig({ PATH: process.env.PATH, ...env });
  } catch {
    return; // A configuration the worker refuses: it starts no workflow.
  }
  // A KMS's payloads cannot be replayed after its test stopped it: unregistered, the replay skips them as of unknown keys.
  if (isKmsEncryption(config.encryption)) return;
  registerWorker({
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    encryption: config.encryption,
    payloadStore: config.payloadStore,
  });
}

/** SIGKILLs a process and waits until it is gone. */
export async function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** Stops every process these helpers started (for `after`). */
export async function stopAllProcesses(): Promise<void> {
  await Promise.all([...running].map((child) => killProcess(child)));
}
