/**
 * `npm run bench:book-footprint`: what a book costs Temporal, measured on a dev server with the
 * product's worker process and the sandbox, then scaled to 100,000 logins (linear: every cost below
 * is per entry or per page, nothing grows with the book as a whole). Prints, from the histories:
 * - an entry (one per enrolled login): its history's events and bytes, and enrolments a second;
 * - a refresh: events and bytes per run (one page), the largest payload of a run (the page read), the
 *   report page's bytes, and refreshes a second on this machine;
 * - CPU of the worker and the server a login, through the book and as independent connections of the
 *   same logins (as many at once as the book's window reached): what the book's own workflows add;
 * and one closing line:
 *   book-footprint: <n> logins in pages of <p>: entry <e> events <b> B, page run <e> events <kb> KiB (largest payload <kb> KiB), report page <kb> KiB; cpu a login <ms> ms through the book, <ms> ms independent; at 100,000: entries <mb> MiB, <r> runs, report <mb> MiB
 */
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { ConnectionsClient } from '../src/client/connections.js';
import { BookReportNotReadyError } from '../src/client/errors.js';
import { dataConverterFor } from '../src/codec/data-converter.js';
import { loadClientConfig } from '../src/settings/client.js';
import { bookEntryWorkflowId, DEFAULT_BOOK_PAGE_SIZE } from '../src/contract/book-definitions.js';
import { createSandboxLogin } from './sandbox-fixtures.js';
import { cpuMs, median, prepareBenchWorker, runtimeOverride, startBenchServer, startSandboxProcess, stopAllProcesses, workerTuning } from './bench-processes.js';


const { EventType } = proto.temporal.api.enums.v1;
const AT_SCALE = 100_000;
const ENROL_CONCURRENCY = 16;

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

function options(): { logins: number; pageSize: number } {
  const { values } = parseArgs({ options: { logins: { type: 'string' }, 'page-size': { type: 'string' } }, strict: true });
  const whole = (text: string | undefined, fallback: number, name: string, max: number) => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1 || value > max) {
      process.stderr.write(`bench:book-footprint: --${name} must be a whole number from 1 to ${max}, got ${JSON.stringify(text)}\nusage: npm run bench:book-footprint -- [--logins N (default 1000)] [--page-size N (default ${DEFAULT_BOOK_PAGE_SIZE})]\n`);
      process.exit(2);
    }
    return value;
  };
  return { logins: whole(values.logins, 1_000, 'logins', 20_000), pageSize: whole(values['page-size'], DEFAULT_BOOK_PAGE_SIZE, 'page-size', 1_000) };
}

async function mapLimit<T, R>(items: readonly T[], limit: number, act: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      out[index] = await act(items[index] as T);
    }
  }));
  return out;
}

const kib = (bytes: number) => (bytes / 1024).toFixed(1);
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

async function main(): Promise<void> {
  const { logins, pageSize } = options();
  const env = await startBenchServer();
  const customerId = 'footprint-lender';
  const taskQueue = `book-footprint-${Date.now().toString(36)}`;
  try {
    const sandboxUrl = await startSandboxProcess();
    const worker = await prepareBenchWorker();
    const workerProcess = await worker.start({ TEMPORAL_ADDRESS: env.address, TEMPORAL_TASK_QUEUE: taskQueue, AGGREGATOR_BASE_URL: sandboxUrl, WORKER_METRICS_PORT: '0', LOG_LEVEL: 'INFO', ...workerTuning() });
    const connection = await Connection.connect({ address: env.address });
    const client = new Client({ connection, dataConverter: dataConverterFor(loadClientConfig({ TEMPORAL_ADDRESS: env.address, ...runtimeOverride() })) });
    const connections = new ConnectionsClient({ client, taskQueue });
    log(`book-footprint: ${logins} logins, pages of ${pageSize}; dev server ${env.address}, one worker (${worker.runtime}), the sandbox`);

    const loginIds = await mapLimit(Array.from({ length: logins }, (_, index) => index), ENROL_CONCURRENCY, (index) => createSandboxLogin(sandboxUrl, customerId, `pending_polls_${index + 1}`, 1));
    const enrolStart = Date.now();
    await mapLimit(loginIds, ENROL_CONCURRENCY, (loginId) => connections.books.enrol({ customerId, loginId, products: { accountsDetail: {} }, timing: { pollIntervalMs: 1_000 } }));
    const enrolSeconds = (Date.now() - enrolStart) / 1000;
    log(`entries: ${logins} enrolled in ${enrolSeconds.toFixed(1)} s (${(logins / enrolSeconds).toFixed(0)} a second at ${ENROL_CONCURRENCY} at once)`);

    // CPU of the stack's two busy parts (the worker and the Temporal server) over each way of refreshing.
    const workerPid = workerProcess.pid;
    const serverPid = env.devServer.pid;
    const stackCpuMs = () => cpuMs(workerPid ?? -1) + cpuMs(serverPid ?? -1);

    const cpuBeforeBook = stackCpuMs();
    const refreshStart = Date.now();
    const { refreshWorkflowId } = await connections.books.run({ customerId }, { pageSize });
    let report;
    for (;;) {
      try {
        report = await connections.books.report(refreshWorkflowId);
        break;
      } catch (error) {
        if (!(error instanceof BookReportNotReadyError)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
    const refreshSeconds = (Date.now() - refreshStart) / 1000;
    const bookCpuMs = stackCpuMs() - cpuBeforeBook;
    log(`refresh: ${report.counts.refreshed} refreshed, ${report.counts.failed} failed in ${refreshSeconds.toFixed(1)} s (${(report.counts.done / refreshSeconds).toFixed(1)} a second), ${report.pages.length} pages, ${report.windowChanges.length} window changes, last size ${report.window.size}`);

    // The same logins refreshed as independent connections (what a per-login Schedule starts), as
    // many at once as the book's window held at most: the difference is what the book adds.
    const concurrency = Math.max(1, ...report.windowChanges.map((change) => change.to), report.window.size);
    const cpuBeforeDirect = stackCpuMs();
    const directStart = Date.now();
    await mapLimit(loginIds, concurrency, async (loginId) => {
      const { workflowId } = await connections.start(`direct-${loginId}`, { customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 1_000 }, unattended: true });
      await connections.result(workflowId);
    });
    const directSeconds = (Date.now() - directStart) / 1000;
    const directCpuMs = stackCpuMs() - cpuBeforeDirect;
    const perLogin = (ms: number) => ms / logins;
    log(
      `cpu (worker + server): the book ${perLogin(bookCpuMs).toFixed(1)} ms a login (${refreshSeconds.toFixed(1)} s), independent connections ${concurrency} at once ${perLogin(directCpuMs).toFixed(1)} ms a login (${directSeconds.toFixed(1)} s): ` +
        `the book's own workflows (refresh, bookLoginWorkflow, report) add ${(perLogin(bookCpuMs) - perLogin(directCpuMs)).toFixed(1)} ms a login (${((100 * (bookCpuMs - directCpuMs)) / directCpuMs).toFixed(0)}%)`,
    );

    // Read after the night, when every entry's own workflow tasks have run (flags included).
    const entryHistories = await Promise.all(loginIds.slice(0, 20).map(async (loginId) => {
      const history = await client.workflow.getHandle(bookEntryWorkflowId(customerId, loginId)).fetchHistory();
      return { events: history.events?.length ?? 0, bytes: proto.temporal.api.history.v1.History.encode(history).finish().length };
    }));
    const entryEvents = median(entryHistories.map((entry) => entry.events));
    const entryBytes = median(entryHistories.map((entry) => entry.bytes));
    log(`entry: its history ${entryEvents} events, ${entryBytes} B (median of 20)`);


    const runs: { events: number; bytes: number; largest: number }[] = [];
    for await (const info of client.workflow.list({ query: `WorkflowId = ${JSON.stringify(refreshWorkflowId)}` })) {
      const history = await client.workflow.getHandle(refreshWorkflowId, info.runId).fetchHistory();
      let largest = 0;
      for (const event of history.events ?? []) {
        const size = proto.temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
        if (event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED) largest = Math.max(largest, size);
      }
      runs.push({ events: history.events?.length ?? 0, bytes: proto.temporal.api.history.v1.History.encode(history).finish().length, largest });
    }
    const fullRuns = runs.length > 1 ? runs.filter((run) => run.events >= median(runs.map((r) => r.events)) * 0.5) : runs;
    const runEvents = Math.max(...fullRuns.map((run) => run.events));
    const runBytes = Math.max(...fullRuns.map((run) => run.bytes));
    const largest = Math.max(...runs.map((run) => run.largest));
    const pageHistory = await client.workflow.getHandle(report.pages[0] as string).fetchHistory();
    const pageBytes = proto.temporal.api.history.v1.History.encode(pageHistory).finish().length;
    log(`runs: ${runs.length}, the largest ${runEvents} events, ${kib(runBytes)} KiB; largest payload (a page read) ${kib(largest)} KiB; report page 1 ${kib(pageBytes)} KiB`);

    const perLoginRun = runBytes / Math.min(pageSize, logins);
    const runsAtScale = Math.ceil(AT_SCALE / pageSize);
    log(
      `book-footprint: ${logins} logins in pages of ${pageSize}: entry ${entryEvents} events ${entryBytes} B, page run ${runEvents} events ${kib(runBytes)} KiB (largest payload ${kib(largest)} KiB), report page ${kib(pageBytes)} KiB; ` +
        `cpu a login ${perLogin(bookCpuMs).toFixed(1)} ms through the book, ${perLogin(directCpuMs).toFixed(1)} ms independent; ` +
        `at 100,000: entries ${mib(entryBytes * AT_SCALE)} MiB, ${runsAtScale} runs (${mib(perLoginRun * AT_SCALE)} MiB of refresh history a night), report ${mib((pageBytes / Math.min(pageSize, logins)) * AT_SCALE)} MiB`,
    );
    await connection.close();
  } finally {
    await stopAllProcesses();
    await env.teardown();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench:book-footprint failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
