/**
 * The configuration reference's table of contents: every group of variables with the module that
 * holds it (CONFIG_GROUPS), and who reads which variables with which loader (CONFIG_READERS).
 * scripts/lib/config-reference.ts renders docs/configuration.md and .env.example from them.
 */
import { z } from 'zod';
import { BenchEnv, BenchVars } from './bench-settings.js';
import { DemoEnv, DemoVars } from '../demo-settings.js';
import { ReplayEnv, TestEnv, TestRunEnv, TestVars } from './test-settings.js';
import { ProvisioningVars, ToolchainVars } from './toolchain-settings.js';
import { AggregatorVars } from '../../src/settings/aggregator.js';
import { CliVars, ClientVariables, IdentityVars } from '../../src/settings/client.js';
import { AuditVars } from '../../src/settings/audit.js';
import { CliSignInVars } from '../../src/settings/cli-sign-in.js';
import { ConsoleVariables, ConsoleVars } from '../../src/settings/console.js';
import { PipelineEntryVariables, PipelineEntryVars } from '../../src/settings/pipeline-entry.js';
import { DevStackEnv, DevStackVars } from './dev-stack-settings.js';
import { RuntimeVars } from '../../src/settings/load.js';
import { KeyProviderVars } from '../../src/settings/kms.js';
import { EncryptionVars } from '../../src/settings/encryption-keys.js';
import { PayloadStoreVars } from '../../src/settings/payload-store.js';
import { BookVars, BudgetVars, PriorityVars } from '../../src/settings/fleet-sharing.js';
import { PoolVars } from '../../src/settings/pools.js';
import { SandboxVars } from '../../sandbox/settings.js';
import { TemporalEnvConfigVars } from '../../src/settings/temporal-env-config.js';
import { TemporalVars } from '../../src/settings/temporal.js';
import { TracingVars } from '../../src/settings/tracing.js';
import { CallbackVars } from '../../src/settings/callbacks.js';
import { WorkerVariables, WorkerVars } from '../../src/settings/worker.js';

/** A section of the reference: its variables (a group(...) object) and the module that holds their schemas. */
interface ConfigGroup {
  readonly variables: z.ZodObject;
  /** The repository path of the module that declares the group, / separated. */
  readonly module: string;
}

/** The sections of the reference, in order; every variable a reader reads belongs to the first group that has it. */
export const CONFIG_GROUPS: readonly ConfigGroup[] = [
  { variables: RuntimeVars, module: 'src/settings/load.ts' },
  { variables: TemporalVars, module: 'src/settings/temporal.ts' },
  { variables: TemporalEnvConfigVars, module: 'src/settings/temporal-env-config.ts' },
  { variables: AggregatorVars, module: 'src/settings/aggregator.ts' },
  { variables: WorkerVars, module: 'src/settings/worker.ts' },
  { variables: PriorityVars, module: 'src/settings/fleet-sharing.ts' },
  { variables: BudgetVars, module: 'src/settings/fleet-sharing.ts' },
  { variables: BookVars, module: 'src/settings/fleet-sharing.ts' },
  { variables: PoolVars, module: 'src/settings/pools.ts' },
  { variables: ConsoleVars, module: 'src/settings/console.ts' },
  { variables: PipelineEntryVars, module: 'src/settings/pipeline-entry.ts' },
  { variables: AuditVars, module: 'src/settings/audit.ts' },
  { variables: CliSignInVars, module: 'src/settings/cli-sign-in.ts' },
  { variables: EncryptionVars, module: 'src/settings/encryption-keys.ts' },
  { variables: KeyProviderVars, module: 'src/settings/kms.ts' },
  { variables: PayloadStoreVars, module: 'src/settings/payload-store.ts' },
  { variables: TracingVars, module: 'src/settings/tracing.ts' },
  { variables: CallbackVars, module: 'src/settings/callbacks.ts' },
  { variables: IdentityVars, module: 'src/settings/client.ts' },
  { variables: CliVars, module: 'src/settings/client.ts' },
  { variables: SandboxVars, module: 'sandbox/settings.ts' },
  { variables: DevStackVars, module: 'scripts/lib/dev-stack-settings.ts' },
  { variables: DemoVars, module: 'scripts/demo-settings.ts' },
  { variables: ToolchainVars, module: 'scripts/lib/toolchain-settings.ts' },
  { variables: ProvisioningVars, module: 'scripts/lib/toolchain-settings.ts' },
  { variables: BenchVars, module: 'scripts/lib/bench-settings.ts' },
  { variables: TestVars, module: 'scripts/lib/test-settings.ts' },
];

/** The object of flat variables a process's schema starts from, before its transforms. */
function objectOf(schema: z.ZodType): z.ZodObject {
  let current: unknown = schema;
  while (!(current instanceof z.ZodObject)) {
    if (!(current instanceof z.ZodPipe)) throw new TypeError('a process schema is an object of variables, then transforms');
    current = current.in;
  }
  return current;
}

/** Who reads which variables: the reference's "read by". */
export interface ConfigReader {
  /** Its name in the "read by" column. */
  readonly name: string;
  /** The programs that read them this way. */
  readonly programs: string;
  /** Its loader; absent: a program that cannot load the settings modules, which reads them itself. */
  readonly loader?: string;
  /** The repository path of the module that exports the loader. */
  readonly module?: string;
  /** Why a program without a loader reads the environment itself. */
  readonly reason?: string;
  readonly variables: readonly z.ZodObject[];
}

const pick = <S extends z.ZodObject, K extends keyof S['shape'] & string>(schema: S, ...names: K[]) =>
  z.object(Object.fromEntries(names.map((name) => [name, schema.shape[name]])));

export const CONFIG_READERS: readonly ConfigReader[] = [
  {
    name: 'worker',
    loader: 'loadWorkerConfig',
    module: 'src/settings/worker.ts',
    programs: "`npm run worker` (src/worker.ts), the image's CMD, `npm start`'s worker",
    variables: [RuntimeVars, WorkerVariables],
  },
  {
    name: 'client',
    loader: 'loadClientConfig',
    module: 'src/settings/client.ts',
    programs:
      'the pipeline client (`ConnectionsClient.connect()`), `npm run cli`, `npm run demo`, the console (to reach Temporal), `npm start` (it checks what its children will read)',
    variables: [RuntimeVars, ClientVariables],
  },
  { name: 'CLI', loader: 'connectionPasswordFromEnv', module: 'src/settings/client.ts', programs: '`npm run cli -- start`', variables: [RuntimeVars, CliVars] },
  {
    name: 'audit trail',
    loader: 'loadAuditStoreLocation',
    module: 'src/settings/audit.ts',
    programs: "`npm run cli -- audit` and the CLI's commands that act",
    variables: [RuntimeVars, AuditVars],
  },
  {
    name: 'CLI sign-in',
    loader: 'loadCliSignInConfig',
    module: 'src/settings/cli-sign-in.ts',
    programs: "`npm run cli -- login`, `whoami`, `logout`, and the CLI's commands that act (who they are recorded under)",
    variables: [RuntimeVars, CliSignInVars],
  },
  {
    name: 'console',
    loader: 'loadConsoleConfig',
    module: 'src/settings/console.ts',
    programs: "`npm run console` (src/console/server.ts), `npm start`'s console",
    variables: [RuntimeVars, ConsoleVariables],
  },
  {
    name: 'pipeline entry',
    loader: 'loadPipelineEntryConfig',
    module: 'src/settings/pipeline-entry.ts',
    programs: "`npm run pipeline-entry` (src/pipeline-entry/server.ts), `npm start`'s pipeline entry",
    variables: [RuntimeVars, PipelineEntryVariables],
  },
  {
    name: 'sandbox',
    loader: 'loadSandboxConfig',
    module: 'sandbox/settings.ts',
    programs: '`npm run sandbox` (sandbox/main.ts)',
    variables: [RuntimeVars, SandboxVars],
  },
  {
    name: 'dev stack',
    loader: 'loadDevStackConfig',
    module: 'scripts/lib/dev-stack-settings.ts',
    programs: '`npm start` (scripts/dev-stack.ts)',
    variables: [RuntimeVars, objectOf(DevStackEnv)],
  },
  {
    name: 'demo',
    loader: 'loadDemoConfig',
    module: 'scripts/demo-settings.ts',
    programs: '`npm run demo` (scripts/demo.ts)',
    variables: [RuntimeVars, objectOf(DemoEnv)],
  },
  {
    name: 'tools',
    loader: 'loadToolchainConfig',
    module: 'scripts/lib/toolchain-settings.ts',
    programs:
      'scripts/lib/temporal-binaries.ts, temporal-versions.ts, minio-binary.ts, openbao-binary.ts, compose-check.ts, prod-check/: npm start, npm test, the test helpers, prod:check, chaos, deploy:check, keys:check, compose:check, the benchmarks',
    variables: [RuntimeVars, ToolchainVars],
  },
  {
    name: 'provisioning',
    programs: '`npm run provision` (scripts/provision-temporal.sh), run before `npm start` and `npm test`; scripts/provision-node.sh',
    reason: 'bash scripts that run before Node.js is there (they provision it)',
    variables: [
      pick(
        ToolchainVars,
        'TEMPORAL_CACHE_DIR',
        'TEMPORAL_SERVER_VERSION',
        'TEMPORAL_UPGRADE_PATH',
        'TEMPORAL_UI_VERSION',
        'TEMPORAL_CLI_PATH',
        'MINIO_PATH',
        'OPENBAO_PATH',
        'DOCKER_COMPOSE_PATH',
      ),
      ProvisioningVars,
    ],
  },
  {
    name: 'bench',
    loader: 'loadBenchConfig',
    module: 'scripts/lib/bench-settings.ts',
    programs: 'the benchmarks (bench/*.ts)',
    variables: [RuntimeVars, objectOf(BenchEnv)],
  },
  {
    name: 'vm probe',
    programs: 'bench/vm-watchdog-probe.cjs, preloaded into a benchmarked worker with NODE_OPTIONS=--require',
    reason: 'CommonJS preloaded by `node --require` into every thread of the worker before any module of the product, so it cannot import the settings modules',
    variables: [pick(BenchVars, 'VM_WATCHDOG', 'VM_PROBE_OUT')],
  },
  {
    name: 'sdk floor worker',
    programs: "bench/sdk-floor/worker.ts: Temporal's floor, the bare SDK worker bench/sdk-floor.ts starts",
    reason:
      "the SDK's floor carries none of the product's code: it runs transpiled alone under node_modules/.cache/sdk-floor, where the settings modules are not there to import",
    variables: [pick(TemporalVars, 'TEMPORAL_ADDRESS', 'TEMPORAL_TASK_QUEUE'), pick(BenchVars, 'SDK_FLOOR_WORKFLOWS_PATH')],
  },
  {
    name: 'tests',
    loader: 'loadTestConfig',
    module: 'scripts/lib/test-settings.ts',
    programs: 'the test files and their helpers (test/), image:check (the shared dev server)',
    variables: [RuntimeVars, objectOf(TestEnv)],
  },
  {
    name: 'test runner',
    loader: 'loadTestRunConfig',
    module: 'scripts/lib/test-settings.ts',
    programs: '`npm test` (scripts/run-tests.mjs)',
    variables: [RuntimeVars, objectOf(TestRunEnv)],
  },
  {
    name: 'replay',
    loader: 'loadReplayConfig',
    module: 'scripts/lib/test-settings.ts',
    programs: 'the closing replay of `npm test` (scripts/replay-suite.ts)',
    variables: [RuntimeVars, objectOf(ReplayEnv)],
  },
];
