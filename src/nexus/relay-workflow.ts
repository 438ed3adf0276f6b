/**
 * The workflow behind the `start` operation of the `connections` Nexus service: it runs the
 * connection as its child on the product's task queue and returns its result. It exists because an
 * asynchronous Nexus operation delivers its backing workflow's result bytes to the caller as they
 * are: the connection's own result is sealed under the tenant's key, which the caller does not hold;
 * the relay's result is sealed (by the Nexus worker's codec) under the caller's boundary key.
 * Cancelling the operation cancels the relay, which cancels the connection and waits for it to end.
 * Deterministic code only: bundled by the Nexus worker (src/nexus/nexus-worker.ts).
 */
import { executeChild, ParentClosePolicy, ChildWorkflowCancellationType } from '@temporalio/workflow';
import type { SearchAttributePair, Priority } from '@temporalio/common';
import { ConnectionStatusKey, CustomerIdKey, InstitutionKey, LoginIdKey } from '../contract/search-attributes.js';
import { CONNECTION_WORKFLOW_TYPE, type ConnectionResult } from '../contract/connection-definitions.js';
import type { ConnectionInput } from '../contract/connection-input.js';

export interface RelayInput {
  /** `connection-<customerId>:<applicationId>`. */
  readonly connectionWorkflowId: string;
  /** The product's task queue, where the connection runs. */
  readonly taskQueue: string;
  /** Parsed by the handler (defaults applied), the customer id its endpoint's tenant. */
  readonly input: ConnectionInput;
  readonly priority?: Priority | undefined;
}

export async function nexusConnectionRelay({ connectionWorkflowId, taskQueue, input, priority }: RelayInput): Promise<ConnectionResult> {
  const pairs: SearchAttributePair[] = [
    { key: ConnectionStatusKey, value: 'Authorizing' },
    { key: CustomerIdKey, value: input.customerId },
    input.session.kind === 'live' ? { key: InstitutionKey, value: input.session.institution } : { key: LoginIdKey, value: input.session.loginId },
  ];
  return await executeChild<(input: ConnectionInput) => Promise<ConnectionResult>>(CONNECTION_WORKFLOW_TYPE, {
    workflowId: connectionWorkflowId,
    taskQueue,
    args: [input],
    typedSearchAttributes: pairs,
    ...(priority ? { priority } : {}),
    // The connection ends with its relay (a terminated relay cancels it); cancelling waits for its end.
    parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
    cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
}
