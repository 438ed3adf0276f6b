/**
 * An unattended connection asks its tenant's admission workflow for room (src/workflows/admission/admission.ts):
 * a signal-with-start, so the first request of a night starts the workflow and the rest join its
 * queue. From a local activity: workflow code cannot signal-with-start, and the worker's setting
 * (UNATTENDED_ADMISSION) is read here, its answer recorded in the connection's history. The
 * admission's own local activities are here too: they find the starts the client held (in
 * visibility) and begin them, with a signal-with-start that carries their grant.
 */
import { log } from '@temporalio/activity';
import { ServiceError, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { requestAdmission } from '../admission/request-admission.js';
import {
  admissionGrantSignal,
  HELD_PRIORITY_MEMO,
  HELD_START_MEMO,
  isAdmissibleConnectionId,
  type AdmissionRequest,
} from '../contract/admission/admission-definitions.js';
import { CONNECTION_WORKFLOW_TYPE } from '../contract/connection/connection-definitions.js';
import type { PriorityPolicy } from '../contract/priority.js';
import { visibilityRows } from '../temporal/visibility-rows.js';
import { ConnectionStatusKey, CustomerIdKey, STARTING_STATUS } from '../contract/search-attributes.js';
import { decodeMapFromPayloads, optionalTsToDate } from '../sdk/internals.js';

export interface AdmissionActivitiesDeps {
  readonly temporal: Client;
  /** Where the admission workflow runs: the unattended pool's queue (the service queue while the pool is shared). */
  readonly taskQueue: string;
  /** Where connections run (TEMPORAL_TASK_QUEUE): named in a held start's release, which never starts one. Held starts run on `taskQueue` (the unattended pool's, when separate) or here. */
  readonly connectionTaskQueue: string;
  readonly priority: PriorityPolicy;
  /** UNATTENDED_ADMISSION: `off` answers every ask at once, without an admission. */
  readonly admission: 'off' | 'window';
}

export interface AskAdmissionInput extends AdmissionRequest {
  readonly customerId: string;
}

/** A held start to release: the run the client started. */
export interface HeldRun {
  readonly workflowId: string;
  readonly runId: string;
}

export interface ReleaseHeldInput {
  readonly runs: readonly HeldRun[];
  /** The admission run that grants (the connection's log names it). */
  readonly admissionRunId: string;
}

export interface HeldSearch {
  readonly customerId: string;
  /** Runs the admission has already (queued or in flight): not returned again. */
  readonly known: readonly string[];
  /** At most this many (the room left in the admission's queue), the earliest started first. */
  readonly limit: number;
}

/** A held start found in visibility: the request the client would have sent, and when it was started. */
export interface FoundHeld {
  readonly workflowId: string;
  readonly runId: string;
  /** From its sealed memo; absent (a client of before) it queues at the scheduled class. */
  readonly priorityKey?: number | undefined;
  readonly startedAt: number;
}

/** Visibility rows read in one search at most (a tenant's queue holds 4,000): a flood of forged rows cannot keep the call going. */
const HELD_SEARCH_MAX_ROWS = 20_000;
const HELD_SEARCH_PAGE = 1_000;
/** Held starts one look returns at most (its result is recorded in the admission's history): the earliest; the rest at the next looks. */
const HELD_FOUND_PER_LOOK = 500;

/** `released`: the run has its grant and begins; `ended`: it is not the id's running run (terminated while held), its room goes back. */
export type ReleaseOutcome = 'released' | 'ended';

export function createAdmissionActivities({ temporal, taskQueue, connectionTaskQueue, priority, admission }: AdmissionActivitiesDeps) {
  const namespace = temporal.options.namespace;
  // A held start runs on the unattended pool's queue (the client's choice when the pool is separate), or, from a client of before, on the connections' queue.
  const heldQueues = [...new Set([taskQueue, connectionTaskQueue])];
  /**
   * The grant as a signal-with-start, which ends the run's start delay (a plain signal would wait it
   * out). Only to the run the client started, still running: a signal-with-start to an id whose run
   * has closed would start a new one, so the run is read first, and a run that closes in between is
   * refused by the reuse policy (REJECT_DUPLICATE) rather than started again.
   */
  async function release({ workflowId, runId }: HeldRun, admissionRunId: string): Promise<ReleaseOutcome> {
    try {
      const described = await temporal.workflow.getHandle(workflowId).describe();
      // Only a connection our client held (its sealed memo says so) on a queue held starts run on: a run
      // that never asked would ignore the grant and never give its room back.
      const held = described.type === CONNECTION_WORKFLOW_TYPE && heldQueues.includes(described.taskQueue) && described.memo?.[HELD_START_MEMO] === true;
      if (described.runId !== runId || described.status.name !== 'RUNNING' || !held) return 'ended';
      await temporal.workflow.signalWithStart(CONNECTION_WORKFLOW_TYPE, {
        workflowId,
        taskQueue: connectionTaskQueue,
        args: [],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        signal: admissionGrantSignal,
        // Named: a signal-with-start reaches the id's current run, which another held start may have become.
        signalArgs: [{ admissionRunId, runId }],
      });
      return 'released';
    } catch (error) {
      if (error instanceof WorkflowNotFoundError || error instanceof WorkflowExecutionAlreadyStartedError) return 'ended';
      // Temporal unreachable: the release is retried. Anything else (a memo this worker cannot decode) is no held start of ours.
      if (error instanceof ServiceError) throw error;
      log.warn('admission: a held start could not be read; its room goes back', { workflowId, error: String(error).slice(0, 300) });
      return 'ended';
    }
  }

  return {
    /**
     * Queues the connection at its tenant's admission (started if none runs; asked twice, it is queued
     * once): `queued`, the connection waits for its grant. `off` (UNATTENDED_ADMISSION=off): it goes on at once.
     */
    async askAdmission({ customerId, workflowId, runId, priorityKey }: AskAdmissionInput): Promise<'queued' | 'off'> {
      if (admission === 'off') return 'off';
      await requestAdmission({ temporal, taskQueue, priority }, customerId, { workflowId, runId, priorityKey });
      return 'queued';
    },

    /**
     * The tenant's held starts the admission has not seen, the earliest started first: connections on
     * the unattended pool's queue or the connections' whose start delay has not run out, still at
     * their first status, and whose memo, sealed for the tenant, says our client held them. A row
     * whose memo does not decode is no held start of ours and is skipped; the release reads each run
     * again before it begins it.
     */
    async heldConnections({ customerId, known, limit }: HeldSearch): Promise<FoundHeld[]> {
      const seen = new Set(known);
      // A held start's execution time is its start plus its delay: later than now until it begins.
      // Its status is still the start's: one released and on its way has moved on (the admission also
      // keeps those it let go from the results while visibility catches up).
      const query =
        `WorkflowType = '${CONNECTION_WORKFLOW_TYPE}' AND ${CustomerIdKey.name} = ${JSON.stringify(customerId)} AND TaskQueue IN (${heldQueues.map((queue) => JSON.stringify(queue)).join(', ')}) ` +
        `AND ExecutionStatus = 'Running' AND ${ConnectionStatusKey.name} = ${JSON.stringify(STARTING_STATUS)} AND ExecutionTime > ${JSON.stringify(new Date().toISOString())}`;
      const found: FoundHeld[] = [];
      let unreadable = 0;
      for await (const execution of visibilityRows(temporal, query, HELD_SEARCH_PAGE, HELD_SEARCH_MAX_ROWS)) {
        const workflowId = execution.execution?.workflowId ?? '';
        const runId = execution.execution?.runId ?? '';
        if (seen.has(runId)) continue;
        // Only an id the client holds for this tenant (its context then names the tenant, whose key alone opens the memo).
        if (!isAdmissibleConnectionId(workflowId, customerId)) {
          unreadable += 1;
          continue;
        }
        let memo: Record<string, unknown> | undefined;
        try {
          // In the run's own context: the codec opens it only with the key of the tenant its id names (another tenant's sealed memo does not pass).
          memo = await decodeMapFromPayloads(temporal.options.loadedDataConverter, execution.memo?.fields ?? undefined, { namespace, workflowId });
        } catch {
          unreadable += 1;
          continue;
        }
        // Not sealed for this tenant (a worker that marks undecodable messages reads it as a marker): no held start of ours.
        if (memo?.[HELD_START_MEMO] !== true) continue;
        const priorityKey = memo[HELD_PRIORITY_MEMO];
        found.push({
          workflowId,
          runId,
          startedAt: optionalTsToDate(execution.startTime)?.getTime() ?? 0,
          ...(typeof priorityKey === 'number' ? { priorityKey } : {}),
        });
      }
      if (unreadable > 0)
        log.warn('admission: rows that are no held start of this tenant (an id it does not hold, a memo this worker cannot read) were skipped', {
          customerId,
          unreadable,
        });
      found.sort((a, b) => a.startedAt - b.startedAt || (a.workflowId < b.workflowId ? -1 : a.workflowId > b.workflowId ? 1 : 0));
      return found.slice(0, Math.max(0, Math.min(limit, HELD_FOUND_PER_LOOK)));
    },

    /** Begins held starts the admission granted room, side by side; an outcome for each, in order. A failure for another reason fails the call (retried: a release is safe to repeat). */
    async releaseHeldConnections({ runs, admissionRunId }: ReleaseHeldInput): Promise<ReleaseOutcome[]> {
      return await Promise.all(runs.map((run) => release(run, admissionRunId)));
    },
  };
}

export type AdmissionActivities = ReturnType<typeof createAdmissionActivities>;
