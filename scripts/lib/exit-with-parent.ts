/**
 * Preloaded (`node --import`) into the Node children of `npm start` (the worker, the console), which
 * it starts with a pipe as their stdin and never writes to: end-of-file on stdin means the parent has
 * ended, however it ended (the kernel closes its end of the pipe even on SIGKILL). The child then
 * stops as on SIGTERM (the worker drains, the console closes), and exits anyway GRACE_MS later: its
 * server is gone with the parent, so a drain may never finish. Without a pipe on stdin (the child
 * started by hand, stdin a terminal or /dev/null) it does nothing. scripts/lib/parent-lifetime.ts.
 */
import { fstatSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const GRACE_MS = 5_000;

function stdinIsPipe(): boolean {
  try {
    const stat = fstatSync(0);
    // Node gives a child a socket pair where it asks for a pipe.
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

// `--import` runs in every worker thread too (the workflow threads), whose process.stdin is not the pipe.
if (isMainThread && stdinIsPipe()) {
  const stdin = process.stdin;
  let ended = false;
  const parentGone = () => {
    if (ended) return;
    ended = true;
    setTimeout(() => process.exit(1), GRACE_MS).unref();
    process.kill(process.pid, 'SIGTERM');
  };
  stdin.on('end', parentGone);
  stdin.on('close', parentGone);
  stdin.on('error', parentGone);
  stdin.resume();
  // The pipe alone keeps nothing alive: a child that is done exits as it would without it.
  (stdin as unknown as { unref?: () => void }).unref?.();
}
