/** `deployment retire`: deletes a build that no longer serves anything. */
import { onePositional, parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_FAILED, EXIT_OK } from '../../report.js';

export const retire: Command = {
  access: { permission: 'administer' },
  audit: { action: 'deployment.change' },
  summary: 'delete a drained build once its workers are stopped',
  usage: (program) => `Usage: ${program} deployment retire <buildId>

Deletes the build from the deployment. Refused while it is current or ramping, while connections
are pinned to it, and while its workers still poll (Temporal waits a few minutes after they stop).
"deployment show" says when a build is retirable.`,

  async run(args, context) {
    const { positionals } = parseFlags({ args: [...args], options: {}, allowPositionals: true });
    const buildId = onePositional(positionals, '<buildId>');
    const deployments = (await context.client()).deployments;
    const pinned = await deployments.pinnedRunning(buildId);
    if (pinned > 0) {
      context.io.err(`build ${buildId} still runs ${pinned} pinned connection${pinned === 1 ? '' : 's'}: retire it once they finish`);
      return EXIT_FAILED;
    }
    await deployments.retire(buildId);
    context.io.out(`build ${buildId} retired from deployment ${deployments.deploymentName}`);
    return EXIT_OK;
  },
};
