/**
 * The worker's liveness/readiness endpoint, for container health checks and orchestrators:
 * `GET /healthz` answers 200 `{ "state": "RUNNING" }` while the worker polls its task queue, and 503
 * with the state otherwise (INITIALIZED before run(), STOPPING/DRAINING while SIGTERM drains it, ...),
 * so a draining worker is taken out of rotation but not killed for it. Any other path is 404.
 * With a KMS (PAYLOAD_KEY_PROVIDER=vault-transit) the body also says how it is (`keyProvider`: ok,
 * unavailable or refused, since when and why): a KMS outage never turns the answer to 503, as the
 * worker keeps running on cached keys and a restart would only lose them.
 * Off unless WORKER_HEALTH_PORT is set (the image sets it); node:http only, nothing else to trust.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { State } from '@temporalio/worker';

export const HEALTH_PATH = '/healthz';

export interface WorkerHealthServer {
  /** e.g. http://127.0.0.1:8081/healthz */
  readonly url: string;
  close(): Promise<void>;
}

export class WorkerHealthError extends Error {
  override readonly name = 'WorkerHealthError';
  constructor(
    readonly host: string,
    readonly port: number,
    options: { cause: unknown },
  ) {
    super(
      `worker health endpoint: cannot listen on ${host}:${port}: ${options.cause instanceof Error ? options.cause.message : String(options.cause)}`,
      options,
    );
  }
}

/** Serves `state()` (the worker's getState) at /healthz on host:port until close(). */
export async function startWorkerHealthServer(options: {
  host: string;
  port: number;
  state: () => State;
  details?: () => Record<string, unknown>;
}): Promise<WorkerHealthServer> {
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://health.invalid').pathname;
    if (path !== HEALTH_PATH || (request.method !== 'GET' && request.method !== 'HEAD')) {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'NotFound', message: `only GET ${HEALTH_PATH}` }));
      return;
    }
    const state = options.state();
    response
      .writeHead(state === 'RUNNING' ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(request.method === 'HEAD' ? undefined : JSON.stringify({ state, ...options.details?.() }));
  });
  // A health check must never hold the process open or wait on a slow client.
  server.requestTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (cause) => reject(new WorkerHealthError(options.host, options.port, { cause })));
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}${HEALTH_PATH}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
