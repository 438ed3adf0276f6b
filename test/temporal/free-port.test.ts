/**
 * The ports the stacks and test servers are started on: picked outside the range the OS hands out by
 * itself (to listen(0) and to every outgoing connection as its source port), so nothing but another
 * explicit bind can take one before its process binds it. CI's dev-stack run died on such a take
 * ("listen EADDRINUSE: address already in use 127.0.0.1:46601", a port from that range).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { after, describe, it } from 'node:test';
import { freePort, freePortIn, parseOsPortRange, rangeOutside } from '../../scripts/lib/free-port.js';

const RANGE_FILE = '/proc/sys/net/ipv4/ip_local_port_range';
const osRange = existsSync(RANGE_FILE) ? parseOsPortRange(readFileSync(RANGE_FILE, 'utf8')) : undefined;
// Where the OS's range cannot be read, or leaves no room outside it, freePort falls back to the OS's pick.
const noRoom =
  osRange === undefined
    ? `no ${RANGE_FILE} (not Linux)`
    : rangeOutside(osRange) === undefined
      ? `the OS's range ${osRange.from}-${osRange.to} leaves no room`
      : false;
const holders: Server[] = [];
after(() => holders.forEach((holder) => holder.close()));

/** Listens on `port` until the file ends, as another process would. */
async function hold(port: number): Promise<void> {
  const holder = createServer();
  await new Promise<void>((resolve, reject) => {
    holder.once('error', reject);
    holder.listen(port, '127.0.0.1', () => resolve());
  });
  holders.push(holder);
}

void describe('freePort', () => {
  void it("reads the OS's range, and picks outside it: below when there is room, above otherwise, the OS's own pick when neither has a thousand ports", () => {
    assert.deepEqual(parseOsPortRange('32768\t60999\n'), { from: 32768, to: 60999 });
    for (const bad of ['', '32768', 'a b', '60999 32768', '0 100', '1024 70000']) assert.equal(parseOsPortRange(bad), undefined, bad);
    assert.deepEqual(rangeOutside({ from: 32768, to: 60999 }), { from: 11000, to: 32767 });
    assert.deepEqual(rangeOutside({ from: 49152, to: 65535 }), { from: 11000, to: 49151 });
    assert.deepEqual(rangeOutside({ from: 11500, to: 60000 }), { from: 60001, to: 65535 });
    assert.equal(rangeOutside({ from: 11500, to: 65000 }), undefined);
    // Never below 11000 (well-known homes, and 10080, which fetch and browsers refuse), on either side.
    assert.deepEqual(rangeOutside({ from: 1024, to: 5000 }), { from: 11000, to: 65535 });
  });

  void it("gives ports outside the OS's range that can be bound, a different one on every call", { skip: noRoom }, async () => {
    const os = osRange ?? assert.fail('the OS says its range');
    const ports = await Promise.all(Array.from({ length: 40 }, () => freePort()));
    for (const port of ports) assert.ok((port < os.from || port > os.to) && port >= 11000, `${port} is outside ${os.from}-${os.to}, from 11000`);
    assert.equal(new Set(ports).size, ports.length, `one process never gets a port twice: ${ports.join(', ')}`);
    // Each can be bound (hold throws if not).
    for (const port of ports) await hold(port);
  });

  void it('never gives a port that is held, and names the range when every port in it is', async (t) => {
    // Held by a listener of its own choosing, as another process's would be (freePort never handed it out).
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', () => resolve()));
    holders.push(holder);
    const port = (holder.address() as { port: number }).port;
    await assert.rejects(freePortIn({ from: port, to: port }), new RegExp(`^Error: no free port on 127\\.0\\.0\\.1 in ${port}-${port} after \\d+ tries$`));
    // Two ports, one held: the other, whichever the draws reach first.
    const neighbour = port === 65535 ? port - 1 : port + 1;
    const range = { from: Math.min(port, neighbour), to: Math.max(port, neighbour) };
    let free: number;
    try {
      free = await freePortIn(range);
    } catch (error) {
      t.skip(`the neighbour ${neighbour} is held by something else on this machine (${String(error)})`);
      return;
    }
    assert.equal(free, neighbour);
  });
});
