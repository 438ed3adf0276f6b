/**
 * A real S3 server for tests: MinIO (built by `scripts/provision-temporal.sh minio`) on a free
 * loopback port, with a temporary data directory and known root credentials, and a bucket created.
 * One server per test file; `stop()` ends it and removes its data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../../scripts/lib/free-port.js';
import { minioPath } from '../../scripts/lib/minio-binary.js';
import { exitWatch, keptOutput, ServerStartError, stopServerProcess } from './server-process.js';
import { refuseInUnitTier } from './test-tier.js';

const STARTUP_TIMEOUT_MS = 30_000;
const START_ATTEMPTS = 3;

export interface MinioServer {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  readonly region: string;
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** Created at start. */
  readonly bucket: string;
  readonly dataDirectory: string;
  /** A client for this server (path-style, root credentials), for looking at objects directly. */
  readonly client: S3Client;
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

export interface MinioOptions {
  /** Default "payloads". */
  readonly bucket?: string;
}

export async function startMinio({ bucket = 'payloads' }: MinioOptions = {}): Promise<MinioServer> {
  refuseInUnitTier('MinIO');
  const executable = minioPath();
  const dataDirectory = await mkdtemp(join(tmpdir(), 'minio-test-'));
  const credentials = { accessKeyId: 'minio-test-root', secretAccessKey: 'minio-test-secret-0123456789' };
  const region = 'us-east-1';
  let lastError: unknown;
  // A free port can be taken between our probe and MinIO's bind: try a fresh one.
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    const port = await freePort();
    const endpoint = `http://127.0.0.1:${port}`;
    const child = spawn(
      executable,
      ['server', join(dataDirectory, 'data'), '--address', `127.0.0.1:${port}`, '--certs-dir', join(dataDirectory, 'certs'), '--quiet'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          PATH: process.env.PATH,
          HOME: dataDirectory,
          MINIO_ROOT_USER: credentials.accessKeyId,
          MINIO_ROOT_PASSWORD: credentials.secretAccessKey,
          MINIO_BROWSER: 'off',
          MINIO_UPDATE: 'off',
          // The data directory is on the root disk; MinIO would otherwise refuse it.
          MINIO_CI_CD: 'on',
        },
      },
    );
    const output = keptOutput(child);
    try {
      await waitUntilLive(child, endpoint, output);
    } catch (error) {
      lastError = error;
      await stopServerProcess(child);
      continue;
    }
    const client = new S3Client({ endpoint, region, forcePathStyle: true, credentials });
    const createBucket = async (name: string): Promise<void> => {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    };
    try {
      await createBucket(bucket);
    } catch (error) {
      client.destroy();
      await stopServerProcess(child);
      await rm(dataDirectory, { recursive: true, force: true });
      throw error;
    }
    return {
      endpoint,
      region,
      credentials,
      bucket,
      dataDirectory,
      client,
      createBucket,
      stop: async () => {
        client.destroy();
        await stopServerProcess(child);
        await rm(dataDirectory, { recursive: true, force: true });
      },
    };
  }
  await rm(dataDirectory, { recursive: true, force: true });
  throw lastError instanceof Error ? lastError : new ServerStartError('minio', 'minio did not start', '');
}

/** Polls /minio/health/live until it answers 200; fails at once if the process exits. */
async function waitUntilLive(child: ChildProcess, endpoint: string, output: { readonly text: string }): Promise<void> {
  const exited = exitWatch(child);
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited.reason !== undefined) throw new ServerStartError('minio', `minio exited before it was live (${exited.reason})`, output.text);
    try {
      const response = await fetch(`${endpoint}/minio/health/live`, { signal: AbortSignal.timeout(1_000) });
      await response.body?.cancel();
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await delay(100);
  }
  throw new ServerStartError('minio', `minio was not live at ${endpoint} after ${STARTUP_TIMEOUT_MS} ms`, output.text);
}
