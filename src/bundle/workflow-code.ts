/**
 * Where the worker's workflow code lives: the workflows and the converters bundled with them (the
 * payload converter that keeps bad messages from wedging a connection, the failure converter that
 * puts failure messages where the codec encrypts them) and the tracing interceptors (inert for a
 * connection started without a trace context). Every place that bundles or runs workflows (worker,
 * bundle script, tests, benchmarks) reads this, so none of them can forget one.
 */
import { fileURLToPath } from 'node:url';

/** `.ts` when running the sources (tsx, tests), `.js` when running the compiled dist/ (the image). The path, not the URL: tsx's tsImport adds a query. */
const EXTENSION = new URL(import.meta.url).pathname.endsWith('.ts') ? '.ts' : '.js';
const beside = (path: string) => fileURLToPath(new URL(`${path}${EXTENSION}`, import.meta.url));

export const WORKFLOWS_PATH = beside('../workflows/index');
export const PAYLOAD_CONVERTER_PATH = beside('../codec/payload-converter');
export const FAILURE_CONVERTER_PATH = beside('../codec/failure-converter');
export const TRACING_WORKFLOW_INTERCEPTORS_PATH = beside('../tracing/workflow-interceptors');

/**
 * Modules evaluated once per workflow thread and shared by every workflow it runs, instead of once
 * per workflow: all of the product's workflow code. The SDK's reusable V8 context otherwise gives
 * each workflow its own copy of every module it loads (closures, getters and contexts: ~43 KiB of
 * live heap per cached connection, measured in heap snapshots at 1,000 pending). Safe because these
 * modules keep no state at module level: test/workflows/shared-modules.test.ts reads every bundled
 * source file and refuses module-level `let`, `var` or mutable containers, which would now be
 * shared by all connections of a thread.
 */
const SHARED_MODULES = [WORKFLOWS_PATH, PAYLOAD_CONVERTER_PATH, FAILURE_CONVERTER_PATH, TRACING_WORKFLOW_INTERCEPTORS_PATH];

/** Options for bundleWorkflowCode; a worker or replayer that bundles at start takes `workflowSource()` and the interceptors as `interceptors.workflowModules`. */
export const WORKFLOW_CODE: {
  readonly workflowsPath: string;
  readonly payloadConverterPath: string;
  readonly failureConverterPath: string;
  readonly workflowInterceptorModules: string[];
  readonly preloadModules: string[];
} = Object.freeze({
  workflowsPath: WORKFLOWS_PATH,
  payloadConverterPath: PAYLOAD_CONVERTER_PATH,
  failureConverterPath: FAILURE_CONVERTER_PATH,
  workflowInterceptorModules: [TRACING_WORKFLOW_INTERCEPTORS_PATH],
  preloadModules: SHARED_MODULES,
});

/** For a worker or replayer that bundles the workflow code at start: the workflows and what to preload (the converters come with its data converter, the interceptors with tracingWorkerOptions). */
export function workflowSource(): { workflowsPath: string; bundlerOptions: { preloadModules: string[] } } {
  return { workflowsPath: WORKFLOWS_PATH, bundlerOptions: { preloadModules: [...SHARED_MODULES] } };
}

/**
 * How long one call into the workflow sandbox may run before the SDK's watchdog interrupts it. The
 * SDK's default is 5 s and not yet a public option (its defaults are spread under the options it is
 * given, so this one takes effect). A large login's data (500,000 transactions, ~80 MB) is parsed and
 * serialized inside the sandbox: under load that passed 5 s, and the interrupt crashed the worker
 * process ("async hook stack has become corrupted"). Workflow code that never yields still fails its
 * task, after 60 s instead of 5.
 */
export const WORKFLOW_SANDBOX_OPTIONS = { isolateExecutionTimeout: '60s' } as const;
