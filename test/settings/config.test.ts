import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadBenchConfig } from '../../scripts/lib/bench-settings.js';
import { loadDemoConfig } from '../../scripts/demo-settings.js';
import { loadReplayConfig, loadTestConfig, loadTestRunConfig } from '../../scripts/lib/test-settings.js';
import { loadToolchainConfig } from '../../scripts/lib/toolchain-settings.js';
import { connectionPasswordFromEnv, loadClientConfig } from '../../src/settings/client.js';
import { loadConsoleConfig } from '../../src/settings/console.js';
import { loadDevStackConfig } from '../../scripts/lib/dev-stack-settings.js';
import { configuredKeysOf } from '../../src/codec/key-provider.js';
import { ConfigError } from '../../src/settings/load.js';
import { loadSandboxConfig } from '../../sandbox/settings.js';
import { loadWorkerConfig as loadConfig, retentionDaysOf } from '../../src/settings/worker.js';
import { temporalConnectionOptions, temporalSettingsSource } from '../../src/temporal/connection.js';

/** The message of the ConfigError `load` throws. */
function problemsOf(load: () => unknown): string {
  try {
    load();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error.message;
  }
  return assert.fail('expected the configuration to be refused');
}

describe('loadWorkerConfig', () => {
  it('applies the embedded defaults to an empty environment', () => {
    const config = loadConfig({});
    assert.equal(config.temporal.address, 'localhost:7233');
    assert.equal(config.temporal.taskQueue, 'aggregation-connections');
    assert.equal(config.aggregator.baseUrl, 'http://127.0.0.1:4010');
    assert.equal(config.aggregator.auth, undefined, 'no credential header without AGGREGATOR_AUTH_SECRET');
    assert.deepEqual(loadConfig({ AGGREGATOR_AUTH_SECRET: 's3cret' }).aggregator.auth, { header: 'x-api-key', value: 's3cret' });
    assert.equal(config.temporal.transport.tls, false);
    assert.deepEqual(config.metrics, { host: '127.0.0.1', port: 9464 });
    assert.equal(config.logLevel, 'INFO');
    for (const section of [config, config.temporal, config.temporal.transport, config.aggregator, config.metrics, config.workflows, config.payloadStore])
      assert.ok(Object.isFrozen(section));
  });

  it('treats an empty variable as unset', () => {
    assert.equal(loadConfig({ TEMPORAL_ADDRESS: '' }).temporal.address, 'localhost:7233');
  });

  it('names every bad variable in one error', () => {
    assert.throws(
      () => loadConfig({ TEMPORAL_ADDRESS: 'no-port', AGGREGATOR_BASE_URL: 'ftp://x', WORKER_METRICS_PORT: '70000', TEMPORAL_TLS: 'maybe' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        for (const name of ['TEMPORAL_ADDRESS', 'AGGREGATOR_BASE_URL', 'WORKER_METRICS_PORT', 'TEMPORAL_TLS']) assert.match(error.message, new RegExp(name));
        return true;
      },
    );
  });

  it('refuses a TLS certificate without its key', () => {
    assert.throws(() => loadConfig({ TEMPORAL_TLS_CERT_PATH: '/tmp/cert.pem' }), /go together/);
  });

  it("reads the worker's tuning knobs, leaving the SDK's defaults when unset", () => {
    const defaults = loadConfig({});
    assert.deepEqual(
      [defaults.workflows.pollers, defaults.workflows.reuseV8Context, defaults.activities.maxConcurrent, defaults.resourceTuner],
      [undefined, undefined, undefined, undefined],
    );
    const tuned = loadConfig({ WORKER_WORKFLOW_POLLERS: '4', WORKER_REUSE_V8_CONTEXT: 'false', WORKER_MAX_CONCURRENT_ACTIVITIES: '2100' });
    assert.deepEqual([tuned.workflows.pollers, tuned.workflows.reuseV8Context, tuned.activities.maxConcurrent], [4, false, 2100]);
    assert.deepEqual(loadConfig({ WORKER_RESOURCE_TUNER: '0.8,0.9' }).resourceTuner, { targetMemoryUsage: 0.8, targetCpuUsage: 0.9 });
  });

  it('refuses bad tuning knobs, naming each', () => {
    const message = problemsOf(() =>
      loadConfig({ WORKER_WORKFLOW_POLLERS: '1', WORKER_REUSE_V8_CONTEXT: 'yes', WORKER_MAX_CONCURRENT_ACTIVITIES: '0', WORKER_RESOURCE_TUNER: '80,90' }),
    );
    for (const name of [
      'WORKER_WORKFLOW_POLLERS',
      'WORKER_REUSE_V8_CONTEXT',
      'WORKER_MAX_CONCURRENT_ACTIVITIES',
      'WORKER_RESOURCE_TUNER: must be two fractions',
    ])
      assert.match(message, new RegExp(name));
    assert.match(
      problemsOf(() => loadConfig({ WORKER_RESOURCE_TUNER: '0.8,0.9', WORKER_MAX_CONCURRENT_ACTIVITIES: '500' })),
      /WORKER_MAX_CONCURRENT_ACTIVITIES: cannot be set with WORKER_RESOURCE_TUNER/,
    );
    assert.match(
      problemsOf(() => loadConfig({ WORKER_RESOURCE_TUNER: '0.8,0.9', WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '8' })),
      /WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: cannot be set with WORKER_RESOURCE_TUNER/,
    );
    assert.match(
      problemsOf(() => loadConfig({ WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '1' })),
      /WORKER_MAX_CONCURRENT_WORKFLOW_TASKS/,
    );
    // Few workflow task slots by default, so a backlog waits on the server in priority order; none with the tuner.
    assert.equal(loadConfig({}).workflows.maxConcurrentTasks, 4);
    assert.equal(loadConfig({ WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '12' }).workflows.maxConcurrentTasks, 12);
    assert.equal(loadConfig({ WORKER_RESOURCE_TUNER: '0.8,0.9' }).workflows.maxConcurrentTasks, undefined);
    // The sticky queue's wait: 1 s unless set (the SDK's 10 s kept tasks out of fairness's reach); a value outside 100 ms..10 min is named.
    assert.equal(loadConfig({}).workflows.stickyTimeoutMs, 1000);
    assert.equal(loadConfig({ WORKER_STICKY_TIMEOUT_MS: '1000' }).workflows.stickyTimeoutMs, 1000);
    assert.match(
      problemsOf(() => loadConfig({ WORKER_STICKY_TIMEOUT_MS: '5' })),
      /WORKER_STICKY_TIMEOUT_MS/,
    );
  });

  it("polls the service queue, the unattended pool's or both, as WORKER_POOL and UNATTENDED_POOL say", () => {
    const queue = { TEMPORAL_TASK_QUEUE: 'fleet' };
    assert.deepEqual(loadConfig(queue).pool, {
      unattended: 'shared',
      unattendedTaskQueue: 'fleet',
      taskQueues: ['fleet'],
      nice: 0,
      unattendedNice: 0,
      admission: 'off',
    });
    assert.equal(loadConfig({ ...queue, UNATTENDED_ADMISSION: 'window' }).pool.admission, 'window');
    assert.deepEqual(loadConfig({ ...queue, UNATTENDED_POOL: 'separate' }).pool.taskQueues, ['fleet', 'fleet-unattended']);
    assert.deepEqual(loadConfig({ ...queue, UNATTENDED_POOL: 'separate', WORKER_POOL: 'service' }).pool.taskQueues, ['fleet']);
    assert.deepEqual(loadConfig({ ...queue, UNATTENDED_POOL: 'separate', WORKER_POOL: 'unattended', WORKER_NICE: '10' }).pool, {
      unattended: 'separate',
      unattendedTaskQueue: 'fleet-unattended',
      taskQueues: ['fleet-unattended'],
      nice: 10,
      unattendedNice: 0,
      admission: 'off',
    });
    // The unattended pool's threads are lowered only beside the service queue's worker, in one process.
    assert.equal(loadConfig({ ...queue, UNATTENDED_POOL: 'separate', WORKER_UNATTENDED_NICE: '19' }).pool.unattendedNice, 19);
    assert.equal(loadConfig({ ...queue, UNATTENDED_POOL: 'separate', WORKER_POOL: 'unattended', WORKER_UNATTENDED_NICE: '19' }).pool.unattendedNice, 0);
    assert.equal(loadConfig({ ...queue, WORKER_UNATTENDED_NICE: '19' }).pool.unattendedNice, 0, 'one shared queue: nothing to lower apart');
    assert.equal(loadClientConfig({ ...queue, UNATTENDED_POOL: 'separate' }).pools.unattendedTaskQueue, 'fleet-unattended');
    assert.equal(loadClientConfig(queue).pools.unattendedTaskQueue, 'fleet');
    // An unattended worker with the pool shared would poll a queue nothing starts work on.
    assert.match(
      problemsOf(() => loadConfig({ ...queue, WORKER_POOL: 'unattended' })),
      /WORKER_POOL: unattended needs UNATTENDED_POOL=separate/,
    );
    const message = problemsOf(() =>
      loadConfig({ UNATTENDED_POOL: 'own', WORKER_POOL: 'live', WORKER_NICE: '20', WORKER_UNATTENDED_NICE: '-1', UNATTENDED_ADMISSION: 'on' }),
    );
    for (const problem of [
      'UNATTENDED_POOL: must be shared or separate',
      'WORKER_POOL: must be all, service or unattended',
      'WORKER_NICE: must be a whole number from 0 to 19',
      'WORKER_UNATTENDED_NICE: must be a whole number from 0 to 19',
      'UNATTENDED_ADMISSION: must be off or window',
    ])
      assert.match(message, new RegExp(problem));
  });
});

describe('payload encryption settings', () => {
  const KEY = Buffer.alloc(32, 7).toString('base64');
  const OLD = Buffer.alloc(32, 9).toString('base64');
  const loaders = {
    worker: (env: NodeJS.ProcessEnv) => loadConfig(env),
    client: (env: NodeJS.ProcessEnv) => loadClientConfig(env),
    console: (env: NodeJS.ProcessEnv) => loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), ...env }),
  };

  const problems = problemsOf;

  for (const [name, load] of Object.entries(loaders)) {
    it(`gives the ${name} a generated local key by default with Temporal on this machine, the same one every time`, async () => {
      const keyFile = join(await mkdtemp(join(tmpdir(), 'payload-key-')), 'nested', 'payload-encryption.key');
      const first = configuredKeysOf(load({ PAYLOAD_ENCRYPTION_KEY_FILE: keyFile }).encryption);
      assert.match(first?.keyId ?? '', /^local-[0-9a-f]{8}$/);
      assert.equal(first?.key.length, 32);
      const again = configuredKeysOf(load({ PAYLOAD_ENCRYPTION_KEY_FILE: keyFile, TEMPORAL_ADDRESS: '127.0.0.1:7233' }).encryption);
      assert.equal(again?.keyId, first?.keyId, 'found the same way by every process');
      assert.deepEqual(Buffer.from(again?.key ?? []), Buffer.from(first?.key ?? []));
      assert.equal((await stat(keyFile)).mode & 0o777, 0o600, 'readable by its owner only');
    });

    it(`gives the ${name} no local key with a KMS: the file is neither made nor read, and static payloads read through listed keys only`, async () => {
      const keyFile = join(await mkdtemp(join(tmpdir(), 'payload-key-')), 'payload-encryption.key');
      const kms = {
        PAYLOAD_KEY_PROVIDER: 'vault-transit',
        PAYLOAD_VAULT_ADDR: 'http://127.0.0.1:8200',
        PAYLOAD_VAULT_TOKEN: 's.test',
        PAYLOAD_ENCRYPTION_KEY_FILE: keyFile,
      };
      assert.equal(configuredKeysOf(load(kms).encryption), undefined);
      await assert.rejects(stat(keyFile), /ENOENT/, 'not made');
      await writeFile(keyFile, `local-0000abcd:${KEY}\n`, { mode: 0o600 });
      assert.equal(configuredKeysOf(load(kms).encryption), undefined, 'not read either');
      const listed = configuredKeysOf(load({ ...kms, PAYLOAD_DECRYPTION_KEYS: `local-0000abcd:${KEY}` }).encryption);
      assert.equal(listed?.keyId, 'local-0000abcd', 'a listed key reads the payloads written before the switch');
    });

    it(`refuses to start the ${name} without a key when Temporal is not on this machine, unless encryption is off`, () => {
      const message = problems(() => load({ TEMPORAL_ADDRESS: 'temporal.internal.example:7233' }));
      assert.match(message, /PAYLOAD_ENCRYPTION_KEY: is required with Temporal at temporal\.internal\.example:7233, not on this machine/);
      assert.match(message, /PAYLOAD_ENCRYPTION=off/);
      assert.equal(load({ TEMPORAL_ADDRESS: 'temporal.internal.example:7233', PAYLOAD_ENCRYPTION: 'off' }).encryption, undefined);
      assert.match(
        problems(() => load({ PAYLOAD_ENCRYPTION: 'off', PAYLOAD_ENCRYPTION_KEY: KEY })),
        /PAYLOAD_ENCRYPTION: is off but PAYLOAD_ENCRYPTION_KEY is set/,
      );
      assert.equal('PAYLOAD_ENCRYPTION_KEY' in load({ PAYLOAD_ENCRYPTION_KEY: KEY }), false, 'the raw variable does not stay in the config');
    });

    it(`refuses a damaged key file for the ${name}, naming the file`, async () => {
      const keyFile = join(await mkdtemp(join(tmpdir(), 'payload-key-')), 'payload-encryption.key');
      await writeFile(keyFile, 'not a key');
      assert.match(
        problems(() => load({ PAYLOAD_ENCRYPTION_KEY_FILE: keyFile })),
        /PAYLOAD_ENCRYPTION_KEY_FILE: payload key file .* must hold one line/,
      );
    });

    it(`reads the ${name}'s key, key id and earlier keys`, () => {
      const encryption = configuredKeysOf(
        load({ PAYLOAD_ENCRYPTION_KEY: KEY, PAYLOAD_ENCRYPTION_KEY_ID: '2025-q3', PAYLOAD_DECRYPTION_KEYS: ` 2024-q1:${OLD} ,` }).encryption,
      );
      assert.equal(encryption?.keyId, '2025-q3');
      assert.deepEqual(Buffer.from(encryption?.key ?? []), Buffer.alloc(32, 7));
      assert.deepEqual([...(encryption?.decryptionKeys?.keys() ?? [])], ['2024-q1']);
      assert.deepEqual(Buffer.from(encryption?.decryptionKeys?.get('2024-q1') ?? []), Buffer.alloc(32, 9));
      assert.equal(load({ PAYLOAD_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64url') }).encryption?.keyId, 'default', 'URL-safe base64 too');
    });
  }

  it('keys per tenant in static mode: a directory of key files, made where Temporal is on this machine, refused with a KMS, off or PAYLOAD_TENANT_KEYS=false', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tenant-keys-'));
    const local = loadConfig({ PAYLOAD_ENCRYPTION_KEY: KEY, PAYLOAD_TENANT_KEYS_DIR: dir, TEMPORAL_ADDRESS: '127.0.0.1:7233' }).encryption;
    assert.deepEqual(configuredKeysOf(local)?.tenantKeyFiles, { dir, createMissing: true });
    const remote = loadClientConfig({
      PAYLOAD_ENCRYPTION_KEY: KEY,
      PAYLOAD_TENANT_KEYS_DIR: dir,
      TEMPORAL_ADDRESS: 'temporal.internal.example:7233',
    }).encryption;
    assert.deepEqual(
      configuredKeysOf(remote)?.tenantKeyFiles,
      { dir, createMissing: false },
      'elsewhere a tenant without a file is refused, not given a new key',
    );
    assert.equal(configuredKeysOf(loadConfig({ PAYLOAD_ENCRYPTION_KEY: KEY }).encryption)?.tenantKeyFiles, undefined, 'unset: one key for every tenant');
    assert.match(
      problems(() =>
        loadConfig({ PAYLOAD_ENCRYPTION_KEY: KEY, PAYLOAD_TENANT_KEYS_DIR: join(dir, 'absent'), TEMPORAL_ADDRESS: 'temporal.internal.example:7233' }),
      ),
      /PAYLOAD_TENANT_KEYS_DIR: .*absent is not a directory: provision the tenants' key files there/,
    );
    const kms = {
      PAYLOAD_KEY_PROVIDER: 'vault-transit',
      PAYLOAD_VAULT_ADDR: 'http://127.0.0.1:8200',
      PAYLOAD_VAULT_TOKEN: 's.test',
      PAYLOAD_TENANT_KEYS_DIR: dir,
    };
    assert.match(
      problems(() => loadConfig(kms)),
      /PAYLOAD_TENANT_KEYS_DIR: is set but PAYLOAD_KEY_PROVIDER is vault-transit: a KMS keeps a key per tenant itself/,
    );
    assert.match(
      problems(() => loadConfig({ PAYLOAD_ENCRYPTION: 'off', PAYLOAD_TENANT_KEYS_DIR: dir })),
      /PAYLOAD_TENANT_KEYS_DIR: is set but PAYLOAD_ENCRYPTION is off/,
    );
    assert.match(
      problems(() => loadConfig({ PAYLOAD_ENCRYPTION_KEY: KEY, PAYLOAD_TENANT_KEYS: 'false', PAYLOAD_TENANT_KEYS_DIR: dir })),
      /PAYLOAD_TENANT_KEYS_DIR: is set but PAYLOAD_TENANT_KEYS is false/,
    );
  });

  it('refuses a key that is not base64, naming the variable', () => {
    const message = problems(() => loadConfig({ PAYLOAD_ENCRYPTION_KEY: 'not base64!' }));
    assert.match(message, /PAYLOAD_ENCRYPTION_KEY: must be base64 \(generate one with `openssl rand -base64 32`\)/);
    assert.match(
      problems(() => loadClientConfig({ PAYLOAD_ENCRYPTION_KEY: 'abc=def' })),
      /PAYLOAD_ENCRYPTION_KEY: must be base64/,
    );
  });

  it('refuses a key of the wrong length, saying how long it is', () => {
    assert.match(
      problems(() => loadConfig({ PAYLOAD_ENCRYPTION_KEY: randomBytes(16).toString('base64') })),
      /PAYLOAD_ENCRYPTION_KEY: must be base64 of exactly 32 bytes, got 16 bytes/,
    );
    assert.match(
      problems(() => loadClientConfig({ PAYLOAD_ENCRYPTION_KEY: randomBytes(33).toString('base64') })),
      /exactly 32 bytes, got 33 bytes/,
    );
  });

  it('refuses bad key ids and bad earlier keys, naming the variable and the entry', () => {
    assert.match(
      problems(() => loadConfig({ PAYLOAD_ENCRYPTION_KEY: KEY, PAYLOAD_ENCRYPTION_KEY_ID: 'has space' })),
      /PAYLOAD_ENCRYPTION_KEY_ID: must be 1 to 64 letters/,
    );
    const message = problems(() => loadConfig({ PAYLOAD_ENCRYPTION_KEY: KEY, PAYLOAD_DECRYPTION_KEYS: `old:${randomBytes(8).toString('base64')},nocolon` }));
    assert.match(message, /PAYLOAD_DECRYPTION_KEYS: entry 1 \(key id old\): the key must be base64 of exactly 32 bytes, got 8 bytes/);
    assert.match(message, /PAYLOAD_DECRYPTION_KEYS: entry 2 must be <key id>:<base64 key>/);
    assert.match(
      problems(() => loadConfig({ PAYLOAD_ENCRYPTION_KEY: KEY, PAYLOAD_DECRYPTION_KEYS: `a:${OLD},a:${OLD}` })),
      /key id a appears twice/,
    );
    assert.match(
      problems(() => loadConfig({ PAYLOAD_ENCRYPTION_KEY: KEY, PAYLOAD_DECRYPTION_KEYS: `default:${OLD}` })),
      /key id default is the current PAYLOAD_ENCRYPTION_KEY_ID/,
    );
    assert.match(
      problems(() => loadClientConfig({ PAYLOAD_DECRYPTION_KEYS: `old:${OLD}`, PAYLOAD_ENCRYPTION: 'off' })),
      /PAYLOAD_DECRYPTION_KEYS: needs PAYLOAD_ENCRYPTION_KEY/,
    );
  });

  it('allows the codec endpoint to the Web UI of a local dev server by default, and only to listed origins', () => {
    assert.deepEqual(loaders.console({}).codecCorsOrigins, ['http://localhost:8233', 'http://127.0.0.1:8233']);
    assert.deepEqual(loaders.console({ CONSOLE_CODEC_CORS_ORIGINS: 'https://temporal.example.com/, http://localhost:3000' }).codecCorsOrigins, [
      'https://temporal.example.com',
      'http://localhost:3000',
    ]);
    assert.match(
      problems(() => loaders.console({ CONSOLE_CODEC_CORS_ORIGINS: '*' })),
      /CONSOLE_CODEC_CORS_ORIGINS: "\*": must be a comma-separated list of origins/,
    );
    assert.match(
      problems(() => loaders.console({ CONSOLE_CODEC_CORS_ORIGINS: 'http://ui.example.com/path' })),
      /CONSOLE_CODEC_CORS_ORIGINS/,
    );
  });
});

describe('console sign-in settings', () => {
  const OIDC = {
    CONSOLE_OIDC_ISSUER: 'https://id.lender.example',
    CONSOLE_OIDC_CLIENT_ID: 'console',
    CONSOLE_OIDC_CLIENT_SECRET: 's'.repeat(24),
    PAYLOAD_STORE: 'off',
  };
  const PRODUCTION = {
    ...OIDC,
    CONSOLE_MODE: 'production',
    CONSOLE_SESSION_SECRET: randomBytes(32).toString('base64'),
    CONSOLE_PUBLIC_URL: 'https://console.lender.example/',
    AUDIT_STORE: 'postgres://console:pw@db.lender.example/audit?sslmode=verify-full',
  };

  it('signs operators in through the provider, with the role map and the public address the provider sends them back to', () => {
    const config = loadConsoleConfig({ ...PRODUCTION, CONSOLE_ROLE_MAP: 'a-ops=operator@lender-a, platform=admin@*' });
    assert.equal(config.token, undefined);
    assert.equal(config.signIn?.oidc.redirectUri, 'https://console.lender.example/auth/callback');
    assert.equal(config.signIn?.oidc.allowHttp, false);
    assert.deepEqual(config.signIn?.oidc.roleMap, [
      { group: 'a-ops', role: 'operator', tenant: 'lender-a' },
      { group: 'platform', role: 'admin', tenant: '*' },
    ]);
    assert.equal(config.signIn?.sessionKey.length, 32);
    assert.deepEqual(config.signIn?.bearerClients, ['aggregation-cli'], "the CLI's access tokens are taken on the API by default");
    assert.deepEqual(loadConsoleConfig({ ...PRODUCTION, CONSOLE_BEARER_CLIENTS: ' aggregation-cli , loan-pipeline ' }).signIn?.bearerClients, [
      'aggregation-cli',
      'loan-pipeline',
    ]);
    assert.deepEqual(loadConsoleConfig({ ...PRODUCTION, CONSOLE_BEARER_CLIENTS: 'none' }).signIn?.bearerClients, [], 'none: no bearer tokens');
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...PRODUCTION, CONSOLE_BEARER_CLIENTS: 'aggregation-cli,loan pipeline' })),
      /CONSOLE_BEARER_CLIENTS: "loan pipeline": must be a comma-separated list of client ids/,
    );
    assert.equal(loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), PAYLOAD_STORE: 'off' }).signIn, undefined, 'the dev stack: the shared token alone');
  });

  it('refuses the shared token in production, and requires sign-in, a session secret and an https address there', () => {
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...PRODUCTION, CONSOLE_TOKEN: 'a'.repeat(20) })),
      /CONSOLE_TOKEN: is refused with CONSOLE_MODE=production: one shared token opens every tenant and names nobody/,
    );
    const bare = problemsOf(() => loadConsoleConfig({ CONSOLE_MODE: 'production', PAYLOAD_STORE: 'off' }));
    assert.match(bare, /CONSOLE_OIDC_ISSUER: is required with CONSOLE_MODE=production/);
    assert.match(bare, /CONSOLE_SESSION_SECRET: is required with CONSOLE_MODE=production/);
    assert.match(bare, /CONSOLE_PUBLIC_URL: must be the https:\/\/ address operators open/);
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...PRODUCTION, CONSOLE_PUBLIC_URL: 'http://console.lender.example' })),
      /CONSOLE_PUBLIC_URL: must be the https:\/\/ address/,
    );
  });

  it('keeps the audit trail in PostgreSQL in production, over TLS beyond this machine; refuses another kind of address by name', () => {
    assert.equal(
      loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), PAYLOAD_STORE: 'off' }).auditStore,
      'file:.temporal/audit.jsonl',
      'the development default',
    );
    assert.equal(loadConsoleConfig(PRODUCTION).auditStore, PRODUCTION.AUDIT_STORE);
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...PRODUCTION, AUDIT_STORE: undefined })),
      /AUDIT_STORE: must be a postgres:\/\/ address with CONSOLE_MODE=production/,
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...PRODUCTION, AUDIT_STORE: 'file:/var/audit.jsonl' })),
      /AUDIT_STORE: must be a postgres:\/\/ address with CONSOLE_MODE=production/,
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...PRODUCTION, AUDIT_STORE: 'postgres://console:pw@db.lender.example/audit' })),
      /AUDIT_STORE: reaches db\.lender\.example without saying how: add \?sslmode=verify-full/,
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...PRODUCTION, AUDIT_STORE: 'postgres://console:pw@db.lender.example/audit?sslmode=disable' })),
      /AUDIT_STORE: has sslmode=disable to another host, refused with CONSOLE_MODE=production/,
    );
    const dev = { CONSOLE_TOKEN: 'a'.repeat(20), PAYLOAD_STORE: 'off' };
    assert.equal(
      loadConsoleConfig({ ...dev, AUDIT_STORE: 'postgres://temporal:temporal@postgresql:5432/audit?sslmode=disable' }).auditStore,
      'postgres://temporal:temporal@postgresql:5432/audit?sslmode=disable',
      'compose: one host, said so',
    );
    assert.equal(loadConsoleConfig({ ...dev, AUDIT_STORE: 'postgres://u:p@127.0.0.1:5432/audit' }).auditStore, 'postgres://u:p@127.0.0.1:5432/audit');
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...dev, AUDIT_STORE: 'mysql://db/audit' })),
      /AUDIT_STORE: must be file:<path> or a postgres:\/\/ address \(got mysql:\/\/\)/,
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...dev, AUDIT_STORE: 'file:' })),
      /AUDIT_STORE: file: needs a path/,
    );
    const refusal = problemsOf(() => loadConsoleConfig({ ...dev, AUDIT_STORE: 'postgres://console:hunter2secret@db.example/audit' }));
    assert.ok(!refusal.includes('hunter2secret'), `the password is never in a refusal: ${refusal}`);
  });

  it('refuses half a provider, a provider in clear beyond this machine, a bad role map and a bad session secret, by name', () => {
    assert.match(
      problemsOf(() => loadConsoleConfig({ CONSOLE_OIDC_ISSUER: 'https://id.example', PAYLOAD_STORE: 'off' })),
      /CONSOLE_OIDC_CLIENT_ID: is required with CONSOLE_OIDC_ISSUER/,
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ PAYLOAD_STORE: 'off' })),
      /CONSOLE_TOKEN: is required unless operators sign in/,
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...OIDC, CONSOLE_OIDC_ISSUER: 'http://id.example' })),
      /CONSOLE_OIDC_ISSUER: is http:\/\/ to id\.example, not on this machine/,
    );
    assert.equal(
      loadConsoleConfig({ ...OIDC, CONSOLE_OIDC_ISSUER: 'http://127.0.0.1:9000' }).signIn?.oidc.allowHttp,
      true,
      "the dev stack's provider on this machine",
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...OIDC, CONSOLE_ROLE_MAP: 'a-ops=superuser@lender-a' })),
      /CONSOLE_ROLE_MAP: entry 1 "a-ops=superuser@lender-a": the role must be one of viewer, operator, analyst, admin/,
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...OIDC, CONSOLE_ROLE_MAP: 'a-ops=operator@../b' })),
      /CONSOLE_ROLE_MAP: entry 1 .*the tenant must be a customer id or \*/,
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...OIDC, CONSOLE_ROLE_MAP: 'no-role-here' })),
      /CONSOLE_ROLE_MAP: entry 1 "no-role-here" must be <group>=<role>@<customerId or \*>/,
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ ...OIDC, CONSOLE_SESSION_SECRET: 'c2hvcnQ=' })),
      /CONSOLE_SESSION_SECRET: must be base64 of exactly 32 bytes/,
    );
  });
});

describe('console codec settings', () => {
  it('decodes only unless an encode token of its own is set; the encode token may not be the console token', () => {
    assert.equal(loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), PAYLOAD_STORE: 'off' }).codecEncodeToken, undefined);
    assert.equal(
      loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), CONSOLE_CODEC_ENCODE_TOKEN: 'e'.repeat(20), PAYLOAD_STORE: 'off' }).codecEncodeToken,
      'e'.repeat(20),
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), CONSOLE_CODEC_ENCODE_TOKEN: 'a'.repeat(20) })),
      /CONSOLE_CODEC_ENCODE_TOKEN: must differ from CONSOLE_TOKEN/,
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), CONSOLE_CODEC_ENCODE_TOKEN: 'short' })),
      /CONSOLE_CODEC_ENCODE_TOKEN: must be at least 16 characters/,
    );
    // The codec's own decode token: revocable alone, so neither the console's nor the encode token.
    assert.equal(loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), CONSOLE_CODEC_TOKEN: 'd'.repeat(20), PAYLOAD_STORE: 'off' }).codecToken, 'd'.repeat(20));
    assert.match(
      problemsOf(() => loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), CONSOLE_CODEC_TOKEN: 'a'.repeat(20) })),
      /CONSOLE_CODEC_TOKEN: must differ from CONSOLE_TOKEN/,
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), CONSOLE_CODEC_TOKEN: 'e'.repeat(20), CONSOLE_CODEC_ENCODE_TOKEN: 'e'.repeat(20) })),
      /CONSOLE_CODEC_TOKEN: must differ from CONSOLE_CODEC_ENCODE_TOKEN/,
    );
    assert.match(
      problemsOf(() => loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), CONSOLE_CODEC_TOKEN: 'short' })),
      /CONSOLE_CODEC_TOKEN: must be at least 16 characters/,
    );
  });
});

describe('payload store settings', () => {
  it('keeps large payloads in a local directory beside the dev server by default, and none against a remote Temporal', () => {
    assert.deepEqual(loadConfig({}).payloadStore, { kind: 'local', directory: '.temporal/payloads', thresholdBytes: 128 * 1024 });
    assert.deepEqual(loadClientConfig({ TEMPORAL_ADDRESS: 'temporal.example:7233', PAYLOAD_ENCRYPTION: 'off' }).payloadStore, { kind: 'off' });
    assert.equal(loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), PAYLOAD_STORE: 'off' }).payloadStore.kind, 'off');
  });

  it('reads the S3 settings, and refuses S3 without a bucket or a threshold over 256 KiB, naming the variable', () => {
    const s3 = loadConfig({
      PAYLOAD_STORE: 's3',
      PAYLOAD_STORE_S3_BUCKET: 'payloads',
      PAYLOAD_STORE_S3_PREFIX: 'prod',
      PAYLOAD_STORE_S3_ENDPOINT: 'http://127.0.0.1:9000',
      PAYLOAD_STORE_S3_FORCE_PATH_STYLE: 'true',
    }).payloadStore;
    assert.deepEqual(s3, {
      kind: 's3',
      bucket: 'payloads',
      prefix: 'prod',
      endpoint: 'http://127.0.0.1:9000',
      region: undefined,
      forcePathStyle: true,
      thresholdBytes: 128 * 1024,
    });
    assert.throws(() => loadConfig({ PAYLOAD_STORE: 's3' }), /PAYLOAD_STORE_S3_BUCKET: is required with PAYLOAD_STORE=s3/);
    assert.throws(() => loadConfig({ PAYLOAD_STORE_THRESHOLD_BYTES: String(300 * 1024) }), /PAYLOAD_STORE_THRESHOLD_BYTES/);
    assert.throws(() => loadConfig({ PAYLOAD_STORE: 'disk' }), /PAYLOAD_STORE/);
  });
});

describe('connection to Temporal', () => {
  it('gives the pipeline client the same API key and TLS settings as the worker', () => {
    const env = { TEMPORAL_ADDRESS: 'ns.tmprl.cloud:7233', TEMPORAL_API_KEY: 'key-1', PAYLOAD_ENCRYPTION_KEY: Buffer.alloc(32, 3).toString('base64') };
    assert.equal(loadClientConfig(env).temporal.transport.apiKey, 'key-1');
    assert.deepEqual(loadClientConfig(env).temporal, loadConfig(env).temporal, 'one temporal section for both');
    assert.throws(() => loadClientConfig({ TEMPORAL_TLS_KEY_PATH: '/tmp/key.pem' }), /go together/);
  });

  it('turns an API key into TLS, and a certificate pair into client-certificate TLS read from disk', async () => {
    assert.deepEqual(await temporalConnectionOptions({ address: 'h:7233', transport: { apiKey: 'k', tls: false } }), {
      address: 'h:7233',
      apiKey: 'k',
      tls: true,
    });
    assert.deepEqual(await temporalConnectionOptions({ address: 'h:7233', transport: { tls: false } }), { address: 'h:7233', tls: false });
    const dir = await mkdtemp(join(tmpdir(), 'tls-'));
    await writeFile(join(dir, 'c.pem'), 'CERT');
    await writeFile(join(dir, 'k.pem'), 'KEY');
    const options = await temporalConnectionOptions({
      address: 'h:7233',
      transport: { tls: false, tlsCertPath: join(dir, 'c.pem'), tlsKeyPath: join(dir, 'k.pem') },
    });
    assert.ok(typeof options.tls === 'object');
    assert.equal(options.tls.clientCertPair?.crt.toString(), 'CERT');
    assert.equal(options.tls.clientCertPair?.key.toString(), 'KEY');
  });

  it('reads the token from TEMPORAL_API_KEY_FILE at start and again as it connects, and refuses it with TEMPORAL_API_KEY or when the file holds no token, naming the path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'api-key-file-'));
    const file = join(dir, 'token');
    await writeFile(file, 'token-1\n');
    const env = { TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_API_KEY_FILE: file, PAYLOAD_ENCRYPTION: 'off', PAYLOAD_STORE: 'off' };
    const { transport } = loadClientConfig(env).temporal;
    assert.deepEqual(transport, { tls: false, apiKey: 'token-1', apiKeyFile: { path: file, recheckMs: 10_000 } });
    assert.deepEqual(loadConfig(env).temporal.transport, transport, 'the worker reads it as the clients do');
    assert.equal(loadClientConfig({ ...env, TEMPORAL_API_KEY_FILE_RECHECK_MS: '2000' }).temporal.transport.apiKeyFile?.recheckMs, 2000);
    await writeFile(file, 'token-2');
    assert.deepEqual(
      await temporalConnectionOptions({ address: 'h:7233', transport }),
      { address: 'h:7233', apiKey: 'token-2', tls: true },
      'read again as it connects; a token implies TLS',
    );

    const both = problemsOf(() => loadClientConfig({ ...env, TEMPORAL_API_KEY: 'key' }));
    assert.match(both, /TEMPORAL_API_KEY_FILE: TEMPORAL_API_KEY and TEMPORAL_API_KEY_FILE are both set/);
    assert.match(
      problemsOf(() => loadConfig({ ...env, TEMPORAL_API_KEY_FILE: join(dir, 'absent') })),
      new RegExp(`TEMPORAL_API_KEY_FILE: cannot read ${join(dir, 'absent')} \\(no such file\\)`),
    );
    await writeFile(file, ' \n');
    assert.match(
      problemsOf(() => loadClientConfig(env)),
      new RegExp(`TEMPORAL_API_KEY_FILE: ${file} is empty`),
    );
    await writeFile(file, 'secret-part other-part\n');
    const malformed = problemsOf(() => loadClientConfig(env));
    assert.match(malformed, new RegExp(`TEMPORAL_API_KEY_FILE: ${file} does not hold one token`));
    assert.doesNotMatch(malformed, /secret-part/, 'the content is never in a message');
    assert.match(
      problemsOf(() => loadClientConfig({ ...env, TEMPORAL_API_KEY_FILE_RECHECK_MS: '10' })),
      /TEMPORAL_API_KEY_FILE_RECHECK_MS: must be a whole number, at least 100/,
    );
  });

  it("reads a self-hosted cluster's CA and server name, either of which means TLS, into the SDK's TLS options", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tls-'));
    const pem = (label: string) => `-----BEGIN ${label}-----\n${randomBytes(12).toString('base64')}\n-----END ${label}-----\n`;
    const files = { ca: join(dir, 'ca.pem'), crt: join(dir, 'client.pem'), key: join(dir, 'client-key.pem') };
    await writeFile(files.ca, pem('CERTIFICATE'));
    await writeFile(files.crt, pem('CERTIFICATE'));
    await writeFile(files.key, pem('PRIVATE KEY'));

    assert.deepEqual(loadConfig({ TEMPORAL_TLS_CA_PATH: files.ca }).temporal.transport, { tls: true, tlsCaPath: files.ca });
    assert.deepEqual(loadClientConfig({ TEMPORAL_TLS_SERVER_NAME: 'temporal.internal' }).temporal.transport, { tls: true, tlsServerName: 'temporal.internal' });
    assert.match(
      problemsOf(() => loadConfig({ TEMPORAL_TLS_SERVER_NAME: 'not a name' })),
      /TEMPORAL_TLS_SERVER_NAME: must be a host name/,
    );

    const env = {
      TEMPORAL_TLS_CA_PATH: files.ca,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
      TEMPORAL_TLS_CERT_PATH: files.crt,
      TEMPORAL_TLS_KEY_PATH: files.key,
    };
    const { temporal } = loadConfig(env);
    assert.deepEqual(loadClientConfig(env).temporal, temporal, 'the pipeline client reads the same section');
    const options = await temporalConnectionOptions(temporal);
    assert.ok(typeof options.tls === 'object');
    assert.equal(options.tls.serverRootCACertificate?.toString(), await readFile(files.ca, 'utf8'));
    assert.equal(options.tls.serverNameOverride, 'temporal.internal');
    assert.equal(options.tls.clientCertPair?.crt.toString(), await readFile(files.crt, 'utf8'));
    assert.equal(options.tls.clientCertPair?.key.toString(), await readFile(files.key, 'utf8'));
  });

  it('refuses a missing, unreadable or non-PEM TLS file at start-up, naming the variable and the path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tls-'));
    await writeFile(join(dir, 'notes.txt'), 'not a certificate');
    const message = problemsOf(() =>
      loadClientConfig({ TEMPORAL_TLS_CA_PATH: join(dir, 'missing.pem'), TEMPORAL_TLS_CERT_PATH: dir, TEMPORAL_TLS_KEY_PATH: join(dir, 'notes.txt') }),
    );
    assert.match(message, new RegExp(`TEMPORAL_TLS_CA_PATH: cannot read ${dir}/missing\\.pem \\(no such file\\)`));
    assert.match(message, new RegExp(`TEMPORAL_TLS_CERT_PATH: cannot read ${dir} \\(a directory\\)`));
    assert.match(message, new RegExp(`TEMPORAL_TLS_KEY_PATH: ${dir}/notes\\.txt is not a PEM file`));

    // The worker stops at start-up with that message and exit code 2, no stack trace.
    const worker = spawnSync(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { PATH: process.env.PATH, TEMPORAL_TLS_CA_PATH: join(dir, 'missing.pem'), PAYLOAD_ENCRYPTION: 'off', WORKER_METRICS_PORT: '0' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(worker.status, 2, worker.stderr);
    assert.match(worker.stderr, new RegExp(`TEMPORAL_TLS_CA_PATH: cannot read ${dir}/missing\\.pem \\(no such file\\)`));
    assert.doesNotMatch(worker.stderr, /^\s+at /m, 'no stack trace');
  });
});

describe("Temporal's environment configuration (temporal.toml profiles, Temporal's own variables)", () => {
  const pem = (label: string) => `-----BEGIN ${label}-----\n${randomBytes(12).toString('base64')}\n-----END ${label}-----\n`;
  /** A temp dir with temporal.toml holding `toml`; `file` is its path. */
  async function configFile(toml: string): Promise<{ dir: string; file: string }> {
    const dir = await mkdtemp(join(tmpdir(), 'envconfig-'));
    const file = join(dir, 'temporal.toml');
    await writeFile(file, toml);
    return { dir, file };
  }
  const CLOUD = [
    '[profile.cloud]',
    'address = "ns.acct.tmprl.cloud:7233"',
    'namespace = "ns.acct"',
    'api_key = "profile-key"',
    '[profile.cloud.grpc_meta]',
    'x-team = "lending"',
    '',
  ].join('\n');
  // Encryption decides by where Temporal is; these tests are about the connection.
  const OFF = { PAYLOAD_ENCRYPTION: 'off', PAYLOAD_STORE: 'off' };

  it('uses the profile TEMPORAL_CONFIG_FILE and TEMPORAL_PROFILE name, for the worker and the client alike', async () => {
    const { file } = await configFile(`[profile.default]\naddress = "elsewhere:7233"\n\n${CLOUD}`);
    const env = { ...OFF, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud' };
    const { temporal } = loadClientConfig(env);
    assert.equal(temporal.address, 'ns.acct.tmprl.cloud:7233');
    assert.equal(temporal.namespace, 'ns.acct');
    assert.equal(temporal.taskQueue, 'aggregation-connections', 'Temporal has no task queue setting: ours, defaulted');
    assert.deepEqual(temporal.transport, { tls: false, apiKey: 'profile-key', metadata: { 'x-team': 'lending' } });
    const where = `profile "cloud" of ${file}`;
    assert.deepEqual(temporal.fromEnvConfig, { address: where, namespace: where, 'API key': where, 'gRPC metadata': where });
    assert.equal(temporalSettingsSource(temporal), `address, namespace, API key, gRPC metadata from ${where}; the rest from TEMPORAL_* variables and defaults`);
    assert.deepEqual(loadConfig(env).temporal, temporal, 'one temporal section for both');
    assert.ok(Object.isFrozen(temporal.transport) && Object.isFrozen(temporal.fromEnvConfig));
    // An API key implies TLS, the profile's metadata goes with every call.
    assert.deepEqual(await temporalConnectionOptions(temporal), {
      address: 'ns.acct.tmprl.cloud:7233',
      apiKey: 'profile-key',
      metadata: { 'x-team': 'lending' },
      tls: true,
    });
    // Without TEMPORAL_PROFILE: the "default" profile.
    assert.equal(loadClientConfig({ ...OFF, TEMPORAL_CONFIG_FILE: file }).temporal.address, 'elsewhere:7233');
    // Nothing from a profile: our variables and defaults, as before.
    assert.equal(loadClientConfig({}).temporal.fromEnvConfig, undefined);
    assert.equal(temporalSettingsSource(loadClientConfig({}).temporal), 'TEMPORAL_* variables and defaults');
  });

  it("reads the profile's TLS: its CA and client certificate (paths or inline PEM) and server name, into the SDK's TLS options", async () => {
    const ca = pem('CERTIFICATE');
    const crt = pem('CERTIFICATE');
    const key = pem('PRIVATE KEY');
    const { dir, file } = await configFile('');
    await writeFile(join(dir, 'ca.pem'), ca);
    await writeFile(join(dir, 'client-key.pem'), key);
    await writeFile(
      file,
      [
        '[profile.mtls]',
        'address = "temporal.internal:7233"',
        '[profile.mtls.tls]',
        `server_ca_cert_path = "${join(dir, 'ca.pem')}"`,
        'server_name = "temporal.internal"',
        `client_cert_data = """${crt}"""`,
        `client_key_path = "${join(dir, 'client-key.pem')}"`,
        '',
      ].join('\n'),
    );
    const { temporal } = loadConfig({ ...OFF, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'mtls' });
    assert.equal(temporal.transport.tls, true);
    assert.equal(temporal.transport.tlsServerName, 'temporal.internal');
    const options = await temporalConnectionOptions(temporal);
    assert.ok(typeof options.tls === 'object');
    assert.equal(options.tls.serverRootCACertificate?.toString(), ca);
    assert.equal(options.tls.serverNameOverride, 'temporal.internal');
    assert.equal(options.tls.clientCertPair?.crt.toString(), crt);
    assert.equal(options.tls.clientCertPair?.key.toString(), key);
    assert.match(temporalSettingsSource(temporal), /address, TLS, TLS server name, server CA certificate, client certificate from profile "mtls"/);

    // Temporal's own TLS variables, with no file at all, are read too (and named as the source).
    const fromVars = loadClientConfig({ ...OFF, TEMPORAL_TLS_SERVER_CA_CERT_PATH: join(dir, 'ca.pem') }).temporal;
    assert.equal(fromVars.transport.tls, true);
    assert.equal(fromVars.fromEnvConfig?.['server CA certificate'], 'TEMPORAL_TLS_SERVER_CA_CERT_PATH');
  });

  it('lets each of our variables win over the profile where both are set', async () => {
    const ca = pem('CERTIFICATE');
    const { dir, file } = await configFile('');
    await writeFile(join(dir, 'ours-ca.pem'), ca);
    await writeFile(file, `${CLOUD}[profile.cloud.tls]\nserver_name = "profile.name"\nserver_ca_cert_data = """${pem('CERTIFICATE')}"""\n`);
    const base = { ...OFF, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud' };
    const ours = loadClientConfig({
      ...base,
      TEMPORAL_ADDRESS: 'ours.example:7233',
      TEMPORAL_NAMESPACE: 'ours',
      TEMPORAL_API_KEY: 'our-key',
      TEMPORAL_TLS_SERVER_NAME: 'ours.name',
      TEMPORAL_TLS_CA_PATH: join(dir, 'ours-ca.pem'),
    }).temporal;
    assert.equal(ours.address, 'ours.example:7233');
    assert.equal(ours.namespace, 'ours');
    assert.deepEqual(ours.transport, {
      tls: true,
      apiKey: 'our-key',
      tlsCaPath: join(dir, 'ours-ca.pem'),
      tlsServerName: 'ours.name',
      metadata: { 'x-team': 'lending' },
    });
    assert.deepEqual(Object.keys(ours.fromEnvConfig ?? {}), ['TLS', 'gRPC metadata'], 'only what ours left unset');
    const options = await temporalConnectionOptions(ours);
    assert.ok(typeof options.tls === 'object');
    assert.equal(options.tls.serverRootCACertificate?.toString(), ca, 'our CA, not the profile one');

    // One at a time: the rest still comes from the profile.
    const mixed = loadClientConfig({ ...base, TEMPORAL_NAMESPACE: 'ours' }).temporal;
    assert.deepEqual([mixed.address, mixed.namespace, mixed.transport.apiKey], ['ns.acct.tmprl.cloud:7233', 'ours', 'profile-key']);
    // Our token file wins over the profile's api_key as TEMPORAL_API_KEY does.
    await writeFile(join(dir, 'token'), 'file-token\n');
    const fromFile = loadClientConfig({ ...base, TEMPORAL_API_KEY_FILE: join(dir, 'token') }).temporal;
    assert.equal(fromFile.transport.apiKey, 'file-token');
    assert.ok(!Object.keys(fromFile.fromEnvConfig ?? {}).includes('API key'), "the API key is not the profile's");
    // Our TEMPORAL_TLS=false turns the profile's TLS off, its CA and server name with it.
    assert.deepEqual(loadClientConfig({ ...base, TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }).temporal.transport, {
      tls: false,
      apiKey: 'k',
      metadata: { 'x-team': 'lending' },
    });
    // A value of ours that the profile would supply is not checked against the profile: a bad profile address is no problem when ours is set.
    const { file: badAddress } = await configFile('[profile.default]\naddress = "no port"\n');
    assert.equal(loadClientConfig({ ...OFF, TEMPORAL_CONFIG_FILE: badAddress, TEMPORAL_ADDRESS: 'h:7233' }).temporal.address, 'h:7233');
  });

  it("decides encryption and the payload store by the profile's address, as by ours", async () => {
    const { file } = await configFile(CLOUD);
    const message = problemsOf(() => loadConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud' }));
    assert.match(message, /PAYLOAD_ENCRYPTION_KEY: is required with Temporal at ns\.acct\.tmprl\.cloud:7233/);
    assert.match(
      problemsOf(() => loadConsoleConfig({ CONSOLE_TOKEN: 'a'.repeat(20), TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud' })),
      /PAYLOAD_ENCRYPTION_KEY: is required with Temporal at ns\.acct\.tmprl\.cloud/,
    );
    assert.deepEqual(loadClientConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud', PAYLOAD_ENCRYPTION: 'off' }).payloadStore, { kind: 'off' });
  });

  it(
    'reads the default file where the temporal CLI keeps it when TEMPORAL_CONFIG_FILE is unset; an empty file or none has no profiles',
    { skip: process.platform !== 'linux' && 'the default location is per platform' },
    async () => {
      const home = await mkdtemp(join(tmpdir(), 'envconfig-home-'));
      await mkdir(join(home, '.config', 'temporalio'), { recursive: true });
      await writeFile(join(home, '.config', 'temporalio', 'temporal.toml'), '[profile.default]\naddress = "from-home:7233"\n');
      assert.equal(loadClientConfig({ ...OFF, HOME: home }).temporal.address, 'from-home:7233');
      assert.equal(loadClientConfig({ ...OFF, HOME: join(home, 'nobody') }).temporal.address, 'localhost:7233', 'no file there: no profile, no problem');
      const { file } = await configFile('# nothing yet\n');
      assert.equal(loadClientConfig({ ...OFF, TEMPORAL_CONFIG_FILE: file }).temporal.fromEnvConfig, undefined);
    },
  );

  it('refuses a missing or malformed file, an unknown profile and a bad value, naming the file, the profile and the key', async () => {
    const { dir, file } = await configFile(CLOUD);
    assert.equal(
      problemsOf(() => loadClientConfig({ ...OFF, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod' })),
      `invalid configuration:\n  TEMPORAL_PROFILE: no profile "prod" in ${file} (its profiles: cloud)`,
    );
    assert.match(
      problemsOf(() => loadClientConfig({ ...OFF, TEMPORAL_CONFIG_FILE: join(dir, 'missing.toml') })),
      new RegExp(`TEMPORAL_CONFIG_FILE: cannot read ${dir}/missing\\.toml \\(no such file\\)`),
    );
    assert.match(
      problemsOf(() => loadClientConfig({ ...OFF, TEMPORAL_CONFIG_FILE: dir })),
      new RegExp(`TEMPORAL_CONFIG_FILE: cannot read ${dir} \\(a directory\\)`),
    );
    assert.match(
      problemsOf(() => loadClientConfig({ ...OFF, HOME: join(dir, 'nobody'), TEMPORAL_PROFILE: 'cloud' })),
      /TEMPORAL_PROFILE: no profile "cloud": there is no Temporal config file/,
    );

    const { file: malformed } = await configFile('[profile.cloud\naddress = "x:1"\n');
    assert.match(
      problemsOf(() => loadConfig({ ...OFF, TEMPORAL_CONFIG_FILE: malformed })),
      new RegExp(`TEMPORAL_CONFIG_FILE: ${malformed} is not valid TOML: .+ \\(line 1, column \\d+\\)`),
    );

    const { file: bad } = await configFile(
      [
        '[profile.default]',
        'address = 7233',
        'namespace = ""',
        '[profile.default.tls]',
        `client_cert_path = "${join(dir, 'none.pem')}"`,
        'client_key_data = "not a key"',
        'server_name = "not a name"',
        '',
      ].join('\n'),
    );
    const message = problemsOf(() => loadClientConfig({ ...OFF, TEMPORAL_CONFIG_FILE: bad }));
    const where = `profile "default" of ${bad}`;
    for (const expected of [
      `${where}: address: Invalid input: expected string, received number`,
      `${where}: namespace: must not be empty`,
      `${where}: tls.server_name: must be a host name`,
      `${where}: tls.client_cert_path: cannot read ${join(dir, 'none.pem')} (no such file)`,
      `${where}: tls.client_key_data: is not PEM (no -----BEGIN line)`,
    ]) {
      assert.ok(message.includes(expected), `expected "${expected}" in:\n${message}`);
    }

    // The worker stops at start-up with that message and exit code 2, no stack trace.
    const worker = spawnSync(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { PATH: process.env.PATH, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'prod', PAYLOAD_ENCRYPTION: 'off', WORKER_METRICS_PORT: '0' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(worker.status, 2, worker.stderr);
    assert.match(worker.stderr, new RegExp(`TEMPORAL_PROFILE: no profile "prod" in ${file}`));
    assert.doesNotMatch(worker.stderr, /^\s+at /m, 'no stack trace');
  });
});

describe('sandbox and dev stack settings', () => {
  it('gives the sandbox its port, host and optional secret', () => {
    assert.deepEqual(loadSandboxConfig({}), { port: 4010, host: '127.0.0.1', authSecret: undefined });
    assert.deepEqual(loadSandboxConfig({ SANDBOX_PORT: '0', SANDBOX_AUTH_SECRET: 'x' }), { port: 0, host: '127.0.0.1', authSecret: 'x' });
  });

  it("keeps the service's session lifetime unless SANDBOX_SESSION_IDLE_S says otherwise, and refuses a bad one by name", () => {
    assert.equal(loadSandboxConfig({}).sessionIdleMs, undefined);
    assert.equal(loadSandboxConfig({ SANDBOX_SESSION_IDLE_S: '3600' }).sessionIdleMs, 3_600_000);
    for (const bad of ['0', 'an hour', '1.5', '100000'])
      assert.match(
        problemsOf(() => loadSandboxConfig({ SANDBOX_SESSION_IDLE_S: bad })),
        /SANDBOX_SESSION_IDLE_S/,
      );
  });

  it("gives the dev stack every process's default port, and the variables' ports when set", () => {
    assert.deepEqual(loadDevStackConfig({}).ports, { temporal: 7233, ui: 8233, sandbox: 4010, console: 8080, workerMetrics: 9464 });
    const ports = loadDevStackConfig({
      TEMPORAL_PORT: '17233',
      TEMPORAL_UI_PORT: '18233',
      SANDBOX_PORT: '14010',
      CONSOLE_PORT: '18080',
      WORKER_METRICS_PORT: '0',
    }).ports;
    assert.deepEqual(ports, { temporal: 17233, ui: 18233, sandbox: 14010, console: 18080, workerMetrics: 0 });
  });

  it('refuses a bad dev stack port, naming its variable', () => {
    assert.throws(
      () => loadDevStackConfig({ TEMPORAL_PORT: 'abc', WORKER_METRICS_PORT: '70000' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        /TEMPORAL_PORT: must be a port number/.test(error.message) &&
        /WORKER_METRICS_PORT: must be a port number/.test(error.message),
    );
  });

  it('gives the dev stack what it hands its worker and console: become-current yes, a token and origins only when set', () => {
    const stack = loadDevStackConfig({});
    assert.deepEqual([stack.workerBecomeCurrent, stack.consoleToken, stack.consoleCodecCorsOrigins], ['yes', undefined, undefined]);
    const set = loadDevStackConfig({ WORKER_BECOME_CURRENT: 'no', CONSOLE_TOKEN: 'a'.repeat(16), CONSOLE_CODEC_CORS_ORIGINS: 'http://ui.example:8233' });
    assert.deepEqual([set.workerBecomeCurrent, set.consoleToken, set.consoleCodecCorsOrigins], ['no', 'a'.repeat(16), ['http://ui.example:8233']]);
    const problems = problemsOf(() => loadDevStackConfig({ CONSOLE_TOKEN: 'short', WORKER_BECOME_CURRENT: 'maybe' }));
    assert.match(problems, /CONSOLE_TOKEN: must be at least 16 characters/);
    assert.match(problems, /WORKER_BECOME_CURRENT: must be no, when-unset or yes/);
  });

  it('keeps the local key unless DEV_KEY_PROVIDER=openbao, and refuses openbao beside a provider or encryption off', () => {
    assert.equal(loadDevStackConfig({}).keyProvider, 'static');
    assert.equal(loadDevStackConfig({ DEV_KEY_PROVIDER: 'openbao' }).keyProvider, 'openbao');
    assert.match(
      problemsOf(() => loadDevStackConfig({ DEV_KEY_PROVIDER: 'vault' })),
      /DEV_KEY_PROVIDER: must be static or openbao/,
    );
    assert.match(
      problemsOf(() => loadDevStackConfig({ DEV_KEY_PROVIDER: 'openbao', PAYLOAD_KEY_PROVIDER: 'aws-kms' })),
      /DEV_KEY_PROVIDER: is openbao but PAYLOAD_KEY_PROVIDER is aws-kms/,
    );
    assert.match(
      problemsOf(() => loadDevStackConfig({ DEV_KEY_PROVIDER: 'openbao', PAYLOAD_ENCRYPTION: 'off' })),
      /DEV_KEY_PROVIDER: is openbao but PAYLOAD_ENCRYPTION is off/,
    );
  });
});

describe("the demo's sandbox", () => {
  it('is where the dev stack starts it: http://127.0.0.1:SANDBOX_PORT, 4010 by default', () => {
    assert.equal(loadDemoConfig({}).sandboxUrl, 'http://127.0.0.1:4010');
    // SANDBOX_PORT=5410 npm start, then npm run demo: both find the sandbox on 5410.
    const env = { SANDBOX_PORT: '5410' };
    assert.equal(loadDemoConfig(env).sandboxUrl, 'http://127.0.0.1:5410');
    assert.equal(loadDemoConfig(env).sandboxUrl, loadDevStackConfig(env).sandboxUrl);
    assert.equal(loadDevStackConfig(env).ports.sandbox, 5410);
  });

  it('is SANDBOX_URL when set, whatever SANDBOX_PORT says', () => {
    assert.equal(loadDemoConfig({ SANDBOX_URL: 'http://sandbox.internal:9000/', SANDBOX_PORT: '5410' }).sandboxUrl, 'http://sandbox.internal:9000');
    assert.equal(loadDemoConfig({ SANDBOX_URL: '' }).sandboxUrl, 'http://127.0.0.1:4010', 'empty is unset');
  });

  it('refuses a bad SANDBOX_PORT, SANDBOX_URL or DEMO_SCENARIO, naming each', () => {
    const problems = problemsOf(() => loadDemoConfig({ SANDBOX_PORT: '99999', SANDBOX_URL: 'ftp://x', DEMO_SCENARIO: '   ' }));
    for (const variable of ['SANDBOX_PORT', 'SANDBOX_URL', 'DEMO_SCENARIO']) assert.match(problems, new RegExp(`${variable}: `));
    assert.equal(loadDemoConfig({ DEMO_SCENARIO: 'image_selection' }).scenario, 'image_selection');
    assert.equal(loadDemoConfig({}).scenario, 'two_step_code');
  });
});

describe('the settings of the scripts, benchmarks and tests', () => {
  it("reads the CLI's live password, empty as unset", () => {
    assert.equal(connectionPasswordFromEnv({ CONNECTION_PASSWORD: 'pw' }), 'pw');
    assert.equal(connectionPasswordFromEnv({ CONNECTION_PASSWORD: '' }), undefined);
  });

  it("gives the toolchain's overrides only, and refuses a bad release naming it", () => {
    const none = loadToolchainConfig({});
    assert.equal(none.cacheDir, undefined);
    assert.deepEqual(none.versions, { server: undefined, upgradePath: undefined, ui: undefined });
    const set = loadToolchainConfig({ TEMPORAL_CACHE_DIR: '/cache', TEMPORAL_UPGRADE_PATH: '1.29.1  1.30.9', MINIO_PATH: '/bin/minio' });
    assert.deepEqual([set.cacheDir, set.versions.upgradePath, set.paths.minio], ['/cache', ['1.29.1', '1.30.9'], '/bin/minio']);
    const problems = problemsOf(() => loadToolchainConfig({ TEMPORAL_SERVER_VERSION: 'latest', TEMPORAL_UPGRADE_PATH: '1.29 next' }));
    assert.match(problems, /TEMPORAL_SERVER_VERSION: must be a release such as 1\.32\.2/);
    assert.match(problems, /TEMPORAL_UPGRADE_PATH: must be releases separated by spaces/);
  });

  it("parses the tests' switches", () => {
    assert.deepEqual(loadTestConfig({}), {
      temporalAddress: undefined,
      workerRegistryDir: undefined,
      logLevel: 'ERROR',
      recordHistories: false,
      chromiumPath: '/usr/bin/chromium',
      docsScreenshots: false,
      ci: false,
      workflowBundlePath: undefined,
      unitTier: false,
    });
    const set = loadTestConfig({
      TEMPORAL_TEST_ADDRESS: '127.0.0.1:7233',
      TEMPORAL_TEST_LOG_LEVEL: 'warn',
      RECORD_HISTORIES: '1',
      DOCS_SCREENSHOTS: '1',
      CI: 'true',
      TEST_WORKFLOW_BUNDLE: '/tmp/b.js',
      TEST_UNIT_TIER: '1',
    });
    assert.deepEqual(
      [set.temporalAddress, set.logLevel, set.recordHistories, set.docsScreenshots, set.ci, set.workflowBundlePath, set.unitTier],
      ['127.0.0.1:7233', 'WARN', true, true, true, '/tmp/b.js', true],
    );
    assert.match(
      problemsOf(() => loadTestConfig({ TEMPORAL_TEST_LOG_LEVEL: 'loud', RECORD_HISTORIES: 'yes', TEST_UNIT_TIER: 'maybe' })),
      /TEMPORAL_TEST_LOG_LEVEL: must be one of TRACE, DEBUG, INFO, WARN, ERROR[^]*RECORD_HISTORIES: [^]*TEST_UNIT_TIER: /,
    );
    assert.match(
      problemsOf(() => loadTestRunConfig({ TEST_CONCURRENCY: '0' })),
      /TEST_CONCURRENCY: must be a whole number, at least 1/,
    );
    assert.deepEqual(loadTestRunConfig({ TEST_CONCURRENCY: '3', REPLAY_MIN_HISTORIES: '7' }), {
      concurrency: 3,
      timingsFile: undefined,
      fileTimeoutMs: 1_200_000,
      replayMinHistories: 7,
    });
    assert.equal(loadTestRunConfig({ TEST_FILE_TIMEOUT_S: '5' }).fileTimeoutMs, 5_000);
    assert.match(
      problemsOf(() => loadTestRunConfig({ TEST_FILE_TIMEOUT_S: '0' })),
      /TEST_FILE_TIMEOUT_S: must be a whole number, at least 1/,
    );
  });

  it("requires the replay's shared server, naming who sets it", () => {
    assert.match(
      problemsOf(() => loadReplayConfig({})),
      /TEMPORAL_TEST_ADDRESS: is not set \(scripts\/run-tests\.mjs sets it\)/,
    );
    // A script ends with exit code 2 and the problem on one line (settingsOrExit), not a stack trace.
    const replay = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/replay-suite.ts'], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { PATH: process.env.PATH, REPLAY_MIN_HISTORIES: '-1' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(replay.status, 2, replay.stderr);
    assert.equal(
      replay.stderr.trim(),
      'replay: TEMPORAL_TEST_ADDRESS: is not set (scripts/run-tests.mjs sets it); REPLAY_MIN_HISTORIES: must be a whole number, at least 0',
    );
    assert.deepEqual(loadReplayConfig({ TEMPORAL_TEST_ADDRESS: 'localhost:7233', REPLAY_VERBOSE: '1' }), {
      temporalAddress: 'localhost:7233',
      workerRegistryDir: undefined,
      minHistories: 0,
      verbose: true,
    });
  });

  it("parses the benchmarks' settings, refusing a bad one by name", () => {
    assert.deepEqual(loadBenchConfig({}), { workerRuntime: 'compiled', workerNodeArgs: [], serverDynamicConfig: undefined, sandboxUrl: undefined });
    const set = loadBenchConfig({ BENCH_WORKER_NODE_ARGS: '--max-old-space-size=256  --cpu-prof', BENCH_SERVER_DYNAMIC_CONFIG: 'a.b=false c=3 d="x"' });
    assert.deepEqual(set.workerNodeArgs, ['--max-old-space-size=256', '--cpu-prof']);
    assert.deepEqual(set.serverDynamicConfig, { 'a.b': false, c: 3, d: 'x' });
    assert.deepEqual(loadBenchConfig({ BENCH_SERVER_DYNAMIC_CONFIG: 'none' }).serverDynamicConfig, {});
    const problems = problemsOf(() => loadBenchConfig({ BENCH_WORKER_RUNTIME: 'bun', BENCH_SERVER_DYNAMIC_CONFIG: 'novalue' }));
    assert.match(problems, /BENCH_WORKER_RUNTIME: must be compiled or tsx/);
    assert.match(problems, /BENCH_SERVER_DYNAMIC_CONFIG: "novalue": must be `none` or space-separated key=value pairs/);
  });
});

describe('retention policy', () => {
  it('is off by default: no tenant has one', () => {
    const policy = loadConfig({}).retentionDays;
    assert.equal(policy.size, 0);
    assert.equal(retentionDaysOf(policy, 'demo-lender'), undefined);
  });

  it('reads days per tenant, with * for every other tenant', () => {
    const policy = loadConfig({ RETENTION_DAYS: 'lender-a:90, lender-b:30,*:365' }).retentionDays;
    assert.equal(retentionDaysOf(policy, 'lender-a'), 90);
    assert.equal(retentionDaysOf(policy, 'lender-b'), 30);
    assert.equal(retentionDaysOf(policy, 'lender-c'), 365);
    assert.equal(retentionDaysOf(loadConfig({ RETENTION_DAYS: 'lender-a:90' }).retentionDays, 'lender-c'), undefined);
  });

  it('names each bad entry', () => {
    assert.throws(
      () => loadConfig({ RETENTION_DAYS: 'lender-a:0,lender-b,lender-c:forever,lender-d:40000,lender-e:1,lender-e:2' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.problems.length, 5, error.message);
        for (const entry of ['"lender-a:0"', '"lender-b"', '"lender-c:forever"', '"lender-d:40000"'])
          assert.ok(error.message.includes(`RETENTION_DAYS: ${entry}: must be a comma-separated list`), entry);
        assert.match(error.message, /RETENTION_DAYS: lender-e appears twice/);
        return true;
      },
    );
  });
});

describe('request budget', () => {
  it("reads the service's limit as a bucket of one second's worth by default, or a burst or strict whole seconds when set", () => {
    assert.equal(loadConfig({}).budget, undefined);
    assert.deepEqual(loadConfig({ SERVICE_BUDGET_RPS: '8' }).budget, { totalRps: 8, tenantRps: 8, mode: 'bucket', burst: 8 });
    assert.deepEqual(loadConfig({ SERVICE_BUDGET_RPS: '60', SERVICE_BUDGET_TENANT_RPS: '40', SERVICE_BUDGET_BURST: '120' }).budget, {
      totalRps: 60,
      tenantRps: 40,
      mode: 'bucket',
      burst: 120,
    });
    assert.deepEqual(loadConfig({ SERVICE_BUDGET_RPS: '8', SERVICE_BUDGET_MODE: 'strict' }).budget, { totalRps: 8, tenantRps: 8, mode: 'strict' });
  });

  it('refuses a bad mode or burst, a burst in strict mode and a burst without a budget, naming each in one line', () => {
    assert.match(
      problemsOf(() => loadConfig({ SERVICE_BUDGET_RPS: '8', SERVICE_BUDGET_MODE: 'sliding' })),
      /SERVICE_BUDGET_MODE: must be bucket or strict/,
    );
    assert.match(
      problemsOf(() => loadConfig({ SERVICE_BUDGET_RPS: '8', SERVICE_BUDGET_BURST: '0.5' })),
      /SERVICE_BUDGET_BURST: must be a number of requests, from 1 to 100000/,
    );
    assert.match(
      problemsOf(() => loadConfig({ SERVICE_BUDGET_RPS: '8', SERVICE_BUDGET_MODE: 'strict', SERVICE_BUDGET_BURST: '8' })),
      /SERVICE_BUDGET_BURST: applies to SERVICE_BUDGET_MODE=bucket only/,
    );
    assert.match(
      problemsOf(() => loadConfig({ SERVICE_BUDGET_BURST: '8' })),
      /SERVICE_BUDGET_BURST: needs SERVICE_BUDGET_RPS/,
    );
  });
});

describe('key provider settings', () => {
  const KEY = Buffer.alloc(32, 7).toString('base64');
  const REMOTE = { TEMPORAL_ADDRESS: 'temporal.internal.example:7233' };
  const VAULT = { PAYLOAD_KEY_PROVIDER: 'vault-transit', PAYLOAD_VAULT_ADDR: 'https://vault.internal:8200' };

  it('keeps the static keys by default, exactly as configured', () => {
    const encryption = loadConfig({ PAYLOAD_ENCRYPTION_KEY: KEY, ...REMOTE }).encryption;
    assert.equal(encryption?.provider, undefined);
    assert.equal(configuredKeysOf(encryption)?.keyId, 'default');
  });

  it('reads vault-transit with a token: no configured key needed with Temporal elsewhere, the cache bounds in milliseconds', () => {
    const encryption = loadClientConfig({
      ...REMOTE,
      ...VAULT,
      PAYLOAD_VAULT_TOKEN: 's.token',
      PAYLOAD_VAULT_NAMESPACE: 'team-a',
      PAYLOAD_DATA_KEY_LIFETIME_S: '60',
    }).encryption;
    assert.ok(encryption?.provider === 'vault-transit');
    assert.equal(encryption.keyId, 'vault-transit:aggregation-payloads');
    assert.deepEqual(encryption.vault.auth, { kind: 'token', token: 's.token' });
    assert.equal(encryption.vault.namespace, 'team-a');
    assert.deepEqual(encryption.transit, { mount: 'transit', key: 'aggregation-payloads' });
    assert.deepEqual(encryption.cache, {
      dataKeyLifetimeMs: 60_000,
      dataKeyMaxUses: 100_000,
      unwrappedKeyLifetimeMs: 3_600_000,
      unwrappedKeyCacheSize: 1_000,
      outageSealingMs: 14_400_000,
      outageSealingMaxUses: 1_000_000,
    });
    assert.equal(encryption.staticKeys, undefined);
    const withOld = loadClientConfig({ ...REMOTE, ...VAULT, PAYLOAD_VAULT_TOKEN: 's.token', PAYLOAD_ENCRYPTION_KEY: KEY }).encryption;
    assert.equal(configuredKeysOf(withOld)?.keyId, 'default', 'configured keys kept to read the static payloads');
  });

  it('reads AppRole auth and a CA file', async () => {
    const caFile = join(await mkdtemp(join(tmpdir(), 'vault-ca-')), 'ca.pem');
    await writeFile(caFile, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    const encryption = loadConsoleConfig({
      CONSOLE_TOKEN: 'a'.repeat(20),
      ...REMOTE,
      ...VAULT,
      PAYLOAD_VAULT_ROLE_ID: 'role',
      PAYLOAD_VAULT_SECRET_ID: 'secret',
      PAYLOAD_VAULT_CA_FILE: caFile,
    }).encryption;
    assert.ok(encryption?.provider === 'vault-transit');
    assert.deepEqual(encryption.vault.auth, { kind: 'approle', mount: 'approle', roleId: 'role', secretId: 'secret' });
    assert.match(encryption.vault.caCertificate ?? '', /BEGIN CERTIFICATE/);
  });

  it('refuses vault-transit without an address or an auth, with two auths, half an AppRole, a bad CA file, or with encryption off, naming each', () => {
    assert.match(
      problemsOf(() => loadConfig({ ...REMOTE, PAYLOAD_KEY_PROVIDER: 'vault-transit' })),
      /PAYLOAD_VAULT_ADDR: is required with PAYLOAD_KEY_PROVIDER=vault-transit/,
    );
    assert.match(
      problemsOf(() => loadConfig({ ...REMOTE, ...VAULT })),
      /PAYLOAD_VAULT_TOKEN: or AppRole \(PAYLOAD_VAULT_ROLE_ID and PAYLOAD_VAULT_SECRET_ID\) is required/,
    );
    assert.match(
      problemsOf(() => loadConfig({ ...REMOTE, ...VAULT, PAYLOAD_VAULT_TOKEN: 't', PAYLOAD_VAULT_ROLE_ID: 'r' })),
      /PAYLOAD_VAULT_TOKEN: and AppRole .* are both set: choose one auth/,
    );
    assert.match(
      problemsOf(() => loadConfig({ ...REMOTE, ...VAULT, PAYLOAD_VAULT_ROLE_ID: 'r' })),
      /PAYLOAD_VAULT_SECRET_ID: is required with AppRole auth/,
    );
    assert.match(
      problemsOf(() => loadConfig({ ...REMOTE, ...VAULT, PAYLOAD_VAULT_TOKEN: 't', PAYLOAD_VAULT_CA_FILE: '/no/such/ca.pem' })),
      /PAYLOAD_VAULT_CA_FILE: cannot be read: .*no such file/i,
    );
    assert.match(
      problemsOf(() => loadConfig({ ...REMOTE, ...VAULT, PAYLOAD_VAULT_TOKEN: 't', PAYLOAD_ENCRYPTION: 'off' })),
      /PAYLOAD_ENCRYPTION: is off but PAYLOAD_KEY_PROVIDER is vault-transit/,
    );
    assert.match(
      problemsOf(() => loadConfig({ ...REMOTE, ...VAULT, PAYLOAD_VAULT_TOKEN: 't', PAYLOAD_DATA_KEY_MAX_USES: '0' })),
      /PAYLOAD_DATA_KEY_MAX_USES: must be a whole number, at least 1/,
    );
    assert.match(
      problemsOf(() => loadConfig({ PAYLOAD_VAULT_ADDR: 'https://vault.internal:8200' })),
      /PAYLOAD_VAULT_ADDR: is set but PAYLOAD_KEY_PROVIDER is static/,
    );
  });

  it('refuses a KMS in clear on another machine, naming the variable and the way out; allows it on loopback, or for a lab when asked', () => {
    const clear = { ...REMOTE, PAYLOAD_KEY_PROVIDER: 'vault-transit', PAYLOAD_VAULT_ADDR: 'http://vault.internal:8200', PAYLOAD_VAULT_TOKEN: 't' };
    const problems = problemsOf(() => loadConfig(clear));
    assert.match(
      problems,
      /PAYLOAD_VAULT_ADDR: is http:\/\/ to vault\.internal, not on this machine: the KMS token and the plaintext data keys would cross the network in clear; use https:\/\/ .* or set PAYLOAD_KMS_ALLOW_INSECURE=true for a lab/,
    );
    const aws = {
      ...REMOTE,
      PAYLOAD_KEY_PROVIDER: 'aws-kms',
      PAYLOAD_AWS_KMS_KEY_ID: 'alias/payloads',
      PAYLOAD_AWS_REGION: 'eu-west-1',
      PAYLOAD_AWS_KMS_ENDPOINT: 'http://10.0.0.5:4566',
    };
    assert.match(
      problemsOf(() => loadConfig(aws)),
      /PAYLOAD_AWS_KMS_ENDPOINT: is http:\/\/ to 10\.0\.0\.5, not on this machine/,
    );
    for (const local of ['http://127.0.0.1:8200', 'http://localhost:8200', 'http://[::1]:8200']) {
      assert.equal(loadConfig({ ...clear, PAYLOAD_VAULT_ADDR: local }).encryption?.provider, 'vault-transit', local);
    }
    assert.equal(loadConfig({ ...clear, PAYLOAD_KMS_ALLOW_INSECURE: 'true' }).encryption?.provider, 'vault-transit');
    assert.equal(loadConfig({ ...aws, PAYLOAD_KMS_ALLOW_INSECURE: '1' }).encryption?.provider, 'aws-kms');
    assert.match(
      problemsOf(() => loadConfig({ ...clear, PAYLOAD_KMS_ALLOW_INSECURE: 'yes' })),
      /PAYLOAD_KMS_ALLOW_INSECURE: /,
    );
  });
});
