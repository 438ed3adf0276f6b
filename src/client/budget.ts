/**
 * The fleet's request budget as an operator sees it: the limits Temporal holds on the activity queue,
 * what configuration asks for, and the tenants the service throttled (each paused until a time it
 * asked for). `set` changes the limits at run time (a worker's start sets them from its config again).
 */
import type { Client } from '@temporalio/client';
import { applyFleetBudget, describeQueueLimits, queueRatesFor, type FleetBudget, type QueueLimits } from '../budget/fleet-budget.js';
import { TENANT_THROTTLE_WORKFLOW_TYPE, throttleStateQuery, type ThrottleState } from '../contract/throttle/tenant-throttle-definitions.js';
import { ConnectionClientError } from './errors.js';
import { quoteVisibilityValue } from './visibility.js';
import { listedExecutions } from '../temporal/visibility-rows.js';

export interface BudgetView {
  /** From SERVICE_BUDGET_RPS / SERVICE_BUDGET_TENANT_RPS of this process; undefined: none configured here. */
  readonly configured?: FleetBudget | undefined;
  /** What the configured budget becomes on the queue (lowered for Temporal's burst: dispatchRateFor). */
  readonly configuredRates?: { readonly queueRps: number; readonly tenantRps: number } | undefined;
  /** What the queue holds now. */
  readonly queue: QueueLimits;
  /** Tenants paused because the service said TOO_MANY_REQUESTS. */
  readonly throttles: readonly ThrottleState[];
}

export class BudgetCommandError extends ConnectionClientError {
  override readonly name = 'BudgetCommandError';
}

export class FleetBudgetClient {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly configured: FleetBudget | undefined,
  ) {}

  private get target() {
    return {
      workflowService: this.client.workflowService,
      namespace: this.client.options.namespace,
      taskQueue: this.taskQueue,
      identity: this.client.options.identity ?? 'aggregation-connections-cli',
    };
  }

  async show(): Promise<BudgetView> {
    const queue = await describeQueueLimits(this.target);
    const throttles: ThrottleState[] = [];
    const query = `WorkflowType = ${quoteVisibilityValue(TENANT_THROTTLE_WORKFLOW_TYPE)} AND ExecutionStatus = 'Running' AND TaskQueue = ${quoteVisibilityValue(this.taskQueue)}`;
    for await (const execution of listedExecutions(this.client, query, 1000)) {
      throttles.push(await this.client.workflow.getHandle(execution.workflowId).query(throttleStateQuery));
    }
    return { configured: this.configured, configuredRates: this.configured && queueRatesFor(this.configured), queue, throttles };
  }

  /** Sets the fleet's budget on the queue now (until a worker starts with another configuration). */
  async set(budget: FleetBudget): Promise<QueueLimits> {
    if (!(budget.totalRps > 0) || !(budget.tenantRps > 0) || budget.tenantRps > budget.totalRps) {
      throw new BudgetCommandError(`a budget needs 0 < tenant rate (${budget.tenantRps}) ≤ total rate (${budget.totalRps}) requests a second`);
    }
    return applyFleetBudget(this.target, budget, `set by an operator (${this.target.identity})`);
  }
}
