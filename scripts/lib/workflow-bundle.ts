/**
 * The product's workflow bundle (src/bundle/workflow-code.ts's WORKFLOW_CODE) as code, webpack's progress
 * left out: for the tests, benchmarks and fault runs that start workers from a prebuilt bundle.
 * `npm run build` writes the image's bundle with scripts/build-workflow-bundle.ts instead.
 */
import { bundleWorkflows } from '../../src/worker/deployment.js';

export async function productWorkflowBundle(): Promise<string> {
  return bundleWorkflows();
}
