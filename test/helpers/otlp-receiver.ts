/**
 * A hand-written OTLP/HTTP JSON receiver, a few lines of node:http standing in for a collector's
 * port 4318: it accepts the exporter's POST /v1/traces, keeps each request's raw text and decodes
 * its spans. Not a collector: the provider's own test (test/tracing/provider.test.ts) uses it, as it
 * sees every request and refusal in-process; the end-to-end trace test runs a real OpenTelemetry
 * Collector instead (test/helpers/otel-collector.ts).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { spansOfRequest, type ReceivedSpan } from './otlp-json.js';

export interface OtlpReceiver {
  /** Base URL (what OTEL_EXPORTER_OTLP_ENDPOINT takes). */
  readonly url: string;
  /** Every span received so far. */
  readonly spans: ReceivedSpan[];
  /** The raw bodies of every export request, for checks of what left the processes. */
  readonly bodies: string[];
  /** Requests to any other path or with another content type. */
  readonly refused: string[];
  close(): Promise<void>;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: string[] = [];
  const refused: string[] = [];
  const server = createServer((request, response) => {
    void (async () => {
      const text = await bodyOf(request);
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !request.headers['content-type']?.startsWith('application/json')) {
        refused.push(`${request.method} ${request.url} ${request.headers['content-type']}`);
        response.writeHead(404).end();
        return;
      }
      spans.push(...spansOfRequest(text));
      bodies.push(text);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    })().catch((error: unknown) => {
      refused.push(`undecodable request: ${String(error)}`);
      if (!response.headersSent) response.writeHead(400).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    bodies,
    refused,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
