/**
 * Prebuilds the workflow bundle for production workers (WORKER_WORKFLOW_BUNDLE=dist/workflow-bundle.js),
 * so a worker starts without webpack and every worker of a deployment runs the same code.
 * `npm run build` runs it compiled (node dist/scripts/build-workflow-bundle.js): it then bundles the
 * compiled workflows and converters of dist/src, the code the image runs. The output path is taken
 * from the working directory (npm runs scripts at the project root).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_CODE } from '../src/bundle/workflow-code.js';

const output = resolve(process.argv[2] ?? 'dist/workflow-bundle.js');

const { code } = await bundleWorkflowCode(WORKFLOW_CODE);
await mkdir(dirname(output), { recursive: true });
await writeFile(output, code);
process.stdout.write(`workflow bundle written to ${output} (${Math.round(code.length / 1024)} KiB) from ${dirname(WORKFLOW_CODE.workflowsPath)}\n`);
