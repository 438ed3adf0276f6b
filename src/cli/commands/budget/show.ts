/** `budget show`: the limits Temporal holds for the fleet, what config asks for, and paused tenants. */
import { describeServiceLimit, type FleetBudget } from '../../../budget/fleet-budget.js';
import type { BudgetView } from '../../../client/budget.js';
import { noPositionals, parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';

export const show: Command = {
  access: { permission: 'read' },
  summary: "show the fleet's request budget and the tenants the service throttled",
  usage: (program) => `Usage: ${program} budget show [--json]

Shows the request budget Temporal holds on the task queue's activities (every worker of the fleet
together never exceeds it), the budget this environment configures (SERVICE_BUDGET_RPS,
SERVICE_BUDGET_TENANT_RPS), and each tenant the service answered TOO_MANY_REQUESTS: its whole fleet
waits until the time the service asked for. Connections waiting for budget are not failing: "show
<workflowId>" says what one waits for.
  --json                print it as JSON`,

  async run(args, context) {
    const { values, positionals } = parseFlags({ args: [...args], options: { json: { type: 'boolean' } }, allowPositionals: true });
    noPositionals(positionals);
    const view = await (await context.client()).budget.show();
    if (values.json) context.io.out(JSON.stringify(view, null, 2));
    else for (const line of describeBudget(view)) context.io.out(line);
    return EXIT_OK;
  },
};

/** Why the queue's limits are what they are: Temporal lets r + 1 go at once at a rate of r. */
function queueRule(budget: FleetBudget): string {
  return budget.mode === 'strict'
    ? "strict: (budget - 1) / 2, as Temporal lets an idle queue take one second's worth and one more at once on top of the rate"
    : "bucket: at most (burst - 1) / 1.05, as Temporal lets an idle queue take one second's worth and one more at once, and calls reach the service up to 50 ms apart from their dispatch";
}

export function describeBudget(view: BudgetView): string[] {
  const rate = (rps: number | undefined) => (rps === undefined ? 'none' : `${rps}/s`);
  const lines = [
    `queue limits (Temporal): ${rate(view.queue.queueRps)} for the fleet, ${rate(view.queue.tenantRps)} per tenant of weight 1`,
    view.configured
      ? `configured budget: ${view.configured.totalRps}/s for the fleet (the service's limit: ${describeServiceLimit(view.configured)}), ${view.configured.tenantRps}/s per tenant, set on the queue as ${view.configuredRates?.queueRps}/s and ${view.configuredRates?.tenantRps}/s (${queueRule(view.configured)})`
      : 'configured budget: none here (SERVICE_BUDGET_RPS unset)',
  ];
  if (view.throttles.length === 0) lines.push('throttled tenants: none');
  for (const throttle of view.throttles) {
    lines.push(
      `throttled: ${throttle.customerId} ${throttle.status === 'throttled' ? `paused until ${throttle.until ?? '?'}` : throttle.status}, ${throttle.notices} TOO_MANY_REQUESTS; ${throttle.reason ?? ''}`,
    );
  }
  return lines;
}
