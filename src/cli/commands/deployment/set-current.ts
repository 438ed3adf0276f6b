/** `deployment set-current`: new connections start on this build; retention timers and forgets move to it. */
import { onePositional, parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_OK } from '../../report.js';

export const setCurrent: Command = {
  access: { permission: 'administer' },
  audit: { action: 'deployment.change' },
  summary: 'make a build current (ends any ramp to it)',
  usage: (program) => `Usage: ${program} deployment set-current <buildId>

New connections start on the build; retention timers and forgets (AutoUpgrade) move to it at their
next step. Connections already running stay on the build they started on. Its workers must be
running: Temporal refuses a build none of whose workers has polled. To go back, set the previous
build current again.`,

  async run(args, context) {
    const { positionals } = parseFlags({ args: [...args], options: {}, allowPositionals: true });
    const buildId = onePositional(positionals, '<buildId>');
    const deployments = (await context.client()).deployments;
    await deployments.setCurrent(buildId);
    context.io.out(`build ${buildId} is now current in deployment ${deployments.deploymentName}`);
    return EXIT_OK;
  },
};
