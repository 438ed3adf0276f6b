/**
 * Lowering threads' CPU priority (src/worker/cpu-priority.ts) in this process, on Linux: the Node
 * worker threads a start makes are lowered and no other thread; a thread already lower is left as
 * it is (a raise would be refused without privileges). The last test lowers this whole process:
 * nothing runs after it here.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { lowerCpuPriority, lowerThreadsStartedBy } from '../../src/worker/cpu-priority.js';
import { threadsOf } from '../helpers/threads.js';

const LINUX = process.platform === 'linux';

/** A Node worker thread, started without a name as the SDK starts its workflow threads. */
async function startThread(): Promise<Worker> {
  const thread = new Worker('setInterval(() => {}, 1_000);', { eval: true });
  await once(thread, 'online');
  return thread;
}

/** The nice value this process started at (a runner may itself run under nice): the tests count from it. */
const BASE = LINUX ? (threadsOf('self').find((thread) => thread.name === 'MainThread')?.nice ?? 0) : 0;

describe(
  'lowering threads',
  { skip: !LINUX ? 'Linux keeps a nice value per thread; elsewhere nothing is lowered' : BASE > 13 ? `this process already runs at nice ${BASE}` : false },
  () => {
    it('lowers the worker threads a start makes, and no other', async () => {
      const earlier = await startThread();
      const { value, started, lowered } = await lowerThreadsStartedBy(BASE + 6, startThread);
      try {
        assert.deepEqual([started, lowered], [1, 1]);
        const all = threadsOf('self');
        assert.deepEqual(
          all.filter((thread) => thread.nice === BASE + 6).map((thread) => thread.name),
          ['WorkerThread'],
          JSON.stringify(all),
        );
        assert.ok(
          all.filter((thread) => thread.nice !== BASE + 6).every((thread) => thread.nice === BASE),
          `the rest, the earlier worker thread among them, at ${BASE}: ${JSON.stringify(all)}`,
        );
      } finally {
        await Promise.all([value.terminate(), earlier.terminate()]);
      }
    });

    it('lowers nothing at 0', async () => {
      const { value, started, lowered } = await lowerThreadsStartedBy(0, startThread);
      await value.terminate();
      assert.deepEqual([started, lowered], [0, 0]);
    });

    it('leaves a thread that already runs lower as it is (no raise, no error)', async () => {
      assert.ok(lowerCpuPriority(BASE + 4) > 0, 'the process lowered');
      const { value, started, lowered } = await lowerThreadsStartedBy(BASE + 2, startThread);
      try {
        assert.deepEqual([started, lowered], [1, 0], 'a new thread inherits the lower priority: left');
        assert.ok(
          threadsOf('self').every((thread) => thread.nice === BASE + 4),
          JSON.stringify(threadsOf('self')),
        );
        assert.equal(lowerCpuPriority(BASE + 4), 0, 'already there: nothing changed');
      } finally {
        await value.terminate();
      }
    });
  },
);
