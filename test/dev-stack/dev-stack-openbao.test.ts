/**
 * `npm start` with DEV_KEY_PROVIDER=openbao: the stack starts its own OpenBao (raft storage in its
 * cache directory, initialised once, unsealed at each start) and its worker and console use
 * vault-transit on it. A connection completes with every payload of its raw history envelope-v1
 * naming the transit key; a second start on the same state unseals the same OpenBao and reads it back.
 * The stack runs on ports of its own and a temporary cache directory, never the developer's .temporal.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { devNull, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { ConnectionsClient, connectionKey, loadClientConfig } from '../../src/client/index.js';
import { SANDBOX_PASSWORD } from '../../src/sandbox/scenarios.js';
import { freePort } from '../../scripts/lib/free-port.js';
import { openBaoPath } from '../../scripts/lib/openbao-binary.js';
import { temporalServerPath, temporalUiServerPath } from '../../scripts/lib/temporal-binaries.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const HOST = '127.0.0.1';
const UP_TIMEOUT_MS = 120_000;
/** OpenBao gets this long to end after the stack's SIGKILL (it is tied to it: scripts/lib/parent-lifetime.ts). */
const ORPHAN_TIMEOUT_MS = 15_000;

const dir = mkdtempSync(join(tmpdir(), 'dev-stack-openbao-'));
const started = new Set<ChildProcess>();
let env: NodeJS.ProcessEnv;
let temporalAddress: string;

interface RunningStack {
  readonly child: ChildProcess;
  readonly output: () => string;
  stop(): Promise<void>;
}

/** The pids of the `bao server` processes running on this test's storage. */
function openBaoProcesses(): number[] {
  const config = join(dir, 'openbao-dev', 'openbao.hcl');
  return execFileSync('ps', ['-A', '-o', 'pid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(`-config=${config}`) && !/^\s*\d+\s+Z/.test(line))
    .map((line) => Number.parseInt(line, 10));
}

async function startStack(): Promise<RunningStack> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/dev-stack.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the stack and its worker were not up within ${UP_TIMEOUT_MS} ms:\n${output}`)), UP_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('dev-stack: the worker polls')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the stack exited during start-up (${signal ?? `code ${code}`}):\n${output}`));
    });
  });
  return {
    child,
    output: () => output,
    stop: async () => {
      child.kill('SIGINT');
      await exited;
      started.delete(child);
    },
  };
}

/** The variables the stack wrote for a CLI in another shell (client.env). */
function clientVariables(): Record<string, string> {
  const text = readFileSync(join(dir, 'openbao-dev', 'client.env'), 'utf8');
  return Object.fromEntries(text.split('\n').filter((line) => /^[A-Z_]+=/.test(line)).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

function clientConfig() {
  return loadClientConfig({ ...env, ...clientVariables(), TEMPORAL_ADDRESS: temporalAddress, TEMPORAL_CONFIG_FILE: devNull });
}

before(async () => {
  const [temporal, ui, sandbox, consolePort] = [await freePort(HOST), await freePort(HOST), await freePort(HOST), await freePort(HOST)];
  temporalAddress = `${HOST}:${temporal}`;
  env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TEMPORAL_SERVER_PATH: temporalServerPath(),
    TEMPORAL_UI_SERVER_PATH: temporalUiServerPath(),
    OPENBAO_PATH: openBaoPath(),
    TEMPORAL_CACHE_DIR: dir,
    PAYLOAD_ENCRYPTION_KEY_FILE: join(dir, 'payload-encryption.key'),
    TEMPORAL_PORT: String(temporal),
    TEMPORAL_UI_PORT: String(ui),
    SANDBOX_PORT: String(sandbox),
    CONSOLE_PORT: String(consolePort),
    WORKER_METRICS_PORT: '0',
    DEV_KEY_PROVIDER: 'openbao',
  };
});

after(() => {
  for (const child of started) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

describe('npm start with DEV_KEY_PROVIDER=openbao', { concurrency: false }, () => {
  let workflowId = '';

  test('starts OpenBao, and a connection completes with envelope-v1 payloads wrapped by its transit key', async () => {
    const stack = await startStack();
    try {
      assert.match(stack.output(), /OpenBao {11}http:\/\/127\.0\.0\.1:\d+ /, 'the printout says where OpenBao runs');
      assert.match(stack.output(), /Payloads {10}encrypted \(key id vault-transit:aggregation-payloads\)/);
      assert.equal(statSync(join(dir, 'openbao-dev', 'root-and-unseal-key.json')).mode & 0o777, 0o600);
      const config = clientConfig();
      assert.equal(config.encryption?.provider, 'vault-transit');
      const client = await ConnectionsClient.connect(config);
      const connection = await Connection.connect({ address: temporalAddress });
      try {
        workflowId = connectionKey(config.customerId, `openbao-${randomUUID().slice(0, 8)}`);
        await client.startAndAwaitFirstStep(workflowId, {
          customerId: config.customerId,
          session: { kind: 'live', institution: 'SandboxBank', username: 'no_mfa', password: SANDBOX_PASSWORD },
          products: { accountsDetail: { WithTransactions: true } },
          timing: { pollIntervalMs: 200 },
        });
        const result = await client.result(workflowId);
        assert.ok((result.accountsDetail?.Accounts[0]?.Transactions?.length ?? 0) > 0, 'transactions came back decrypted');
        // A client without the codec: what Temporal stores.
        const history = await new Client({ connection, namespace: config.temporal.namespace }).workflow.getHandle(workflowId).fetchHistory();
        const text = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString() : '');
        const results = (history.events ?? []).flatMap((event) => event.workflowExecutionCompletedEventAttributes?.result?.payloads ?? []);
        const inputs = (history.events ?? []).flatMap((event) => event.workflowExecutionStartedEventAttributes?.input?.payloads ?? []);
        const stored = [...inputs, ...results];
        assert.equal(stored.length, 2, 'the input and the result');
        for (const payload of stored) {
          assert.equal(text(payload.metadata?.['encryption-format']), 'envelope-v1');
          assert.equal(text(payload.metadata?.['encryption-key-id']), 'vault-transit:aggregation-payloads');
        }
      } finally {
        await client.close();
        await connection.close();
      }
    } finally {
      await stack.stop();
    }
  });

  test('started again on the same state, unseals the same OpenBao and reads what it wrote; OpenBao ends with a SIGKILLed stack', async () => {
    assert.ok(workflowId, 'the first test ran');
    assert.deepEqual(openBaoProcesses(), [], 'the first stack stopped its OpenBao');
    const stack = await startStack();
    try {
      const client = await ConnectionsClient.connect(clientConfig());
      try {
        const result = await client.result(workflowId);
        assert.ok((result.accountsDetail?.Accounts[0]?.Transactions?.length ?? 0) > 0, 'the result decrypted through the data key OpenBao unwraps');
      } finally {
        await client.close();
      }
      assert.equal(openBaoProcesses().length, 1, 'one OpenBao runs for the stack');
    } finally {
      stack.child.kill('SIGKILL');
    }
    const killedAt = Date.now();
    while (openBaoProcesses().length > 0 && Date.now() - killedAt < ORPHAN_TIMEOUT_MS) await delay(100);
    assert.deepEqual(openBaoProcesses(), [], `OpenBao still running ${ORPHAN_TIMEOUT_MS} ms after the stack's SIGKILL`);
  });
});
