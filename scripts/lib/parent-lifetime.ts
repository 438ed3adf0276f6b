/**
 * Children that die with their parent, however it dies (a crash, an out-of-memory kill, SIGKILL):
 * `npm start` and every dev server leave no Temporal server, Web UI server, worker or console behind.
 * Node cannot ask the kernel for a parent-death signal (PR_SET_PDEATHSIG) itself, so:
 *   - a Node child gets a pipe from its parent as stdin and preloads scripts/lib/exit-with-parent.ts,
 *     which stops it when that pipe reaches end-of-file (the kernel closes the parent's end when the
 *     parent ends, whatever ended it);
 *   - a binary (the Temporal server, the Web UI server) runs under `setpriv --pdeathsig KILL` on
 *     Linux (util-linux: it sets the signal and execs the binary, so the pid stays the binary's), else
 *     under a small sh keeper that kills it when its stdin, the parent's pipe, closes.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { platform } from 'node:os';
import { fileURLToPath } from 'node:url';
import { onPath } from './temporal-binaries.js';

/** The node arguments that preload the watcher; the child must be spawned with stdin 'pipe'. */
export const EXIT_WITH_PARENT_IMPORT: readonly string[] = ['--import', fileURLToPath(new URL('./exit-with-parent.ts', import.meta.url))];

/**
 * The keeper where setpriv is not there: starts the binary, passes SIGTERM and SIGINT on, and kills it
 * when stdin reaches end-of-file (the parent ended, or closed it to kill the binary); exits with its status.
 * An asynchronous list of sh reads /dev/null unless redirected: the watcher reads stdin as fd 3.
 */
const KEEPER = `exec 3<&0
"$@" </dev/null 3<&- &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM
trap 'kill -INT "$child" 2>/dev/null' INT
(while read -r _ <&3; do :; done; kill -KILL "$child" 2>/dev/null) &
watcher=$!
status=0
while kill -0 "$child" 2>/dev/null; do wait "$child"; status=$?; done
kill "$watcher" 2>/dev/null
exit "$status"`;

export type TieMechanism = 'setpriv' | 'keeper';

/** setpriv on Linux when installed, the sh keeper elsewhere (macOS). */
export function tieMechanism(): TieMechanism {
  return platform() === 'linux' && onPath('setpriv') ? 'setpriv' : 'keeper';
}

/** How a binary tied to this process is killed: the keeper's SIGKILL is the end of its stdin. */
const keepers = new WeakSet<ChildProcess>();

/** Spawns `binary` so that it ends when this process ends; stdin is not the binary's (it is the tie). */
export function spawnTiedToParent(
  binary: string,
  args: readonly string[],
  options: Omit<SpawnOptions, 'stdio'> & { stdio?: ['pipe', 'pipe' | 'ignore', 'pipe' | 'ignore'] },
  mechanism: TieMechanism = tieMechanism(),
): ChildProcess {
  const stdio = options.stdio ?? ['pipe', 'pipe', 'pipe'];
  if (mechanism === 'setpriv') {
    return spawn('setpriv', ['--pdeathsig', 'KILL', '--', binary, ...args], { ...options, stdio: ['ignore', stdio[1], stdio[2]] });
  }
  const child = spawn('sh', ['-c', KEEPER, 'keeper', binary, ...args], { ...options, stdio });
  keepers.add(child);
  return child;
}

/** Sends `signal` to a child of spawnTiedToParent (or any other child). */
export function killTied(child: ChildProcess, signal: NodeJS.Signals): void {
  if (signal === 'SIGKILL' && keepers.has(child)) {
    // The keeper kills the binary when its stdin closes; a SIGKILL of the keeper itself would orphan it.
    child.stdin?.destroy();
    return;
  }
  child.kill(signal);
}
