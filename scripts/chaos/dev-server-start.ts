/** The dev server of a rehearsal (chaos, keys-check) on a SQLite file in its run directory. */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DevServer, DevServerError } from '../lib/dev-server.js';
import type { Timeline } from './timeline.js';

const DEV_SERVER_START_ATTEMPTS = 3;

/**
 * The run's dev server on a SQLite file in the run directory. A port picked free can be taken by
 * another process before the server binds it (on a shared machine, a soak hit it): such a start is
 * tried again on other ports and a fresh database file, twice (as DevServer.start does).
 */
export async function startDevServer(runDir: string, resources: { server?: DevServer | undefined }, timeline: Timeline): Promise<{ server: DevServer; serverStartMs: number }> {
  const dbFile = join(runDir, 'temporal.sqlite');
  const logPath = join(runDir, 'dev-server.log');
  for (let attempt = 1; ; attempt++) {
    const server = await DevServer.create({
      dbFile,
      logPath,
      onUnexpectedExit: (how) => timeline.mark(`dev server exited on its own (${how}); see ${logPath}`),
    });
    resources.server = server;
    try {
      return { server, serverStartMs: await server.start() };
    } catch (error) {
      const portTaken = error instanceof DevServerError && /address already in use/.test(error.message);
      if (!portTaken || attempt === DEV_SERVER_START_ATTEMPTS) throw error;
      await server.close();
      resources.server = undefined;
      await Promise.all(['', '-shm', '-wal'].map((suffix) => rm(`${dbFile}${suffix}`, { force: true })));
      timeline.mark(`dev server start ${attempt}: a picked port was taken before the server bound it; trying other ports`);
    }
  }
}
