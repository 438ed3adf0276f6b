/** What the client tells of one connection when it lists or describes it: visibility's view, not the workflow's state. */
import type { ConnectionStatus } from '../contract/connection/connection-definitions.js';

/** One connection as visibility knows it (search attributes may lag the workflow by a moment). */
export interface ConnectionSummary {
  readonly workflowId: string;
  readonly runId: string;
  /** The connection's own status (search attribute); undefined before the workflow first set it. */
  readonly status: ConnectionStatus | undefined;
  /** Temporal's execution status: RUNNING, COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT, ... */
  readonly executionStatus: string;
  readonly customerId: string | undefined;
  readonly institution: string | undefined;
  readonly loginId: string | undefined;
  readonly startedAt: string;
  readonly closedAt: string | undefined;
  /** The workflow that started it as its child (a Nexus relay), if any. */
  readonly parentWorkflowId?: string | undefined;
}
