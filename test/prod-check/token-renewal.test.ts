/**
 * A worker renews its Temporal token from TEMPORAL_API_KEY_FILE (issue 44), against the production
 * server with mutual TLS and its JWT authorizer (test/helpers/production-server.ts, tokens from
 * test/helpers/token-provider.ts), the worker a process of its own as production starts it, the
 * sandbox behind it. A token that expires ~20 s after it is minted, rewritten in the file with a fresh
 * one before then as a sidecar does: a connection started after the first token's expiry completes.
 * Not rewritten: the server refuses the worker. A file that turns malformed, then missing, then holds
 * a token again: the worker keeps its last token, says so once, says when it recovers, and works on.
 */
import assert from 'node:assert/strict';
import { rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { ConnectionsClient, connectionKey } from '../../src/client/index.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { loadClientConfig } from '../../src/settings/client.js';
import { postgresBinDir } from '../../scripts/prod-check/postgres.js';
import { findServerBinaries, type ProdTemporalServer } from '../../scripts/prod-check/temporal-server.js';
import { createPki, hasOpenssl, TLS_SERVER_NAME, type ProdCheckPki } from '../../scripts/prod-check/tls.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';
import { TEST_ENCRYPTION_ENV } from '../helpers/connection-stack.js';
import { liveInput } from '../client/client-stack.js';
import { startProductionServer, type ProductionServer } from '../helpers/production-server.js';
import { startProcess, stopAllProcesses, killProcess, type ProductProcess } from '../helpers/processes.js';
import { uniqueId } from '../helpers/temporal.js';
import { startTokenProvider, type TokenProvider } from '../../scripts/lib/jwt-token-provider.js';
import { workerProcessEnv, writeWorkflowBundle, type WorkflowBundleFile } from '../helpers/worker-processes.js';

const missing = [
  ...(postgresBinDir() ? [] : ['PostgreSQL (apt-get install -y postgresql)']),
  ...(hasOpenssl() ? [] : ['openssl']),
  ...findServerBinaries().missing,
];
if (missing.length > 0 && loadTestConfig().ci) throw new Error(`the token renewal test cannot run in CI: missing ${missing.join('; ')}`);

/** How long the first token lives: the worker starts and polls well within it. */
const SHORT_LIFE_S = 20;
/** The worker's re-read of the file, short for the test (production: 10 s). */
const RECHECK_MS = 500;
const RENEWED = 'TEMPORAL_API_KEY_FILE: renewed the Temporal token from';
const KEPT = 'keeping the last token until the file holds one again';
const RECOVERED = 'holds a token again';
/** What the worker's SDK says of a poll or a completion the authorizer refused. */
const REFUSED = /PermissionDenied|PERMISSION_DENIED|Unauthenticated|UNAUTHENTICATED|Request unauthorized/;

/** Until `condition` holds (checked every 100 ms); the test's timeout ends a wait that never ends. */
async function waitFor(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await delay(100);
}

void describe(
  'a worker renews its Temporal token from TEMPORAL_API_KEY_FILE (the JWT authorizer on the production server)',
  { skip: missing.length > 0 ? `missing: ${missing.join('; ')}` : false },
  () => {
    let production: ProductionServer | undefined;
    let server: ProdTemporalServer;
    let tokens: TokenProvider | undefined;
    let pki: ProdCheckPki;
    let sandbox: Sandbox | undefined;
    let bundle: WorkflowBundleFile | undefined;

    before(async () => {
      const provider = await startTokenProvider();
      tokens = provider;
      const adminToken = await provider.token(['temporal-system:admin']);
      production = await startProductionServer('token-renewal', (dir) => {
        pki = createPki(dir);
        return { tls: pki, authorization: { jwksUri: provider.jwksUri, audience: provider.audience, adminToken } };
      });
      server = production.server;
      sandbox = await createSandbox({ port: 0 });
      bundle = await writeWorkflowBundle();
    });

    after(async () => {
      await stopAllProcesses();
      await sandbox?.close();
      await bundle?.remove();
      await production?.stop();
      await tokens?.close();
    });

    const tlsEnv = () => ({
      TEMPORAL_TLS_CA_PATH: pki.caCert,
      TEMPORAL_TLS_SERVER_NAME: TLS_SERVER_NAME,
      TEMPORAL_TLS_CERT_PATH: pki.client.cert,
      TEMPORAL_TLS_KEY_PATH: pki.client.key,
    });

    /** A writer's token in the file as a sidecar writes it: a new file renamed over the old one. */
    async function writeTokenFile(path: string, content: string): Promise<void> {
      await writeFile(`${path}.next`, content);
      await rename(`${path}.next`, path);
    }

    /** A writer's token that expires `SHORT_LIFE_S` from now, and when (ms since the epoch). */
    async function shortLivedToken(): Promise<{ token: string; expiresAtMs: number }> {
      const expiresAt = Math.floor(Date.now() / 1000) + SHORT_LIFE_S;
      return { token: await tokens!.token(['default:write'], { expiresIn: expiresAt }), expiresAtMs: expiresAt * 1000 };
    }

    /** The product's worker as a process, its token in `tokenFile`, polling `taskQueue`. */
    function startWorker(taskQueue: string, tokenFile: string): Promise<ProductProcess> {
      return startProcess(
        'worker',
        workerProcessEnv({
          temporalAddress: server.address,
          taskQueue,
          aggregatorUrl: sandbox!.url,
          bundlePath: bundle!.path,
          env: { ...tlsEnv(), TEMPORAL_API_KEY_FILE: tokenFile, TEMPORAL_API_KEY_FILE_RECHECK_MS: String(RECHECK_MS) },
        }),
      );
    }

    /** The pipeline client on `taskQueue`, with a long-lived writer's token. */
    async function clientOn(taskQueue: string): Promise<ConnectionsClient> {
      const apiKey = await tokens!.token(['default:write']);
      return ConnectionsClient.connect(
        loadClientConfig({ TEMPORAL_ADDRESS: server.address, TEMPORAL_TASK_QUEUE: taskQueue, ...tlsEnv(), TEMPORAL_API_KEY: apiKey, ...TEST_ENCRYPTION_ENV }),
      );
    }

    /** Starts a connection that asks no challenge and waits for its result; fails at once when the server refuses `worker`. */
    async function connectionCompletes(client: ConnectionsClient, worker: ProductProcess, customerId: string): Promise<void> {
      const { workflowId } = await client.start(connectionKey(customerId, uniqueId('renewal')), liveInput(customerId, 'no_mfa', 'SandboxBank'));
      // Settled by the result, or failed at once by a refusal: the watch ends with the wait either way.
      let settled = false;
      const refusal = waitFor(() => settled || REFUSED.test(worker.output()) || worker.child.exitCode !== null).then(() => {
        if (!settled) assert.fail(`the server refused the worker, or it stopped, before ${workflowId} completed:\n${worker.output()}`);
      });
      const result = await Promise.race([client.result(workflowId), refusal.then(() => undefined)]).finally(() => (settled = true));
      assert.ok(result);
      assert.equal(result.customerId, customerId);
      assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length > 0, 'the connection retrieved the accounts');
    }

    /** Waits until the server refuses `expiresAtMs`'s token (its expiry passed, with a margin for clock reading). */
    const untilExpired = (expiresAtMs: number) => waitFor(() => Date.now() > expiresAtMs + 2_000);

    void it(
      "keeps polling past its first token's expiry when the file is rewritten with a fresh token, and never logs a token",
      { timeout: 180_000 },
      async () => {
        const taskQueue = uniqueId('token-renewal');
        const tokenFile = join(production!.dir, `${taskQueue}.jwt`);
        const first = await shortLivedToken();
        await writeTokenFile(tokenFile, `${first.token}\n`);
        const worker = await startWorker(taskQueue, tokenFile);
        const client = await clientOn(taskQueue);
        try {
          const fresh = await tokens!.token(['default:write']);
          await writeTokenFile(tokenFile, `${fresh}\n`);
          await waitFor(() => worker.output().includes(RENEWED));
          assert.ok(Date.now() < first.expiresAtMs, 'the worker took the fresh token before the first one expired');
          await untilExpired(first.expiresAtMs);
          await connectionCompletes(client, worker, 'lender-renewed');
          assert.equal(worker.child.exitCode, null, `the worker runs on:\n${worker.output()}`);
          assert.doesNotMatch(worker.output(), REFUSED, 'the server never refused the worker');
          for (const token of [first.token, fresh]) assert.ok(!worker.output().includes(token), 'the worker never logs a token');
        } finally {
          await client.close();
          await killProcess(worker.child);
        }
      },
    );

    void it('is refused by the server once its token expires when the file is not rewritten', { timeout: 180_000 }, async () => {
      const taskQueue = uniqueId('token-expiry');
      const tokenFile = join(production!.dir, `${taskQueue}.jwt`);
      const first = await shortLivedToken();
      await writeTokenFile(tokenFile, `${first.token}\n`);
      const worker = await startWorker(taskQueue, tokenFile);
      const client = await clientOn(taskQueue);
      try {
        await untilExpired(first.expiresAtMs);
        const { workflowId } = await client.start(connectionKey('lender-expired', uniqueId('expiry')), liveInput('lender-expired', 'no_mfa', 'SandboxBank'));
        await waitFor(() => REFUSED.test(worker.output()));
        assert.notEqual((await client.describe(workflowId)).status, 'Completed', 'no connection completes on an expired token');
        assert.ok(!worker.output().includes(RENEWED));
        assert.ok(!worker.output().includes(first.token), 'the worker never logs a token');
      } finally {
        await client.close();
        await killProcess(worker.child);
      }
    });

    void it(
      'keeps its last token through a malformed, then missing file, says so once and when the file holds a token again, and works throughout',
      { timeout: 180_000 },
      async () => {
        const taskQueue = uniqueId('token-malformed');
        const tokenFile = join(production!.dir, `${taskQueue}.jwt`);
        const first = await tokens!.token(['default:write']);
        await writeTokenFile(tokenFile, first);
        const worker = await startWorker(taskQueue, tokenFile);
        const client = await clientOn(taskQueue);
        try {
          await writeTokenFile(tokenFile, 'half a token\nwritten\n');
          await waitFor(() => worker.output().includes(KEPT));
          await connectionCompletes(client, worker, 'lender-malformed');
          // Missing now: a problem of its own, not said again while the file has none; the worker works on.
          await rm(tokenFile);
          await connectionCompletes(client, worker, 'lender-missing');
          const fresh = await tokens!.token(['default:write']);
          await writeTokenFile(tokenFile, fresh);
          await waitFor(() => worker.output().includes(RENEWED));
          await connectionCompletes(client, worker, 'lender-fixed');
          const output = worker.output();
          assert.equal(worker.child.exitCode, null, `the worker runs on:\n${output}`);
          assert.equal(output.split(KEPT).length - 1, 1, `the unreadable file is said once:\n${output}`);
          assert.match(output, /does not hold one token/);
          assert.ok(output.includes(RECOVERED), `the recovery is said:\n${output}`);
          for (const token of [first, fresh, 'half a token']) assert.ok(!output.includes(token), "the worker never logs a token or the file's content");
        } finally {
          await client.close();
          await killProcess(worker.child);
        }
      },
    );
  },
);
