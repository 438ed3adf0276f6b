/**
 * A counting, delaying reverse proxy in front of the sandbox (node:http). It forwards every request
 * once, as it came, and:
 * - holds each Authorize reply `replyDelayMs` AFTER the sandbox answered, so the service has already
 *   acted when a worker dies during the hold: the window where a resubmitted answer is a duplicate;
 * - counts requests per operation and per client, and the held replies whose client vanished;
 * - counts answer submissions itself (same customerId + RequestId + SecurityResponses twice is a
 *   duplicate), as a second opinion beside the sandbox's own counter.
 * Each worker gets its own base URL (`/via/<name>` prefix, stripped before forwarding), so the proxy
 * knows which worker holds a reply: the chaos schedule can kill exactly that one.
 */
import { EventEmitter } from 'node:events';
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';

export class ProxyError extends Error {
  override readonly name = 'ProxyError';
}

export interface AnswerSubmission {
  readonly customerId: string;
  readonly requestId: string;
  readonly count: number;
}

export interface ProxyStats {
  /** "Authorize (answer)", "GetAccountsDetailAsync", ... → requests forwarded. */
  readonly byOperation: ReadonlyMap<string, number>;
  /** Worker name ("direct" without a prefix) → requests forwarded. */
  readonly byClient: ReadonlyMap<string, number>;
  /** Authorize calls carrying SecurityResponses. */
  readonly answers: number;
  /** Authorize calls that make the service log in at the institution: live (credentials) and refresh. */
  readonly credentials: number;
  /** Answer submissions seen more than once (same customerId, RequestId and SecurityResponses). */
  readonly duplicates: readonly AnswerSubmission[];
  /** Authorize replies held for the delay. */
  readonly held: number;
  /** Held replies whose client had gone (worker killed) when the hold ended: the service acted, the worker never knew. */
  readonly lostReplies: number;
  /** Of those, replies to answer submissions. */
  readonly lostAnswerReplies: number;
  /** Requests the sandbox closed without a reply (its reset faults), passed on as resets. */
  readonly upstreamResets: number;
  /** Per client: requests whose client had gone when the reply was ready (held or not): work it never saw finish. */
  readonly abandonedByClient: ReadonlyMap<string, number>;
}

export interface ChaosProxy {
  readonly url: string;
  /** The base URL a named client (a worker) uses, so its requests are told apart. */
  urlFor(client: string): string;
  /** Answer replies being held right now, per client. */
  heldAnswers(): ReadonlyMap<string, number>;
  /** The clients holding an answer reply now, or the first to hold one within `timeoutMs` (empty if none). */
  answerHolders(timeoutMs: number, signal?: AbortSignal): Promise<string[]>;
  /** Requests received from each client and not yet answered (forwarding or held). */
  inFlight(): ReadonlyMap<string, number>;
  stats(): ProxyStats;
  close(): Promise<void>;
}

export interface ChaosProxyOptions {
  /** The sandbox, e.g. http://127.0.0.1:4010. */
  readonly upstream: string;
  readonly replyDelayMs: number;
  readonly host?: string;
}

const VIA = 'via';
/** Headers that describe one hop, never forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

type AuthorizeMode = 'answer' | 'live' | 'cached' | 'refresh' | 'invalid';

/** The Authorize mode the body asks for (the spec's four modes), without validating it further. */
function authorizeMode(body: unknown): AuthorizeMode {
  if (typeof body !== 'object' || body === null) return 'invalid';
  const record = body as Record<string, unknown>;
  if (record.RequestId !== undefined && record.SecurityResponses !== undefined) return 'answer';
  if (typeof record.Username === 'string') return 'live';
  if (typeof record.LoginId === 'string') return record.MostRecentCached === true ? 'cached' : 'refresh';
  return 'invalid';
}

/** JSON with object keys sorted, so the same answer is the same text whatever the key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonical(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** "/v3/{customerId}/BankingServices/Authorize" → { customerId, operation } (operation before the body is read). */
function classify(segments: readonly string[]): { customerId: string | undefined; operation: string } {
  if (segments[0] === 'sandbox') return { customerId: undefined, operation: 'sandbox admin' };
  if (segments[0]?.toLowerCase() !== 'v3') return { customerId: undefined, operation: 'other' };
  const customerId = segments[1];
  const rest = segments.slice(2);
  if (rest[0]?.toLowerCase() === 'bankingservices') return { customerId, operation: rest[1] ?? 'BankingServices' };
  if (rest[0]?.toLowerCase() === 'investments') return { customerId, operation: 'Investments' };
  if (rest[0]?.toLowerCase() === 'insight') return { customerId, operation: rest.length >= 6 ? `attributes ${rest[5] ?? ''}` : 'attributes (custom)' };
  return { customerId, operation: 'other' };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function increment(map: Map<string, number>, key: string, by = 1): void {
  map.set(key, (map.get(key) ?? 0) + by);
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

interface UpstreamReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export async function startChaosProxy(options: ChaosProxyOptions): Promise<ChaosProxy> {
  const upstream = new URL(options.upstream);
  const host = options.host ?? '127.0.0.1';
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const events = new EventEmitter();

  const byOperation = new Map<string, number>();
  const byClient = new Map<string, number>();
  const submissions = new Map<string, { customerId: string; requestId: string; count: number }>();
  const holding = new Map<string, number>();
  const pending = new Map<string, number>();
  const abandonedByClient = new Map<string, number>();
  let answers = 0;
  let credentials = 0;
  let held = 0;
  let lostReplies = 0;
  let lostAnswerReplies = 0;
  let upstreamResets = 0;

  const forward = (request: IncomingMessage, path: string, body: Buffer): Promise<UpstreamReply> =>
    new Promise((resolve, reject) => {
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(request.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
      }
      headers.host = upstream.host;
      headers['content-length'] = String(body.length);
      const outgoing = httpRequest(
        { protocol: upstream.protocol, hostname: upstream.hostname, port: upstream.port, method: request.method, path, headers, agent },
        (reply) => {
          const chunks: Buffer[] = [];
          reply.on('data', (chunk: Buffer) => chunks.push(chunk));
          reply.once('end', () => resolve({ status: reply.statusCode ?? 502, headers: reply.headers, body: Buffer.concat(chunks) }));
          reply.once('error', reject);
        },
      );
      outgoing.once('error', reject);
      outgoing.end(body);
    });

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? '/', 'http://proxy');
    let segments = url.pathname.split('/').filter(Boolean);
    let client = 'direct';
    if (segments[0] === VIA && segments[1] !== undefined) {
      client = safeDecode(segments[1]);
      segments = segments.slice(2);
    }
    const path = `/${segments.join('/')}${url.search}`;
    const body = await readBody(request);
    const { customerId, operation: baseOperation } = classify(segments.map(safeDecode));
    let operation = baseOperation;
    let mode: AuthorizeMode | undefined;
    if (baseOperation.toLowerCase() === 'authorize') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.toString('utf8'));
      } catch {
        parsed = undefined;
      }
      mode = authorizeMode(parsed);
      operation = `Authorize (${mode})`;
      if (mode === 'answer') {
        answers += 1;
        const { RequestId, SecurityResponses } = parsed as { RequestId: unknown; SecurityResponses: unknown };
        const requestId = String(RequestId);
        const key = canonical([customerId ?? '', requestId, SecurityResponses]);
        const seen = submissions.get(key);
        if (seen) seen.count += 1;
        else submissions.set(key, { customerId: customerId ?? '', requestId, count: 1 });
      } else if (mode === 'live' || mode === 'refresh') credentials += 1;
    }
    increment(byOperation, operation);
    increment(byClient, client);
    increment(pending, client);
    try {
      await respond(request, response, path, body, mode, client);
    } finally {
      increment(pending, client, -1);
    }
  };

  const respond = async (
    request: IncomingMessage,
    response: ServerResponse,
    path: string,
    body: Buffer,
    mode: AuthorizeMode | undefined,
    client: string,
  ): Promise<void> => {
    let reply: UpstreamReply;
    try {
      reply = await forward(request, path, body);
    } catch {
      // The sandbox closed the connection without answering (its reset fault): pass the reset on.
      upstreamResets += 1;
      request.socket.destroy();
      return;
    }

    if (mode !== undefined && options.replyDelayMs > 0) {
      held += 1;
      const isAnswer = mode === 'answer';
      if (isAnswer) {
        increment(holding, client);
        events.emit('held', client);
      }
      try {
        await delay(options.replyDelayMs);
      } finally {
        if (isAnswer) increment(holding, client, -1);
      }
      if (response.destroyed || request.socket.destroyed) {
        lostReplies += 1;
        if (isAnswer) lostAnswerReplies += 1;
        increment(abandonedByClient, client);
        return;
      }
    }
    if (response.destroyed || request.socket.destroyed) {
      increment(abandonedByClient, client);
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(reply.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    headers['content-length'] = String(reply.body.length);
    response.writeHead(reply.status, headers);
    response.end(reply.body);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent || response.destroyed) return;
      const message = error instanceof Error ? error.message : String(error);
      response.writeHead(502, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ HttpStatusCode: 502, Message: `chaos proxy: ${message}` }));
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new ProxyError(`the chaos proxy cannot listen on ${host}: ${error.message}`, { cause: error })));
    server.listen(0, host, () => resolve());
  });
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;

  const heldAnswers = (): ReadonlyMap<string, number> => new Map([...holding].filter(([, count]) => count > 0));

  return {
    url,
    urlFor: (client) => `${url}/${VIA}/${encodeURIComponent(client)}`,
    heldAnswers,
    answerHolders(timeoutMs, signal) {
      const current = [...heldAnswers().keys()];
      if (current.length > 0 || timeoutMs <= 0 || signal?.aborted) return Promise.resolve(current);
      return new Promise((resolve) => {
        const done = (clients: string[]) => {
          clearTimeout(timer);
          events.off('held', onHeld);
          signal?.removeEventListener('abort', onAbort);
          resolve(clients);
        };
        const onHeld = (client: string) => done([client]);
        const onAbort = () => done([]);
        const timer = setTimeout(() => done([]), timeoutMs);
        events.on('held', onHeld);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    inFlight: () => new Map([...pending].filter(([, count]) => count > 0)),
    stats: () => ({
      byOperation: new Map(byOperation),
      byClient: new Map(byClient),
      answers,
      credentials,
      duplicates: [...submissions.values()].filter((entry) => entry.count > 1).map((entry) => ({ ...entry })),
      held,
      lostReplies,
      lostAnswerReplies,
      upstreamResets,
      abandonedByClient: new Map(abandonedByClient),
    }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
