import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { checkHealth, EXIT_HEALTHY, EXIT_UNHEALTHY, EXIT_USAGE } from '../../src/worker/health-check.js';

describe('the image health probe', () => {
  let server: Server;
  let base: string;

  before(async () => {
    server = createServer((request, response) => {
      if (request.url === '/slow') return; // never answers
      const status = request.url === '/up' ? 200 : 503;
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ state: status === 200 ? 'RUNNING' : 'DRAINING' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('exits 0 on a 2xx and 1 on a 503, printing what it saw', async () => {
    assert.deepEqual(await checkHealth([`${base}/up`]), { exitCode: EXIT_HEALTHY, line: `${base}/up: 200 {"state":"RUNNING"}` });
    assert.deepEqual(await checkHealth([`${base}/draining`]), { exitCode: EXIT_UNHEALTHY, line: `${base}/draining: 503 {"state":"DRAINING"}` });
  });

  it('exits 1 when nothing answers in time or nothing listens', async () => {
    const slow = await checkHealth([`${base}/slow`, '200']);
    assert.equal(slow.exitCode, EXIT_UNHEALTHY);
    assert.match(slow.line, /\/slow: no answer \(.*(abort|timeout).*\)/i);
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, '127.0.0.1', resolve));
    const port = (gone.address() as AddressInfo).port;
    await new Promise((resolve) => gone.close(resolve));
    const closed = await checkHealth([`http://127.0.0.1:${port}/healthz`]);
    assert.equal(closed.exitCode, EXIT_UNHEALTHY);
    assert.match(closed.line, /no answer \(.*ECONNREFUSED/);
  });

  it('exits 2 on a missing or bad url or timeout, naming it', async () => {
    assert.equal((await checkHealth([])).exitCode, EXIT_USAGE);
    assert.match((await checkHealth(['not a url'])).line, /usage: .*got "not a url"/);
    assert.equal((await checkHealth(['ftp://127.0.0.1/x'])).exitCode, EXIT_USAGE);
    assert.equal((await checkHealth([`${base}/up`, '-5'])).exitCode, EXIT_USAGE);
  });
});
