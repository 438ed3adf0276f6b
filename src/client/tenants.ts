/**
 * A tenant's work in Temporal as a whole: what forgetting a lender ends before its key is destroyed
 * (src/cli/commands/tenant/forget.ts). Its running workflows are terminated, naming why, and its
 * schedules deleted, so nothing of the lender runs on against a key that is gone.
 */
import { ScheduleNotFoundError, WorkflowNotFoundError, type Client } from '@temporalio/client';
import { CustomerIdKey } from '../contract/search-attributes.js';
import { tenantOfWorkflowId } from '../contract/workflow-tenant.js';
import { quoteVisibilityValue } from './visibility.js';
import { listedExecutions } from '../temporal/visibility-rows.js';

export interface TenantWorkEnded {
  /** Running workflows of the tenant terminated (connections, books, their children, timers). */
  readonly workflowsTerminated: number;
  /** Its refresh and book schedules deleted. */
  readonly schedulesDeleted: number;
}

export class TenantsClient {
  constructor(private readonly client: Client) {}

  /** Terminates every running workflow of `customerId` with `reason`, and deletes its schedules; again, it finds nothing left. */
  async endWork(customerId: string, reason: string): Promise<TenantWorkEnded> {
    let workflowsTerminated = 0;
    const running = `${CustomerIdKey.name} = ${quoteVisibilityValue(customerId)} AND ExecutionStatus = 'Running'`;
    for await (const execution of listedExecutions(this.client, running, 1000)) {
      try {
        await this.client.workflow.getHandle(execution.workflowId, execution.runId).terminate(reason);
        workflowsTerminated += 1;
      } catch (error) {
        // Ended meanwhile (a child with its parent): nothing to do.
        if (!(error instanceof WorkflowNotFoundError)) throw error;
      }
    }
    let schedulesDeleted = 0;
    for await (const schedule of this.client.schedule.list()) {
      if (tenantOfWorkflowId(schedule.scheduleId) !== customerId) continue;
      try {
        await this.client.schedule.getHandle(schedule.scheduleId).delete();
        schedulesDeleted += 1;
      } catch (error) {
        if (!(error instanceof ScheduleNotFoundError)) throw error;
      }
    }
    return { workflowsTerminated, schedulesDeleted };
  }
}
