/**
 * Shared section `deployment`: the Worker Deployment a fleet's builds belong to (the worker
 * registers its build there; the client's `deployment` commands show and route it).
 */
import { z } from 'zod';
import { doc } from './document.js';

/** Temporal joins the two as `name:buildId` (and once as `name.buildId`), so neither may hold `:` or `.`. */
const DEPLOYMENT_PART = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const DEPLOYMENT_PART_RULE = 'must be 1-64 letters, digits, - or _';
const DeploymentName = z.string().trim().regex(DEPLOYMENT_PART, { message: DEPLOYMENT_PART_RULE });
export const BuildId = z.string().trim().regex(DEPLOYMENT_PART, { message: DEPLOYMENT_PART_RULE });

export const DeploymentVars = z.object({
  WORKER_DEPLOYMENT_NAME: doc(
    DeploymentName.optional(),
    "Worker Deployment Versioning: the deployment this fleet's builds belong to (one per task queue by default). Connections stay on the build they started on (Pinned); retention timers and forgets move to the current build (AutoUpgrade).",
    { defaultText: 'TEMPORAL_TASK_QUEUE' },
  ),
});

export function deploymentSection(env: z.output<typeof DeploymentVars>, taskQueue: string, ctx: z.core.$RefinementCtx) {
  const name = env.WORKER_DEPLOYMENT_NAME ?? taskQueue;
  if (!DEPLOYMENT_PART.test(name)) {
    ctx.addIssue({
      code: 'custom',
      path: ['WORKER_DEPLOYMENT_NAME'],
      message: `unset, it is the task queue's name ${JSON.stringify(name)}, which ${DEPLOYMENT_PART_RULE}: set WORKER_DEPLOYMENT_NAME`,
    });
  }
  return Object.freeze({ name });
}
