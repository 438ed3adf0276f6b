/**
 * An unattended connection asks its tenant's admission workflow for room (src/workflows/admission.ts):
 * a signal-with-start, so the first request of a night starts the workflow and the rest join its
 * queue. From a local activity: workflow code cannot signal-with-start, and the worker's setting
 * (UNATTENDED_ADMISSION) is read here, its answer recorded in the connection's history. The
 * admission's own local activity is here too: it begins the starts the client held, with a
 * signal-with-start that carries their grant.
 */
import { log } from '@temporalio/activity';
import { ServiceError, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { requestAdmission } from '../admission/request-admission.js';
import { admissionGrantSignal, HELD_START_MEMO, type AdmissionRequest } from '../contract/admission-definitions.js';
import { CONNECTION_WORKFLOW_TYPE } from '../contract/connection-definitions.js';
import type { PriorityPolicy } from '../contract/priority.js';

export interface AdmissionActivitiesDeps {
  readonly temporal: Client;
  /** Where the admission workflow runs: the unattended pool's queue (the service queue while the pool is shared). */
  readonly taskQueue: string;
  /** Where connections run (TEMPORAL_TASK_QUEUE): named in a held start's release, which never starts one. */
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

/** `released`: the run has its grant and begins; `ended`: it is not the id's running run (terminated while held), its room goes back. */
export type ReleaseOutcome = 'released' | 'ended';

export function createAdmissionActivities({ temporal, taskQueue, connectionTaskQueue, priority, admission }: AdmissionActivitiesDeps) {
  /**
   * The grant as a signal-with-start, which ends the run's start delay (a plain signal would wait it
   * out). Only to the run the client started, still running: a signal-with-start to an id whose run
   * has closed would start a new one, so the run is read first, and a run that closes in between is
   * refused by the reuse policy (REJECT_DUPLICATE) rather than started again.
   */
  async function release({ workflowId, runId }: HeldRun, admissionRunId: string): Promise<ReleaseOutcome> {
    try {
      const described = await temporal.workflow.getHandle(workflowId).describe();
      // Only a connection our client held (its sealed memo says so) on the connections' queue: a run
      // that never asked would ignore the grant and never give its room back.
      const held = described.type === CONNECTION_WORKFLOW_TYPE && described.taskQueue === connectionTaskQueue && described.memo?.[HELD_START_MEMO] === true;
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

    /** Begins held starts the admission granted room, side by side; an outcome for each, in order. A failure for another reason fails the call (retried: a release is safe to repeat). */
    async releaseHeldConnections({ runs, admissionRunId }: ReleaseHeldInput): Promise<ReleaseOutcome[]> {
      return await Promise.all(runs.map((run) => release(run, admissionRunId)));
    },
  };
}

export type AdmissionActivities = ReturnType<typeof createAdmissionActivities>;
