/**
 * The production Temporal server (1.32.2 from go.temporal.io/server) on a throwaway PostgreSQL
 * cluster, schema set up and `default` registered, for a test that needs the real server rather
 * than the dev server: scripts/prod-check's own pieces, started and stopped as one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Timeline } from '../../scripts/chaos/timeline.js';
import { PostgresCluster } from '../../scripts/prod-check/postgres.js';
import { findServerBinaries, ProdTemporalServer, type ProdServerOptions } from '../../scripts/prod-check/temporal-server.js';

export interface ProductionServer {
  readonly dir: string;
  readonly postgres: PostgresCluster;
  readonly server: ProdTemporalServer;
  readonly timeline: Timeline;
  stop(): Promise<void>;
}

type ServerExtras = Partial<Pick<ProdServerOptions, 'tls' | 'authorization' | 'dynamicConfig'>>;

/** `options` beyond the binaries, database, directory and timeline (TLS, authorization, dynamic config), or a function of the run's directory that makes them (a PKI in it, say). */
export async function startProductionServer(
  name: string,
  options: ServerExtras | ((dir: string) => ServerExtras | Promise<ServerExtras>) = {},
): Promise<ProductionServer> {
  const dir = await mkdtemp(join(tmpdir(), `${name}-`));
  const timeline = new Timeline();
  const postgres = await PostgresCluster.create(dir);
  let server: ProdTemporalServer | undefined;
  const stop = async () => {
    await server?.close();
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await postgres.start();
    const extra = typeof options === 'function' ? await options(dir) : options;
    server = await ProdTemporalServer.create({ binaries: findServerBinaries().binaries!, postgres, dir, timeline, ...extra });
    server.setupSchema();
    await server.start();
    await server.registerNamespace('default');
    return { dir, postgres, server, timeline, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
