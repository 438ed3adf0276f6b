/**
 * The sandbox behind a small HTTP proxy that a test steers: per request, pass it on (with extra
 * headers, e.g. the sandbox's own fault directive) or answer it itself without passing it on (an
 * answer the sandbox would not give at that moment, such as an expired session).
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ProxyDecision =
  { readonly pass: true; readonly headers?: Readonly<Record<string, string>> } | { readonly pass: false; readonly status: number; readonly body: unknown };

export interface SandboxProxy {
  readonly url: string;
  close(): Promise<void>;
}

/** `decide` sees each request's method and path; undefined passes it on as it came. */
export async function startSandboxProxy(
  upstream: string,
  decide: (request: { readonly method: string; readonly path: string }) => ProxyDecision | undefined,
): Promise<SandboxProxy> {
  const target = new URL(upstream);
  const server: Server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const path = incoming.url ?? '';
    const decision = decide({ method: incoming.method ?? 'GET', path });
    if (decision && !decision.pass) {
      incoming.resume();
      outgoing.writeHead(decision.status, { 'content-type': 'application/json' });
      outgoing.end(JSON.stringify(decision.body));
      return;
    }
    const headers: IncomingHttpHeaders = { ...incoming.headers, host: target.host, ...(decision?.headers ?? {}) };
    const forwarded = httpRequest({ host: target.hostname, port: target.port, method: incoming.method, path, headers }, (reply) => {
      outgoing.writeHead(reply.statusCode ?? 502, reply.headers);
      reply.pipe(outgoing);
    });
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
