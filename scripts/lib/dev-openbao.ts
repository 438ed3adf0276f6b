/**
 * `npm start` with DEV_KEY_PROVIDER=openbao: a local OpenBao (scripts/lib/openbao-server.ts's
 * production-style server: raft storage, one key share, unsealed at every start) whose state persists
 * in <TEMPORAL_CACHE_DIR>/openbao-dev/ like the stack's other state. Its unseal key and root token
 * are kept there in a 0600 file: acceptable on a developer's machine only, never how production keeps
 * them. Each start makes a token for the stack's processes whose policy allows only datakey and decrypt
 * on the transit key, and writes the variables a CLI in another shell needs into a 0600 env file.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OpenBaoServer, workerPolicy } from './openbao-server.js';

/** The transit key the stack's processes use (PAYLOAD_VAULT_TRANSIT_KEY's default). */
const TRANSIT_KEY = 'aggregation-payloads';
/** The processes' token lives as long as OpenBao lets one (its default maximum, 32 days); a new one each start. */
const TOKEN_TTL = '768h';

export interface DevOpenBao {
  readonly server: OpenBaoServer;
  readonly dir: string;
  /** The unseal key and the root token (mode 0600). */
  readonly secretsFile: string;
  /** PAYLOAD_KEY_PROVIDER, PAYLOAD_VAULT_ADDR, PAYLOAD_VAULT_TOKEN for the worker, the console and a CLI. */
  readonly env: Readonly<Record<string, string>>;
  /** The same variables as a file a shell can source (mode 0600). */
  readonly envFile: string;
}

export async function startDevOpenBao(cacheDir: string): Promise<DevOpenBao> {
  const dir = join(cacheDir, 'openbao-dev');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const secretsFile = join(dir, 'root-and-unseal-key.json');
  const server = await OpenBaoServer.open({ dir, transitKey: TRANSIT_KEY, secretsFile, tied: true });
  try {
    const token = await server.token('dev-stack-payloads', workerPolicy(TRANSIT_KEY), TOKEN_TTL);
    const env = { PAYLOAD_KEY_PROVIDER: 'vault-transit', PAYLOAD_VAULT_ADDR: server.address, PAYLOAD_VAULT_TOKEN: token, PAYLOAD_VAULT_TRANSIT_KEY: TRANSIT_KEY };
    const envFile = join(dir, 'client.env');
    const lines = Object.entries(env).map(([name, value]) => `${name}=${value}`);
    await writeFile(envFile, `# Written by npm start (DEV_KEY_PROVIDER=openbao) for this run: set -a; . ${envFile}; set +a\n${lines.join('\n')}\n`, { mode: 0o600 });
    return { server, dir, secretsFile, env, envFile };
  } catch (error) {
    await server.stop();
    throw error;
  }
}
