/**
 * A pipeline's webhook receiver for tests: a real HTTP server on 127.0.0.1 that records every request
 * (headers and body) and answers what the test's `answer` says (a status, after an optional delay).
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  readonly path: string;
  /** What the receiver answered. */
  readonly status: number;
}

export interface ReceiverAnswer {
  readonly status: number;
  readonly delayMs?: number;
}

export interface WebhookReceiver {
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  readonly received: ReceivedWebhook[];
  /** What the next requests get: 200 at once unless set. */
  answer: (request: { readonly path: string; readonly count: number }) => ReceiverAnswer;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const receiver: WebhookReceiver = {
    origin: '',
    received,
    answer: () => ({ status: 200 }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      const { status, delayMs = 0 } = receiver.answer({ path, count: received.length });
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), path, status });
      setTimeout(() => {
        response.writeHead(status, { 'content-type': 'text/plain' });
        response.end(status < 300 ? 'ok' : 'receiver down');
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  Object.assign(receiver, { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  return receiver;
}
