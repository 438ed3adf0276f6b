/**
 * Finds workflow tasks the server lost and has it schedule them again, as an operator would after an
 * upgrade (docs/reliability.md, "stranded workflow tasks").
 *
 * A workflow task that stays SCHEDULED while workers poll its queue was lost between history and
 * matching: a healthy server hands it to a poller within milliseconds, and Temporal has no
 * schedule-to-start timeout for a normal queue's workflow task, so nothing else retries it. The
 * remedy is the server's own: `tdbg workflow refresh-tasks` regenerates the execution's tasks from
 * its mutable state (history is not touched; a duplicate of a task that was not lost is dropped by
 * matching when history says it already started).
 */
import { execFile } from 'node:child_process';
import { setTimeout as delay } from 'node:timers/promises';
import type { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { millisOfTimestamp } from '../../src/temporal/timestamps.js';
import { seconds, type Timeline } from '../chaos/timeline.js';
import type { ProdCheckPki } from './tls.js';

/** A workflow task SCHEDULED this long with workers polling is taken for lost. */
export const STRANDED_AFTER_MS = 30_000;
const SWEEP_EVERY_MS = 5_000;
/** Refreshes of one run before it is left to show as stuck. */
const MAX_REFRESHES = 3;
const TDBG_TIMEOUT_MS = 30_000;

export interface StrandedTask {
  readonly workflowId: string;
  readonly runId: string;
  readonly attempt: number;
  /** Ms since the run began, when the server scheduled the task (timeline time). */
  readonly scheduledAtMs: number;
  /** Timeline time of each refresh, and what tdbg said when it failed. */
  readonly refreshes: { atMs: number; ok: boolean; detail: string }[];
  /** Filled in by `settle`: the execution's status at the end of the run. */
  endStatus?: string;
}

export interface StrandedTaskSweeperOptions {
  readonly connection: Connection;
  readonly namespace: string;
  /** The frontend's host:port, for tdbg. */
  readonly address: string;
  readonly tdbg: string;
  readonly pki?: ProdCheckPki;
  readonly tlsServerName?: string;
  /** Whether some worker polls the queue now (a task with no poller is not lost, only waiting). */
  readonly workersPolling: () => boolean;
  readonly timeline: Timeline;
  readonly signal: AbortSignal;
  /** Defaults: STRANDED_AFTER_MS and SWEEP_EVERY_MS (a test shortens them). */
  readonly strandedAfterMs?: number;
  readonly sweepEveryMs?: number;
}

const { temporal } = proto;
const SCHEDULED = temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_SCHEDULED;

/** Sweeps the namespace's running executions every few seconds until the signal aborts. */
export class StrandedTaskSweeper {
  private readonly found = new Map<string, StrandedTask>();
  private readonly done: Promise<void>;

  constructor(private readonly options: StrandedTaskSweeperOptions) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    const { signal } = this.options;
    while (!signal.aborted) {
      await delay(this.options.sweepEveryMs ?? SWEEP_EVERY_MS, undefined, { signal }).catch(() => undefined);
      if (signal.aborted) return;
      // The server may be down (a restart or an upgrade): the next sweep tries again.
      await this.sweep().catch(() => undefined);
    }
  }

  private async sweep(): Promise<void> {
    const { connection, namespace } = this.options;
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await connection.workflowService.listWorkflowExecutions({ namespace, query: 'ExecutionStatus="Running"', pageSize: 200, nextPageToken });
      for (const execution of page.executions) {
        const workflowId = execution.execution?.workflowId;
        const runId = execution.execution?.runId;
        if (workflowId && runId) await this.check(workflowId, runId);
      }
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken && !this.options.signal.aborted);
  }

  private async check(workflowId: string, runId: string): Promise<void> {
    const { connection, namespace, timeline } = this.options;
    const described = await connection.workflowService.describeWorkflowExecution({ namespace, execution: { workflowId, runId } });
    const task = described.pendingWorkflowTask;
    const scheduledAt = millisOfTimestamp(task?.scheduledTime);
    if (!task || task.state !== SCHEDULED || scheduledAt === undefined) return;
    // Read after the describe: the workers must have polled for the whole wait, not just now.
    const strandedAfterMs = this.options.strandedAfterMs ?? STRANDED_AFTER_MS;
    if (Date.now() - scheduledAt < strandedAfterMs || !this.options.workersPolling()) return;
    const key = `${workflowId}/${runId}/${scheduledAt}`;
    const scheduledAtMs = timeline.now() - (Date.now() - scheduledAt);
    const known = this.found.get(key) ?? { workflowId, runId, attempt: task.attempt ?? 1, scheduledAtMs, refreshes: [] };
    this.found.set(key, known);
    const last = known.refreshes.at(-1);
    if (known.refreshes.length >= MAX_REFRESHES || (last && timeline.now() - last.atMs < strandedAfterMs)) return;
    const result = await this.refresh(workflowId, runId);
    known.refreshes.push({ atMs: timeline.now(), ...result });
    timeline.mark(
      `stranded workflow task: ${workflowId} attempt ${known.attempt}, SCHEDULED ${seconds(Date.now() - scheduledAt)} with workers polling; ` +
        `tdbg workflow refresh-tasks ${result.ok ? 'regenerated its tasks' : `FAILED: ${result.detail}`}`,
    );
  }

  private refresh(workflowId: string, runId: string): Promise<{ ok: boolean; detail: string }> {
    const { address, namespace, tdbg, pki, tlsServerName } = this.options;
    const tls = pki
      ? [
          '--tls-cert-path',
          pki.client.cert,
          '--tls-key-path',
          pki.client.key,
          '--tls-ca-path',
          pki.caCert,
          ...(tlsServerName ? ['--tls-server-name', tlsServerName] : []),
        ]
      : [];
    const args = [
      '--address',
      address,
      '--namespace',
      namespace,
      ...tls,
      '--yes',
      '--color',
      'never',
      'workflow',
      'refresh-tasks',
      '--workflow-id',
      workflowId,
      '--run-id',
      runId,
    ];
    return new Promise((resolve) => {
      execFile(tdbg, args, { timeout: TDBG_TIMEOUT_MS, encoding: 'utf8' }, (error, stdout, stderr) => {
        const said = `${stdout}${stderr}`.trim().replace(/\s+/g, ' ').slice(0, 300);
        resolve(error ? { ok: false, detail: `${error.message.split('\n')[0]}${said ? `: ${said}` : ''}` } : { ok: true, detail: said });
      });
    });
  }

  /** Waits for the last sweep, then reads how each stranded execution ended. */
  async settle(): Promise<readonly StrandedTask[]> {
    await this.done;
    const { connection, namespace } = this.options;
    const tasks = [...this.found.values()].filter((task) => task.refreshes.length > 0);
    for (const task of tasks) {
      try {
        const described = await connection.workflowService.describeWorkflowExecution({
          namespace,
          execution: { workflowId: task.workflowId, runId: task.runId },
        });
        const status = described.workflowExecutionInfo?.status;
        task.endStatus =
          status === undefined || status === null
            ? 'unknown'
            : (temporal.api.enums.v1.WorkflowExecutionStatus[status]?.replace('WORKFLOW_EXECUTION_STATUS_', '') ?? String(status));
      } catch (error) {
        task.endStatus = `unreadable (${error instanceof Error ? error.message : String(error)})`;
      }
    }
    return tasks;
  }
}

/** The report's lines for the stranded tasks found (none: one line saying so). */
export function renderStrandedTasks(tasks: readonly StrandedTask[]): string[] {
  if (tasks.length === 0) return [`Stranded workflow tasks: none (no workflow task stayed SCHEDULED ${seconds(STRANDED_AFTER_MS)} with workers polling)`];
  return [
    `Stranded workflow tasks: ${tasks.length} (SCHEDULED ${seconds(STRANDED_AFTER_MS)} or more with workers polling), each regenerated with tdbg workflow refresh-tasks`,
    ...tasks.map(
      (task) =>
        `  ${task.workflowId}: attempt ${task.attempt}, scheduled at +${seconds(task.scheduledAtMs)}; ` +
        `${task.refreshes.map((refresh) => `refreshed at +${seconds(refresh.atMs)}${refresh.ok ? '' : ` (FAILED: ${refresh.detail})`}`).join(', ')}; at the end: ${task.endStatus ?? 'unknown'}`,
    ),
  ];
}
