/**
 * `npm run keys:check`: proves that rotating the payload key of the vault-transit provider loses and
 * garbles nothing while connections are in flight, through a worker SIGKILL and a restart of the KMS.
 *
 * Starts OpenBao as production runs it (scripts/lib/openbao-server.ts: config file, integrated
 * storage, one unseal key share, a file audit device), the dev server on a SQLite file, the sandbox
 * behind the chaos proxy and worker processes with PAYLOAD_KEY_PROVIDER=vault-transit and a short
 * data-key lifetime (the pipeline client the same); drives the connections of flows.ts with the chaos
 * driver, holding every answer back; once each is in flight (awaiting an answer, polling, or done and
 * in its retention timer) it rotates the transit key, waits one data-key lifetime, SIGKILLs a worker,
 * stops OpenBao for a while and starts and unseals it again, and only then lets the answers go. When
 * every connection has ended, each is judged by the chaos checks, every history on the task queue is
 * decoded through the client's data converter, and the KMS calls are counted from the audit log. Last
 * line:
 *   keys-check: <n> connections, <n> completed as expected, <n> lost, <n> undecodable, <n> KMS calls, key versions <list>
 * Exit 0 only with every connection completed as expected, 0 lost, 0 undecodable and payloads of the
 * versions before and after the rotation both present; 2 for a bad argument; 1 otherwise.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { encryptionCodecFor } from '../../src/codec/data-converter.js';
import { createSandbox } from '../../sandbox/server.js';
import { OpenBaoServer, transitProcessEnv, workerPolicy } from '../lib/openbao-server.js';
import { startDevServer } from '../chaos/dev-server-start.js';
import type { DriveRecord } from '../chaos/driver.js';
import { buildWorkflowBundle, driveAll, judgeAll, releaseRehearsal, startFleet, type Fleet, type RehearsalResources } from '../chaos/fleet.js';
import { fetchScenarioListing, type ConnectionPlan, type RunTiming } from '../chaos/flows.js';
import { fetchHistories, listExecutions } from '../chaos/histories.js';
import { track } from '../chaos/processes.js';
import { runRehearsal } from '../lib/rehearsal-main.js';
import { startChaosProxy } from '../chaos/proxy.js';
import { seconds, Timeline } from '../chaos/timeline.js';
import { decodeHistories, type DecodeReport } from './decode.js';
import { countKmsCalls } from './kms-calls.js';
import { planKeysCheck, POLL_INTERVAL_MS } from './flows.js';
import { KeysCheckArgumentError, parseKeysCheckArgs, USAGE, type KeysCheckOptions } from './options.js';

const TRANSIT_MOUNT = 'transit';
const TRANSIT_KEY = 'aggregation-payloads';
/** Connections reach their in-flight stage within this; past it the rotation goes ahead and the report says how many had. */
const IN_FLIGHT_WAIT_MS = 90_000;
const RETENTION_DAYS = 30;
const SHOWN_PROBLEMS = 10;

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

interface Resources extends RehearsalResources {
  openbao?: OpenBaoServer;
}

function release(resources: Resources): Promise<void> {
  return releaseRehearsal('keys-check', log, resources, [() => resources.openbao?.stop()]);
}

/** Where each connection stands, read once: the stage it is held in for the rotation, or undefined. */
async function stageOf(fleet: Fleet, plan: ConnectionPlan): Promise<string | undefined> {
  try {
    const state = await fleet.connections.getState(plan.key);
    if (plan.flow.group === 'challenge') return state.status === 'AwaitingAnswer' ? 'awaiting an answer' : undefined;
    if (plan.flow.group === 'pending' || plan.flow.group === 'cached')
      return state.pending ? 'polling' : state.status === 'Completed' ? 'completed already' : undefined;
    return state.status === 'Completed' ? 'completed, retention timer waiting' : undefined;
  } catch {
    // Not started yet, or no worker to answer the query this moment.
    return undefined;
  }
}

/** Waits until every connection is in its stage (or the wait ends); the stages counted. */
async function awaitInFlight(fleet: Fleet, plans: readonly ConnectionPlan[], timeline: Timeline): Promise<void> {
  const until = Date.now() + IN_FLIGHT_WAIT_MS;
  let stages: (string | undefined)[];
  do {
    stages = await Promise.all(plans.map((plan) => stageOf(fleet, plan)));
    if (stages.every((stage) => stage !== undefined)) break;
    await delay(500);
  } while (Date.now() < until);
  const counts = new Map<string, number>();
  for (const stage of stages) counts.set(stage ?? 'not yet in its stage', (counts.get(stage ?? 'not yet in its stage') ?? 0) + 1);
  timeline.mark(`in flight: ${[...counts].map(([stage, count]) => `${count} ${stage}`).join(', ')}`);
}

async function runningRetentionTimers(fleet: Fleet): Promise<number> {
  const { count } = await fleet.client.workflow.count(
    `TaskQueue = '${fleet.taskQueue}' AND WorkflowType = 'loginRetentionWorkflow' AND ExecutionStatus = 'Running'`,
  );
  return count;
}

/** Why workers exited on their own: the error of each "Worker failed" line in the workers' logs, counted. */
async function workerFailures(runDir: string): Promise<Map<string, number>> {
  const causes = new Map<string, number>();
  for (const name of (await readdir(runDir)).filter((file) => /^worker-.*\.log$/.test(file))) {
    for (const line of (await readFile(join(runDir, name), 'utf8')).split('\n')) {
      if (!line.includes('"Worker failed"')) continue;
      let cause = 'unparsed log line';
      try {
        const error = (JSON.parse(line) as { error?: { name?: string; operation?: string; message?: string } }).error;
        cause = `${error?.name ?? 'Error'}${error?.operation ? ` (${error.operation})` : ''}`;
      } catch {
        // Counted as unparsed.
      }
      causes.set(cause, (causes.get(cause) ?? 0) + 1);
    }
  }
  return causes;
}

function lostOf(records: readonly DriveRecord[]): DriveRecord[] {
  return records.filter((record) => record.end.kind !== 'completed' && record.end.kind !== 'failed');
}

async function run(options: KeysCheckOptions, resources: Resources): Promise<boolean> {
  const timeline = new Timeline();
  const runTag = Date.now().toString(36).slice(-8);
  const runDir = await mkdtemp(join(tmpdir(), 'aggregation-keys-check-'));
  resources.runDir = runDir;
  log(
    `keys-check: ${options.connections} connections, ${options.workers} worker(s), data keys live ${options.dataKeyLifetimeS} s; ` +
      `rotation, a worker SIGKILL, OpenBao down ${seconds(options.kmsDownMs)} and restarted, then the answers; deadline +${seconds(options.deadlineMs)}`,
  );
  log(`keys-check: run directory ${runDir}`);

  resources.openbao = await OpenBaoServer.start({ dir: join(runDir, 'openbao'), transitKey: TRANSIT_KEY, track });
  const openbao = resources.openbao;
  // Least privilege: the processes may make and unwrap data keys of this transit key, nothing else.
  const token = await openbao.token('keys-check-processes', workerPolicy(TRANSIT_KEY, TRANSIT_MOUNT));
  const versionBefore = await openbao.latestVersion();
  timeline.mark(
    `openbao up at ${openbao.address} (pid ${openbao.pid}), initialised with one key share and unsealed; transit key ${TRANSIT_KEY} v${versionBefore}`,
  );

  resources.sandbox = await createSandbox({ port: 0 });
  const sandbox = resources.sandbox;
  resources.proxy = await startChaosProxy({ upstream: sandbox.url, replyDelayMs: 0 });
  const proxy = resources.proxy;
  const listing = await fetchScenarioListing(sandbox.url);
  const bundlePath = await buildWorkflowBundle(runDir);
  const { server, serverStartMs } = await startDevServer(runDir, resources, timeline);
  timeline.mark(`dev server up at ${server.address} in ${seconds(serverStartMs)}`);

  const fleet = await startFleet(
    {
      name: 'keys-check',
      runTag,
      runDir,
      bundlePath,
      temporalAddress: server.address,
      workers: options.workers,
      replyDelayMs: 0,
      proxy,
      timeline,
      // Every payload in history (no payload store), so that every one is decoded here.
      payloadEnv: { ...transitProcessEnv(openbao.address, token, TRANSIT_KEY, TRANSIT_MOUNT), PAYLOAD_DATA_KEY_LIFETIME_S: String(options.dataKeyLifetimeS) },
      workerEnv: { RETENTION_DAYS: `*:${RETENTION_DAYS}` },
    },
    resources,
  );

  const plans = planKeysCheck(options.connections, runTag);
  const timing: RunTiming = { pollIntervalMs: POLL_INTERVAL_MS, pollTimeoutMs: options.deadlineMs + 60_000, answerTimeoutMs: options.deadlineMs + 60_000 };
  let releaseAnswers: () => void = () => undefined;
  const answersHeldUntil = new Promise<void>((resolve) => (releaseAnswers = resolve));
  const origin = Date.now();
  const context = {
    connections: fleet.connections,
    client: fleet.client,
    connection: fleet.connection,
    listing,
    sandboxUrl: sandbox.url,
    timing,
    deadline: origin + options.deadlineMs,
    origin,
    answersHeldUntil,
  };
  timeline.mark(`first connection starts (answers held)`);
  let killed = 0;
  const driving = driveAll(context, plans, log, 'keys-check');
  // Awaited below; should a step of the rehearsal throw first, its failure is the one reported.
  driving.catch(() => undefined);

  try {
    await awaitInFlight(fleet, plans, timeline);
    timeline.mark(`${await runningRetentionTimers(fleet)} retention timer(s) waiting`);
    const tenantKeys = (await openbao.tenantKeys()).length;
    const versionAfter = await openbao.rotate();
    timeline.mark(`transit key ${TRANSIT_KEY} rotated: v${versionBefore} -> v${versionAfter}, and its ${tenantKeys} tenant key(s) with it`);
    // New payloads take the new version within one data-key lifetime.
    await delay(options.dataKeyLifetimeS * 1000 + 500);
    const victim = fleet.pool.readyNames()[0];
    if (victim) {
      await fleet.pool.kill(victim, 'mid-flight, after the rotation');
      killed += 1;
    } else timeline.mark('no worker polling to SIGKILL');
    await openbao.stop();
    timeline.mark(`openbao stopped; down for ${seconds(options.kmsDownMs)}`);
    await delay(options.kmsDownMs);
    await openbao.startAgain();
    timeline.mark(`openbao started again on its storage (pid ${openbao.pid}) and unsealed`);
  } finally {
    releaseAnswers();
  }
  timeline.mark('answers released');
  const records = await driving;
  timeline.mark(`every connection ended or passed the deadline`);
  const { outcomes, summary } = await judgeAll(records, sandbox, proxy);
  const lost = lostOf(records);

  const started = records.filter((record) => record.startedAtMs !== undefined).map((record) => record.workflowId);
  const executions = await listExecutions(fleet.client, fleet.taskQueue, started);
  const { histories, failures } = await fetchHistories(fleet.client, executions);
  const codec = encryptionCodecFor(fleet.payload);
  const decoded = await decodeHistories(histories, failures, codec ? [codec] : []);
  timeline.mark(`${decoded.histories} histories decoded through the client's data converter`);
  const kms = await countKmsCalls(openbao.auditLog, TRANSIT_MOUNT, TRANSIT_KEY);
  const versionAfter = await openbao.latestVersion();

  const workers = { killed, unexpectedExits: fleet.pool.unexpectedExits, failedStarts: fleet.pool.failedStarts, causes: await workerFailures(runDir) };
  report({ timeline, outcomes, lost, decoded, kms, versionBefore, versionAfter, workers });
  const versions = [...decoded.keyVersions.keys()];
  const ok =
    summary.completedAsExpected === summary.connections &&
    summary.connections === options.connections &&
    lost.length === 0 &&
    decoded.undecodable.length === 0 &&
    versions.includes(versionBefore) &&
    versions.includes(versionAfter) &&
    // A KMS outage must not stop a worker: it seals on its last data key and waits for a first one before polling.
    workers.unexpectedExits === 0 &&
    workers.causes.size === 0;
  await release(resources);
  if (options.keepLogs || !ok)
    log(`keys-check: logs, OpenBao's storage and audit log and the server's database kept in ${runDir}${options.keepLogs ? '' : ' (the run failed)'}`);
  else await rm(runDir, { recursive: true, force: true });
  log(
    `keys-check: ${summary.connections} connections, ${summary.completedAsExpected} completed as expected, ${lost.length} lost, ${decoded.undecodable.length} undecodable, ` +
      `${kms.datakey + kms.decrypt} KMS calls, key versions ${versions.sort((a, b) => a - b).join(',') || 'none'}`,
  );
  return ok;
}

function report(run: {
  timeline: Timeline;
  outcomes: Awaited<ReturnType<typeof judgeAll>>['outcomes'];
  lost: readonly DriveRecord[];
  decoded: DecodeReport;
  kms: Awaited<ReturnType<typeof countKmsCalls>>;
  versionBefore: number;
  versionAfter: number;
  workers: { killed: number; unexpectedExits: number; failedStarts: number; causes: ReadonlyMap<string, number> };
}): void {
  const { decoded, kms } = run;
  log('Timeline:');
  for (const entry of run.timeline.entries()) log(`  +${seconds(entry.atMs).padStart(7)}  ${entry.text}`);
  const unexpected = run.outcomes.filter((outcome) => outcome.judgement.verdict !== 'expected' || outcome.dataProblems.length > 0);
  log(
    `Connections: ${run.outcomes.length - unexpected.length} of ${run.outcomes.length} completed as expected, ${run.lost.length} lost (still running at the deadline, not found, or never learned)`,
  );
  for (const { record, judgement, dataProblems } of unexpected.slice(0, SHOWN_PROBLEMS)) {
    log(
      `  ${record.workflowId} (${record.plan.flow.name}): ${judgement.verdict}: ${judgement.detail}${dataProblems.length ? `; data: ${dataProblems[0]}` : ''}`,
    );
  }
  const byVersion = [...decoded.keyVersions]
    .sort(([a], [b]) => a - b)
    .map(([version, count]) => `v${version} ${count}`)
    .join(', ');
  log(
    `Histories: ${decoded.histories} decoded through the client's data converter, ${decoded.payloads} payloads (${decoded.encrypted} encrypted: ${byVersion || 'none'}), ${decoded.undecodable.length} undecodable; transit key v${run.versionBefore} before the rotation, v${run.versionAfter} after`,
  );
  for (const problem of decoded.undecodable.slice(0, SHOWN_PROBLEMS)) log(`  ${problem.workflowId} ${problem.where}: ${problem.message}`);
  const { workers } = run;
  const causes = [...workers.causes].map(([cause, count]) => `${cause} ${count}`).join(', ');
  log(
    `Workers: ${workers.killed} SIGKILLed by the rehearsal; ${workers.unexpectedExits} exited on their own after polling and ${workers.failedStarts} before, each replaced` +
      (causes ? `; "Worker failed" in their logs: ${causes}` : ''),
  );
  const perThousand = decoded.encrypted > 0 ? ((kms.datakey + kms.decrypt) / decoded.encrypted) * 1000 : 0;
  log(
    `KMS calls (OpenBao's audit log, every process and this decoding): ${kms.datakey} datakey, ${kms.decrypt} decrypt, ${kms.refused} of them refused; ${perThousand.toFixed(1)} per 1,000 encrypted payloads in history`,
  );
}

runRehearsal({ label: 'keys-check', usage: USAGE, parse: parseKeysCheckArgs, argumentError: KeysCheckArgumentError, run, release }, {});
