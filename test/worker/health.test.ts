import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { State } from '@temporalio/worker';
import { startWorkerHealthServer, WorkerHealthError, type WorkerHealthServer } from '../../src/worker/health.js';

describe('the worker health endpoint', () => {
  let state: State = 'INITIALIZED';
  let health: WorkerHealthServer;

  before(async () => {
    health = await startWorkerHealthServer({ host: '127.0.0.1', port: 0, state: () => state });
  });
  after(async () => {
    await health.close();
  });

  it('answers 200 with the state only while the worker is RUNNING, 503 with the state otherwise', async () => {
    const seen: [State, number, unknown][] = [];
    for (const next of ['INITIALIZED', 'RUNNING', 'STOPPING', 'DRAINING', 'DRAINED', 'STOPPED', 'FAILED'] as const) {
      state = next;
      const response = await fetch(health.url);
      seen.push([next, response.status, await response.json()]);
    }
    assert.deepEqual(seen, [
      ['INITIALIZED', 503, { state: 'INITIALIZED' }],
      ['RUNNING', 200, { state: 'RUNNING' }],
      ['STOPPING', 503, { state: 'STOPPING' }],
      ['DRAINING', 503, { state: 'DRAINING' }],
      ['DRAINED', 503, { state: 'DRAINED' }],
      ['STOPPED', 503, { state: 'STOPPED' }],
      ['FAILED', 503, { state: 'FAILED' }],
    ]);
  });

  it('answers 404 to any other path or method', async () => {
    assert.match(health.url, /^http:\/\/127\.0\.0\.1:\d+\/healthz$/);
    assert.equal((await fetch(health.url.replace('/healthz', '/metrics'))).status, 404);
    assert.equal((await fetch(health.url, { method: 'POST' })).status, 404);
  });

  it('refuses to start on a port already taken, naming host and port', async () => {
    const port = Number(new URL(health.url).port);
    await assert.rejects(startWorkerHealthServer({ host: '127.0.0.1', port, state: () => 'RUNNING' }), (error: unknown) => {
      assert.ok(error instanceof WorkerHealthError);
      assert.match(error.message, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
      return true;
    });
  });
});
