/**
 * `--other-load P`: other work on the host beside the stack, a steady P% of every core, for the whole
 * run (idle, alone and the night), so "what the cores carry" is what the cores the stack is left
 * carry. One process a core, each busy P ms of every 100 (a spin, then a sleep): the kernel sees a
 * steady share, as a host's other tenants look. Tied to this process: they end with it however it ends.
 */
import type { ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { killTied, spawnTiedToParent } from '../../scripts/lib/parent-lifetime.js';
import { cpuMs } from '../bench-processes.js';

const PERIOD_MS = 100;

/** The busy loop each process runs: busy `percent` ms of every PERIOD_MS, by the wall clock. */
function loopSource(percent: number): string {
  return `const period = ${PERIOD_MS}, busy = ${percent};
function turn() { const start = Date.now(); while (Date.now() - start < busy) {} setTimeout(turn, Math.max(0, period - (Date.now() - start))); }
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
