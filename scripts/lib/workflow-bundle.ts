/**
 * The product's workflow bundle (src/bundle/workflow-code.ts's WORKFLOW_CODE) as code, webpack's progress
 * left out: for the tests, benchmarks and fault runs that start workers from a prebuilt bundle.
 * Under `npm test` the runner has bundled it once already (TEST_WORKFLOW_BUNDLE): that copy is read.
 * `npm run build` writes the image's bundle with scripts/build-workflow-bundle.ts instead.
 */
import { readFile } from 'node:fs/promises';
import { bundleWorkflows } from '../../src/worker/deployment.js';
import { loadTestConfig } from './test-settings.js';

export async function productWorkflowBundle(): Promise<string> {
  const shared = loadTestConfig().workflowBundlePath;
  return shared ? readFile(shared, 'utf8') : bundleWorkflows();
}
