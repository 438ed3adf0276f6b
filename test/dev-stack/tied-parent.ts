/**
 * The parent of test/dev-stack/parent-lifetime.test.ts: starts `sleep` tied to it by the mechanism
 * named in argv[2] (setpriv or keeper) and a Node child watching its stdin (exit-with-parent), prints
 * their pids as one JSON line, then waits to be killed.
 */
import { spawn } from 'node:child_process';
import { EXIT_WITH_PARENT_IMPORT, spawnTiedToParent, type TieMechanism } from '../../scripts/lib/parent-lifetime.js';

const mechanism = process.argv[2] as TieMechanism;
const binary = spawnTiedToParent('sleep', ['300'], { stdio: ['pipe', 'ignore', 'ignore'] }, mechanism);
const node = spawn(process.execPath, ['--import', 'tsx', ...EXIT_WITH_PARENT_IMPORT, '-e', 'setInterval(() => {}, 1000)'], {
  stdio: ['pipe', 'ignore', 'inherit'],
});
// The keeper's pid is not the sleep's: report the sleep once the keeper has started it.
setTimeout(() => process.stdout.write(`${JSON.stringify({ binary: binary.pid, node: node.pid })}\n`), 500);
setInterval(() => {}, 1000);
