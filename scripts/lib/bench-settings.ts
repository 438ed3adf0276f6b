/**
 * The benchmarks' own settings (loadBenchConfig); the processes they start read theirs. Here, beside the
 * toolchain the benchmarks run on, so the reference (scripts/lib/config-registry.ts) reads them without importing bench/.
 */
import { z } from 'zod';
import { doc, group } from '../../src/settings/document.js';
import { parseEnv } from '../../src/settings/load.js';
import { SandboxUrl } from '../../sandbox/settings.js';

const DYNAMIC_CONFIG_RULE = 'must be `none` or space-separated key=value pairs, values as JSON (e.g. system.enableActivityEagerExecution=false)';
/** `key=value ...` (values as JSON) → the dev server's dynamic config; `none` → none at all. */
const DynamicConfig = z.string().transform((text, ctx) => {
  if (text.trim() === 'none') return Object.freeze({});
  const config: Record<string, boolean | number | string> = {};
  for (const pair of text.split(' ').filter(Boolean)) {
    const equals = pair.indexOf('=');
    let value: unknown;
    try {
      value = equals > 0 ? JSON.parse(pair.slice(equals + 1)) : undefined;
    } catch {
      value = undefined;
    }
    if (typeof value !== 'boolean' && typeof value !== 'number' && typeof value !== 'string') {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(pair)}: ${DYNAMIC_CONFIG_RULE}` });
      continue;
    }
    config[pair.slice(0, equals)] = value;
  }
  return Object.freeze(config);
});

export const BenchVars = group(
  z.object({
    BENCH_WORKER_RUNTIME: doc(
      z.enum(['compiled', 'tsx'], { error: 'must be compiled or tsx' }).default('compiled'),
      'How the worker benchmarks run the worker: `compiled` as the image does (`npm run build`, node dist/src/worker.js), `tsx` from the sources as `npm run worker` does.',
    ),
    BENCH_WORKER_NODE_ARGS: doc(
      z
        .string()
        .transform((text) => Object.freeze(text.split(' ').filter(Boolean)))
        .optional(),
      'Extra node arguments for the benchmarked worker only, space-separated, e.g. --max-old-space-size=256 or --cpu-prof --cpu-prof-dir=/tmp/prof.',
    ),
    BENCH_SERVER_DYNAMIC_CONFIG: doc(
      DynamicConfig.optional(),
      "The benchmark dev server's dynamic config instead of the product's (scripts/lib/server-dynamic-config.ts), to compare: key=value pairs, space-separated, values as JSON; `none` for none at all (e.g. no eager activities).",
      { defaultText: "the product's" },
    ),
    VM_WATCHDOG: doc(
      z.enum(['on', 'off']).optional(),
      'Experiment only, with NODE_OPTIONS="--require ./bench/vm-watchdog-probe.cjs": `off` drops the SDK\'s isolate execution timeout (no watchdog thread per call into the workflow sandbox).',
      { defaultText: 'on' },
    ),
    VM_PROBE_OUT: doc(
      z.string().optional(),
      'Experiment only: where bench/vm-watchdog-probe.cjs writes its count of calls into the workflow sandbox (<path>.<threadId>, every second).',
    ),
    SDK_FLOOR_WORKFLOWS_PATH: doc(
      z.string().optional(),
      "Set by bench/sdk-floor.ts for the floor's worker, which runs from a compiled copy elsewhere: the floor's workflows to bundle.",
      {
        defaultText: 'bench/sdk-floor/workflows.ts beside the worker',
      },
    ),
  }),
  'Benchmarks',
  "The benchmarks (bench/). They pass this shell's WORKER_* settings, NODE_OPTIONS, MALLOC_ARENA_MAX and VM_* on to the worker they start, to compare tunings.",
  { envExample: false },
);

export const BenchEnv = z
  .object({
    BENCH_WORKER_RUNTIME: BenchVars.shape.BENCH_WORKER_RUNTIME,
    BENCH_WORKER_NODE_ARGS: BenchVars.shape.BENCH_WORKER_NODE_ARGS,
    BENCH_SERVER_DYNAMIC_CONFIG: BenchVars.shape.BENCH_SERVER_DYNAMIC_CONFIG,
    SANDBOX_URL: SandboxUrl,
  })
  .transform((env) =>
    Object.freeze({
      workerRuntime: env.BENCH_WORKER_RUNTIME,
      workerNodeArgs: env.BENCH_WORKER_NODE_ARGS ?? Object.freeze([]),
      /** undefined: the product's. */
      serverDynamicConfig: env.BENCH_SERVER_DYNAMIC_CONFIG,
      /** undefined: an in-process sandbox (bench/sandbox-throughput.ts). */
      sandboxUrl: env.SANDBOX_URL,
    }),
  );

export type BenchConfig = z.output<typeof BenchEnv>;

/** The benchmarks' own settings (the processes they start read theirs). */
export function loadBenchConfig(env?: NodeJS.ProcessEnv): BenchConfig {
  return parseEnv(BenchEnv, env);
}
