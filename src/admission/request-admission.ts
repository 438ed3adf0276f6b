/**
 * Signals to a tenant's admission (src/workflows/admission/admission.ts), as signal-with-start: the first of a
 * night starts the admission. A request for room is sent by a running connection (its local
 * activity, src/activities/admission-activities.ts); a wake by the product's client after it holds a
 * start (src/admission/admission-waker.ts), so the admission looks for held starts. One shape for all.
 */
import type { Client } from '@temporalio/client';
import {
  ADMISSION_WORKFLOW_TYPE,
  admissionRequestSignal,
  admissionWakeSignal,
  admissionWorkflowId,
  type AdmissionRequest,
} from '../contract/admission/admission-definitions.js';
import { startPriority, type PriorityPolicy } from '../contract/priority.js';

export interface AdmissionTarget {
  readonly temporal: Client;
  /** Where the admission runs: the unattended pool's queue (the service queue while the pool is shared). */
  readonly taskQueue: string;
  readonly priority: PriorityPolicy;
}

async function signalAdmission({ temporal, taskQueue, priority }: AdmissionTarget, customerId: string, signal: string, signalArgs: unknown[]): Promise<void> {
  await temporal.workflow.signalWithStart(ADMISSION_WORKFLOW_TYPE, {
    workflowId: admissionWorkflowId(customerId),
    taskQueue,
    args: [{ customerId }],
    signal,
    signalArgs,
    // Its tasks gate the tenant's unattended starts: ahead of them (and of pipelines), behind live users; its window's weight is the tenant's.
    priority: startPriority(priority, 'pipeline', customerId),
    staticSummary: `Admission of ${customerId}'s unattended connections`,
  });
}

export async function requestAdmission(target: AdmissionTarget, customerId: string, request: AdmissionRequest): Promise<void> {
  await signalAdmission(target, customerId, admissionRequestSignal.name, [request]);
}

export async function wakeAdmission(target: AdmissionTarget, customerId: string): Promise<void> {
  await signalAdmission(target, customerId, admissionWakeSignal.name, [{ customerId }]);
}
