/**
 * `deployment show`: every build of the worker deployment, which one is current or ramping, and for
 * the others how many connections are still pinned to them: a build can be retired once it is
 * drained and none remain.
 */
import type { DeploymentDescription } from '../../../client/deployments.js';
import { noPositionals, parseFlags } from '../../args.js';
import type { Command } from '../../command.js';
import { EXIT_FAILED, EXIT_OK, formatTable } from '../../report.js';

export const show: Command = {
  access: { permission: 'read' },
  summary: "show the deployment's builds and what still runs on each",
  usage: (program) => `Usage: ${program} deployment show [--json]

Lists the builds of the worker deployment (WORKER_DEPLOYMENT_NAME): the current one (new
connections, retention timers and forgets run there), a ramping one and its share, and for every
build the connections still pinned to it. A build is safe to retire when it is drained, no
connection is pinned to it and its workers are stopped.
  --json                print the description as JSON`,

  async run(args, context) {
    const { values, positionals } = parseFlags({ args: [...args], options: { json: { type: 'boolean' } }, allowPositionals: true });
    noPositionals(positionals);
    const deployments = (await context.client()).deployments;
    const description = await deployments.describe();
    if (!description) {
      context.io.err(`no worker of deployment ${deployments.deploymentName} has polled yet: start a worker first`);
      return EXIT_FAILED;
    }
    const pinned = new Map(
      await Promise.all(description.versions.map(async (version) => [version.buildId, await deployments.pinnedRunning(version.buildId)] as const)),
    );
    if (values.json) {
      context.io.out(
        JSON.stringify(
          { ...description, versions: description.versions.map((version) => ({ ...version, pinnedRunning: pinned.get(version.buildId) })) },
          null,
          2,
        ),
      );
      return EXIT_OK;
    }
    for (const line of describeDeployment(description, pinned)) context.io.out(line);
    return EXIT_OK;
  },
};

export function describeDeployment(description: DeploymentDescription, pinned: ReadonlyMap<string, number>): string[] {
  const routing = description.currentBuildId
    ? `current ${description.currentBuildId}${description.rampingBuildId ? `, ramping ${description.rampingBuildId} at ${description.rampingPercentage ?? 0}%` : ''}`
    : 'no current build: new connections wait for one (npm run cli -- deployment set-current <buildId>)';
  const rows = description.versions.map((version) => {
    const count = pinned.get(version.buildId) ?? 0;
    const retirable = version.status !== 'current' && version.status !== 'ramping' && version.drained && count === 0;
    return [version.buildId, version.status, String(count), retirable ? 'yes (once its workers stop)' : 'no', version.createdAt ?? ''];
  });
  return [`deployment ${description.deploymentName}: ${routing}`, ...formatTable(['BUILD', 'STATUS', 'PINNED RUNNING', 'RETIRABLE', 'CREATED'], rows)];
}
