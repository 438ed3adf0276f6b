/**
 * The service's clock for benchmarks: a reverse proxy in front of the sandbox that records when each
 * data request and Authorize arrived and was answered. Every polling strategy is measured the same
 * way, as the service sees it, whether its polls are in the workflow's history or not:
 * - poll lag: time from a 202 answer to the next request of the same operation, minus the interval;
 * - an Authorize's own time (request in to reply out), to subtract from an answer's round trip.
 */
import { createServer, request as httpRequest, Agent, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CallRecord {
  readonly kind: 'data' | 'authorize';
  /** The RequestId the call was about (path, request body or 202 answer); '' when none was seen. */
  readonly requestId: string;
  readonly status: number;
  readonly start: number;
  readonly end: number;
  /** Authorize calls carrying SecurityResponses. */
  readonly answer: boolean;
}

export interface ServiceClock {
  readonly url: string;
  readonly calls: CallRecord[];
  close(): Promise<void>;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

function requestIdIn(text: string): string {
  return /"RequestId"\s*:\s*"([^"]+)"/.exec(text)?.[1] ?? '';
}

export async function startServiceClock(target: string): Promise<ServiceClock> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const calls: CallRecord[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const start = performance.timeOrigin + performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const path = req.url ?? '/';
      const authorize = /\/Authorize$/.test(path.split('?')[0] ?? '');
      const data = !authorize && /\/(GetAccountsDetail|GetInvestments|Attributes|GetAccountsSummary)/i.test(path);
      const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path, headers: req.headers, agent }, (answer) => {
        const answerChunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => answerChunks.push(chunk));
        answer.on('end', () => {
          const reply = Buffer.concat(answerChunks);
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(reply);
          if (authorize || data) {
            const status = answer.statusCode ?? 0;
            const requestBody = body.toString('utf8');
            // Small answers only: a 200 with data may be megabytes and carries nothing we need.
            const requestId = UUID.exec(path)?.[0] ?? (requestIdIn(requestBody) || (reply.length < 4096 ? requestIdIn(reply.toString('utf8')) : ''));
            calls.push({
              kind: authorize ? 'authorize' : 'data',
              requestId,
              status,
              start,
              end: performance.timeOrigin + performance.now(),
              answer: authorize && requestBody.includes('SecurityResponses'),
            });
          }
        });
      });
      forward.on('error', (error) => {
        res.writeHead(502);
        res.end(String(error));
      });
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise((resolve) => {
        agent.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Lags (ms) between each 202 answer and the next request of the same operation (by RequestId), minus the interval. */
export function pollLags(calls: readonly CallRecord[], intervalMs: number, since = 0): number[] {
  const byRequest = new Map<string, CallRecord[]>();
  for (const call of calls) {
    if (call.kind !== 'data' || call.requestId === '' || call.start < since) continue;
    byRequest.set(call.requestId, [...(byRequest.get(call.requestId) ?? []), call]);
  }
  const lags: number[] = [];
  for (const sequence of byRequest.values()) {
    sequence.sort((a, b) => a.start - b.start);
    for (let i = 1; i < sequence.length; i += 1) {
      const previous = sequence[i - 1];
      const current = sequence[i];
      if (previous && current && previous.status === 202) lags.push(current.start - previous.end - intervalMs);
    }
  }
  return lags;
}
