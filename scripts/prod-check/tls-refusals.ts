/**
 * `--tls`: proof that the mutual-TLS frontend refuses what it must, through the product's own start-up
 * paths (the pipeline client's ConnectionsClient.connect and a worker process, each configured by the
 * environment a user sets), and that each refusal says what to fix: plain TCP, no client certificate,
 * a CA that did not sign the server's certificate, a server name the certificate is not valid for.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ConnectionsClient, loadClientConfig, TemporalUnavailableError } from '../../src/client/index.js';
import { PROJECT_ROOT } from '../lib/temporal-binaries.js';
import { track } from '../chaos/processes.js';
import { TLS_SERVER_NAME, type ProdCheckPki } from './tls.js';

const WORKER_ENTRY = fileURLToPath(new URL('../../src/worker.ts', import.meta.url));
const WORKER_EXIT_TIMEOUT_MS = 90_000;

export interface Refusal {
  readonly who: string;
  /** Refused, with the message expected (the reason and the variable to fix). */
  readonly ok: boolean;
  /** What it said (or that it connected). */
  readonly detail: string;
}

interface Case {
  readonly who: string;
  readonly env: Readonly<Record<string, string>>;
  readonly expected: RegExp;
}

/** The pipeline client: it must throw TemporalUnavailableError with the expected reason. */
async function clientCase(address: string, { who: what, env, expected }: Case): Promise<Refusal> {
  const who = `pipeline client, ${what}`;
  const config = loadClientConfig({ TEMPORAL_ADDRESS: address, PAYLOAD_ENCRYPTION: 'off', PAYLOAD_STORE: 'off', ...env });
  try {
    const connections = await ConnectionsClient.connect(config);
    await connections.close();
    return { who, ok: false, detail: 'connected: NOT refused' };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const ok = error instanceof TemporalUnavailableError && expected.test(message);
    return { who, ok, detail: `${error instanceof Error ? error.name : 'error'}: ${message}` };
  }
}

/** A worker process: it must exit 1 at start-up with the expected reason on stderr, without a stack trace. */
function workerCase(address: string, { who: what, env, expected }: Case): Promise<Refusal> {
  const who = `worker process, ${what}`;
  return new Promise((resolve) => {
    const child = track(
      spawn(process.execPath, ['--import', 'tsx', WORKER_ENTRY], {
        cwd: PROJECT_ROOT,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TEMPORAL_ADDRESS: address,
          TEMPORAL_TASK_QUEUE: 'prod-check-refused',
          PAYLOAD_ENCRYPTION: 'off',
          PAYLOAD_STORE: 'off',
          WORKER_METRICS_PORT: '0',
          ...env,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      }),
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), WORKER_EXIT_TIMEOUT_MS);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const said =
        stderr
          .trim()
          .split('\n')
          .filter((line) => line.startsWith('worker stopped:'))
          .join(' ') || stderr.trim().slice(-500);
      const stack = /^\s+at /m.test(stderr);
      const ok = code === 1 && expected.test(said) && !stack;
      resolve({ who, ok, detail: `exit ${signal ?? code}${stack ? ' (with a stack trace)' : ''}: ${said || '(nothing on stderr)'}` });
    });
  });
}

export async function proveRefusals(address: string, pki: ProdCheckPki): Promise<Refusal[]> {
  const ca = { TEMPORAL_TLS_CA_PATH: pki.caCert, TEMPORAL_TLS_SERVER_NAME: TLS_SERVER_NAME };
  const certificate = { TEMPORAL_TLS_CERT_PATH: pki.client.cert, TEMPORAL_TLS_KEY_PATH: pki.client.key };
  const noCertificate: Case = { who: 'no client certificate', env: ca, expected: /requires a client certificate .*TEMPORAL_TLS_CERT_PATH/ };
  const otherCa: Case = {
    who: 'another CA',
    env: { ...ca, ...certificate, TEMPORAL_TLS_CA_PATH: pki.otherCaCert },
    expected: /not signed by the CA in TEMPORAL_TLS_CA_PATH/,
  };
  const cases: Promise<Refusal>[] = [
    clientCase(address, { who: 'plain TCP', env: {}, expected: /the server speaks TLS and this client does not: set TEMPORAL_TLS_CA_PATH/ }),
    clientCase(address, noCertificate),
    clientCase(address, otherCa),
    clientCase(address, {
      who: 'server name temporal.invalid',
      env: { ...ca, ...certificate, TEMPORAL_TLS_SERVER_NAME: 'temporal.invalid' },
      expected: /not valid for temporal\.invalid, taken from TEMPORAL_TLS_SERVER_NAME/,
    }),
    workerCase(address, noCertificate),
    workerCase(address, otherCa),
  ];
  return Promise.all(cases);
}
