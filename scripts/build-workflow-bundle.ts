/**
 * Prebuilds the workflow bundle for production workers (WORKER_WORKFLOW_BUNDLE=dist/workflow-bundle.js),
 * so a worker starts without webpack and every worker of a deployment runs the same code.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_CODE } from '../src/workflow-code.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const output = resolve(root, process.argv[2] ?? 'dist/workflow-bundle.js');

const { code } = await bundleWorkflowCode(WORKFLOW_CODE);
await mkdir(dirname(output), { recursive: true });
await writeFile(output, code);
process.stdout.write(`workflow bundle written to ${output} (${Math.round(code.length / 1024)} KiB)\n`);
