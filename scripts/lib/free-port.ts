/**
 * A TCP port free on the loopback interface right now, for a process about to be started on it.
 *
 * It is chosen outside the range the OS hands out by itself (Linux's ip_local_port_range): the OS
 * gives ports from that range to every listen(0) on the machine and, as source ports, to outgoing
 * connections. A port picked there and bound seconds later by a child (a stack whose pipeline entry
 * starts after OpenBao and Temporal) can be taken meanwhile by any of them; a suite run saw it
 * ("listen EADDRINUSE: address already in use 127.0.0.1:46601"). Outside that range only another
 * explicit bind can take it. Ports are drawn at random, so two processes' picks rarely meet, and one
 * process never hands out the same port twice.
 */
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports below this are left alone: well-known and registered services' usual homes, and 10080,
 * which fetch and browsers refuse to connect to (the Fetch standard's bad ports).
 */
const LOWEST = 11_000;
const HIGHEST = 65_535;
/** Where the OS's range cannot be read (not Linux): assumed 32768 and up, which holds Linux's default and macOS's 49152-65535, so picks fall below both. */
const DEFAULT_OS_RANGE: PortRange = { from: 32_768, to: 65_535 };
const ATTEMPTS = 50;
/** Every port this process handed out: a port picked but not yet bound by its child looks free to the next pick. */
const handedOut = new Set<number>();

export interface PortRange {
  readonly from: number;
  readonly to: number;
}

/** The range the OS assigns ports from by itself, read from `text` (ip_local_port_range: "32768\t60999"). */
export function parseOsPortRange(text: string): PortRange | undefined {
  const [from, to] = text.trim().split(/\s+/).map(Number);
  return from !== undefined && to !== undefined && Number.isInteger(from) && Number.isInteger(to) && from >= 1 && from <= to && to <= HIGHEST
    ? { from, to }
    : undefined;
}

/** Read once: the range does not change under a running process, and a stack's start picks a dozen ports. */
let osRangeRead: PortRange | undefined;

function osPortRange(): PortRange {
  if (osRangeRead) return osRangeRead;
  try {
    osRangeRead = parseOsPortRange(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')) ?? DEFAULT_OS_RANGE;
  } catch {
    osRangeRead = DEFAULT_OS_RANGE;
  }
  return osRangeRead;
}

/** The larger stretch of [LOWEST, HIGHEST] outside the OS's own range; undefined when neither holds a thousand ports. */
export function rangeOutside(os: PortRange): PortRange | undefined {
  const below: PortRange = { from: LOWEST, to: os.from - 1 };
  const above: PortRange = { from: Math.max(LOWEST, os.to + 1), to: HIGHEST };
  const size = (range: PortRange) => range.to - range.from + 1;
  const larger = size(below) >= size(above) ? below : above;
  return size(larger) >= 1_000 ? larger : undefined;
}

/** Whether a listener can bind `port` on `host` now (it is closed again at once). */
function canListen(port: number, host: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' || error.code === 'EACCES' ? resolve(false) : reject(error)));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

/**
 * A port of `range` free on `host` and not handed out by this process before, drawn at random;
 * after ATTEMPTS taken ones, an error naming the range.
 */
export async function freePortIn(range: PortRange, host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const port = randomInt(range.from, range.to + 1);
    if (handedOut.has(port)) continue;
    // Claimed before the check: a pick made meanwhile in this process draws another.
    handedOut.add(port);
    if (await canListen(port, host)) return port;
    handedOut.delete(port);
  }
  throw new Error(`no free port on ${host} in ${range.from}-${range.to} after ${ATTEMPTS} tries`);
}

/** A port the OS picks (listen on 0): from its own range, so any outgoing connection may take it before it is bound. */
function osPickedPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error(`no port assigned on ${host}`))));
    });
  });
}

/** A TCP port free on `host` right now, outside the OS's own range where it has room (the header says why). */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const outside = rangeOutside(osPortRange());
  if (outside) {
    try {
      return await freePortIn(outside, host);
    } catch {
      // Fifty taken ports in a row: a machine that uses that range for itself. The OS's pick still works.
    }
  }
  return osPickedPort(host);
}
