/**
 * A port the dev server picked free can be taken before the server binds it (CI saw `npm start`
 * fail so: "listen tcp 127.0.0.1:44205: bind: address already in use" on the worker service's
 * port). Here another process holds one of the picked ports on purpose: the server starts on other
 * ports, keeps its frontend's address across a restart, reports no unexpected exit for a start-up
 * that failed, and names the port when the one it may not change is taken. Real dev server process.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DevServer, DevServerError } from '../../scripts/lib/dev-server.js';
import { freePort } from '../../scripts/lib/free-port.js';

let runDir: string;
const holders: Server[] = [];
const servers: DevServer[] = [];

/** Listens on `port` as another process would, until the file ends. */
async function hold(port: number): Promise<void> {
  // Whoever connects (a server's service dialing what it took for a peer) is hung up on at once.
  const holder = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    holder.once('error', reject);
    holder.listen(port, '127.0.0.1', () => resolve());
  });
  holders.push(holder);
}

async function created(name: string, port?: number): Promise<{ server: DevServer; unexpectedExits: string[]; logPath: string }> {
  const unexpectedExits: string[] = [];
  const logPath = join(runDir, `${name}.log`);
  const server = await DevServer.create({ dbFile: join(runDir, `${name}.sqlite`), logPath, port, onUnexpectedExit: (how) => unexpectedExits.push(how) });
  servers.push(server);
  return { server, unexpectedExits, logPath };
}

before(async () => {
  runDir = await mkdtemp(join(tmpdir(), 'dev-server-ports-'));
});

after(async () => {
  for (const server of servers) await server.close();
  for (const holder of holders) await new Promise((resolve) => holder.close(resolve));
  if (runDir) await rm(runDir, { recursive: true, force: true });
});

describe('the dev server on a port taken before it binds', () => {
  it('starts on other internal ports, then restarts on its own frontend address with another port taken', async () => {
    const { server, unexpectedExits, logPath } = await created('internal');
    const picked = server.ports;
    await hold(picked.worker.grpc);
    await server.start();
    assert.match(
      await readFile(logPath, 'utf8'),
      new RegExp(`127\\.0\\.0\\.1:${picked.worker.grpc}: bind: address already in use`),
      'the first try met the taken port',
    );
    assert.notEqual(server.ports.worker.grpc, picked.worker.grpc);

    const address = server.address;
    await server.stop('SIGKILL');
    const held = server.ports.history.grpc;
    await hold(held);
    await server.restart('SIGTERM');
    assert.notEqual(server.ports.history.grpc, held, 'the restart moved the history service off the taken port');
    assert.equal(server.address, address, 'clients reconnect where they were');
    assert.deepEqual(unexpectedExits, [], 'neither the failed start-ups nor a stop are unexpected exits');
  });

  it('refuses, naming the port, when the frontend port it was asked for is taken', async () => {
    const port = await freePort();
    await hold(port);
    const { server, unexpectedExits, logPath } = await created('frontend', port);
    await assert.rejects(
      server.start(),
      (error: unknown) => error instanceof DevServerError && error.message.includes(`127.0.0.1:${port}: bind: address already in use`),
    );
    assert.deepEqual(unexpectedExits, []);
    const tries = (await readFile(logPath, 'utf8')).match(/bind: address already in use/g) ?? [];
    assert.equal(tries.length, 1, 'refused at once, not tried again on the port it may not change');
  });
});
