/**
 * `npm start` with DEV_KEY_PROVIDER=openbao: the stack starts its own OpenBao (raft storage in its
 * cache directory, initialised once, unsealed at each start) and its worker and console use
 * vault-transit on it. A connection completes with every payload of its raw history envelope-v1
 * naming the tenant's transit key; the stack's token lives 8 hours at most and its stop revokes it; a
 * second start on the same state unseals the same OpenBao and reads it back.
 * The stack runs on ports of its own and a temporary cache directory, never the developer's .temporal.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { devNull } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { ConnectionsClient, connectionKey, loadClientConfig } from '../../src/client/index.js';
import { SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { openBaoPath } from '../../scripts/lib/openbao-binary.js';
import { DevStackRunner } from './dev-stack-process.js';

/** OpenBao gets this long to end after the stack's SIGKILL (it is tied to it: scripts/lib/parent-lifetime.ts). */
const ORPHAN_TIMEOUT_MS = 15_000;

const runner = new DevStackRunner('dev-stack-openbao-');
const dir = runner.dir;
const startStack = () => runner.start();

/** The pids of the `bao server` processes running on this test's storage. */
function openBaoProcesses(): number[] {
  const config = join(dir, 'openbao-dev', 'openbao.hcl');
  return execFileSync('ps', ['-A', '-o', 'pid=,stat=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(`-config=${config}`) && !/^\s*\d+\s+Z/.test(line))
    .map((line) => Number.parseInt(line, 10));
}

function clientVariables(): Record<string, string> {
  const text = readFileSync(join(dir, 'openbao-dev', 'client.env'), 'utf8');
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => /^[A-Z_]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

function clientConfig() {
  return loadClientConfig({ ...runner.env, ...clientVariables(), TEMPORAL_ADDRESS: runner.temporalAddress, TEMPORAL_CONFIG_FILE: devNull });
}

before(async () => {
  await runner.prepare({ OPENBAO_PATH: openBaoPath(), DEV_KEY_PROVIDER: 'openbao' });
});

after(() => {
  runner.cleanup();
});

/**
 * Whether `token` is still a valid OpenBao token, asked as root (the stack's token has no default
 * policy, so it may not look itself up): the root token is in the stack's 0600 secrets file.
 */
async function tokenValid(token: string): Promise<boolean> {
  const { PAYLOAD_VAULT_ADDR: address = '' } = clientVariables();
  const { rootToken } = JSON.parse(readFileSync(join(dir, 'openbao-dev', 'root-and-unseal-key.json'), 'utf8')) as { rootToken: string };
  const response = await fetch(`${address}/v1/auth/token/lookup`, {
    method: 'POST',
    headers: { 'x-vault-token': rootToken, 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  if (response.ok) {
    const ttl = ((await response.json()) as { data?: { ttl?: number } }).data?.ttl ?? Number.POSITIVE_INFINITY;
    assert.ok(ttl <= 8 * 3600, `the stack's token lives 8 hours at most (ttl ${ttl} s)`);
  }
  return response.ok;
}

describe('npm start with DEV_KEY_PROVIDER=openbao', { concurrency: false }, () => {
  let workflowId = '';
  /** The first stack's token: its stop revokes it. */
  let firstToken = '';

  test('starts OpenBao, and a connection completes with envelope-v1 payloads wrapped by its transit key', async () => {
    const stack = await startStack();
    try {
      assert.match(stack.output(), /OpenBao {11}http:\/\/127\.0\.0\.1:\d+ /, 'the printout says where OpenBao runs');
      assert.match(stack.output(), /Payloads {10}encrypted \(key id vault-transit:aggregation-payloads\)/);
      assert.equal(statSync(join(dir, 'openbao-dev', 'root-and-unseal-key.json')).mode & 0o777, 0o600);
      const config = clientConfig();
      assert.equal(config.encryption?.provider, 'vault-transit');
      firstToken = clientVariables().PAYLOAD_VAULT_TOKEN ?? '';
      assert.equal(await tokenValid(firstToken), true, 'valid while its stack runs');
      const client = await ConnectionsClient.connect(config);
      const connection = await Connection.connect({ address: runner.temporalAddress });
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
          // The tenant's own transit key (keys per tenant), made by the worker's first payload of it.
          assert.equal(text(payload.metadata?.['encryption-key-id']), `vault-transit:aggregation-payloads-tenant-${config.customerId}`);
          assert.equal(text(payload.metadata?.['encryption-tenant']), config.customerId);
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
      assert.ok(firstToken, 'the first test kept its token');
      assert.equal(await tokenValid(firstToken), false, "the first stack's stop revoked its token");
      assert.equal(await tokenValid(clientVariables().PAYLOAD_VAULT_TOKEN ?? ''), true, "this stack's token is valid");
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
