/**
 * Where the worker's workflow code lives: the workflows and the payload converter bundled with them.
 * Every place that bundles or runs workflows (worker, bundle script, tests, benchmarks) reads this,
 * so none of them can forget the converter that keeps bad messages from wedging a connection.
 */
import { fileURLToPath } from 'node:url';

export const WORKFLOWS_PATH = fileURLToPath(new URL('./workflows/index.ts', import.meta.url));
export const PAYLOAD_CONVERTER_PATH = fileURLToPath(new URL('./codec/payload-converter.ts', import.meta.url));

/** Options for bundleWorkflowCode (and for Worker.create when it bundles at start). */
export const WORKFLOW_CODE = { workflowsPath: WORKFLOWS_PATH, payloadConverterPath: PAYLOAD_CONVERTER_PATH } as const;
