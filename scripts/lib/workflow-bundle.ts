/**
 * The product's workflow bundle (src/workflow-code.ts's WORKFLOW_CODE) as code, webpack's progress
 * left out: for the tests, benchmarks and fault runs that start workers from a prebuilt bundle.
 * `npm run build` writes the image's bundle with scripts/build-workflow-bundle.ts instead.
 */
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_CODE } from '../../src/workflow-code.js';

const SILENT = { info() {}, warn() {}, error() {}, debug() {}, trace() {}, log() {} };

export async function productWorkflowBundle(): Promise<string> {
  return (await bundleWorkflowCode({ ...WORKFLOW_CODE, logger: SILENT })).code;
}
