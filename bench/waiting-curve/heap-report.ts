/**
 * A process's JavaScript heaps read from outside, through Node's diagnostic report: the worker is
 * started with --report-on-signal, --report-signal and --report-directory, SIGWINCH makes it write
 * one (not Node's default SIGUSR2: the Temporal SDK's runtime shuts the worker down on it), and the
 * report carries the main thread's heap and each worker thread's (where the workflows run), which
 * process.memoryUsage() inside would not give for the threads.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const REPORT_SIGNAL = 'SIGWINCH';

export interface HeapReading {
  /** Used heap of the main thread (activities, the SDK's worker). */
  readonly mainBytes: number;
  /** Used heap of the worker threads together (the workflow sandboxes). */
  readonly threadsBytes: number;
}

interface NodeReport {
  readonly javascriptHeap?: { readonly usedMemory?: number };
  readonly workers?: readonly { readonly javascriptHeap?: { readonly usedMemory?: number } }[];
}

export class HeapReportError extends Error {
  override readonly name = 'HeapReportError';
}

/** The Node arguments that let `readHeaps` ask the process for its report. */
export function heapReportNodeArgs(directory: string): string[] {
  return ['--report-on-signal', `--report-signal=${REPORT_SIGNAL}`, `--report-directory=${directory}`];
}

/** Signals `pid` and reads the report it writes into `directory` (then removes it). */
export async function readHeaps(pid: number, directory: string, timeoutMs = 30_000): Promise<HeapReading> {
  const before = new Set(await readdir(directory));
  process.kill(pid, REPORT_SIGNAL);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const written = (await readdir(directory)).filter((name) => !before.has(name) && name.endsWith('.json'));
    for (const name of written) {
      const path = join(directory, name);
      // A report is written in one go but may be caught half-written: read again until it parses.
      const report = await readFile(path, 'utf8')
        .then((text) => JSON.parse(text) as NodeReport)
        .catch(() => undefined);
      if (!report) continue;
      await rm(path, { force: true });
      const threadsBytes = (report.workers ?? []).reduce((sum, thread) => sum + (thread.javascriptHeap?.usedMemory ?? 0), 0);
      return { mainBytes: report.javascriptHeap?.usedMemory ?? 0, threadsBytes };
    }
    await sleep(100);
  }
  throw new HeapReportError(`process ${pid} wrote no diagnostic report into ${directory} within ${timeoutMs} ms of ${REPORT_SIGNAL}`);
}
