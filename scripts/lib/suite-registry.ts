/**
 * The workers `npm test` started on its shared dev server, as the test helpers saw them: the test
 * file, namespace and task queue of each, and the payload settings its data converter had (the
 * encryption keys, the payload store). scripts/run-tests.mjs makes a private temporary directory,
 * names it in TEST_WORKER_REGISTRY_DIR for every test process, and removes it at the end; after the
 * tests, scripts/lib/replay-suite.ts reads it to replay each history with the keys and store of the
 * worker that wrote it, and to name the test file that ran it. Outside that run the variable is
 * unset and registering does nothing.
 *
 * One JSON line per worker, appended to a file of the registering process (no two writers share a
 * file). The keys are the tests' own, written mode 0600 in a 0700 directory that lives as long as the run.
 */
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EncryptionKeys } from '../../src/codec/encryption-codec.js';
import { loadTestConfig } from './test-settings.js';
import type { PayloadStoreSettings } from '../../src/payload-store/settings.js';

export const WORKER_REGISTRY_ENV = 'TEST_WORKER_REGISTRY_DIR';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** How the registry keeps a worker's payload store: enough to read its references back, if it still exists. */
export type RegisteredPayloadStore = { readonly kind: 'off' } | { readonly kind: 'local'; readonly directory: string } | { readonly kind: 's3' };

export interface RegisteredWorker {
  /** The test file that started it, relative to the repository (`test/...`), when known. */
  readonly testFile: string | undefined;
  readonly namespace: string;
  readonly taskQueue: string;
  /** The worker's codec keys; undefined: encryption off. */
  readonly encryption: EncryptionKeys | undefined;
  readonly payloadStore: RegisteredPayloadStore;
}

interface Line {
  readonly testFile?: string;
  readonly namespace: string;
  readonly taskQueue: string;
  readonly encryption?: { readonly keyId: string; readonly key: string; readonly decryptionKeys: Readonly<Record<string, string>> };
  readonly payloadStore: RegisteredPayloadStore;
}

/** The test file this process runs: node --test starts each file as `node <file>`. */
export function currentTestFile(argv: readonly string[] = process.argv): string | undefined {
  const file = argv[1];
  if (!file || !/\.test\.[cm]?[jt]s$/.test(file)) return undefined;
  const path = relative(ROOT, isAbsolute(file) ? file : resolve(file));
  return path.split(sep).join('/');
}

export function registeredPayloadStore(settings: PayloadStoreSettings | undefined): RegisteredPayloadStore {
  if (!settings || settings.kind === 'off') return { kind: 'off' };
  if (settings.kind === 's3') return { kind: 's3' };
  return { kind: 'local', directory: resolve(settings.directory) };
}

/** Records a worker the tests started (no-op outside `npm test`'s runner). */
export function registerWorker(
  worker: { namespace: string; taskQueue: string; encryption: EncryptionKeys | undefined; payloadStore: PayloadStoreSettings | undefined },
  dir: string | undefined = loadTestConfig().workerRegistryDir,
): void {
  if (!dir) return;
  const testFile = currentTestFile();
  const line: Line = {
    ...(testFile ? { testFile } : {}),
    namespace: worker.namespace,
    taskQueue: worker.taskQueue,
    ...(worker.encryption
      ? {
          encryption: {
            keyId: worker.encryption.keyId,
            key: Buffer.from(worker.encryption.key).toString('base64'),
            decryptionKeys: Object.fromEntries(
              [...(worker.encryption.decryptionKeys ?? new Map<string, Uint8Array>())].map(([id, key]) => [id, Buffer.from(key).toString('base64')]),
            ),
          },
        }
      : {}),
    payloadStore: registeredPayloadStore(worker.payloadStore),
  };
  appendFileSync(join(dir, `workers-${process.pid}.jsonl`), `${JSON.stringify(line)}\n`, { mode: 0o600 });
}

/** Every worker registered in `dir`; a line that does not parse is reported, not fatal. */
export function readRegistry(dir: string): { workers: RegisteredWorker[]; unreadable: number } {
  const workers: RegisteredWorker[] = [];
  let unreadable = 0;
  let files: string[];
  try {
    files = readdirSync(dir).filter((name) => name.endsWith('.jsonl'));
  } catch {
    return { workers, unreadable };
  }
  for (const file of files.sort()) {
    for (const text of readFileSync(join(dir, file), 'utf8').split('\n')) {
      if (text.trim() === '') continue;
      try {
        const line = JSON.parse(text) as Line;
        const encryption = line.encryption && {
          keyId: line.encryption.keyId,
          key: Buffer.from(line.encryption.key, 'base64'),
          decryptionKeys: new Map(Object.entries(line.encryption.decryptionKeys).map(([id, key]) => [id, Buffer.from(key, 'base64')])),
        };
        workers.push({ testFile: line.testFile, namespace: line.namespace, taskQueue: line.taskQueue, encryption, payloadStore: line.payloadStore });
      } catch {
        unreadable++;
      }
    }
  }
  return { workers, unreadable };
}
