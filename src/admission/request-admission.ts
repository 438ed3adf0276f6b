/**
 * A request for room at a tenant's admission (src/workflows/admission.ts), as a signal-with-start:
 * the first request of a night starts the admission and the rest join its queue. Sent by a running
 * connection (its local activity, src/activities/admission-activities.ts) and by the product's client
 * for a start it holds (src/client/connections.ts): one shape for both.
 */
import type { Client } from '@temporalio/client';
import { ADMISSION_WORKFLOW_TYPE, admissionRequestSignal, admissionWorkflowId, type AdmissionRequest } from '../contract/admission-definitions.js';
import { startPriority, type PriorityPolicy } from '../contract/priority.js';

export interface AdmissionTarget {
  readonly temporal: Client;
  /** Where the admission runs: the unattended pool's queue (the service queue while the pool is shared). */
  readonly taskQueue: string;
  readonly priority: PriorityPolicy;
}

export async function requestAdmission({ temporal, taskQueue, priority }: AdmissionTarget, customerId: string, request: AdmissionRequest): Promise<void> {
  await temporal.workflow.signalWithStart(ADMISSION_WORKFLOW_TYPE, {
    workflowId: admissionWorkflowId(customerId),
    taskQueue,
    args: [{ customerId }],
    signal: admissionRequestSignal,
    signalArgs: [request],
    // Its tasks gate the tenant's unattended starts: ahead of them (and of pipelines), behind live users; its window's weight is the tenant's.
    priority: startPriority(priority, 'pipeline', customerId),
    staticSummary: `Admission of ${customerId}'s unattended connections`,
  });
}
