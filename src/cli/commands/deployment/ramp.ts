/** `deployment ramp`: sends a share of new connections to a build before it is made current. */
import { parseFlags, UsageError } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';

export const ramp: Command = {
  access: { permission: 'administer' },
  audit: { action: 'deployment.change' },
  summary: 'send a share of new connections to a build',
  usage: (program) => `Usage: ${program} deployment ramp <buildId> <percent>
       ${program} deployment ramp --stop

Sends <percent> % of new connections (and of retention timers' and forgets' next steps) to the build,
the rest to the current one. Watch its connections (list, the Web UI), then run "deployment
set-current <buildId>", or "deployment ramp --stop" to send everything back to the current build.`,

  async run(args, context) {
    const { values, positionals } = parseFlags({ args: [...args], options: { stop: { type: 'boolean' } }, allowPositionals: true });
    const deployments = (await context.client()).deployments;
    if (values.stop) {
      if (positionals.length > 0) throw new UsageError('--stop takes no build id');
      await deployments.setRamping('', 0);
      context.io.out(`ramp stopped: every new connection starts on the current build of ${deployments.deploymentName}`);
      return EXIT_OK;
    }
    const [buildId, percentText, ...extra] = positionals;
    if (buildId === undefined || percentText === undefined) throw new UsageError('expected <buildId> <percent>');
    if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0] ?? ''}"`);
    const percent = Number(percentText);
    if (!/^\d+(\.\d+)?$/.test(percentText) || percent > 100) throw new UsageError(`<percent> must be a number from 0 to 100, got "${percentText}"`);
    await deployments.setRamping(buildId, percent);
    context.io.out(`build ${buildId} now takes ${percent}% of new connections in deployment ${deployments.deploymentName}`);
    return EXIT_OK;
  },
};
