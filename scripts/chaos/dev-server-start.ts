/** The dev server of a rehearsal (chaos, keys-check) on a SQLite file in its run directory. */
import { join } from 'node:path';
import { DevServer } from '../lib/dev-server.js';
import type { Timeline } from './timeline.js';

/**
 * The run's dev server on a SQLite file in the run directory, its unexpected exits marked on the
 * timeline. DevServer.start tries again on other ports when one picked free was taken.
 */
export async function startDevServer(
  runDir: string,
  resources: { server?: DevServer | undefined },
  timeline: Timeline,
): Promise<{ server: DevServer; serverStartMs: number }> {
  const logPath = join(runDir, 'dev-server.log');
  const server = await DevServer.create({
    dbFile: join(runDir, 'temporal.sqlite'),
    logPath,
    onUnexpectedExit: (how) => timeline.mark(`dev server exited on its own (${how}); see ${logPath}`),
  });
  resources.server = server;
  return { server, serverStartMs: await server.start() };
}
