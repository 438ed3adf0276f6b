/**
 * `npm start` with DEV_KEY_PROVIDER=openbao: a local OpenBao (scripts/lib/openbao-server.ts's
 * production-style server: raft storage, one key share, unsealed at every start) whose state persists
 * in <TEMPORAL_CACHE_DIR>/openbao-dev/ like the stack's other state. Its unseal key and root token
 * are kept there in a 0600 file: acceptable on a developer's machine only, never how production keeps
 * them. Each start makes a token for the stack's processes whose policy allows only datakey and decrypt
 * on the transit key (and its tenants' keys), short-lived and renewed while the stack runs, revoked at
 * its stop, and writes the variables a CLI in another shell needs into a 0600 env file.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OpenBaoServer, workerPolicy } from './openbao-server.js';

/** The transit key the stack's processes use (PAYLOAD_VAULT_TRANSIT_KEY's default). */
const TRANSIT_KEY = 'aggregation-payloads';
/**
 * The processes' token lives 8 hours and the stack renews it every 2 hours while it runs, so one a
 * stopped or killed stack left behind is dead within 8 hours; a stack's stop revokes its own at once,
 * and the next start revokes the one a killed stack left (its accessor is kept in the state).
 */
const TOKEN_TTL = '8h';
const RENEW_EVERY_MS = 2 * 60 * 60_000;

export interface DevOpenBao {
  readonly server: OpenBaoServer;
  readonly dir: string;
  /** The unseal key and the root token (mode 0600). */
  readonly secretsFile: string;
  /** PAYLOAD_KEY_PROVIDER, PAYLOAD_VAULT_ADDR, PAYLOAD_VAULT_TOKEN for the worker, the console and a CLI. */
  readonly env: Readonly<Record<string, string>>;
  /** The same variables as a file a shell can source (mode 0600). */
  readonly envFile: string;
  /** Revokes this run's token and stops renewing it (the stack's stop, before OpenBao's). */
  revokeToken(): Promise<void>;
}

export async function startDevOpenBao(cacheDir: string): Promise<DevOpenBao> {
  const dir = join(cacheDir, 'openbao-dev');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const secretsFile = join(dir, 'root-and-unseal-key.json');
  const server = await OpenBaoServer.open({ dir, transitKey: TRANSIT_KEY, secretsFile, tied: true });
  try {
    // A killed stack's token: revoked now rather than left to expire.
    const accessorFile = join(dir, 'token-accessor');
    const leftBehind = await readFile(accessorFile, 'utf8').then(
      (text) => text.trim(),
      () => '',
    );
    if (leftBehind) await server.revokeAccessor(leftBehind);
    const { token, accessor } = await server.tokenWithAccessor('dev-stack-payloads', workerPolicy(TRANSIT_KEY), TOKEN_TTL);
    await writeFile(accessorFile, `${accessor}\n`, { mode: 0o600 });
    const renewal = setInterval(() => {
      server.renewAccessor(accessor, TOKEN_TTL).catch((error: unknown) => console.error('dev-stack: could not renew the OpenBao token', error));
    }, RENEW_EVERY_MS);
    renewal.unref();
    const env = {
      PAYLOAD_KEY_PROVIDER: 'vault-transit',
      PAYLOAD_VAULT_ADDR: server.address,
      PAYLOAD_VAULT_TOKEN: token,
      PAYLOAD_VAULT_TRANSIT_KEY: TRANSIT_KEY,
    };
    const envFile = join(dir, 'client.env');
    const lines = Object.entries(env).map(([name, value]) => `${name}=${value}`);
    await writeFile(envFile, `# Written by npm start (DEV_KEY_PROVIDER=openbao) for this run: set -a; . ${envFile}; set +a\n${lines.join('\n')}\n`, {
      mode: 0o600,
    });
    const revokeToken = async () => {
      clearInterval(renewal);
      await server.revokeAccessor(accessor);
      await rm(accessorFile, { force: true });
    };
    return { server, dir, secretsFile, env, envFile, revokeToken };
  } catch (error) {
    await server.stop();
    throw error;
  }
}
