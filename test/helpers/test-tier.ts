/**
 * What the run gives every test file: the tier it runs in, and the workflow code its workers run.
 * - `npm run test:unit` (TEST_UNIT_TIER) runs only files whose imports start no server; a helper
 *   that would start one calls refuseInUnitTier, so a file misjudged as a unit test fails by name
 *   instead of starting a server the tier is meant to do without.
 * - `npm test` bundles the product's workflow code once (TEST_WORKFLOW_BUNDLE); workers and
 *   replayers run that bundle instead of bundling again (about ten seconds of CPU each).
 */
import { WORKFLOW_SANDBOX_OPTIONS, workflowSource } from '../../src/bundle/workflow-code.js';
import { tracingWorkerOptions, type TracingWorkerOptions } from '../../src/tracing/worker-tracing.js';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';

export class NeedsServerError extends Error {
  override readonly name = 'NeedsServerError';
  constructor(readonly server: string) {
    super(`${server}: this file needs a server, so it is not a unit test; add what starts the server to NEEDS_A_SERVER in scripts/lib/test-plan.ts`);
  }
}

/** Throws NeedsServerError under `npm run test:unit`. */
export function refuseInUnitTier(server: string): void {
  if (loadTestConfig().unitTier) throw new NeedsServerError(server);
}

/** Worker or replayer options: the product's workflow code (the run's shared bundle, else bundled at start), its tracing interceptors (inert) and the sandbox's options. */
export type ProductWorkflowCode = ({ workflowBundle: { codePath: string } } | ReturnType<typeof workflowSource>) &
  TracingWorkerOptions &
  typeof WORKFLOW_SANDBOX_OPTIONS;

export function productWorkflowCode(): ProductWorkflowCode {
  const codePath = loadTestConfig().workflowBundlePath;
  return codePath
    ? { workflowBundle: { codePath }, ...tracingWorkerOptions(undefined, { bundled: true }), ...WORKFLOW_SANDBOX_OPTIONS }
    : { ...workflowSource(), ...tracingWorkerOptions(undefined), ...WORKFLOW_SANDBOX_OPTIONS };
}
