/**
 * A connection started held (UNATTENDED_ADMISSION=window): the start delay and memo that keep it
 * from running until its tenant's admission begins it, and the error a query of it gets before then.
 * Apart from the client because it is the admission's side of a start, not the start itself.
 */
import type { Client } from '@temporalio/client';
import type { ConnectionInput } from '../contract/connection/connection-input.js';
import { ADMISSION_ASK_AGAIN_MS, admissionWorkflowId, HELD_PRIORITY_MEMO, HELD_START_MEMO } from '../contract/admission/admission-definitions.js';
import { tenantOfWorkflowId } from '../contract/workflow-tenant.js';
import { parseWorkflowId } from './business-key.js';
import { ConnectionHeldError } from './errors.js';

/**
 * What a held start adds to its start options: no worker runs it until its admission finds it and
 * its grant begins it; past the delay it begins and asks for itself.
 */
export function heldStartOptions(args: ConnectionInput, priorityKey: number) {
  return { startDelay: args.timing.admissionAskAgainMs ?? ADMISSION_ASK_AGAIN_MS, memo: { [HELD_START_MEMO]: true, [HELD_PRIORITY_MEMO]: priorityKey } };
}

/**
 * Why a query failed when the reason is that the connection has not begun: started held (its memo
 * says so), still running, and no workflow task scheduled yet (its release or its delay schedules
 * the first). Temporal answers such a query with a bare "Failed to query Workflow".
 */
export async function heldStartError(client: Client, workflowId: string, error: unknown): Promise<ConnectionHeldError | undefined> {
  const customerId = tenantOfWorkflowId(workflowId);
  if (customerId === undefined) return undefined;
  try {
    const described = await client.workflow.getHandle(parseWorkflowId(workflowId)).describe();
    if (described.memo?.[HELD_START_MEMO] !== true || described.status.name !== 'RUNNING') return undefined;
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, runId: described.runId },
      maximumPageSize: 5,
    });
    const begun = (page.history?.events ?? []).some((event) => event.workflowTaskScheduledEventAttributes);
    return begun ? undefined : new ConnectionHeldError(workflowId, admissionWorkflowId(customerId), { cause: error });
  } catch {
    // Nothing to add: the caller keeps the error it has.
    return undefined;
  }
}
