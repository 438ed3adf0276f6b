/**
 * OpenBao as production runs it, for rehearsals that restart the KMS: `bao server -config` with
 * integrated (raft) storage in a directory (OpenBao has no "file" backend; a `-dev` server keeps
 * everything in memory and would lose its transit keys on a restart), initialised with a single key
 * share, unsealed with it after every start, and a file audit device declared in the config, so
 * every call a process makes is on record across restarts. The transit engine is enabled and one
 * transit key created at the first start. `restart()` stops the process and starts it again on the
 * same storage, ports and config, and unseals it. `open()` is the persistent variant `npm start`
 * uses: the same server on storage that outlives it, initialised at the first start only, its unseal
 * key and root token kept in a 0600 file beside the storage.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { exitOf, hasExited } from './child-exit.js';
import { freePort } from './free-port.js';
import { openBaoPath } from './openbao-binary.js';
import { killTied, spawnTiedToParent } from './parent-lifetime.js';

const ACTIVE_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 10_000;
/** One administrative call: 10 s was once too little on a loaded machine (OpenBao mid post-unseal setup). */
const CALL_TIMEOUT_MS = 30_000;

export class OpenBaoServerError extends Error {
  override readonly name = 'OpenBaoServerError';
}

export interface OpenBaoServerOptions {
  /** Storage, config, audit log and the server's own log live here (it must exist). */
  readonly dir: string;
  readonly transitKey: string;
  /** Each started process is handed to this (a run kills whatever is left on its way out). */
  readonly track?: (child: ChildProcess) => void;
  /** The process ends with this one however this one ends (scripts/lib/parent-lifetime.ts). */
  readonly tied?: boolean;
}

/** What `open()` keeps so that a later start can unseal the same storage and act as root. */
interface OpenBaoSecrets {
  readonly unsealKey: string;
  readonly rootToken: string;
}

/**
 * The policy a worker or client needs on a transit key and its tenants' keys (`<key>-tenant-*`):
 * make data keys and unwrap them, and create a tenant's key on its first use; nothing else (no
 * key's config, no deletion).
 */
export function workerPolicy(key: string, mount = 'transit'): string {
  return [
    `path "${mount}/datakey/plaintext/${key}" { capabilities = ["update"] }`,
    `path "${mount}/decrypt/${key}" { capabilities = ["update"] }`,
    `path "${mount}/datakey/plaintext/${key}-tenant-*" { capabilities = ["update"] }`,
    `path "${mount}/decrypt/${key}-tenant-*" { capabilities = ["update"] }`,
    // Creating a key is an update of its own path. A glob there (…-tenant-*) would also match its
    // config and rotate paths below it (Vault's * matches "/"); + matches one segment only, and the
    // one parameter allowed makes it a create of an AES key and nothing else (an existing key is left as it is).
    `path "${mount}/keys/+" { capabilities = ["update"] allowed_parameters = { "type" = ["aes256-gcm96"] } }`,
    '',
  ].join('\n');
}

/** A reader of one tenant only: unwraps that tenant's data keys (its transit key), nothing of the others' or the product's. */
export function tenantReaderPolicy(key: string, tenant: string, mount = 'transit'): string {
  return `path "${mount}/decrypt/${key}-tenant-${tenant}" { capabilities = ["update"] }\n`;
}

/** The settings a process needs to seal with this transit key on `address` with `token` (every payload in history: no payload store). */
export function transitProcessEnv(address: string, token: string, key: string, mount = 'transit'): Record<string, string> {
  return {
    PAYLOAD_KEY_PROVIDER: 'vault-transit',
    PAYLOAD_VAULT_ADDR: address,
    PAYLOAD_VAULT_TOKEN: token,
    PAYLOAD_VAULT_TRANSIT_MOUNT: mount,
    PAYLOAD_VAULT_TRANSIT_KEY: key,
    PAYLOAD_STORE: 'off',
  };
}

export class OpenBaoServer {
  private child: ChildProcess | undefined;
  private unsealKey = '';
  private rootToken = '';
  /** Starts (each one unsealed) of the process, the first included. */
  starts = 0;

  private constructor(
    private readonly options: OpenBaoServerOptions,
    readonly address: string,
    private readonly configFile: string,
    /** The file audit device's log: one JSON object per request and per response. */
    readonly auditLog: string,
    readonly logPath: string,
  ) {}

  /** Writes the config, starts the server, initialises it (one key share) and unseals it; transit key created. */
  static async start(options: OpenBaoServerOptions): Promise<OpenBaoServer> {
    const server = await OpenBaoServer.launch(options, 'rehearsal');
    await server.initialise();
    await server.unseal();
    await server.call('POST', 'sys/mounts/transit', { type: 'transit' });
    await server.call('POST', `transit/keys/${options.transitKey}`, {});
    return server;
  }

  /**
   * Starts the server on the storage in `dir`: initialised (secrets written to `secretsFile`, mode
   * 0600) if it never was, else unsealed with the key read from that file; transit enabled and the key
   * created when missing. Ports are new each start.
   */
  static async open(options: OpenBaoServerOptions & { readonly secretsFile: string }): Promise<OpenBaoServer> {
    const server = await OpenBaoServer.launch(options, 'dev');
    const status = await server.call('GET', 'sys/init', undefined, false);
    if (status.initialized === true) {
      let secrets: Partial<OpenBaoSecrets>;
      try {
        secrets = JSON.parse(await readFile(options.secretsFile, 'utf8')) as Partial<OpenBaoSecrets>;
      } catch (error) {
        await server.stop();
        throw new OpenBaoServerError(
          `openbao's storage in ${options.dir} is initialised but its unseal key cannot be read from ${options.secretsFile} (${(error as Error).message}): restore that file, or delete ${options.dir} to start over (its transit keys, and the payloads they wrapped, are then lost)`,
        );
      }
      if (typeof secrets.unsealKey !== 'string' || typeof secrets.rootToken !== 'string') {
        await server.stop();
        throw new OpenBaoServerError(`${options.secretsFile} holds no unsealKey and rootToken`);
      }
      server.unsealKey = secrets.unsealKey;
      server.rootToken = secrets.rootToken;
    } else {
      await server.initialise();
      const secrets: OpenBaoSecrets = { unsealKey: server.unsealKey, rootToken: server.rootToken };
      await writeFile(options.secretsFile, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
    }
    await server.unseal();
    const mounts = await server.call('GET', 'sys/mounts');
    if (!('transit/' in ((mounts.data as Record<string, unknown> | undefined) ?? mounts))) await server.call('POST', 'sys/mounts/transit', { type: 'transit' });
    const keys = await server.call('GET', 'transit/keys?list=true', undefined, true, [404]);
    const names = (keys.data as { keys?: unknown } | undefined)?.keys;
    if (!Array.isArray(names) || !names.includes(options.transitKey)) await server.call('POST', `transit/keys/${options.transitKey}`, {});
    return server;
  }

  /**
   * Config written (fresh ports), process started and listening; not yet initialised or unsealed. A
   * port picked free can be taken by another process before bao binds it (test files run side by
   * side): such a start is tried again on other ports, twice.
   */
  private static async launch(options: OpenBaoServerOptions, nodeId: string): Promise<OpenBaoServer> {
    for (let attempt = 1; ; attempt++) {
      const logPath = join(options.dir, 'openbao.log');
      const logBefore = await stat(logPath).then(
        (info) => info.size,
        () => 0,
      );
      const server = await OpenBaoServer.configure(options, nodeId);
      try {
        await server.spawnServer();
        return server;
      } catch (error) {
        await server.stop().catch(() => undefined);
        await delay(100); // the log stream ends at the exit: let its last lines reach the file
        const logged = await readFile(logPath).then(
          (bytes) => bytes.subarray(logBefore).toString('utf8'),
          () => '',
        );
        if (attempt === 3 || !/address already in use/.test(logged)) throw error;
      }
    }
  }

  /** The config on fresh ports, and the server that will run it (not started). */
  private static async configure(options: OpenBaoServerOptions, nodeId: string): Promise<OpenBaoServer> {
    const [port, clusterPort] = [await freePort(), await freePort()];
    const storage = join(options.dir, 'storage');
    await mkdir(storage, { recursive: true });
    const auditLog = join(options.dir, 'audit.log');
    const configFile = join(options.dir, 'openbao.hcl');
    const address = `http://127.0.0.1:${port}`;
    await writeFile(
      configFile,
      [
        `storage "raft" {\n  path = "${storage}"\n  node_id = "${nodeId}"\n}`,
        `listener "tcp" {\n  address = "127.0.0.1:${port}"\n  cluster_address = "127.0.0.1:${clusterPort}"\n  tls_disable = true\n}`,
        `api_addr = "${address}"`,
        `cluster_addr = "http://127.0.0.1:${clusterPort}"`,
        `audit "file" "kms-calls" {\n  options {\n    file_path = "${auditLog}"\n  }\n}`,
        '',
      ].join('\n'),
    );
    return new OpenBaoServer(options, address, configFile, auditLog, join(options.dir, 'openbao.log'));
  }

  /** sys/init with one key share: the unseal key and root token kept in memory. */
  private async initialise(): Promise<void> {
    const init = await this.call('POST', 'sys/init', { secret_shares: 1, secret_threshold: 1 }, false);
    const keys = init.keys_base64;
    if (!Array.isArray(keys) || typeof keys[0] !== 'string' || typeof init.root_token !== 'string')
      throw new OpenBaoServerError(`openbao's init answered without a key share and a root token; see ${this.logPath}`);
    this.unsealKey = keys[0];
    this.rootToken = init.root_token;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** A token whose only policy is `policy` (HCL), named `name`. */
  async token(name: string, policy: string, ttl = '24h'): Promise<string> {
    return (await this.tokenWithAccessor(name, policy, ttl)).token;
  }

  /** The same, with the token's accessor: what renews or revokes it without the token itself. */
  async tokenWithAccessor(name: string, policy: string, ttl: string): Promise<{ readonly token: string; readonly accessor: string }> {
    await this.call('POST', `sys/policies/acl/${name}`, { policy });
    const answer = await this.call('POST', 'auth/token/create', { policies: [name], no_default_policy: true, ttl });
    const { client_token: token, accessor } = (answer.auth ?? {}) as { client_token?: unknown; accessor?: unknown };
    if (typeof token !== 'string' || typeof accessor !== 'string') throw new OpenBaoServerError(`openbao created no token for policy ${name}`);
    return { token, accessor };
  }

  /** Renews a token by its accessor for `increment` more (within its policy's maximum). */
  async renewAccessor(accessor: string, increment: string): Promise<void> {
    await this.call('POST', 'auth/token/renew-accessor', { accessor, increment });
  }

  /** Revokes a token by its accessor; one already revoked or expired is no error. */
  async revokeAccessor(accessor: string): Promise<void> {
    await this.call('POST', 'auth/token/revoke-accessor', { accessor }, true, [400, 403, 404]);
  }

  /** Whether a token is still valid (it can look itself up). */
  async tokenValid(token: string): Promise<boolean> {
    const response = await fetch(`${this.address}/v1/auth/token/lookup-self`, {
      headers: { 'x-vault-token': token },
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    return response.ok;
  }

  /**
   * Rotates the transit key and every tenant's key made under it (`<key>-tenant-*`), as an operator
   * rotates a product's keys; resolves with the product key's latest version after the rotation.
   */
  async rotate(): Promise<number> {
    for (const tenantKey of await this.tenantKeys()) await this.call('POST', `transit/keys/${tenantKey}/rotate`, {});
    const answer = await this.call('POST', `transit/keys/${this.options.transitKey}/rotate`, {});
    return latestVersionOf(answer);
  }

  /** Destroys a transit key for good (a forgotten lender's): deletion allowed, then deleted. */
  async destroyKey(name: string): Promise<void> {
    await this.call('POST', `transit/keys/${name}/config`, { deletion_allowed: true });
    await this.call('DELETE', `transit/keys/${name}`);
  }

  /** The tenants' transit keys made so far under the product's key (`<key>-tenant-<customerId>`). */
  async tenantKeys(): Promise<string[]> {
    const answer = await this.call('LIST', 'transit/keys', undefined, true, [404]);
    const keys = (answer.data as { keys?: unknown } | undefined)?.keys;
    return Array.isArray(keys) ? keys.filter((key): key is string => typeof key === 'string' && key.startsWith(`${this.options.transitKey}-tenant-`)) : [];
  }

  async latestVersion(): Promise<number> {
    return latestVersionOf(await this.call('GET', `transit/keys/${this.options.transitKey}`));
  }

  /** SIGTERM (SIGKILL after a grace period); resolves once the process is gone. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || hasExited(child)) return;
    const exited = exitOf(child);
    killTied(child, 'SIGTERM');
    const timer = setTimeout(() => killTied(child, 'SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  /** Starts the stopped server again on the same storage and unseals it (sealed, it answers nothing). */
  async startAgain(): Promise<void> {
    await this.spawnServer();
    await this.unseal();
  }

  private async spawnServer(): Promise<void> {
    const log = createWriteStream(this.logPath, { flags: 'a' });
    // HOME: bao keeps a token helper file there; the run's directory, not the user's.
    const args = ['server', `-config=${this.configFile}`];
    const child = this.options.tied
      ? spawnTiedToParent(openBaoPath(), args, { env: { PATH: process.env.PATH, HOME: this.options.dir } })
      : spawn(openBaoPath(), args, { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: this.options.dir } });
    this.options.track?.(child);
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    void exitOf(child).then(() => log.end());
    this.child = child;
    this.starts += 1;
    await this.waitUntil((status) => status === 200 || status === 501 || status === 503, 'listening');
  }

  private async unseal(): Promise<void> {
    const answer = await this.call('POST', 'sys/unseal', { key: this.unsealKey }, false);
    if (answer.sealed !== false) throw new OpenBaoServerError(`openbao is still sealed after its unseal key; see ${this.logPath}`);
    // Unsealed, raft elects this node leader: 429 (standby) until it is active.
    await this.waitUntil((status) => status === 200, 'active');
  }

  /** Polls sys/health until `ready(status)`; fails at once if the process exits. */
  private async waitUntil(ready: (status: number) => boolean, what: string): Promise<void> {
    const child = this.child;
    const deadline = Date.now() + ACTIVE_TIMEOUT_MS;
    let last = 'no answer';
    while (Date.now() < deadline) {
      if (!child || hasExited(child))
        throw new OpenBaoServerError(`openbao exited before it was ${what} (${child ? await exitOf(child) : 'not started'}); see ${this.logPath}`);
      try {
        const response = await fetch(`${this.address}/v1/sys/health`, { signal: AbortSignal.timeout(2_000) });
        await response.arrayBuffer();
        if (ready(response.status)) return;
        last = `HTTP ${response.status}`;
      } catch (error) {
        last = error instanceof Error ? error.message : String(error);
      }
      await delay(100);
    }
    throw new OpenBaoServerError(`openbao was not ${what} after ${ACTIVE_TIMEOUT_MS} ms (last: ${last}); see ${this.logPath}`);
  }

  /** One API call, as root unless `authenticated` is false; anything but 2xx is an error naming the call. */
  private async call(
    method: 'GET' | 'POST' | 'LIST' | 'DELETE',
    path: string,
    body?: unknown,
    authenticated = true,
    alsoOk: readonly number[] = [],
  ): Promise<Record<string, unknown>> {
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.address}/v1/${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...(authenticated ? { 'x-vault-token': this.rootToken } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
      text = await response.text();
    } catch (error) {
      // Name the call: a loaded machine once left one unanswered, and only "TimeoutError" reached the log.
      throw new OpenBaoServerError(
        `openbao ${method} /v1/${path}: no answer within ${CALL_TIMEOUT_MS / 1000} s (${error instanceof Error ? error.message : String(error)}); see ${this.logPath}`,
      );
    }
    if (alsoOk.includes(response.status)) return {};
    if (!response.ok) throw new OpenBaoServerError(`openbao ${method} /v1/${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
    return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  }
}

function latestVersionOf(answer: Record<string, unknown>): number {
  const version = (answer.data as { latest_version?: unknown } | undefined)?.latest_version;
  if (typeof version !== 'number') throw new OpenBaoServerError('openbao answered a transit key without data.latest_version');
  return version;
}
