/** `budget set`: changes the fleet's request budget on the queue now (a worker's start sets its configured one again). */
import { noPositionals, parseFlags, UsageError } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';

export const set: Command = {
  access: { permission: 'administer' },
  audit: { action: 'budget.change' },
  summary: "change the fleet's request budget now",
  usage: (program) => `Usage: ${program} budget set --total <rps> [--tenant <rps>] [--burst <n> | --strict]

Sets the requests a second the whole fleet may send the service (--total) and one tenant of weight
1 (--tenant, default the total; TENANT_WEIGHTS scales it), for a service that takes --burst at once
(default one second's worth, the total; SERVICE_BUDGET_BURST) or, with --strict, at most the total
in any whole second (SERVICE_BUDGET_MODE=strict). It holds until changed again or until a worker
starts with SERVICE_BUDGET_RPS set, which sets its own: change the configuration too.`,

  async run(args, context) {
    const { values, positionals } = parseFlags({
      args: [...args],
      options: { total: { type: 'string' }, tenant: { type: 'string' }, burst: { type: 'string' }, strict: { type: 'boolean' } },
      allowPositionals: true,
    });
    noPositionals(positionals);
    const number = (flag: string, text: string | undefined) => {
      const value = Number(text);
      if (text === undefined || !/^\d+(\.\d+)?$/.test(text) || !(value > 0))
        throw new UsageError(`${flag} must be a positive number of requests a second, got ${JSON.stringify(text ?? '')}`);
      return value;
    };
    const totalRps = number('--total', values.total);
    const tenantRps = values.tenant === undefined ? totalRps : number('--tenant', values.tenant);
    if (tenantRps > totalRps) throw new UsageError(`--tenant (${tenantRps}) must not exceed --total (${totalRps})`);
    if (values.strict && values.burst !== undefined) throw new UsageError('--burst applies to a bucket, not with --strict');
    const burst = values.burst === undefined ? undefined : number('--burst', values.burst);
    if (burst !== undefined && burst < 1) throw new UsageError(`--burst must be at least 1 request, got ${burst}`);
    const limits = await (
      await context.client()
    ).budget.set(values.strict ? { totalRps, tenantRps, mode: 'strict' } : { totalRps, tenantRps, mode: 'bucket', burst: burst ?? totalRps });
    context.io.out(
      `budget set: ${totalRps}/s for the fleet, ${tenantRps}/s per tenant (queue limits ${limits.queueRps ?? '?'}/s and ${limits.tenantRps ?? '?'}/s)`,
    );
    return EXIT_OK;
  },
};
