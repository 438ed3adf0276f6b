/**
 * `npm run bench:book-footprint`: what a book costs Temporal, measured on a dev server with the
 * product's worker process and the sandbox, then scaled to 100,000 logins (linear: every cost below
 * is per entry or per page, nothing grows with the book as a whole). Prints, from the histories:
 * - an entry (one per enrolled login): its history's events and bytes, and enrolments a second;
 * - a refresh: events and bytes per run (one page), the largest payload of a run (the page read), the
 *   report page's bytes, and refreshes a second on this machine;
 * - CPU of the worker and the server a login beyond the stack's idle, through the book and as
 *   independent connections of the same logins (as many at once as the book's window reached),
 *   alternated for `--rounds` (medians): what the book's own work adds;
 * and one closing line:
 *   book-footprint: <n> logins in pages of <p>: entry <e> events <b> B, page run <e> events <kb> KiB (largest payload <kb> KiB), report page <kb> KiB; cpu a login <ms> ms through the book, <ms> ms independent (<r>x); at 100,000: entries <mb> MiB, <r> runs, report <mb> MiB
 */
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { ConnectionsClient } from '../src/client/connections.js';
import { connectionKey } from '../src/client/business-key.js';
import { BookReportNotReadyError } from '../src/client/errors.js';
import { dataConverterFor } from '../src/codec/data-converter.js';
import { loadClientConfig } from '../src/settings/client.js';
import { bookConnectionWorkflowId, bookEntryWorkflowId, DEFAULT_BOOK_PAGE_SIZE } from '../src/contract/book/book-definitions.js';
import { DEFAULT_WINDOW_BOUNDS } from '../src/contract/window/window-definitions.js';
import { createSandboxLogin, eventTimeMs } from './sandbox-fixtures.js';
import { nightRuleLine } from './night-rule.js';
import {
  cpuMs,
  median,
  prepareBenchWorker,
  runtimeOverride,
  startBenchServer,
  startSandboxProcess,
  stopAllProcesses,
  workerTuning,
} from './bench-processes.js';

const { EventType } = proto.temporal.api.enums.v1;
const AT_SCALE = 100_000;
const ENROL_CONCURRENCY = 16;
const IDLE_SETTLE_MS = 5_000;
const IDLE_SAMPLE_MS = 5_000;
/** The stack's CPU a second under which it counts as quiet (its pollers and timers: 20-60 ms here), and how long to wait for it. */
const QUIET_MS_PER_SECOND = 100;
const QUIET_WAIT_MAX_MS = 60_000;

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

function options(): { logins: number; pageSize: number; rounds: number; pollIntervalMs: number } {
  const { values } = parseArgs({
    options: { logins: { type: 'string' }, 'page-size': { type: 'string' }, rounds: { type: 'string' }, 'poll-interval-ms': { type: 'string' } },
    strict: true,
  });
  const whole = (text: string | undefined, fallback: number, name: string, max: number) => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1 || value > max) {
      process.stderr.write(
        `bench:book-footprint: --${name} must be a whole number from 1 to ${max}, got ${JSON.stringify(text)}\nusage: npm run bench:book-footprint -- [--logins N (default 1000)] [--page-size N (default ${DEFAULT_BOOK_PAGE_SIZE})] [--rounds N (default 1)] [--poll-interval-ms N (default 1000; production polls every 10000)]\n`,
      );
      process.exit(2);
    }
    return value;
  };
  return {
    logins: whole(values.logins, 1_000, 'logins', 20_000),
    pageSize: whole(values['page-size'], DEFAULT_BOOK_PAGE_SIZE, 'page-size', 1_000),
    rounds: whole(values.rounds, 1, 'rounds', 9),
    pollIntervalMs: whole(values['poll-interval-ms'], 1_000, 'poll-interval-ms', 60_000),
  };
}

async function mapLimit<T, R>(items: readonly T[], limit: number, act: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        out[index] = await act(items[index] as T);
      }
    }),
  );
  return out;
}

const kib = (bytes: number) => (bytes / 1024).toFixed(1);
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

async function main(): Promise<void> {
  const { logins, pageSize, rounds: roundsWanted, pollIntervalMs } = options();
  const env = await startBenchServer();
  const customerId = 'footprint-lender';
  const taskQueue = `book-footprint-${Date.now().toString(36)}`;
  try {
    const sandboxUrl = await startSandboxProcess();
    const worker = await prepareBenchWorker();
    const workerProcess = await worker.start({
      TEMPORAL_ADDRESS: env.address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      AGGREGATOR_BASE_URL: sandboxUrl,
      WORKER_METRICS_PORT: '0',
      LOG_LEVEL: 'INFO',
      ...workerTuning(),
    });
    const connection = await Connection.connect({ address: env.address });
    const client = new Client({ connection, dataConverter: dataConverterFor(loadClientConfig({ TEMPORAL_ADDRESS: env.address, ...runtimeOverride() })) });
    const connections = new ConnectionsClient({ client, taskQueue });
    log(
      `book-footprint: ${logins} logins, pages of ${pageSize}, each pending for one poll ${pollIntervalMs} ms apart; dev server ${env.address}, one worker (${worker.runtime}), the sandbox`,
    );

    const loginIds = await mapLimit(
      Array.from({ length: logins }, (_, index) => index),
      ENROL_CONCURRENCY,
      (index) => createSandboxLogin(sandboxUrl, customerId, `pending_polls_${index + 1}`, 1),
    );
    const enrolStart = Date.now();
    await mapLimit(loginIds, ENROL_CONCURRENCY, (loginId) =>
      connections.books.enrol({ customerId, loginId, products: { accountsDetail: {} }, timing: { pollIntervalMs } }),
    );
    const enrolSeconds = (Date.now() - enrolStart) / 1000;
    log(`entries: ${logins} enrolled in ${enrolSeconds.toFixed(1)} s (${(logins / enrolSeconds).toFixed(0)} a second at ${ENROL_CONCURRENCY} at once)`);

    // CPU of the stack's two busy parts (the worker and the Temporal server) over each way of refreshing.
    const workerPid = workerProcess.pid;
    const serverPid = env.devServer.pid;
    const stackCpuMs = () => cpuMs(workerPid ?? -1) + cpuMs(serverPid ?? -1);

    /**
     * The stack's own idle CPU (pollers, timers), read just before each way of refreshing after the
     * last work settled, so a slower way is not charged for the clock.
     */
    const idleRate = async () => {
      await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
      // Work left queued (the enrolments' first tasks, a night's closing ones) is not idle: wait for two quiet seconds in a row, a minute at most.
      let quiet = 0;
      let last = Number.NaN;
      for (let waited = 0; quiet < 2 && waited < QUIET_WAIT_MAX_MS; waited += 1_000) {
        const from = stackCpuMs();
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        last = stackCpuMs() - from;
        quiet = last < QUIET_MS_PER_SECOND ? quiet + 1 : 0;
      }
      if (quiet < 2)
        log(
          `the stack did not settle under ${QUIET_MS_PER_SECOND} ms a second in ${QUIET_WAIT_MAX_MS / 1000} s (last ${last.toFixed(0)} ms): its idle is read anyway`,
        );
      const before = stackCpuMs();
      await new Promise((resolve) => setTimeout(resolve, IDLE_SAMPLE_MS));
      return ((stackCpuMs() - before) * 1000) / IDLE_SAMPLE_MS;
    };

    /** One refresh of the whole book through its refresh workflow, as the Schedule starts it. */
    const throughBook = async () => {
      const idleCpuPerSecondMs = await idleRate();
      const cpuBefore = stackCpuMs();
      const began = Date.now();
      const { refreshWorkflowId } = await connections.books.run({ customerId }, { pageSize });
      let report;
      // What an operator reads: the estimated end once a tenth is done, against the end that came.
      let estimateAtTenth: { atS: number; predictedS: number } | undefined;
      for (;;) {
        try {
          report = await connections.books.report(refreshWorkflowId);
          break;
        } catch (error) {
          if (!(error instanceof BookReportNotReadyError)) throw error;
          const progress = await connections.books.progress(refreshWorkflowId);
          if (estimateAtTenth === undefined && progress.estimatedEnd && progress.total && progress.counts.done >= progress.total / 10) {
            estimateAtTenth = { atS: (Date.now() - began) / 1000, predictedS: (Date.parse(progress.estimatedEnd) - began) / 1000 };
          }
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }
      return { report, refreshWorkflowId, estimateAtTenth, idleCpuPerSecondMs, cpuMs: stackCpuMs() - cpuBefore, seconds: (Date.now() - began) / 1000 };
    };
    /**
     * Where a child's time as the refresh measured it goes (what its window judges): the child's own
     * start→close from its history, and the rest, the refresh's side (asking for the start, hearing
     * the end). Medians over up to 40 refreshed logins spread over the first page.
     */
    const childTimeSplit = async (refreshWorkflowId: string) => {
      const page = await connections.books.reportPage(refreshWorkflowId, 1);
      const refreshed = page.outcomes.filter((outcome) => outcome.outcome === 'refreshed' && outcome.workflowId && outcome.durationMs !== undefined);
      // Spread over the page: the first children ran in a small window, the later ones in a grown one.
      const step = Math.max(1, Math.ceil(refreshed.length / 40));
      const sample = refreshed.filter((_, index) => index % step === 0).slice(0, 40);
      if (sample.length === 0) return "no refreshed child on the first page to split a child's time";
      const own = await Promise.all(
        sample.map(async (outcome) => {
          const events = (await client.workflow.getHandle(outcome.workflowId as string).fetchHistory()).events ?? [];
          return eventTimeMs(events.at(-1)?.eventTime) - eventTimeMs(events[0]?.eventTime);
        }),
      );
      const measured = sample.map((outcome) => outcome.durationMs as number);
      const polls = pollIntervalMs;
      return (
        `a child's time as the refresh measured it ${median(measured).toFixed(0)} ms (busy, less its poll's wait: ${(median(measured) - polls).toFixed(0)} ms); ` +
        `its own start→close ${median(own).toFixed(0)} ms (${(median(own) - polls).toFixed(0)} ms busy); the refresh's side ${median(measured.map((ms, index) => ms - (own[index] as number))).toFixed(0)} ms; median of ${sample.length}`
      );
    };

    /**
     * The same logins refreshed as independent connections (what a per-login Schedule starts), as many
     * at once as the book's window held at most: the difference is what the book adds.
     */
    const independently = async (round: number, concurrency: number) => {
      const idleCpuPerSecondMs = await idleRate();
      const cpuBefore = stackCpuMs();
      const began = Date.now();
      await mapLimit(loginIds, concurrency, async (loginId) => {
        const { workflowId } = await connections.start(directKey(round, loginId), {
          customerId,
          session: { kind: 'cached', loginId },
          products: { accountsDetail: {} },
          timing: { pollIntervalMs },
          unattended: true,
        });
        await connections.result(workflowId);
      });
      return { idleCpuPerSecondMs, cpuMs: stackCpuMs() - cpuBefore, seconds: (Date.now() - began) / 1000 };
    };
    const directKey = (round: number, loginId: string) => connectionKey(customerId, `direct-${round}-${loginId}`);
    const perLogin = (ms: number) => ms / logins;
    const beyondIdle = (run: { cpuMs: number; seconds: number; idleCpuPerSecondMs: number }) => run.cpuMs - run.idleCpuPerSecondMs * run.seconds;

    // Alternated, so a slower patch of a shared machine falls on both ways alike; medians of the rounds.
    const rounds: { book: Awaited<ReturnType<typeof throughBook>>; direct: Awaited<ReturnType<typeof independently>>; concurrency: number }[] = [];
    for (let round = 1; round <= roundsWanted; round += 1) {
      const book = await throughBook();
      const concurrency = Math.max(1, ...book.report.windowChanges.map((change) => change.to), book.report.window.size);
      const direct = await independently(round, concurrency);
      rounds.push({ book, direct, concurrency });
      const tenth = book.estimateAtTenth;
      const ended = (Date.parse(book.report.endedAt) - Date.parse(book.report.startedAt)) / 1000;
      log(
        tenth
          ? `round ${round}: estimated end read at a tenth done (${tenth.atS.toFixed(0)} s in): ${tenth.predictedS.toFixed(0)} s, the night took ${ended.toFixed(0)} s (${((100 * (tenth.predictedS - ended)) / ended).toFixed(0)}%); drained ${(book.report.drainMs / 1000).toFixed(1)} s over ${book.report.pages.length} pages`
          : `round ${round}: no estimated end was read at a tenth done (the night ended first); drained ${(book.report.drainMs / 1000).toFixed(1)} s over ${book.report.pages.length} pages`,
      );
      log(`round ${round}: ${await childTimeSplit(book.refreshWorkflowId)}`);
      // How the window moved and why (the report keeps its last changes): what bounds a night the rule does not see.
      for (const change of book.report.windowChanges) {
        log(
          `round ${round}: window +${((Date.parse(change.at) - Date.parse(book.report.startedAt)) / 1000).toFixed(0)} s ${change.from} → ${change.to}: ${change.reason}`,
        );
      }
      log(
        `round ${round}: ${nightRuleLine({ logins, cores: availableParallelism(), cpuPerRefreshMs: perLogin(beyondIdle(direct)), ceiling: book.report.window.ceiling, bestFinishMs: book.report.window.bestFinishMs, start: DEFAULT_WINDOW_BOUNDS.start, nightS: ended })}`,
      );
      log(
        `round ${round}: the book ${book.report.counts.refreshed} refreshed, ${book.report.counts.failed} failed in ${book.seconds.toFixed(1)} s (${(book.report.counts.done / book.seconds).toFixed(1)} a second, ${book.report.pages.length} pages, last window ${book.report.window.size}), ` +
          `${perLogin(book.cpuMs).toFixed(1)} ms a login (${perLogin(beyondIdle(book)).toFixed(1)} beyond an idle of ${book.idleCpuPerSecondMs.toFixed(0)} ms a second); independent, ${concurrency} at once, ${direct.seconds.toFixed(1)} s, ${perLogin(direct.cpuMs).toFixed(1)} ms a login (${perLogin(beyondIdle(direct)).toFixed(1)} beyond an idle of ${direct.idleCpuPerSecondMs.toFixed(0)})`,
      );
    }
    const report = rounds[0]!.book.report;
    const refreshWorkflowId = rounds[0]!.book.refreshWorkflowId;
    const bookCpuMs = median(rounds.map((round) => beyondIdle(round.book)));
    const directCpuMs = median(rounds.map((round) => beyondIdle(round.direct)));
    const ratioMedian = median(rounds.map((round) => beyondIdle(round.book) / beyondIdle(round.direct)));
    log(
      `cpu (worker + server, beyond the stack's idle read before each; median of ${rounds.length} round(s)): the book ${perLogin(bookCpuMs).toFixed(1)} ms a login, independent connections ${perLogin(directCpuMs).toFixed(1)} ms a login: ` +
        `the book's own work (the refresh, its starts and end signals, the report) adds ${(perLogin(bookCpuMs) - perLogin(directCpuMs)).toFixed(1)} ms a login (${ratioMedian.toFixed(2)}x)`,
    );

    // Read after the night, when every entry's own workflow tasks have run (flags included).
    const entryHistories = await Promise.all(
      loginIds.slice(0, 20).map(async (loginId) => {
        const history = await client.workflow.getHandle(bookEntryWorkflowId(customerId, loginId)).fetchHistory();
        return { events: history.events?.length ?? 0, bytes: proto.temporal.api.history.v1.History.encode(history).finish().length };
      }),
    );
    const entryEvents = median(entryHistories.map((entry) => entry.events));
    const entryBytes = median(entryHistories.map((entry) => entry.bytes));
    log(`entry: its history ${entryEvents} events, ${entryBytes} B (median of 20)`);

    const runs: { events: number; bytes: number; largest: number }[] = [];
    let firstRun: proto.temporal.api.history.v1.IHistory | undefined;
    for await (const info of client.workflow.list({ query: `WorkflowId = ${JSON.stringify(refreshWorkflowId)}` })) {
      const history = await client.workflow.getHandle(refreshWorkflowId, info.runId).fetchHistory();
      // The night's first run is the one no other continued as new (runs of one second share a start time).
      if (!history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId) firstRun = history;
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
    log(
      `runs: ${runs.length}, the largest ${runEvents} events, ${kib(runBytes)} KiB; largest payload (a page read) ${kib(largest)} KiB; report page 1 ${kib(pageBytes)} KiB`,
    );

    // Where a login's events go: the first page's run by event type, and one connection through the book against one started alone.
    const byType = new Map<string, number>();
    for (const event of firstRun?.events ?? []) {
      const name = (EventType[event.eventType ?? 0] ?? '?').replace('EVENT_TYPE_', '');
      byType.set(name, (byType.get(name) ?? 0) + 1);
    }
    const onPage = Math.min(pageSize, logins);
    const perLoginTypes = [...byType]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([name, count]) => `${name} ${(count / onPage).toFixed(2)}`)
      .join(', ');
    const eventsOf = async (workflowId: string) => (await client.workflow.getHandle(workflowId).fetchHistory()).events?.length ?? 0;
    const sample = loginIds[0] as string;
    log(
      `events a login in a page's run: ${perLoginTypes}; a connection through the book ${await eventsOf(bookConnectionWorkflowId(customerId, sample, report.night))} events, alone ${await eventsOf(directKey(1, sample))}`,
    );

    const perLoginRun = runBytes / Math.min(pageSize, logins);
    const runsAtScale = Math.ceil(AT_SCALE / pageSize);
    log(
      `book-footprint: ${logins} logins in pages of ${pageSize}: entry ${entryEvents} events ${entryBytes} B, page run ${runEvents} events ${kib(runBytes)} KiB (largest payload ${kib(largest)} KiB), report page ${kib(pageBytes)} KiB; ` +
        `cpu a login ${perLogin(bookCpuMs).toFixed(1)} ms through the book, ${perLogin(directCpuMs).toFixed(1)} ms independent (${ratioMedian.toFixed(2)}x); ` +
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
