/**
 * The histories of a chaos run: every workflow execution on the run's task queue (connections and
 * whatever they started), fetched exactly as the server stores them (raw gRPC: ciphertext and
 * payload-store references left as they are, for the replayer's own data converter to decode), and
 * kept in the run directory as gzipped binary protobuf (the format of test/workflows/histories), with
 * an index, so a kept run can be replayed without its server.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Client, ConnectionLike } from '@temporalio/client';
import proto from '@temporalio/proto';

const { History } = proto.temporal.api.history.v1;
export type RawHistory = proto.temporal.api.history.v1.IHistory;
export type RawHistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** One call (a page, the listing) may take this long; the server is idle by then. */
const CALL_TIMEOUT_MS = 30_000;
const INDEX_FILE = 'index.json';

export class HistoryFileError extends Error {
  override readonly name = 'HistoryFileError';
}

export interface ExecutionRef {
  readonly workflowId: string;
  /** Undefined: the latest run of the id (a driven connection visibility did not list). */
  readonly runId?: string | undefined;
  readonly workflowType?: string | undefined;
}

export interface FetchedHistory {
  readonly workflowId: string;
  readonly runId: string;
  readonly workflowType: string;
  readonly history: RawHistory;
}

export interface HistoryFetchFailure {
  readonly workflowId: string;
  readonly runId?: string | undefined;
  readonly message: string;
}

/** Every page of one execution's history, as stored. */
export async function fetchRawHistory(connection: ConnectionLike, namespace: string, execution: ExecutionRef): Promise<RawHistoryEvent[]> {
  const events: RawHistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await connection.withDeadline(Date.now() + CALL_TIMEOUT_MS, () =>
      connection.workflowService.getWorkflowExecutionHistory({
        namespace,
        execution: { workflowId: execution.workflowId, runId: execution.runId ?? '' },
        nextPageToken,
      }),
    );
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return events;
}

/**
 * Every execution visibility lists on the task queue, plus any of `knownWorkflowIds` it did not list
 * (visibility may lag; a driven connection must never escape the replay unseen).
 */
export async function listExecutions(client: Client, taskQueue: string, knownWorkflowIds: readonly string[]): Promise<ExecutionRef[]> {
  const listed: ExecutionRef[] = [];
  await client.connection.withDeadline(Date.now() + CALL_TIMEOUT_MS, async () => {
    for await (const info of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` })) {
      listed.push({ workflowId: info.workflowId, runId: info.runId, workflowType: info.type });
    }
  });
  const seen = new Set(listed.map((ref) => ref.workflowId));
  const missing: ExecutionRef[] = knownWorkflowIds.filter((id) => !seen.has(id)).map((workflowId) => ({ workflowId }));
  return [...listed, ...missing].sort((a, b) => a.workflowId.localeCompare(b.workflowId) || (a.runId ?? '').localeCompare(b.runId ?? ''));
}

function workflowTypeOf(events: readonly RawHistoryEvent[]): string {
  return events[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name ?? 'unknown';
}

function runIdOf(events: readonly RawHistoryEvent[]): string {
  return events[0]?.workflowExecutionStartedEventAttributes?.originalExecutionRunId ?? '';
}

/** Fetches each execution's history; one that cannot be fetched is a failure to report, not a reason to stop. */
export async function fetchHistories(
  client: Client,
  executions: readonly ExecutionRef[],
): Promise<{ histories: FetchedHistory[]; failures: HistoryFetchFailure[] }> {
  const histories: FetchedHistory[] = [];
  const failures: HistoryFetchFailure[] = [];
  for (const execution of executions) {
    try {
      const events = await fetchRawHistory(client.connection, client.options.namespace, execution);
      if (events.length === 0) throw new HistoryFileError('the server returned an empty history');
      histories.push({
        workflowId: execution.workflowId,
        runId: execution.runId ?? runIdOf(events),
        workflowType: execution.workflowType ?? workflowTypeOf(events),
        history: { events },
      });
    } catch (error) {
      failures.push({
        workflowId: execution.workflowId,
        runId: execution.runId,
        message: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
    }
  }
  return { histories, failures };
}

interface IndexEntry {
  readonly file: string;
  readonly workflowId: string;
  readonly runId: string;
  readonly workflowType: string;
}

/** A file name for any workflow id (business keys may hold characters a file name should not). */
function fileNameFor(index: number, history: FetchedHistory): string {
  return `${String(index).padStart(4, '0')}-${history.workflowId.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80)}.pb.gz`;
}

/** Writes each history and the index into `dir`; returns `dir`. */
export async function saveHistories(dir: string, histories: readonly FetchedHistory[]): Promise<string> {
  await mkdir(dir, { recursive: true });
  const index: IndexEntry[] = [];
  for (const [i, history] of histories.entries()) {
    const file = fileNameFor(i, history);
    await writeFile(join(dir, file), gzipSync(History.encode(history.history).finish()));
    index.push({ file, workflowId: history.workflowId, runId: history.runId, workflowType: history.workflowType });
  }
  await writeFile(join(dir, INDEX_FILE), `${JSON.stringify(index, null, 2)}\n`);
  return dir;
}

/** The histories saveHistories wrote. */
export async function loadHistories(dir: string): Promise<FetchedHistory[]> {
  let index: IndexEntry[];
  try {
    index = JSON.parse(await readFile(join(dir, INDEX_FILE), 'utf8')) as IndexEntry[];
  } catch (error) {
    throw new HistoryFileError(
      `${join(dir, INDEX_FILE)}: cannot be read (${error instanceof Error ? error.message : String(error)}); was the run kept with its histories?`,
      { cause: error },
    );
  }
  return Promise.all(
    index.map(async (entry) => ({
      workflowId: entry.workflowId,
      runId: entry.runId,
      workflowType: entry.workflowType,
      history: History.decode(gunzipSync(await readFile(join(dir, entry.file)))),
    })),
  );
}
