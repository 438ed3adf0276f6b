/**
 * scripts/lib/parent-lifetime.ts: a binary tied to its parent (setpriv on Linux, the sh keeper
 * elsewhere: both tried here where they can run) and a Node child watching its stdin end when the
 * parent is killed with SIGKILL; a binary under the keeper is stopped by killTied as by kill.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { exitOf } from '../../scripts/lib/child-exit.js';
import { killTied, spawnTiedToParent, tieMechanism, type TieMechanism } from '../../scripts/lib/parent-lifetime.js';

const PARENT = fileURLToPath(new URL('./tied-parent.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The processes among `pids` still running (zombies not counted). */
function running(pids: number[]): number[] {
  return pids.filter((pid) => {
    try {
      return !execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' })
        .trim()
        .startsWith('Z');
    } catch {
      return false; // ps exits 1 for a pid it does not know
    }
  });
}

/** The pids the parent's children have: the keeper's child is the sleep, not the keeper. */
function sleepUnder(pid: number): number | undefined {
  const out = execFileSync('ps', ['-A', '-o', 'pid=,ppid=,comm='], { encoding: 'utf8' });
  for (const line of out.split('\n')) {
    const [child, parent, command] = line.trim().split(/\s+/);
    if (Number(parent) === pid && command === 'sleep') return Number(child);
  }
  return undefined;
}

const mechanisms: TieMechanism[] = tieMechanism() === 'setpriv' ? ['setpriv', 'keeper'] : ['keeper'];

describe('children tied to their parent', () => {
  for (const mechanism of mechanisms) {
    test(`${mechanism}: the binary and the Node child end when the parent is killed with SIGKILL`, async () => {
      const parent = spawn(process.execPath, ['--import', 'tsx', PARENT, mechanism], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
      const [line] = (await once(parent.stdout, 'data')) as [Buffer];
      const pids = JSON.parse(line.toString()) as { binary: number; node: number };
      const binary = mechanism === 'keeper' ? (sleepUnder(pids.binary) ?? assert.fail('no sleep under the keeper')) : pids.binary;
      const watched = [binary, pids.binary, pids.node];
      assert.deepEqual(running(watched), watched, 'all running before the kill');
      parent.kill('SIGKILL');
      const deadline = Date.now() + 10_000;
      while (running(watched).length > 0 && Date.now() < deadline) await delay(100);
      assert.deepEqual(running(watched), [], 'none left 10 s after the parent died');
    });
  }

  test('keeper: killTied passes SIGTERM on and makes SIGKILL the end of its stdin', async () => {
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      const keeper = spawnTiedToParent('sleep', ['300'], {}, 'keeper');
      await delay(300);
      const sleep = sleepUnder(keeper.pid!);
      assert.ok(sleep, 'the keeper started the sleep');
      killTied(keeper, signal);
      await exitOf(keeper);
      const deadline = Date.now() + 5_000;
      while (running([sleep]).length > 0 && Date.now() < deadline) await delay(100);
      assert.deepEqual(running([sleep]), [], `the sleep ended after killTied(${signal})`);
    }
  });
});
