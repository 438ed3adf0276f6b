/**
 * An unattended connection asks its tenant's admission workflow for room (src/workflows/admission.ts):
 * a signal-with-start, so the first request of a night starts the workflow and the rest join its
 * queue. From a local activity: workflow code cannot signal-with-start, and the worker's setting
 * (UNATTENDED_ADMISSION) is read here, its answer recorded in the connection's history.
 */
import type { Client } from '@temporalio/client';
import { ADMISSION_WORKFLOW_TYPE, admissionRequestSignal, admissionWorkflowId, type AdmissionRequest } from '../contract/admission-definitions.js';
import { startPriority, type PriorityPolicy } from '../contract/priority.js';

export interface AdmissionActivitiesDeps {
  readonly temporal: Client;
  /** Where the admission workflow runs: the unattended pool's queue (the service queue while the pool is shared). */
  readonly taskQueue: string;
  readonly priority: PriorityPolicy;
  /** UNATTENDED_ADMISSION: `off` answers every ask at once, without an admission. */
  readonly admission: 'off' | 'window';
}

export interface AskAdmissionInput extends AdmissionRequest {
  readonly customerId: string;
}

export function createAdmissionActivities({ temporal, taskQueue, priority, admission }: AdmissionActivitiesDeps) {
  return {
    /**
     * Queues the connection at its tenant's admission (started if none runs; asked twice, it is queued
     * once): `queued`, the connection waits for its grant. `off` (UNATTENDED_ADMISSION=off): it goes on at once.
     */
    async askAdmission({ customerId, workflowId, runId, priorityKey }: AskAdmissionInput): Promise<'queued' | 'off'> {
      if (admission === 'off') return 'off';
      await temporal.workflow.signalWithStart(ADMISSION_WORKFLOW_TYPE, {
        workflowId: admissionWorkflowId(customerId),
        taskQueue,
        args: [{ customerId }],
        signal: admissionRequestSignal,
        signalArgs: [{ workflowId, runId, priorityKey }],
        // Its tasks gate the tenant's unattended starts: ahead of them (and of pipelines), behind live users; its window's weight is the tenant's.
        priority: startPriority(priority, 'pipeline', customerId),
        staticSummary: `Admission of ${customerId}'s unattended connections`,
      });
      return 'queued';
    },
  };
}

export type AdmissionActivities = ReturnType<typeof createAdmissionActivities>;
