/**
 * One POST of a callback to its receiver. No redirect is followed (a receiver answers 2xx or it has
 * not taken the message), the answer's body is read only as far as an error message needs, and a
 * host given by DNS name must resolve to public addresses only: the check sits in the connection's
 * own lookup, so the address checked is the address connected to (no second resolution a rebinding
 * DNS server could answer differently). An IP address in the URL is not looked up: it is allowed
 * because its tenant listed it (callback-urls.ts).
 */
import { lookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';

/** Ranges a callback never reaches through a DNS name: private, loopback, link-local (cloud metadata), shared and unspecified. */
const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv6');

/** Whether `address` is one a callback may not reach through a name (IPv4-mapped IPv6 judged as its IPv4). */
export function isInternalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped !== undefined) return INTERNAL.check(mapped, 'ipv4');
  const family = isIP(address);
  return family === 0 || INTERNAL.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

export class InternalAddressError extends Error {
  override readonly name = 'InternalAddressError';
  readonly code = 'ECALLBACKINTERNAL';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The connection's lookup: resolves as usual, refuses when any address is internal. */
function publicOnlyLookup(hostname: string, options: LookupAllOptions | { all?: boolean }, callback: LookupCallback): void {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const internal = addresses.find((entry) => isInternalAddress(entry.address));
    if (internal !== undefined)
      return callback(
        new InternalAddressError(
          `${hostname} resolves to ${internal.address}, an internal address a callback reaches only when CALLBACK_URLS lists it by address`,
        ),
        [],
      );
    if (options.all === true) return callback(null, addresses);
    const [first] = addresses;
    if (first === undefined) return callback(Object.assign(new Error(`${hostname} resolves to no address`), { code: 'ENOTFOUND' }), []);
    return callback(null, first.address, first.family);
  });
}

export interface WebhookPost {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly timeoutMs: number;
}

export interface WebhookAnswer {
  readonly statusCode: number;
  /** The first bytes of the answer's body, for the error of a refused message. */
  readonly excerpt: string;
}

const EXCERPT_BYTES = 512;

/** Posts once; the receiver's status and the start of its answer, or the network's error. */
export function postWebhook({ url, headers, body, timeoutMs }: WebhookPost): Promise<WebhookAnswer> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<WebhookAnswer>((resolve, reject) => {
    const request = send(
      target,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'aggregation-connections-callbacks/1',
        },
        lookup: publicOnlyLookup,
        timeout: timeoutMs,
      },
      (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        response.on('data', (chunk: Buffer) => {
          if (kept < EXCERPT_BYTES) chunks.push(chunk.subarray(0, EXCERPT_BYTES - kept));
          kept += chunk.length;
        });
        response.on('end', () => resolve({ statusCode: response.statusCode ?? 0, excerpt: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', reject);
    request.end(body);
  });
}
