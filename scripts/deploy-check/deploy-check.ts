/**
 * `npm run deploy:check`: a deploy of new workflow code, rehearsed on the production stack with
 * Worker Deployment Versioning (what the stages are: scripts/deploy-check/options.ts's USAGE).
 * Exit 0 only when every connection ended where it had to, nothing was stuck, no history failed
 * replay and no retention timer was lost; 2 for a bad argument; 3 when something it needs is missing.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { ConnectionsClient, loadClientConfig } from '../../src/client/index.js';
import { dataConverterFor } from '../../src/codec/data-converter.js';
import { temporalConnectionOptions } from '../../src/temporal/connection.js';
import type { WorkerDeployments } from '../../src/client/deployments.js';
import { retentionWorkflowId } from '../../src/contract/login-keys.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { buildIdOf } from '../../src/worker/deployment.js';
import type { ConnectionInputArgs } from '../../src/contract/connection/connection-input.js';
import { connectionStateQuery } from '../../src/contract/connection/connection-definitions.js';
import { retentionStateQuery, retrievalNoticeSignal } from '../../src/contract/retention/retention-definitions.js';
import { closeEach, buildWorkflowBundle } from '../chaos/fleet.js';
import { answerFor, fetchScenarioListing, scenarioFor, type ListedScenario } from '../chaos/flows.js';
import { WorkerPool } from '../chaos/processes.js';
import { seededRandom } from '../chaos/random.js';
import { seconds, Timeline } from '../chaos/timeline.js';
import { PostgresCluster } from '../prod-check/postgres.js';
import { findServerBinaries, ProdTemporalServer } from '../prod-check/temporal-server.js';
import { runStackHarness } from '../lib/stack-harness.js';
import { DeployCheckArgumentError, parseDeployCheckArgs, USAGE, type DeployCheckOptions } from './options.js';
import { buildV2Bundle } from './v2-build.js';
import {
  connectionProblem,
  passed,
  summarize,
  summaryLine,
  timerProblem,
  type ConnectionObservation,
  type ExpectedBuild,
  type TimerObservation,
} from './verdicts.js';

const CUSTOMER = 'deploy-lender';
const POLL_INTERVAL_MS = 1_000;
/** Mid-poll and large logins stay pending this long: past v2's start, the ramp and the switch. */
const LONG_PENDING_MS = 45_000;
const RAMP_PENDING_MS = 6_000;
const RETENTION_DAYS = 30;
/** Versions drain and their pollers are forgotten in seconds, not Temporal's default minutes. */
const FAST_DEPLOYMENT_CONFIG = {
  'matching.wv.VersionDrainageStatusRefreshInterval': '2s',
  'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '2s',
  'matching.PollerHistoryTTL': '10s',
};
const STAGE_WAIT_MS = 120_000;
const END_WAIT_MS = 240_000;

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

class StageTimeout extends Error {
  override readonly name = 'StageTimeout';
}

interface Resources {
  runDir?: string;
  postgres?: PostgresCluster;
  server?: ProdTemporalServer;
  sandbox?: Sandbox;
  pools: WorkerPool[];
  connection?: Connection;
}

interface Started {
  readonly workflowId: string;
  readonly stage: string;
  readonly expected: ExpectedBuild;
  readonly scenario: ListedScenario;
  readonly products: string[];
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > giveUpAt) throw new StageTimeout(`${what}: not within ${seconds(timeoutMs)}`);
    await delay(250);
  }
}

async function run(options: DeployCheckOptions, resources: Resources): Promise<boolean> {
  const timeline = new Timeline();
  const random = seededRandom(options.seed);
  const binaries = findServerBinaries().binaries!;
  const runDir = await mkdtemp(join(tmpdir(), 'aggregation-deploy-check-'));
  resources.runDir = runDir;
  const runTag = `${Date.now().toString(36)}${options.seed.toString(36)}`.slice(-10);
  const taskQueue = `deploy-check-${runTag}`;
  log(
    `deploy-check: seed ${options.seed}; Temporal server ${binaries.version} on PostgreSQL; ${options.perStage} connection(s) of each kind, ${options.workers} worker(s) per build; run directory ${runDir}`,
  );

  resources.postgres = await PostgresCluster.create(runDir);
  await resources.postgres.start();
  resources.server = await ProdTemporalServer.create({ binaries, postgres: resources.postgres, dir: runDir, timeline, dynamicConfig: FAST_DEPLOYMENT_CONFIG });
  const server = resources.server;
  server.setupSchema();
  await server.start();
  await server.registerNamespace('default');
  timeline.mark(`PostgreSQL and Temporal server ${binaries.version} up at ${server.address}`);
  resources.sandbox = await createSandbox({ port: 0 });
  const sandbox = resources.sandbox;
  const listing = await fetchScenarioListing(sandbox.url);

  // v1 is today's code; v2 a copy with one more activity before retrieval.
  const v1Dir = join(runDir, 'v1');
  await mkdir(v1Dir, { recursive: true });
  const [v1Bundle, v2Bundle] = await Promise.all([buildWorkflowBundle(v1Dir), buildV2Bundle(join(runDir, 'v2'))]);
  const v1 = buildIdOf(await readFile(v1Bundle, 'utf8'));
  const v2 = buildIdOf(await readFile(v2Bundle, 'utf8'));
  const buildName = (buildId: string | undefined) => (buildId === v1 ? 'v1' : buildId === v2 ? 'v2' : buildId);
  timeline.mark(`bundles built: v1 ${v1} (today's code), v2 ${v2} (one more activity before retrieval)`);

  const sharedEnv = {
    TEMPORAL_ADDRESS: server.address,
    TEMPORAL_NAMESPACE: 'default',
    TEMPORAL_TASK_QUEUE: taskQueue,
    PAYLOAD_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    PAYLOAD_ENCRYPTION_KEY_ID: `deploy-check-${runTag}`,
    PAYLOAD_STORE: 'local',
    PAYLOAD_STORE_DIRECTORY: join(runDir, 'payloads'),
  };
  const poolFor = (label: 'v1' | 'v2', bundlePath: string) => {
    const logDir = join(runDir, `${label}-logs-${resources.pools.length}`);
    const pool = new WorkerPool({
      size: options.workers,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        ...sharedEnv,
        WORKER_WORKFLOW_BUNDLE: bundlePath,
        WORKER_METRICS_PORT: '0',
        // A first deploy makes itself current; every later build waits for the operator (this script).
        WORKER_BECOME_CURRENT: 'when-unset',
        RETENTION_DAYS: `${CUSTOMER}:${RETENTION_DAYS}`,
        LOG_LEVEL: 'INFO',
      },
      baseUrlFor: () => sandbox.url,
      logDir,
      timeline,
    });
    resources.pools.push(pool);
    return { pool, logDir };
  };
  const startPool = async (label: 'v1' | 'v2', bundlePath: string) => {
    const { pool, logDir } = poolFor(label, bundlePath);
    await mkdir(logDir, { recursive: true });
    await pool.start();
    timeline.mark(`${options.workers} ${label} worker(s) polling (${pool.readyNames().join(', ')}), logs in ${logDir}`);
    return pool;
  };

  const v1Pool = await startPool('v1', v1Bundle);
  const clientConfig = loadClientConfig(sharedEnv);
  resources.connection = await Connection.connect(await temporalConnectionOptions(clientConfig.temporal));
  const client = new Client({ connection: resources.connection, namespace: clientConfig.temporal.namespace, dataConverter: dataConverterFor(clientConfig) });
  const connections = new ConnectionsClient({ client, taskQueue, address: server.address, deploymentName: clientConfig.deployment.name });
  const deployments = connections.deployments;
  await waitFor('v1 made itself current (first deploy)', STAGE_WAIT_MS, async () => ((await deployments.describe())?.currentBuildId === v1 ? true : undefined));
  timeline.mark(`v1 ${v1} is current: it made itself current as the deployment's first build`);

  const started: Started[] = [];
  let sequence = 0;
  const savedLogin = async (username: string, pendingMs?: number): Promise<string> => {
    const response = await fetch(`${sandbox.url}/sandbox/${CUSTOMER}/logins`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: `${username}`, ...(pendingMs === undefined ? {} : { pendingMs }) }),
    });
    if (!response.ok) throw new Error(`the sandbox refused a saved login for ${username}: HTTP ${response.status}`);
    return ((await response.json()) as { LoginId: string }).LoginId;
  };
  const start = async (stage: string, expected: ExpectedBuild, username: string, session: 'live' | 'cached', pendingMs?: number) => {
    // Taken before any await: concurrent starts must not share a number (and so a business key).
    const number = ++sequence;
    const scenario = scenarioFor(listing, username);
    const timing = { pollIntervalMs: POLL_INTERVAL_MS, pollTimeoutMs: 10 * 60_000, answerTimeoutMs: 10 * 60_000 };
    const input: ConnectionInputArgs = {
      customerId: CUSTOMER,
      session:
        session === 'live'
          ? { kind: 'live', institution: scenario.institution, username: scenario.username, password: scenario.password, save: true }
          : { kind: 'cached', loginId: await savedLogin(username, pendingMs) },
      products: { accountsDetail: {} },
      timing,
    };
    const { workflowId } = await connections.start(`connection-${CUSTOMER}:${stage}-${number}-${runTag}`, input);
    if (started.some((entry) => entry.workflowId === workflowId))
      throw new Error(`two starts gave one connection ${workflowId}: a counting bug of this script`);
    started.push({ workflowId, stage, expected, scenario, products: ['accountsDetail'] });
    return workflowId;
  };
  const stateOf = (workflowId: string) => client.workflow.getHandle(workflowId).query(connectionStateQuery);
  const buildOf = async (workflowId: string) => {
    const info = (await client.workflow.getHandle(workflowId).describe()).raw.workflowExecutionInfo?.versioningInfo;
    return buildName(info?.deploymentVersion?.buildId ?? undefined);
  };

  // ---- v1 at work: retention timers, then connections at every stage ------------------------------
  // Each its own login (pending_ms_<n> with a distinct n), touched by no later connection: its due time must not move.
  const retentionSources = await Promise.all(
    Array.from({ length: options.perStage }, (_, index) => start('retention-source', 'v1', `pending_ms_${index + 1}`, 'cached')),
  );
  await Promise.all(retentionSources.map((workflowId) => client.workflow.getHandle(workflowId).result()));
  const timerIds = [
    ...new Set(await Promise.all(retentionSources.map(async (workflowId) => retentionWorkflowId(CUSTOMER, (await stateOf(workflowId)).loginId ?? '')))),
  ];
  const forgetAtBefore = new Map<string, string | undefined>();
  for (const id of timerIds) {
    forgetAtBefore.set(
      id,
      await waitFor(`retention timer ${id}`, STAGE_WAIT_MS, async () => (await client.workflow.getHandle(id).query(retentionStateQuery)).forgetAt),
    );
  }
  timeline.mark(`${timerIds.length} retention timer(s) pending on v1 (due in ${RETENTION_DAYS} days)`);

  const awaiting = await Promise.all(Array.from({ length: options.perStage }, () => start('awaiting-answer', 'v1', 'security_question', 'live')));
  const midPoll = await Promise.all(Array.from({ length: options.perStage }, () => start('mid-poll', 'v1', `pending_ms_${LONG_PENDING_MS}`, 'cached')));
  const large = await Promise.all(
    Array.from({ length: Math.max(1, Math.floor(options.perStage / 2)) }, () => start('large', 'v1', 'large_20x2000', 'cached', LONG_PENDING_MS)),
  );
  await waitFor('v1 connections at their stages', STAGE_WAIT_MS, async () => {
    const states = await Promise.all([...awaiting, ...midPoll, ...large].map(stateOf));
    return states.every((state) => state.status === 'AwaitingAnswer' || state.pending !== undefined) ? true : undefined;
  });
  timeline.mark(
    `v1 connections in place: ${awaiting.length} awaiting an answer, ${midPoll.length} mid-poll, ${large.length} mid-retrieval of a large login (20 accounts x 2,000 transactions)`,
  );

  // ---- v2 arrives, ramps (a v1 worker dies meanwhile), becomes current ---------------------------
  const v2Pool = await startPool('v2', v2Bundle);
  await waitFor('v2 known to the deployment', STAGE_WAIT_MS, async () =>
    (await deployments.describe())?.versions.some((version) => version.buildId === v2) ? true : undefined,
  );
  const left = (await deployments.describe())?.currentBuildId;
  if (left !== v1) throw new Error(`v2's workers changed the current build to ${buildName(left) ?? 'none'}: a later build must wait for the operator`);
  timeline.mark(`v2 ${v2} polling and not current (v1 stays current until the operator says otherwise)`);

  await deployments.setRamping(v2, options.rampPercent, { waitMs: 30_000 });
  timeline.mark(`v2 ramping at ${options.rampPercent}%`);
  const rampStarts = Array.from({ length: 2 * options.perStage }, () => start('ramp', 'either', `pending_ms_${RAMP_PENDING_MS}`, 'cached'));
  const victim = random.pick(v1Pool.readyNames());
  const kill = await v1Pool.kill(victim, 'SIGKILL during the ramp');
  timeline.mark(`SIGKILLed v1 worker ${victim} during the ramp; replacement ${kill.replacement} ready after ${seconds(kill.replacementReadyMs)}`);
  await Promise.all(rampStarts);

  await deployments.setCurrent(v2, { waitMs: 30_000 });
  timeline.mark('v2 is current (the ramp ended with it)');
  const after = await Promise.all(Array.from({ length: options.perStage }, () => start('after', 'v2', 'no_mfa', 'cached')));

  // ---- v1's connections go on: answers arrive after the switch ------------------------------------
  await Promise.all(
    awaiting.map(async (workflowId) => {
      const record = started.find((entry) => entry.workflowId === workflowId)!;
      for (let attempt = 1; attempt <= 5; attempt += 1) {
        const state = await stateOf(workflowId);
        if (state.status !== 'AwaitingAnswer' || !state.challengeSet) return;
        const responses = answerFor(record.scenario, state.challengeSet.challenges, 'correct', attempt);
        if (!responses) throw new Error(`no listed answer for ${workflowId}'s challenges`);
        await connections.answer(workflowId, { challengeSetId: state.challengeSet.id, responses });
      }
    }),
  );
  timeline.mark(`answered v1's ${awaiting.length} waiting connection(s) after the switch`);

  // ---- retention timers wake on the current build, keeping their due times ----------------------
  const timers: TimerObservation[] = [];
  for (const id of timerIds) {
    const handle = client.workflow.getHandle(id);
    const before = await handle.query(retentionStateQuery);
    // A notice of the same retrieval with the same policy: it wakes the timer and changes nothing.
    await handle.signal(retrievalNoticeSignal, { at: before.lastRetrievalAt ?? new Date(0).toISOString(), days: RETENTION_DAYS });
    const ranOn = await waitFor(`retention timer ${id} on v2`, 30_000, async () => ((await buildOf(id)) === 'v2' ? 'v2' : undefined)).catch(() => buildOf(id));
    const description = await handle.describe();
    const afterState = await handle.query(retentionStateQuery);
    timers.push({
      workflowId: id,
      forgetAtBefore: forgetAtBefore.get(id),
      forgetAtAfter: afterState.forgetAt,
      running: description.status.name === 'RUNNING',
      ranOn,
    });
  }
  timeline.mark(`${timers.length} retention timer(s) woken by a notice after the switch`);

  // ---- v1 drains, is retired; then a rollback to v1 ---------------------------------------------
  const v1Started = started.filter((entry) => entry.expected === 'v1' || entry.stage === 'ramp');
  await Promise.all(v1Started.map((entry) => waitForEnd(client, entry.workflowId, END_WAIT_MS)));
  const drained = await waitFor('v1 drained', STAGE_WAIT_MS, async () => {
    const version = (await deployments.describe())?.versions.find((entry) => entry.buildId === v1);
    return version?.drained && (await deployments.pinnedRunning(v1)) === 0 ? true : undefined;
  }).catch((error: unknown) => {
    if (error instanceof StageTimeout) return false;
    throw error;
  });
  timeline.mark(drained ? 'v1 drained: no connection pinned to it is running' : 'v1 did NOT drain in time');
  await v1Pool.close();
  timeline.mark('v1 workers stopped (SIGTERM)');
  const retired = await retireWhenPollersExpire(deployments, v1);
  timeline.mark(retired === true ? 'v1 retired (deleted from the deployment)' : `v1 could NOT be retired: ${retired}`);

  // The rollback's v1 workers: a fresh pool of the same bundle (the same build id).
  await startPool('v1', v1Bundle);
  await deployments.setCurrent(v1, { waitMs: 60_000 });
  timeline.mark('rollback: v1 is current again (its workers re-registered the build)');
  const rollback = await Promise.all(Array.from({ length: options.perStage }, () => start('rollback', 'v1', 'no_mfa', 'cached')));
  await Promise.all([...after, ...rollback].map((workflowId) => waitForEnd(client, workflowId, END_WAIT_MS)));
  await Promise.all(started.map((entry) => waitForEnd(client, entry.workflowId, END_WAIT_MS)));
  timeline.mark('every connection ended or passed its deadline');

  // ---- judge ------------------------------------------------------------------------------------
  const observations: ConnectionObservation[] = await Promise.all(
    started.map(async (entry) => {
      const handle = client.workflow.getHandle(entry.workflowId);
      const status = (await handle.describe()).status.name;
      const problems: string[] = [];
      if (status === 'COMPLETED') {
        const result = (await handle.result()) as { accountsDetail?: { Accounts?: unknown[] } };
        if (!result.accountsDetail) problems.push('no accounts detail in its result');
      }
      return {
        workflowId: entry.workflowId,
        stage: entry.stage,
        expected: entry.expected,
        status: statusName(status),
        ranOn: await buildOf(entry.workflowId),
        problems,
      };
    }),
  );
  const nondeterminism = await countNondeterminism(client, [...started.map((entry) => entry.workflowId), ...timerIds]);
  const lostTimers = timers.filter((timer) => timerProblem(timer, 'v2') !== undefined);
  const summary = summarize(observations, nondeterminism.count, lostTimers.length);

  log('');
  log('Timeline');
  for (const entry of timeline.entries()) log(`  +${seconds(entry.atMs).padStart(7)}  ${entry.text}`);
  log('');
  log('Connections by stage (where they ran)');
  for (const stage of [...new Set(observations.map((observation) => observation.stage))]) {
    const ofStage = observations.filter((observation) => observation.stage === stage);
    const where = ['v1', 'v2'].map((build) => `${ofStage.filter((observation) => observation.ranOn === build).length} on ${build}`).join(', ');
    const bad = ofStage.filter((observation) => connectionProblem(observation) !== undefined).length;
    log(`  ${stage.padEnd(17)} ${String(ofStage.length).padStart(3)}  ${where}${bad ? `, ${bad} NOT as expected` : ''}`);
  }
  for (const observation of observations) {
    const problem = connectionProblem(observation);
    if (problem) log(`  ${observation.workflowId} (${observation.stage}): ${problem}`);
  }
  for (const timer of timers) {
    const problem = timerProblem(timer, 'v2');
    log(`  retention ${timer.workflowId}: ${problem ? `LOST: ${problem}` : `on ${timer.ranOn ?? '?'}, due ${timer.forgetAtAfter ?? '?'} as before`}`);
  }
  for (const failure of nondeterminism.failures) log(`  nondeterminism: ${failure}`);
  log(
    `Deployment: v1 ${drained ? 'drained' : 'NOT drained'}, ${retired === true ? 'retired' : 'NOT retired'}; rollback to v1 ${rollback.length} connection(s)`,
  );
  const ok = passed(summary) && drained && retired === true && v2Pool.unexpectedExits === 0;

  await release(resources);
  if (options.keepLogs || !ok) log(`deploy-check: logs, bundles and the PostgreSQL data kept in ${runDir}${options.keepLogs ? '' : ' (the run failed)'}`);
  else await rm(runDir, { recursive: true, force: true });
  log(summaryLine(summary));
  return ok;
}

function statusName(name: string): string {
  return name === 'RUNNING' ? 'Running' : name.charAt(0) + name.slice(1).toLowerCase();
}

async function waitForEnd(client: Client, workflowId: string, timeoutMs: number): Promise<void> {
  await Promise.race([
    client.workflow
      .getHandle(workflowId)
      .result()
      .catch(() => undefined),
    delay(timeoutMs),
  ]);
}

/** Retiring is refused while the version's pollers are remembered (PollerHistoryTTL, 10 s here): ask until then. */
async function retireWhenPollersExpire(deployments: WorkerDeployments, buildId: string): Promise<true | string> {
  let last = '';
  for (const giveUpAt = Date.now() + 90_000; Date.now() < giveUpAt; await delay(2_000)) {
    try {
      await deployments.retire(buildId);
      return true;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
  }
  return last;
}

const NON_DETERMINISTIC = proto.temporal.api.enums.v1.WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR;

/** Workflow tasks that failed with a nondeterminism error, over every history of the run. */
async function countNondeterminism(client: Client, workflowIds: readonly string[]): Promise<{ count: number; failures: string[] }> {
  const failures: string[] = [];
  for (const workflowId of workflowIds) {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    for (const event of history.events ?? []) {
      const failed = event.workflowTaskFailedEventAttributes;
      if (failed?.cause === NON_DETERMINISTIC) failures.push(`${workflowId} event ${String(event.eventId)}`);
    }
  }
  return { count: failures.length, failures };
}

async function release(resources: Resources): Promise<void> {
  await closeEach('deploy-check', log, [
    ...resources.pools.map((pool) => () => pool.close()),
    () => resources.connection?.close(),
    () => resources.server?.close(),
    () => resources.postgres?.stop(),
    () => resources.sandbox?.close(),
  ]);
  resources.pools = [];
}

runStackHarness({
  name: 'deploy-check',
  usage: USAGE,
  parse: parseDeployCheckArgs,
  isArgumentError: (error): error is DeployCheckArgumentError => error instanceof DeployCheckArgumentError,
  held: { pools: [] },
  run,
  release,
});
