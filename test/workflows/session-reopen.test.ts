/**
 * A saved login's session that expired while its calls waited (for the fleet's request budget, or
 * its tenant paused by the service) is reopened with a cached Authorize and the retrieval goes on:
 * waiting never fails a connection. Real dev server, a real worker process, the real sandbox behind
 * a small proxy that answers the first accounts-detail poll as the service answers a RequestId it
 * no longer knows (400 SESSION_NONEXISTENT), without passing it on.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ConnectionInputArgs } from '../../src/contract/connection/connection-input.js';
import { connectionStateQuery, type ConnectionResult } from '../../src/contract/connection/connection-definitions.js';
import { startSandboxProxy } from '../helpers/sandbox-proxy.js';
import { startProcessStack, type ProcessStack } from '../helpers/process-stack.js';
import { uniqueId } from '../helpers/temporal.js';

interface ExpiringProxy {
  readonly url: string;
  /** Accounts-detail polls answered SESSION_NONEXISTENT; Authorizes passed on. */
  readonly counts: { expired: number; authorizes: number };
  close(): Promise<void>;
}

/** Answers the first accounts-detail poll as an expired session; passes everything else to the sandbox. */
async function startExpiringProxy(upstream: string): Promise<ExpiringProxy> {
  const counts = { expired: 0, authorizes: 0 };
  const proxy = await startSandboxProxy(upstream, ({ method, path }) => {
    if (method === 'POST' && /\/Authorize$/.test(path)) counts.authorizes += 1;
    if (counts.expired > 0 || !/\/GetAccountsDetailAsync\//.test(path)) return undefined;
    counts.expired += 1;
    return { pass: false, status: 400, body: { HttpStatusCode: 400, Message: 'The RequestId is unknown or expired', ServiceCode: 'SESSION_NONEXISTENT' } };
  });
  return { url: proxy.url, counts, close: () => proxy.close() };
}

describe('a session that expired while its calls waited', () => {
  let stack: ProcessStack;
  let proxy: ExpiringProxy;

  before(async () => {
    stack = await startProcessStack();
    proxy = await startExpiringProxy(stack.sandbox.url);
  });

  after(async () => {
    await stack?.stop();
    await proxy?.close();
  });

  it('is reopened with a cached Authorize, and the connection completes with its data', { timeout: 120_000 }, async () => {
    const customerId = uniqueId('tenant');
    const loginId = await stack.savedLogin(customerId, 'pending_polls_1');
    const taskQueue = uniqueId('session-reopen');
    await stack.startWorker(taskQueue, { aggregatorUrl: proxy.url });
    const input: ConnectionInputArgs = { customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 200 } };
    const handle = await stack.client.workflow.start('connectionWorkflow', { taskQueue, workflowId: uniqueId('session-reopen'), args: [input] });

    const result = (await handle.result()) as ConnectionResult;
    assert.ok(result.accountsDetail && result.accountsDetail.Accounts.length > 0, 'accounts retrieved');
    assert.equal(proxy.counts.expired, 1);
    assert.equal(proxy.counts.authorizes, 2, 'the first cached Authorize and the one that reopened the session');
    const state = await handle.query(connectionStateQuery);
    assert.equal(state.status, 'Completed');
    assert.equal(state.sessionRestarts, 1);
    assert.match(state.lastRestart?.reason ?? '', /the session expired during accounts detail \(SESSION_NONEXISTENT\); reopened with a cached Authorize/);
    assert.equal(result.requestId, state.requestId, 'the result names the session it was retrieved in');
  });
});
