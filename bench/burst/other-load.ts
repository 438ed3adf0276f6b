/**
 * `--other-load P`: other work on the host beside the stack, a steady P% of every core, for the whole
 * run (idle, alone and the night), so "what the cores carry" is what the cores the stack is left
 * carry. One process a core, each spinning until it has used P% of the current second, then
 * sleeping 10 ms: a share of CPU time, not of the wall clock, so a stack that crowds it does not
 * shrink it (a busy-then-sleep by the wall clock got less than its share under load, and "what the
 * rest of the cores carry" read over 100%). Tied to this process: they end with it however it ends.
 */
import type { ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { killTied, spawnTiedToParent } from '../../scripts/lib/parent-lifetime.js';
import { cpuMs } from '../bench-processes.js';

/**
 * The loop each process runs: its CPU time kept at `percent` of the wall time of the current second
 * (a second's debt is caught up, no more: a process starved for long does not then burst).
 */
function loopSource(percent: number): string {
  return `const share = ${percent} / 100; let began = Date.now(), cpu = process.cpuUsage();
function turn() {
  if (Date.now() - began >= 1000) { began = Date.now(); cpu = process.cpuUsage(); }
  for (;;) { const used = process.cpuUsage(cpu); if ((used.user + used.system) / 1000 >= share * (Date.now() - began) || Date.now() - began >= 1000) break; }
  setTimeout(turn, 10);
}
turn();`;
}

export class OtherLoad {
  private constructor(
    readonly percent: number,
    private readonly children: readonly ChildProcess[],
  ) {}

  /** None at 0%. */
  static start(percent: number, cores = availableParallelism()): OtherLoad {
    if (percent <= 0) return new OtherLoad(0, []);
    const children = Array.from({ length: cores }, () => {
      const child = spawnTiedToParent(process.execPath, ['-e', loopSource(percent)], { stdio: ['pipe', 'ignore', 'ignore'] });
      // A process that could not start is no load: the bench still runs, and cpuMs says so.
      child.on('error', () => undefined);
      return child;
    });
    return new OtherLoad(percent, children);
  }

  /** The share of the cores left to the stack (1 without other load). */
  get coresLeft(): number {
    return 1 - this.percent / 100;
  }

  /** CPU its processes have used (ms); processes gone count nothing. */
  cpuMs(): number {
    return this.children.reduce((sum, child) => {
      const used = child.pid === undefined ? Number.NaN : cpuMs(child.pid);
      return sum + (Number.isFinite(used) ? used : 0);
    }, 0);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            killTied(child, 'SIGKILL');
          }),
      ),
    );
  }
}
