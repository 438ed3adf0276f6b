/**
 * moto's server for tests: a stand-in for AWS KMS (real AWS cannot be reached from here), the
 * `moto_server` that scripts/provision-temporal.sh moto installed from PyPI, on a free loopback
 * port, in memory, with one symmetric KMS key created through the SDK. `pause()` and `resume()`
 * freeze and thaw its process (a KMS that takes connections and never answers, its keys kept, as in
 * an outage it recovers from); `stop()` ends only its process.
 */
import { spawn } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import { CreateKeyCommand, DisableKeyCommand, EnableKeyCommand, ListKeysCommand, type KMSClient } from '@aws-sdk/client-kms';
import { freePort } from '../../scripts/lib/free-port.js';
import { motoServerPath } from '../../scripts/lib/moto-binary.js';
import { awsKmsClient, type AwsKmsSettings } from '../../src/codec/key-provider.js';
import { exitWatch, keptOutput, ServerStartError, stopServerProcess } from './server-process.js';
import { refuseInUnitTier } from './test-tier.js';

const STARTUP_TIMEOUT_MS = 30_000;
const START_ATTEMPTS = 3;
/** moto accepts any credentials; these are what the tests' processes present. */
export const MOTO_CREDENTIALS = Object.freeze({ accessKeyId: 'moto-test-access-key', secretAccessKey: 'moto-test-secret-key' });
export const MOTO_REGION = 'us-east-1';

export interface MotoServer {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  /** The ARN of the key created at start. */
  readonly keyArn: string;
  /** Its key id (the UUID). */
  readonly keyUuid: string;
  readonly pid: number;
  /** Client settings for `key` (default: the key created at start) on this server. */
  settings(more?: Partial<AwsKmsSettings>): AwsKmsSettings;
  /** The variables an operator sets for this server (PAYLOAD_AWS_* and the SDK's credentials). */
  variables(key?: string): Record<string, string>;
  /** A new symmetric key; its ARN. */
  createKey(description: string): Promise<string>;
  disableKey(key: string): Promise<void>;
  enableKey(key: string): Promise<void>;
  /** SIGSTOP: connections are taken, never answered. */
  pause(): void;
  /** SIGCONT: answers again, with every key it had. */
  resume(): void;
  stop(): Promise<void>;
}

export async function startMoto(): Promise<MotoServer> {
  refuseInUnitTier('moto');
  const executable = motoServerPath();
  let lastError: unknown;
  // A free port can be taken between our probe and moto's bind: try a fresh one.
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    const child = spawn(executable, ['-H', '127.0.0.1', '-p', String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    });
    const output = keptOutput(child);
    const settings = (more: Partial<AwsKmsSettings> = {}): AwsKmsSettings => ({
      key: '',
      region: MOTO_REGION,
      endpoint,
      timeoutMs: 5_000,
      credentials: MOTO_CREDENTIALS,
      ...more,
    });
    const admin: KMSClient = awsKmsClient(settings());
    try {
      await waitUntilAnswering(admin, exitWatch(child), output);
      const createKey = async (description: string): Promise<string> => {
        const made = await admin.send(new CreateKeyCommand({ Description: description, KeySpec: 'SYMMETRIC_DEFAULT', KeyUsage: 'ENCRYPT_DECRYPT' }));
        return made.KeyMetadata?.Arn ?? assert(`moto created no key for ${description}`);
      };
      const keyArn = await createKey('aggregation payloads (test)');
      return {
        endpoint,
        keyArn,
        keyUuid: keyArn.split('/').pop() ?? '',
        pid: child.pid ?? 0,
        settings: (more = {}) => settings({ key: keyArn, ...more }),
        variables: (key = keyArn) => ({
          PAYLOAD_KEY_PROVIDER: 'aws-kms',
          PAYLOAD_AWS_KMS_KEY_ID: key,
          PAYLOAD_AWS_REGION: MOTO_REGION,
          PAYLOAD_AWS_KMS_ENDPOINT: endpoint,
          AWS_ACCESS_KEY_ID: MOTO_CREDENTIALS.accessKeyId,
          AWS_SECRET_ACCESS_KEY: MOTO_CREDENTIALS.secretAccessKey,
        }),
        createKey,
        // moto's DisableKey and EnableKey answer 500 to an ARN: they get the key id.
        disableKey: async (key) => {
          await admin.send(new DisableKeyCommand({ KeyId: keyIdOf(key) }));
        },
        enableKey: async (key) => {
          await admin.send(new EnableKeyCommand({ KeyId: keyIdOf(key) }));
        },
        pause: () => child.kill('SIGSTOP'),
        resume: () => child.kill('SIGCONT'),
        stop: async () => {
          admin.destroy();
          child.kill('SIGCONT');
          await stopServerProcess(child);
        },
      };
    } catch (error) {
      lastError = error;
      admin.destroy();
      await stopServerProcess(child);
    }
  }
  throw lastError instanceof Error ? lastError : new ServerStartError('moto_server', 'moto did not start', '');
}

/** The key id (UUID) of a key ARN. */
function keyIdOf(key: string): string {
  return key.startsWith('arn:') ? (key.split('/').pop() ?? key) : key;
}

function assert(message: string): never {
  throw new Error(message);
}

/** Polls ListKeys until moto answers; fails at once if the process exits. */
async function waitUntilAnswering(client: KMSClient, exited: { readonly reason: string | undefined }, output: { readonly text: string }): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited.reason !== undefined) throw new ServerStartError('moto_server', `moto_server exited before it answered (${exited.reason})`, output.text);
    try {
      await client.send(new ListKeysCommand({}));
      return;
    } catch {
      // Not listening yet.
    }
    await delay(100);
  }
  throw new ServerStartError('moto_server', `moto_server did not answer within ${STARTUP_TIMEOUT_MS} ms`, output.text);
}
