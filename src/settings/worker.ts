/**
 * The worker's settings (`npm run worker`, the image's CMD): loadWorkerConfig. Its own variables
 * (endpoints, tuning, retention) and the shared sections it reads, as
 *   { temporal, aggregator, metrics, statusGauge, health, workflows, deployment, activities,
 *     pool, resourceTuner?, logLevel, retentionDays, priority, budget, encryption?, payloadStore, tracing? }.
 */
import { z } from 'zod';
import { AggregatorVars } from './aggregator.js';
import { BuildId, DeploymentVars, deploymentSection } from './deployment.js';
import { Port, doc, group } from './document.js';
import { parseEnv } from './load.js';
import { perTenantList } from './per-tenant-list.js';
import { KeyProviderVars } from './kms.js';
import { EncryptionVars } from './encryption-keys.js';
import { PayloadStoreVars, checkPayloads, payloadSections } from './payload-store.js';
import { PoolVars, poolsSection } from './pools.js';
import { BudgetVars, PriorityVars, budgetSection, prioritySection } from './fleet-sharing.js';
import { TemporalEnvConfigVars } from './temporal-env-config.js';
import { TemporalVars, checkApiKey, checkTls, temporalSection, withTemporalEnvConfig } from './temporal.js';
import { TracingVars, tracingSection } from './tracing.js';
import { NexusEndpointKeyFiles, NexusEndpointTenants } from './nexus.js';
import { CallbackVars, callbackSection } from './callbacks.js';

/** Workflow task slots per worker unless set (WORKER_MAX_CONCURRENT_WORKFLOW_TASKS). */
export const DEFAULT_WORKFLOW_TASK_SLOTS = 4;
/** How long a workflow task waits on its worker's sticky queue unless set (WORKER_STICKY_TIMEOUT_MS). */
export const DEFAULT_STICKY_TIMEOUT_MS = 1_000;
export const WorkerMetricsPort = doc(Port.default(9464), 'Prometheus metrics at http://WORKER_METRICS_HOST:WORKER_METRICS_PORT/metrics; 0 turns them off.');

// The retention policy: forget a tenant's login N days after its last retrieval.
const RETENTION_RULE = 'must be a comma-separated list of <customerId>:<days> (or *:<days> for every other tenant), days from 1 to 36500';
/** `lender-a:90,lender-b:30,*:365` → days per customer id ('*': any other tenant). Off (empty) by default. */
const RetentionDays = perTenantList('\\d{1,5}', (days) => days >= 1 && days <= 36_500, RETENTION_RULE);

const NICE_RULE = 'must be a whole number from 0 to 19';
/** A Unix nice value (WORKER_NICE, WORKER_UNATTENDED_NICE): 0, the default, lowers nothing. */
const niceValue = () => z.coerce.number({ error: NICE_RULE }).int({ error: NICE_RULE }).min(0, { error: NICE_RULE }).max(19, { error: NICE_RULE }).default(0);

/** Days a tenant keeps a login after its last retrieval, or undefined when it has no policy. */
export function retentionDaysOf(policy: ReadonlyMap<string, number>, customerId: string): number | undefined {
  return policy.get(customerId) ?? policy.get('*');
}

export const WorkerVars = group(
  z.object({
    WORKER_METRICS_HOST: doc(z.string().trim().min(1).default('127.0.0.1'), 'The address the Prometheus metrics endpoint listens on.'),
    WORKER_METRICS_PORT: WorkerMetricsPort,
    WORKER_STATUS_GAUGE_INTERVAL_S: doc(
      z.coerce.number().int().min(0).max(3600).default(15),
      'Seconds between two counts of the running connections by status (visibility count queries, one per status, fleet-wide) for the aggregation_connections gauge of the metrics endpoint (docs/metrics.md); 0 turns the counting off, and so does WORKER_METRICS_PORT=0.',
    ),
    WORKER_HEALTH_HOST: doc(z.string().trim().min(1).default('127.0.0.1'), 'The address the health endpoint listens on.'),
    WORKER_HEALTH_PORT: doc(
      Port.default(0),
      'GET http://WORKER_HEALTH_HOST:WORKER_HEALTH_PORT/healthz: 200 {"state":"RUNNING"} while the worker runs, 503 with its state while it starts or SIGTERM drains it (src/worker/health.ts); 0 turns it off (the image sets 8081 for its HEALTHCHECK).',
    ),
    WORKER_WORKFLOW_BUNDLE: doc(
      z.string().trim().min(1).optional(),
      'A prebuilt workflow bundle (production: `npm run build` writes dist/workflow-bundle.js; the image sets it).',
      { defaultText: 'the worker bundles the workflows at start' },
    ),
    ...DeploymentVars.shape,
    WORKER_BUILD_ID: doc(BuildId.optional(), "This build's id.", { defaultText: 'a hash of the workflow bundle, so it changes exactly when that code does' }),
    WORKER_BECOME_CURRENT: doc(
      z.enum(['no', 'when-unset', 'yes'], { error: 'must be no, when-unset or yes' }).default('when-unset'),
      'Whether this worker makes its own build current once it polls: `when-unset` only while the deployment has no current version (a first deploy; later builds wait for `npm run cli -- deployment set-current <buildId>` or a ramp), `yes` always (a stack on one machine), `no` never.',
    ),
    WORKER_MAX_CACHED_WORKFLOWS: doc(
      z.coerce.number().int().min(0).max(100_000).optional(),
      'Workflows kept in the worker\'s cache. To bound the worker\'s memory, cap the heap AND set this to the pending connections you expect: NODE_OPTIONS="--max-old-space-size=192 --max-semi-space-size=4" MALLOC_ARENA_MAX=2 with 2100 for 2,000 pending connections (measured in docs/benchmarks.md#bounding-the-workers-memory). The worker warns at start when the heap is capped below 1 GiB and this is unset.',
      { defaultText: "the SDK's, sized from the heap limit: ~2,300 at Node's default 4 GiB, 32 at 256 MiB" },
    ),
    WORKER_WORKFLOW_THREADS: doc(z.coerce.number().int().min(1).max(16).optional(), 'Threads running workflow code; 2 spreads activations over two cores.', {
      defaultText: "the SDK's, 1",
    }),
    WORKER_MAX_CONCURRENT_ACTIVITIES: doc(
      z.coerce.number().int().min(1).max(100_000).optional(),
      'Activities run at once; the heartbeat polling strategy holds one per pending connection.',
      { defaultText: "the SDK's, 100" },
    ),
    WORKER_WORKFLOW_POLLERS: doc(z.coerce.number().int().min(2).max(100).optional(), 'Long polls for workflow tasks.', { defaultText: "the SDK's, 10" }),
    WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: doc(
      z.coerce.number().int().min(2).max(1_000).optional(),
      "Workflow tasks a worker holds at once. Few keep a burst's backlog on the server, where priority and fairness order it, instead of in the worker's own queue, which serves in arrival order (measured against the SDK's 40 in docs/fleet.md#who-waits-decides-the-order-priority). A worker runs workflow code on one thread, so more only overlap the round trips.",
      { defaultText: `${DEFAULT_WORKFLOW_TASK_SLOTS} (the SDK's is 40); none with WORKER_RESOURCE_TUNER` },
    ),
    WORKER_STICKY_TIMEOUT_MS: doc(
      z.coerce.number().int().min(100).max(600_000).optional(),
      "How long a workflow task waits on its worker's own (sticky) queue before the server hands it to the shared one. Sticky queues have no fairness (server 1.32.2: a sticky partition does not support it), so a tenant's tasks queued behind another's there are not served by weight; a short wait moves them soon to the shared queue, where fairness orders them, at the cost of a replay when another worker takes it (1 s against the SDK's 10 s measured in docs/fleet.md#who-waits-decides-the-order-priority).",
      { defaultText: `${DEFAULT_STICKY_TIMEOUT_MS} (the SDK's is 10 s)` },
    ),
    WORKER_RESOURCE_TUNER: doc(
      z
        .string()
        .trim()
        .regex(/^(0?\.\d+|1(\.0+)?),(0?\.\d+|1(\.0+)?)$/, { message: 'must be two fractions "memory,cpu", e.g. 0.8,0.9' })
        .transform((value) => {
          const [memory, cpu] = value.split(',').map(Number);
          return Object.freeze({ targetMemoryUsage: memory ?? 0, targetCpuUsage: cpu ?? 0 });
        })
        .optional(),
      '"memory,cpu" target fractions (e.g. 0.8,0.9): the SDK\'s resource-based tuner hands out task slots while the host stays under them, instead of fixed slot counts (not with WORKER_MAX_CONCURRENT_ACTIVITIES).',
      { defaultText: 'fixed slot counts' },
    ),
    WORKER_POOL: doc(
      z.enum(['all', 'service', 'unattended'], { error: 'must be all, service or unattended' }).default('all'),
      "Which task queues this worker polls: `service` TEMPORAL_TASK_QUEUE only (connections the pipeline and operators start, retention, forgets, and every call to the service), `unattended` the unattended pool's queue only (UNATTENDED_POOL=separate: book refreshes, their logins and connections), `all` both (one queue while the pool is shared).",
    ),
    WORKER_NICE: doc(
      niceValue(),
      "Lowers this worker process's CPU priority (Unix nice, 0 to 19) at start: an unattended pool's workers on hosts they share with the service pool take only the cores live work leaves (docs/fleet.md#a-pool-for-unattended-work).",
    ),
    WORKER_UNATTENDED_NICE: doc(
      niceValue(),
      "A worker that polls both pools' queues (WORKER_POOL=all with UNATTENDED_POOL=separate) lowers the unattended pool's workflow threads to this CPU priority (Linux nice, 0 to 19): a night's workflow tasks take the cores live work leaves, in the same process (docs/fleet.md#both-pools-in-one-process). Only lowers: a thread already at that priority or lower (WORKER_NICE above it) is left as it is. Not Linux: no effect.",
    ),
    WORKER_REUSE_V8_CONTEXT: doc(
      z.enum(['true', 'false'], { error: 'must be true or false' }).optional(),
      '`false` gives each workflow its own V8 context instead of one reused context: for comparisons, not production.',
      { defaultText: "the SDK's, true" },
    ),
    PAYLOAD_UNBOUND: doc(
      z.enum(['read', 'refuse'], { error: 'must be read or refuse' }).default('read'),
      "What the worker does with a sealed payload bound to no workflow (sealed before payloads were bound to their workflow, or by the codec endpoint's encode): `read` it as before, or `refuse` it (a message is then rejected as a copied one is), once every connection begun before the upgrade has ended (a connection lasts under an hour). Replays always read their histories as written (docs/payload-format.md#the-workflow-binding).",
    ),
    LOG_LEVEL: doc(z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'), 'TRACE, DEBUG, INFO, WARN or ERROR; one JSON object per line.'),
    RETENTION_DAYS: doc(
      RetentionDays.default(new Map()),
      "Retention policy: forget a tenant's login N days after its last successful retrieval (schedule, card at the service, stored payloads, histories). <customerId>:<days>, comma-separated; *:<days> for every other tenant; days 1..36500. Applies from each login's next retrieval; removing a tenant's entry ends its logins' timers at their next retrieval.",
      { defaultText: 'off' },
    ),
    NEXUS_ENDPOINT_TENANTS: doc(
      NexusEndpointTenants.default(new Map()),
      "The `connections` Nexus service (docs/nexus.md): <endpoint>=<customerId>, comma-separated. Each endpoint's caller acts for that tenant only; the worker serves each endpoint from the task queue <TEMPORAL_TASK_QUEUE>-nexus-<endpoint> (the endpoint's target).",
      { defaultText: 'off' },
    ),
    NEXUS_ENDPOINT_KEY_FILES: doc(
      NexusEndpointKeyFiles.default(new Map()),
      "<endpoint>=<file>, comma-separated: the key an endpoint's caller seals its Nexus payloads with (the file holds `<keyId>:<base64 of 32 bytes>`, as the caller's codec names it). What crosses the boundary is sealed under it; the product's own workflows stay under the product's keys. An endpoint without one exchanges plain payloads (only for a caller without encryption).",
      { defaultText: 'none' },
    ),
  }),
  'Worker',
  "The worker process (`npm run worker`, the image's CMD): its endpoints, Worker Deployment Versioning, tuning and policies.",
);

export const WorkerVariables = z
  // Loose: Temporal's environment configuration reads variables of its own (withTemporalEnvConfig).
  .looseObject({
    ...TemporalVars.shape,
    ...TemporalEnvConfigVars.shape,
    ...AggregatorVars.shape,
    ...WorkerVars.shape,
    ...PriorityVars.shape,
    ...BudgetVars.shape,
    ...PoolVars.shape,
    ...EncryptionVars.shape,
    ...KeyProviderVars.shape,
    ...PayloadStoreVars.shape,
    ...TracingVars.shape,
    ...CallbackVars.shape,
  });

const WorkerEnv = WorkerVariables.transform(withTemporalEnvConfig)
  .superRefine((env, ctx) => {
    checkTls(env, ctx);
    checkApiKey(env, ctx);
    checkPayloads(env, ctx);
    if (env.WORKER_POOL === 'unattended' && env.UNATTENDED_POOL !== 'separate') {
      ctx.addIssue({
        code: 'custom',
        path: ['WORKER_POOL'],
        message: 'unattended needs UNATTENDED_POOL=separate (while the pool is shared, unattended work runs on TEMPORAL_TASK_QUEUE)',
      });
    }
    for (const endpoint of env.NEXUS_ENDPOINT_KEY_FILES.keys()) {
      if (!env.NEXUS_ENDPOINT_TENANTS.has(endpoint))
        ctx.addIssue({ code: 'custom', path: ['NEXUS_ENDPOINT_KEY_FILES'], message: `endpoint ${endpoint} is not in NEXUS_ENDPOINT_TENANTS` });
    }
    for (const slots of ['WORKER_MAX_CONCURRENT_ACTIVITIES', 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS'] as const) {
      if (env.WORKER_RESOURCE_TUNER && env[slots] !== undefined)
        ctx.addIssue({ code: 'custom', path: [slots], message: 'cannot be set with WORKER_RESOURCE_TUNER (the tuner sizes the task slots)' });
    }
  })
  .transform((env, ctx) =>
    Object.freeze({
      temporal: temporalSection(env),
      aggregator: Object.freeze({
        baseUrl: env.AGGREGATOR_BASE_URL,
        /** The CLI's default tenant; the worker serves whichever tenant a connection names. */
        customerId: env.AGGREGATOR_CUSTOMER_ID,
        timeoutMs: env.AGGREGATOR_TIMEOUT_MS,
        authorizeTimeoutMs: env.AGGREGATOR_AUTHORIZE_TIMEOUT_MS,
        /** The calling application's credential header: none without AGGREGATOR_AUTH_SECRET. */
        ...(env.AGGREGATOR_AUTH_SECRET ? { auth: Object.freeze({ header: env.AGGREGATOR_AUTH_HEADER, value: env.AGGREGATOR_AUTH_SECRET }) } : {}),
      }),
      /** Prometheus at http://host:port/metrics; port 0 turns it off. */
      metrics: Object.freeze({ host: env.WORKER_METRICS_HOST, port: env.WORKER_METRICS_PORT }),
      /** Running connections counted by status every intervalMs for aggregation_connections; 0: off. */
      statusGauge: Object.freeze({ intervalMs: env.WORKER_STATUS_GAUGE_INTERVAL_S * 1000 }),
      /** Liveness for container health checks at http://host:port/healthz; port 0 turns it off. */
      health: Object.freeze({ host: env.WORKER_HEALTH_HOST, port: env.WORKER_HEALTH_PORT }),
      workflows: Object.freeze({
        /** A prebuilt bundle (production); unset, the worker bundles the workflows at start. */
        bundlePath: env.WORKER_WORKFLOW_BUNDLE,
        maxCachedWorkflows: env.WORKER_MAX_CACHED_WORKFLOWS,
        threads: env.WORKER_WORKFLOW_THREADS,
        pollers: env.WORKER_WORKFLOW_POLLERS,
        stickyTimeoutMs: env.WORKER_STICKY_TIMEOUT_MS ?? DEFAULT_STICKY_TIMEOUT_MS,
        maxConcurrentTasks: env.WORKER_RESOURCE_TUNER ? undefined : (env.WORKER_MAX_CONCURRENT_WORKFLOW_TASKS ?? DEFAULT_WORKFLOW_TASK_SLOTS),
        reuseV8Context: env.WORKER_REUSE_V8_CONTEXT === undefined ? undefined : env.WORKER_REUSE_V8_CONTEXT === 'true',
      }),
      /** Worker Deployment Versioning: connections are pinned to the build they started on. */
      deployment: Object.freeze({
        ...deploymentSection(env, env.TEMPORAL_TASK_QUEUE, ctx),
        buildId: env.WORKER_BUILD_ID,
        becomeCurrent: env.WORKER_BECOME_CURRENT,
      }),
      activities: Object.freeze({ maxConcurrent: env.WORKER_MAX_CONCURRENT_ACTIVITIES }),
      /** The task queues this worker polls (the service queue, the unattended pool's, or both) and its CPU priority. */
      pool: workerPoolSection(env),
      /** Resource-based slot tuning (memory and CPU target fractions); fixed slot counts unless set. */
      resourceTuner: env.WORKER_RESOURCE_TUNER,
      logLevel: env.LOG_LEVEL,
      /** Days a tenant keeps a login after its last retrieval, by customer id ('*': any other); empty: off. */
      retentionDays: env.RETENTION_DAYS,
      /** The `connections` Nexus service: tenant and boundary key file by endpoint; empty: off. */
      nexus: Object.freeze({ endpointTenants: env.NEXUS_ENDPOINT_TENANTS, keyFiles: env.NEXUS_ENDPOINT_KEY_FILES }),
      /** Completion callbacks: allowed URLs, secrets and result opt-ins by tenant; empty: off. */
      callbacks: callbackSection(env, ctx),
      /** Priority of the retention timers and forgets the worker starts, and the tenants' weights. */
      priority: prioritySection(env),
      /** The fleet's request budget toward the service, applied as Temporal task-queue limits at start; undefined: none. */
      budget: budgetSection(env, ctx),
      ...payloadSections(env, ctx),
      /** PAYLOAD_UNBOUND=refuse: a sealed payload bound to no workflow is refused for a workflow (codec/payload-binding.ts). */
      refuseUnboundPayloads: env.PAYLOAD_UNBOUND === 'refuse',
      ...tracingSection(env, 'aggregation-connections-worker'),
    }),
  );

/** The queues this worker polls (one when the unattended pool is shared: its queue is the service queue), its CPU priority, and whether unattended starts wait for room. */
function workerPoolSection(env: {
  readonly TEMPORAL_TASK_QUEUE: string;
  readonly UNATTENDED_POOL: 'shared' | 'separate';
  readonly UNATTENDED_ADMISSION: 'off' | 'window';
  readonly WORKER_POOL: 'all' | 'service' | 'unattended';
  readonly WORKER_NICE: number;
  readonly WORKER_UNATTENDED_NICE: number;
}) {
  const pools = poolsSection(env, env.TEMPORAL_TASK_QUEUE);
  const polled =
    env.WORKER_POOL === 'service'
      ? [env.TEMPORAL_TASK_QUEUE]
      : env.WORKER_POOL === 'unattended'
        ? [pools.unattendedTaskQueue]
        : [env.TEMPORAL_TASK_QUEUE, pools.unattendedTaskQueue];
  const taskQueues = Object.freeze([...new Set(polled)]);
  // Only beside the service queue's worker: alone in its process, the pool lowers the whole process (WORKER_NICE).
  const unattendedNice = taskQueues.length > 1 ? env.WORKER_UNATTENDED_NICE : 0;
  return Object.freeze({ ...pools, taskQueues, nice: env.WORKER_NICE, unattendedNice });
}

export type WorkerConfig = z.output<typeof WorkerEnv>;

export function loadWorkerConfig(env?: NodeJS.ProcessEnv): WorkerConfig {
  return parseEnv(WorkerEnv, env);
}
