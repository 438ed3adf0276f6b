/**
 * The worker's place in its Worker Deployment: the workflow code it runs, the build id taken from
 * that code, the versioning options the SDK needs, and (when configured) making its own build
 * current once it polls. Connections are pinned to the build they started on, so a deploy that
 * changes their steps needs no `patched()`; the build id changes exactly when the workflow code does.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, type WorkerDeploymentOptions } from '@temporalio/worker';
import { DeploymentCommandError, WorkerDeployments } from '../client/deployments.js';
import type { WorkerConfig } from '../settings/worker.js';
import { WORKFLOW_CODE } from '../bundle/workflow-code.js';

/** A new worker registers its version with its first polls; this is how long it keeps asking to become current. */
const BECOME_CURRENT_WAIT_MS = 60_000;

export interface WorkflowBuild {
  /** The bundled workflow code the worker runs. */
  readonly code: string;
  readonly buildId: string;
  /** Where the build id came from, for the start-up log. */
  readonly buildIdSource: 'WORKER_BUILD_ID' | 'bundle hash';
}

/** The first 12 hex digits of the bundle's SHA-256: the same code gives the same id on every worker of a fleet. */
export function buildIdOf(code: string): string {
  return createHash('sha256').update(code).digest('hex').slice(0, 12);
}

/**
 * The product's workflows bundled as a build bundles them (WORKFLOW_CODE, or the same options moved
 * elsewhere: the deploy rehearsal's v2), webpack's progress left out, its warnings kept.
 */
export async function bundleWorkflows(options: Omit<Parameters<typeof bundleWorkflowCode>[0], 'logger'> = WORKFLOW_CODE): Promise<string> {
  return (await bundleWorkflowCode({ ...options, logger: quietBundlerLogger })).code;
}

/** The prebuilt bundle (production), or the workflows bundled now (development), and its build id. */
export async function loadWorkflowBuild(config: Pick<WorkerConfig, 'workflows' | 'deployment'>): Promise<WorkflowBuild> {
  const code = config.workflows.bundlePath ? await readFile(config.workflows.bundlePath, 'utf8') : await bundleWorkflows();
  return config.deployment.buildId
    ? { code, buildId: config.deployment.buildId, buildIdSource: 'WORKER_BUILD_ID' }
    : { code, buildId: buildIdOf(code), buildIdSource: 'bundle hash' };
}

/**
 * Workflows that do not say otherwise are pinned; connection.ts says PINNED, retention.ts and
 * forget.ts say AUTO_UPGRADE (they outlive deploys and must move to the current build).
 */
export function workerDeploymentOptions(deploymentName: string, buildId: string): WorkerDeploymentOptions {
  return { version: { deploymentName, buildId }, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' };
}

export type BecomeCurrentOutcome =
  | { readonly outcome: 'made-current' | 'already-current' }
  | { readonly outcome: 'left'; readonly currentBuildId: string }
  | { readonly outcome: 'failed'; readonly error: DeploymentCommandError };

/**
 * `when-unset`: a first deploy (no current version) makes its build current; later builds wait for
 * an operator. `yes`: this build becomes current whatever was before (a stack on one machine).
 */
export async function becomeCurrent(temporal: Client, deploymentName: string, buildId: string, policy: 'when-unset' | 'yes'): Promise<BecomeCurrentOutcome> {
  const deployments = new WorkerDeployments(temporal, deploymentName);
  try {
    const before = await deployments.describe();
    if (before?.currentBuildId === buildId) return { outcome: 'already-current' };
    if (policy === 'when-unset' && before?.currentBuildId) return { outcome: 'left', currentBuildId: before.currentBuildId };
    await deployments.setCurrent(buildId, { waitMs: BECOME_CURRENT_WAIT_MS });
    return { outcome: 'made-current' };
  } catch (error) {
    if (error instanceof DeploymentCommandError) return { outcome: 'failed', error };
    throw error;
  }
}

const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string, meta?: Record<string, unknown>) => process.stderr.write(`${JSON.stringify({ level: 'WARN', message, ...meta })}\n`),
  error: (message: string, meta?: Record<string, unknown>) => process.stderr.write(`${JSON.stringify({ level: 'ERROR', message, ...meta })}\n`),
};
