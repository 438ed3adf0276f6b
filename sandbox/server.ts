/**
 * The sandbox HTTP server (node:http, no framework): routing, calling-application auth, the
 * per-tenant request limit, fault injection, and writing replies. Operations live in service.ts,
 * the admin API in admin.ts, the limit and its counts in rate-limits.ts, the optional state file in
 * state-file.ts (with one, every request that reaches a handler is saved before its reply is sent).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { AttributePackageOperation } from '../src/aggregator/schemas.js';
import { Admin } from './admin.js';
import { summarizeSubmissions, type AuthorizeSubmissions } from './authorize-submissions.js';
import { CUSTOMER_ID_PATTERN } from './customer.js';
import { DataCache, type DataCacheStats } from './data-cache.js';
import { FAULT_HEADER, MALFORMED_BODY, UNUSABLE_BODY, parseFaultHeader, type FaultAction } from './faults.js';
import { SandboxError, errorReply, readJson, type Reply } from './http.js';
import { DEFAULT_OPTIONS, type SandboxOptions } from './options.js';
import { RateLimiter, type RateLimitSettings, type RateLimitUpdate, type RequestRates } from './rate-limits.js';
import { FaultSignal, Service } from './service.js';
import { SandboxState, type Tenant } from './state.js';
import { StateStore, type StateFileError, type StateFileStats } from './state-file.js';
import { VARIATION_HEADER, parseVariationHeader, vary } from './variations.js';

export type { SandboxOptions } from './options.js';

export interface Sandbox {
  readonly url: string;
  readonly port: number;
  readonly options: SandboxOptions;
  /** The live state (tenants, logins, sessions), for tests that need to look inside. */
  readonly state: SandboxState;
  /** What GET /sandbox/authorize-submissions answers: Authorize calls seen, and answers sent twice. */
  authorizeSubmissions(customerId?: string): AuthorizeSubmissions;
  /** Counters of the generated-data cache (generations, serializations, hits, bytes), for tests and benchmarks. */
  dataCacheStats(): DataCacheStats;
  /** What GET /sandbox/request-rates answers: per tenant, requests accepted and refused per whole second. */
  requestRates(customerId?: string, seconds?: number): RequestRates;
  /** What POST /sandbox/rate-limits does (without validation): set (a value) or clear (null) limits. */
  updateRateLimits(change: RateLimitUpdate): RateLimitSettings;
  /** The state file's writes so far (count, size, cost); undefined without a state file. */
  stateFileStats(): StateFileStats | undefined;
  close(): Promise<void>;
}

type Params = Record<string, string>;
type Handler = (context: { params: Params; tenant: Tenant; body: unknown }) => Reply | Promise<Reply>;
interface Route {
  readonly pattern: readonly string[];
  readonly methods: Partial<Record<'GET' | 'POST' | 'DELETE', Handler>>;
}

export async function createSandbox(overrides: Partial<SandboxOptions> = {}): Promise<Sandbox> {
  const options: SandboxOptions = { ...DEFAULT_OPTIONS, ...Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined)) };
  // A state file that cannot be used stops the start here (StateFileError), before the port is taken.
  const store = options.stateFile === undefined ? undefined : StateStore.open(options.stateFile);
  const state = store?.state ?? new SandboxState();
  const cache = new DataCache(options.asOf);
  const service = new Service({ state, cache, options });
  const rateLimiter = new RateLimiter(options.now, options.rateLimitPerSecond);
  const admin = new Admin(state, cache, options, rateLimiter);

  // Patterns after /v3/{customerId}/; literals match case-insensitively, ':name' captures.
  const routes: Route[] = [
    { pattern: ['BankingServices', 'Authorize'], methods: { POST: (c) => service.authorize(c.tenant, c.body) } },
    { pattern: ['BankingServices', 'GetAccountsDetail'], methods: { POST: (c) => service.getAccountsDetail(c.tenant, c.body) } },
    {
      pattern: ['BankingServices', 'GetAccountsDetailAsync', ':requestId'],
      methods: {
        GET: (c) => service.getAccountsDetailAsync(c.tenant, c.params.requestId ?? ''),
        POST: (c) => service.getAccountsDetailAsync(c.tenant, c.params.requestId ?? ''),
      },
    },
    { pattern: ['BankingServices', 'GetAccountsSummary'], methods: { POST: (c) => service.getAccountsSummary(c.tenant, c.body) } },
    {
      pattern: ['BankingServices', 'GetAccountsSummaryAsync', ':requestId'],
      methods: {
        GET: (c) => service.getAccountsSummaryAsync(c.tenant, c.params.requestId ?? ''),
        POST: (c) => service.getAccountsSummaryAsync(c.tenant, c.params.requestId ?? ''),
      },
    },
    { pattern: ['BankingServices', 'GetStatements'], methods: { POST: (c) => service.getStatements(c.tenant, c.body) } },
    { pattern: ['BankingServices', 'DeleteCard', ':loginId'], methods: { DELETE: (c) => service.deleteCard(c.tenant, c.params.loginId ?? '') } },
    { pattern: ['Investments'], methods: { POST: (c) => service.investments(c.tenant, c.body) } },
    {
      pattern: ['insight', 'login', ':loginId', 'attributes', ':requestId', ':operation'],
      methods: {
        GET: (c) => {
          const operation = AttributePackageOperation.safeParse(c.params.operation);
          if (!operation.success)
            throw new SandboxError(undefined, `Unknown attributes operation "${c.params.operation ?? ''}" (${AttributePackageOperation.options.join(', ')})`, {
              httpStatus: 404,
            });
          return service.attributesPackage(c.tenant, c.params.loginId ?? '', c.params.requestId ?? '', operation.data);
        },
      },
    },
    {
      pattern: ['insight', 'login', ':loginId', 'attributes', ':requestId'],
      methods: { POST: (c) => service.attributesCustom(c.tenant, c.params.loginId ?? '', c.params.requestId ?? '', c.body) },
    },
  ];

  /** Runs `then` once the state a reply may reflect is saved: at once without a state file. */
  const afterSave = (then: (error?: StateFileError) => void): void => (store ? store.whenDurable(then) : then());

  const reply = (response: ServerResponse, answer: Reply): void =>
    afterSave((error) => {
      if (response.destroyed) return;
      // What the request did is not saved: the client is not told it happened.
      send(response, error ? errorReply(new SandboxError('AGGREGATION_ERROR', `The sandbox could not save its state: ${error.message}`)) : answer);
    });

  const send = (response: ServerResponse, answer: Reply): void => {
    const chunks = 'chunks' in answer ? answer.chunks : ['raw' in answer ? answer.raw : JSON.stringify(answer.body)];
    response.writeHead(answer.status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': chunks.reduce((total, chunk) => total + (typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength), 0),
      ...answer.headers,
    });
    for (const chunk of chunks.slice(0, -1)) response.write(chunk);
    response.end(chunks.at(-1));
  };

  const performFault = (request: IncomingMessage, response: ServerResponse, action: FaultAction): void => {
    switch (action.kind) {
      case 'reset':
        // A scenario's reset follows a counted data request: the count is saved first, as a reply's would be.
        return afterSave(() => request.socket.destroy());
      case 'status':
        return reply(response, { status: action.status, body: { HttpStatusCode: action.status, Message: `Injected fault: HTTP ${action.status}` } });
      case 'rate-limit':
        return reply(response, {
          status: action.status,
          headers: { 'retry-after': '1' },
          body: { HttpStatusCode: action.status, Message: 'Too many requests; slow down', ServiceCode: 'TOO_MANY_REQUESTS' },
        });
      case 'malformed':
        return reply(response, { status: 200, raw: MALFORMED_BODY });
      case 'unusable':
        return reply(response, { status: 200, raw: UNUSABLE_BODY });
    }
  };

  const route = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const method = request.method ?? 'GET';
    const segments = new URL(request.url ?? '/', 'http://sandbox').pathname.split('/').filter(Boolean).map(safeDecode);

    if (segments[0] === 'sandbox') return reply(response, await routeAdmin(method, segments.slice(1), request));
    if (segments[0]?.toLowerCase() !== 'v3' || segments.length < 3) return reply(response, notFound(segments));

    if (options.authSecret !== undefined && request.headers[options.authHeader.toLowerCase()] !== options.authSecret) {
      return reply(response, errorReply(new SandboxError('ACCESS_DENIED', `Missing or wrong ${options.authHeader} header`)));
    }
    const customerId = segments[1] ?? '';
    if (!CUSTOMER_ID_PATTERN.test(customerId)) return reply(response, errorReply(new SandboxError('INVALID_REQUEST', `Invalid customer id "${customerId}"`)));
    // Before the body is read and before any state is touched: a refused request changes nothing.
    const admission = rateLimiter.admit(customerId);
    if (!admission.admitted) {
      return reply(
        response,
        errorReply(
          new SandboxError(
            'TOO_MANY_REQUESTS',
            `Too many requests for customer ${customerId}: the limit is ${admission.limitPerSecond} per second; retry after ${admission.retryAfterSeconds} s`,
            {
              httpStatus: 429,
              headers: { 'retry-after': String(admission.retryAfterSeconds) },
            },
          ),
        ),
      );
    }

    const fault = parseFaultHeader(request.headers[FAULT_HEADER]);
    if (typeof fault === 'string') return reply(response, errorReply(new SandboxError('INVALID_REQUEST', fault)));
    if (fault?.latencyMs) await sleep(fault.latencyMs);
    if (fault?.action) return performFault(request, response, fault.action);
    const variations = parseVariationHeader(request.headers[VARIATION_HEADER]);
    if (typeof variations === 'string') return reply(response, errorReply(new SandboxError('INVALID_REQUEST', variations)));

    const rest = segments.slice(2);
    const matched = routes.map((candidate) => ({ candidate, params: match(candidate.pattern, rest) })).find((m) => m.params !== undefined);
    if (!matched?.params) return reply(response, notFound(segments));
    const handler = matched.candidate.methods[method as keyof Route['methods']];
    if (!handler) return reply(response, methodNotAllowed(Object.keys(matched.candidate.methods).join(', '), method));
    const body = method === 'GET' || method === 'DELETE' ? undefined : await readJson(request);
    let answer: Reply;
    try {
      answer = vary(await handler({ params: matched.params, tenant: state.tenant(customerId), body }), variations);
    } finally {
      // Whatever it answered: a refused answer is still counted, an idle clock refreshed, a fault counted.
      store?.changed();
    }
    return reply(response, answer);
  };

  /** An admin answer whose request changed the state (the request limits are settings, not state: not saved). */
  const changed = (answer: Reply): Reply => {
    store?.changed();
    return answer;
  };

  const routeAdmin = async (method: string, segments: string[], request: IncomingMessage): Promise<Reply> => {
    const [first, second] = segments;
    if (segments.length === 1 && first === 'scenarios') return method === 'GET' ? admin.scenarios() : methodNotAllowed('GET');
    if (segments.length === 1 && first === 'health') return { status: 200, body: { ok: true } };
    if (segments.length === 1 && first === 'authorize-submissions') {
      if (method !== 'GET') return methodNotAllowed('GET', method);
      const customerId = new URL(request.url ?? '/', 'http://sandbox').searchParams.get('customerId') ?? undefined;
      if (customerId !== undefined && !CUSTOMER_ID_PATTERN.test(customerId)) throw new SandboxError('INVALID_REQUEST', `Invalid customer id "${customerId}"`);
      return admin.authorizeSubmissions(customerId);
    }
    if (segments.length === 1 && first === 'rate-limits') {
      if (method === 'GET') return admin.rateLimits();
      return method === 'POST' ? admin.updateRateLimits(await readJson(request)) : methodNotAllowed('GET, POST', method);
    }
    if (segments.length === 1 && first === 'request-rates') {
      if (method !== 'GET') return methodNotAllowed('GET', method);
      const query = new URL(request.url ?? '/', 'http://sandbox').searchParams;
      return admin.requestRates(query.get('customerId') ?? undefined, query.get('seconds') ?? undefined);
    }
    if (segments.length === 2 && second === 'logins' && CUSTOMER_ID_PATTERN.test(first ?? '')) {
      return method === 'POST' ? changed(admin.createLogin(first ?? '', await readJson(request))) : methodNotAllowed('POST');
    }
    if (segments.length === 1 && CUSTOMER_ID_PATTERN.test(first ?? ''))
      return method === 'DELETE' ? changed(admin.resetTenant(first ?? '')) : methodNotAllowed('DELETE');
    return notFound(['sandbox', ...segments]);
  };

  const server = createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      if (error instanceof FaultSignal) return performFault(request, response, error.action);
      if (error instanceof SandboxError) return reply(response, errorReply(error));
      // The caller hung up (e.g. its timeout passed during an injected latency): nobody to answer.
      if (request.destroyed || response.destroyed || response.writableEnded) return;
      console.error('sandbox: unexpected error', error);
      reply(response, errorReply(new SandboxError('AGGREGATION_ERROR', `Unexpected sandbox error: ${(error as Error).message}`)));
    });
  });
  server.keepAliveTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    port,
    options,
    state,
    authorizeSubmissions: (customerId) => summarizeSubmissions(state, customerId),
    dataCacheStats: () => cache.stats(),
    requestRates: (customerId, seconds) => rateLimiter.rates(customerId, seconds),
    updateRateLimits: (change) => rateLimiter.update(change),
    stateFileStats: () => store?.fileStats(),
    close: () => {
      // Replies waiting for a write go out before the connections close; what changes after is written once closed.
      store?.flush();
      return new Promise<void>((resolve, reject) => {
        server.close((error) => {
          store?.close();
          if (error) reject(error);
          else resolve();
        });
        server.closeAllConnections();
      });
    },
  };
}

function match(pattern: readonly string[], segments: readonly string[]): Params | undefined {
  if (pattern.length !== segments.length) return undefined;
  const params: Params = {};
  for (let i = 0; i < pattern.length; i++) {
    const part = pattern[i] ?? '';
    const segment = segments[i] ?? '';
    if (part.startsWith(':')) params[part.slice(1)] = segment;
    else if (part.toLowerCase() !== segment.toLowerCase()) return undefined;
  }
  return params;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function notFound(segments: readonly string[]): Reply {
  return { status: 404, body: { HttpStatusCode: 404, Message: `No endpoint at /${segments.join('/')}` } };
}

function methodNotAllowed(allow: string, method?: string): Reply {
  return {
    status: 405,
    headers: { allow },
    body: { HttpStatusCode: 405, Message: `Method ${method ? `${method} ` : ''}is not allowed here (allowed: ${allow})` },
  };
}
