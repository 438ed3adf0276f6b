/**
 * `npm run prod:check`: the production stack, proven on this machine.
 *
 * PostgreSQL (Debian's, a throwaway cluster in the run directory) as persistence and visibility, the
 * Temporal server built from go.temporal.io/server (schema set up and migrated with its sql tool,
 * `default` namespace and our search attributes registered), the sandbox behind the chaos run's
 * counting proxy, and worker processes on one task queue. Drives every flow of scripts/chaos/flows.ts
 * through the pipeline client, then, while connections run: SIGKILLs one worker, SIGTERMs another
 * (it must drain: every request it had in flight is answered to it, and it exits 0), restarts the
 * Temporal server once. Checks each connection's end and data as the chaos run does, prints each
 * worker's share of the work and ends with one line:
 *   prod-check: <n> connections, <n> completed as expected, <n> unexpected failures, <n> stuck, <n> duplicate answers, <n> data mismatches
 * With --tls the frontend serves mutual TLS (scripts/prod-check/tls.ts makes a throwaway CA and the
 * certificates): the workers and the driver connect with the TEMPORAL_TLS_* variables a user sets, and
 * plain TCP, no client certificate, another CA and another server name must each be refused with a
 * message naming what to fix (scripts/prod-check/tls-refusals.ts). With --authorization (and TLS) the
 * server checks a JWT on every call: the fleet holds short-lived tokens a sidecar renews through
 * TEMPORAL_API_KEY_FILE (token-sidecar.ts), and tokens without the namespace's role, expired, of
 * another audience or signed by an unpublished key are refused (authorization-refusals.ts).
 * Exit 0 only when nothing was lost, failed, stuck, duplicated or wrong, the drain held and (--tls,
 * --authorization) every refusal happened and every renewal was written; 2 for a bad argument; 3 when something it needs is missing (it says what
 * to run); 1 otherwise.
 */
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Connection } from '@temporalio/client';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { buildWorkflowBundle, closeEach, driveAll, judgeAll, startFleet } from '../chaos/fleet.js';
import { fetchScenarioListing, FLOWS, planConnections, type RunTiming } from '../chaos/flows.js';
import { ChaosArgumentError, defaultDeadlineMs } from '../chaos/options.js';
import { killAllChildren, type TerminateRecord, type WorkerPool } from '../chaos/processes.js';
import { startChaosProxy, type ChaosProxy } from '../chaos/proxy.js';
import { seededRandom, type Random } from '../chaos/random.js';
import { passed, renderReport, summaryLine } from '../chaos/report.js';
import type { ChaosRecord, ServerRestartRecord } from '../chaos/schedule.js';
import { seconds, Timeline } from '../chaos/timeline.js';
import { PROJECT_ROOT } from '../lib/temporal-binaries.js';
import { parseProdCheckArgs, USAGE, type ProdCheckOptions } from './options.js';
import { POSTGRES_INSTALL_HINT, PostgresCluster, postgresBinDir } from './postgres.js';
import { renderStrandedTasks, StrandedTaskSweeper } from './stranded-tasks.js';
import { findServerBinaries, ProdTemporalServer, PROVISION_HINT, type ServerBinaries } from './temporal-server.js';
import { createPki, hasOpenssl, OPENSSL_INSTALL_HINT, TLS_SERVER_NAME } from './tls.js';
import { proveRefusals, type Refusal } from './tls-refusals.js';
import { proveAuthorizationRefusals } from './authorization-refusals.js';
import { TokenSidecar } from './token-sidecar.js';
import { startTokenProvider, type TokenProvider } from '../lib/jwt-token-provider.js';
import type { ApiKeyFileWatch } from '../../src/temporal/api-key-file.js';

const POLL_INTERVAL_MS = 1_000;
const START_STEP_MS = 300;
const MAX_START_SPREAD_MS = 60_000;
/** The chaos happens at these fractions of the start spread, one after the other. */
const KILL_AT = 0.25;
const TERM_AT = 0.5;
const RESTART_AT = 0.75;

/** Upgrades (in place of the restart) at even points from RESTART_AT to the end of the start spread. */
function upgradeAt(index: number, count: number): number {
  return count === 1 ? RESTART_AT : RESTART_AT + ((1 - RESTART_AT) * index) / (count - 1);
}
/** The SIGTERM waits this long for a worker with an Authorize answer reply in flight (then takes any). */
const TERM_TARGET_WAIT_MS = 10_000;
const DRAIN_GRACE_MS = 60_000;
/** Before the SIGTERM and the server's step, how long to wait for another worker to poll. */
const POLLING_WAIT_MS = 30_000;

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

class MissingPrerequisite extends Error {
  override readonly name = 'MissingPrerequisite';
}

interface Resources {
  runDir?: string;
  tokens?: TokenProvider;
  sidecar?: TokenSidecar;
  tokenRenewal?: ApiKeyFileWatch | undefined;
  postgres?: PostgresCluster;
  server?: ProdTemporalServer;
  sandbox?: Sandbox;
  proxy?: ChaosProxy;
  pool?: WorkerPool;
  connection?: Connection;
}

async function release(resources: Resources): Promise<void> {
  await closeEach('prod-check', log, [
    () => resources.sidecar?.stop(),
    () => Promise.resolve(resources.tokenRenewal?.stop()),
    () => resources.pool?.close(),
    () => resources.connection?.close(),
    () => resources.server?.close(),
    () => resources.postgres?.stop(),
    () => resources.proxy?.close(),
    () => resources.sandbox?.close(),
    () => resources.tokens?.close(),
  ]);
}

/** Each release's server binaries and schema, provisioned when missing and Go is there; else what to run. */
function provide(options: ProdCheckOptions): ServerBinaries[] {
  if (!postgresBinDir()) throw new MissingPrerequisite(POSTGRES_INSTALL_HINT);
  if (options.tls && !hasOpenssl()) throw new MissingPrerequisite(OPENSSL_INSTALL_HINT);
  const findAll = () => options.serverReleases.map((release) => findServerBinaries(release));
  let found = findAll();
  let missing = found.flatMap((release) => release.missing);
  if (missing.length > 0) {
    const hasGo = spawnSync('go', ['version'], { stdio: 'ignore' }).status === 0;
    if (!hasGo) throw new MissingPrerequisite(`${missing.join('; ')}: ${PROVISION_HINT} (it needs Go ≥ 1.23)`);
    for (const release of options.serverReleases) {
      if (findServerBinaries(release).binaries) continue;
      log(`prod-check: no server ${release} yet: running bash scripts/provision-temporal.sh server ${release} (about 4 minutes, once)`);
      const built = spawnSync('bash', [join(PROJECT_ROOT, 'scripts', 'provision-temporal.sh'), 'server', release], { stdio: ['ignore', 'inherit', 'inherit'] });
      if (built.status !== 0) throw new MissingPrerequisite(`provisioning server ${release} failed (exit ${built.status}); ${PROVISION_HINT}`);
    }
    found = findAll();
    missing = found.flatMap((release) => release.missing);
    if (missing.length > 0) throw new MissingPrerequisite(`provisioning left ${missing.join('; ')}; ${PROVISION_HINT}`);
  }
  return found.map((release) => release.binaries!);
}

interface DrainRecord extends TerminateRecord {
  readonly atMs: number;
  /** Requests it had in flight at the proxy when it got SIGTERM (answer replies held among them). */
  readonly inFlightAtSignal: number;
  readonly heldAnswersAtSignal: number;
  /** Of its requests, the ones whose reply found it gone (it had stopped waiting). */
  readonly abandoned: number;
  readonly ok: boolean;
}

interface Chaos {
  readonly record: ChaosRecord;
  readonly drain?: DrainRecord | undefined;
}

/** The time over which the connections start, a step apart. */
function spreadMsFor(connections: number): number {
  return Math.min(MAX_START_SPREAD_MS, START_STEP_MS * Math.max(0, connections - 1));
}

/**
 * SIGKILL one worker, SIGTERM another (drain), restart the server: in that order, at fixed points of
 * the start spread; upgrades instead of the restart keep their own points, beside the workers' steps.
 * The SIGTERM and the server's step wait for another worker to poll, never for a replacement to
 * start; the replacements are awaited at the end.
 */
async function runChaos(input: {
  pool: WorkerPool;
  proxy: ChaosProxy;
  server: ProdTemporalServer;
  /** Releases to upgrade the server to, in order, in place of the restart (none: a plain restart). */
  upgrades: readonly ServerBinaries[];
  timeline: Timeline;
  random: Random;
  origin: number;
  spreadMs: number;
  signal: AbortSignal;
}): Promise<Chaos> {
  const { pool, proxy, server, upgrades, timeline, random, origin, spreadMs, signal } = input;
  const kills: ChaosRecord['kills'][number][] = [];
  const errors: string[] = [];
  let restart: ServerRestartRecord | undefined;
  let restartSkipped: string | undefined;
  let drain: DrainRecord | undefined;
  const replacements: Promise<unknown>[] = [];
  const until = async (fraction: number) => {
    const wait = origin + fraction * spreadMs - Date.now();
    if (wait > 0) await delay(wait, undefined, { signal }).catch(() => undefined);
    return !signal.aborted;
  };
  // Nor is the server's step taken with no worker polling (see the SIGTERM below).
  const workerPolling = async () => {
    const pollingBy = Date.now() + POLLING_WAIT_MS;
    while (pool.readyNames().length === 0 && Date.now() < pollingBy && !signal.aborted) await delay(100);
  };
  // Upgrades keep their own time, beside the workers' SIGKILL and SIGTERM: a replacement worker takes
  // 10 to 25 s to start on a loaded machine, and waiting for it let every connection end first.
  const upgrading = (async () => {
    for (const [index, binaries] of upgrades.entries()) {
      if (!(await until(upgradeAt(index, upgrades.length)))) {
        errors.push(`the upgrade to ${binaries.version} did not run: the run ended first`);
        return;
      }
      await workerPolling();
      const atMs = timeline.now();
      timeline.mark(`Temporal server: upgrading ${server.version} → ${binaries.version} (SIGTERM)`);
      try {
        const upgrade = await server.upgradeTo(binaries);
        restart ??= { atMs, stopMs: upgrade.stopMs, forced: upgrade.forced, startMs: upgrade.startMs };
      } catch (error) {
        errors.push(`the upgrade to ${binaries.version} failed: ${error instanceof Error ? error.message : String(error)}`);
        return;
      }
    }
  })();

  if (await until(KILL_AT)) {
    const victim = random.pick(pool.readyNames());
    const atMs = timeline.now();
    try {
      const inWindow = (proxy.heldAnswers().get(victim) ?? 0) > 0;
      const { replacementReady, ...record } = await pool.killAndReplace(victim, `${proxy.inFlight().get(victim) ?? 0} request(s) in flight`);
      replacements.push(replacementReady);
      kills.push({ ...record, atMs, inWindow });
    } catch (error) {
      errors.push(`SIGKILL ${victim}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  if (await until(TERM_AT)) {
    // A fleet under a rolling deploy keeps a worker polling: SIGTERM one only while another polls.
    // Workflow tasks scheduled while no worker polled at all were never delivered on 1.31.2, not
    // even to the workers that came back, nor after the upgrade (docs/reliability.md).
    const anotherBy = Date.now() + POLLING_WAIT_MS;
    while (pool.readyNames().length < 2 && Date.now() < anotherBy && !signal.aborted) await delay(100);
    // Best proof of a drain: a worker whose Authorize answer the service already acted on.
    const ready = new Set(pool.readyNames());
    const holders = (await proxy.answerHolders(TERM_TARGET_WAIT_MS, signal)).filter((name) => ready.has(name));
    const busy = [...proxy.inFlight()].filter(([name, count]) => count > 0 && ready.has(name)).map(([name]) => name);
    const candidates = holders.length > 0 ? holders : busy.length > 0 ? busy : [...ready];
    const victim = random.pick(candidates);
    const before = proxy.stats().abandonedByClient.get(victim) ?? 0;
    const inFlightAtSignal = proxy.inFlight().get(victim) ?? 0;
    const heldAnswersAtSignal = proxy.heldAnswers().get(victim) ?? 0;
    const atMs = timeline.now();
    try {
      const { replacementReady, ...record } = await pool.terminateAndReplace(victim, DRAIN_GRACE_MS);
      replacements.push(replacementReady);
      // A reply still held for it is written after the hold: let the proxy finish what it owed.
      while ((proxy.inFlight().get(victim) ?? 0) > 0) await delay(100);
      const abandoned = (proxy.stats().abandonedByClient.get(victim) ?? 0) - before;
      const ok = record.exit === 'code 0' && !record.forced && abandoned === 0;
      drain = { ...record, atMs, inFlightAtSignal, heldAnswersAtSignal, abandoned, ok };
      timeline.mark(
        `drain of ${victim}: ${inFlightAtSignal} request(s) in flight at SIGTERM (${heldAnswersAtSignal} held answer repl${heldAnswersAtSignal === 1 ? 'y' : 'ies'}), ` +
          `${abandoned} abandoned, exit ${record.exit} after ${seconds(record.drainMs)}: ${ok ? 'drained' : 'NOT DRAINED'}`,
      );
    } catch (error) {
      errors.push(`SIGTERM ${victim}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  if (upgrades.length === 0) {
    await workerPolling();
    if (await until(RESTART_AT)) {
      const atMs = timeline.now();
      timeline.mark('Temporal server: stopping (SIGTERM)');
      try {
        restart = { atMs, ...(await server.restart('SIGTERM')) };
      } catch (error) {
        errors.push(`Temporal server restart failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    } else restartSkipped = 'every connection ended before the planned restart';
  }
  await upgrading;
  await Promise.all(replacements);
  return { record: { kills, restart, restartSkipped, errors }, drain };
}

async function run(options: ProdCheckOptions, releases: readonly ServerBinaries[], resources: Resources): Promise<boolean> {
  const [binaries, ...upgrades] = releases as [ServerBinaries, ...ServerBinaries[]];
  const serverLine =
    upgrades.length === 0 ? `Temporal server ${binaries.version}` : `Temporal server ${releases.map((release) => release.version).join(' → ')}`;
  const restartLine =
    upgrades.length === 0
      ? `server restart at +${seconds(RESTART_AT * spreadMsFor(options.connections))}`
      : `in place of the restart, upgrades to ${upgrades.map((release, index) => `${release.version} at +${seconds(upgradeAt(index, upgrades.length) * spreadMsFor(options.connections))}`).join(', ')}`;
  const timeline = new Timeline();
  const runTag = `${Date.now().toString(36)}${options.seed.toString(36)}`.slice(-10);
  const spreadMs = spreadMsFor(options.connections);
  // Activities orphaned by the SIGKILL wait for their timeout (up to 90 s) before a retry.
  const deadlineMs = options.deadlineMs ?? defaultDeadlineMs(spreadMs, options.connections, options.replyDelayMs);
  const runDir = await mkdtemp(join(tmpdir(), 'aggregation-prod-check-'));
  resources.runDir = runDir;
  const header =
    `prod-check: seed ${options.seed}; ${serverLine} on PostgreSQL; ${options.connections} connections over ${FLOWS.length} flows, started over ${seconds(spreadMs)}; ` +
    `${options.workers} workers on one task queue; ${options.tls ? 'frontend over mutual TLS (throwaway CA, client certificates required); ' : ''}` +
    `${options.authorization ? `every call checked by the server's JWT authorizer (tokens of ${options.tokenTtlS} s renewed every ${seconds((options.tokenTtlS * 1000) / 3)}); ` : ''}Authorize replies held ${options.replyDelayMs} ms; ` +
    (options.noChaos
      ? 'no kill, no SIGTERM, no restart; '
      : `SIGKILL one worker at +${seconds(KILL_AT * spreadMs)}, SIGTERM another at +${seconds(TERM_AT * spreadMs)}, ${restartLine}; `) +
    `deadline +${seconds(deadlineMs)}`;
  log(header);
  log(`prod-check: run directory ${runDir}`);

  resources.postgres = await PostgresCluster.create(runDir);
  const postgres = resources.postgres;
  await postgres.start();
  timeline.mark(`PostgreSQL up on ${postgres.host}:${postgres.port} (socket in ${postgres.dir})`);

  const pki = options.tls ? createPki(runDir) : undefined;
  if (pki) timeline.mark(`throwaway CA, server certificate (${TLS_SERVER_NAME}, 127.0.0.1) and client certificates made with openssl in ${pki.dir}`);

  // --authorization: the provider's keys served as a JWKS; this script's own calls carry an admin token.
  const tokens = options.authorization ? (resources.tokens = await startTokenProvider()) : undefined;
  const authorization = tokens
    ? { jwksUri: tokens.jwksUri, audience: tokens.audience, adminToken: await tokens.token(['temporal-system:admin'], { expiresIn: '12h' }) }
    : undefined;
  if (tokens) timeline.mark(`token provider: JWKS at ${tokens.jwksUri}, audience ${tokens.audience}`);
  resources.server = await ProdTemporalServer.create({
    binaries,
    postgres,
    dir: runDir,
    timeline,
    ...(pki ? { tls: pki } : {}),
    ...(authorization ? { authorization } : {}),
  });
  const server = resources.server;
  const versions = server.setupSchema();
  timeline.mark(`schema set up and migrated with temporal-sql-tool: ${versions}`);
  const startMs = await server.start();
  timeline.mark(
    `Temporal server ${binaries.version} (frontend, history, matching, worker) up at ${server.address}${pki ? ' over mutual TLS' : ''} in ${seconds(startMs)}`,
  );
  const attributes = await server.registerNamespace('default');
  timeline.mark(`namespace default registered; search attributes ${attributes}`);

  resources.sandbox = await createSandbox({ port: 0 });
  const sandbox = resources.sandbox;
  resources.proxy = await startChaosProxy({ upstream: sandbox.url, replyDelayMs: options.replyDelayMs });
  const proxy = resources.proxy;
  const listing = await fetchScenarioListing(sandbox.url);
  timeline.mark(`sandbox ${sandbox.url}, proxy ${proxy.url}`);

  // The refusals mostly wait on handshakes: they run while the bundle builds.
  // The variables a user sets for a self-hosted cluster with a private CA and client certificates.
  const tlsEnv = pki
    ? {
        TEMPORAL_TLS_CA_PATH: pki.caCert,
        TEMPORAL_TLS_SERVER_NAME: TLS_SERVER_NAME,
        TEMPORAL_TLS_CERT_PATH: pki.client.cert,
        TEMPORAL_TLS_KEY_PATH: pki.client.key,
      }
    : undefined;
  const [bundlePath, refusals, authorizationRefusals] = await Promise.all([
    buildWorkflowBundle(runDir),
    pki ? proveRefusals(server.address, pki) : Promise.resolve<Refusal[]>([]),
    tokens && tlsEnv ? proveAuthorizationRefusals(server.address, tlsEnv, tokens) : Promise.resolve<Refusal[]>([]),
  ]);
  timeline.mark('workflow bundle built');
  if (pki) timeline.mark(`mutual TLS: ${refusals.filter((refusal) => refusal.ok).length} of ${refusals.length} refusals as expected (see below)`);
  if (tokens)
    timeline.mark(
      `authorization: ${authorizationRefusals.filter((refusal) => refusal.ok).length} of ${authorizationRefusals.length} refusals as expected (see below)`,
    );

  // --authorization: the fleet's token in a file a sidecar renews, read through TEMPORAL_API_KEY_FILE.
  if (tokens)
    resources.sidecar = await TokenSidecar.start(join(runDir, 'temporal-token'), tokens, {
      permissions: ['default:write'],
      ttlS: options.tokenTtlS,
      everyMs: (options.tokenTtlS * 1000) / 3,
    });
  const sidecar = resources.sidecar;
  const temporalEnv = tlsEnv && sidecar ? { ...tlsEnv, TEMPORAL_API_KEY_FILE: sidecar.path, TEMPORAL_API_KEY_FILE_RECHECK_MS: '1000' } : tlsEnv;
  const { pool, connection, client, connections } = await startFleet(
    {
      name: 'prod-check',
      runTag,
      runDir,
      bundlePath,
      temporalAddress: server.address,
      ...(temporalEnv ? { temporalEnv } : {}),
      workers: options.workers,
      replyDelayMs: options.replyDelayMs,
      proxy,
      timeline,
    },
    resources,
  );

  const plans = planConnections(options.connections, runTag, spreadMs, seededRandom(options.seed));
  const timing: RunTiming = { pollIntervalMs: POLL_INTERVAL_MS, pollTimeoutMs: deadlineMs + 60_000, answerTimeoutMs: deadlineMs + 60_000 };
  const origin = Date.now();
  const deadline = origin + deadlineMs;
  timeline.mark(`first connection starts (deadline +${seconds(deadlineMs)} from here)`);

  const abort = new AbortController();
  const chaosDone: Promise<Chaos> = options.noChaos
    ? Promise.resolve({ record: { kills: [], restartSkipped: 'not asked for (--no-chaos)', errors: [] } })
    : runChaos({ pool, proxy, server, upgrades, timeline, random: seededRandom(options.seed ^ 0x9e3779b9), origin, spreadMs, signal: abort.signal });
  // The production release's tdbg: every path of this run ends on that release.
  const tdbg = releases.at(-1)!.tdbg!;
  const sweeper = new StrandedTaskSweeper({
    connection,
    namespace: 'default',
    // Behind the authorizer tdbg has no token: it reaches the internal frontend, as the server's own services do.
    address: server.internalAddress ?? server.address,
    tdbg,
    ...(pki && !server.internalAddress ? { pki, tlsServerName: TLS_SERVER_NAME } : {}),
    workersPolling: () => pool.readyNames().length > 0,
    timeline,
    signal: abort.signal,
  });

  const context = { connections, client, connection, listing, sandboxUrl: sandbox.url, timing, deadline, origin };
  const records = await driveAll(context, plans, log, 'prod-check');
  timeline.mark(`every connection ended or passed the deadline (${records.length}/${plans.length} driven)`);
  abort.abort();
  const chaos = await chaosDone;
  const stranded = await sweeper.settle();

  const { outcomes, duplicates, summary } = await judgeAll(records, sandbox, proxy);
  const stats = proxy.stats();
  const drainOk = options.noChaos || (chaos.drain?.ok ?? false);
  const refusalsOk = refusals.every((refusal) => refusal.ok) && authorizationRefusals.every((refusal) => refusal.ok);
  await sidecar?.stop();
  // A run that outlived its first token must have renewed it, and every write must have worked.
  const outlivedFirstToken = sidecar !== undefined && Date.now() - sidecar.startedAt > sidecar.ttlS * 1000;
  const renewalOk = sidecar === undefined || (sidecar.problems.length === 0 && (sidecar.renewed > 0 || !outlivedFirstToken));
  const strandedOk = stranded.every((task) => task.refreshes.every((refresh) => refresh.ok));
  const ok = passed(summary) && drainOk && refusalsOk && renewalOk && strandedOk && chaos.record.errors.length === 0;

  const lines = renderReport({
    header,
    timeline: timeline.entries(),
    outcomes,
    chaos: chaos.record,
    proxy: stats,
    replyDelayMs: options.replyDelayMs,
    duplicates,
    unexpectedWorkerExits: pool.unexpectedExits,
    failedWorkerStarts: pool.failedStarts,
    summary,
  });
  lines.pop();
  lines.forEach((line) => log(line));

  // Each worker's share, as the proxy saw it (every worker has its own base URL).
  const total = [...stats.byClient.values()].reduce((sum, count) => sum + count, 0);
  log('');
  log('Work per worker (requests to the service, as the proxy saw them)');
  for (const [name, count] of [...stats.byClient].sort(([a], [b]) => Number(a.slice(1)) - Number(b.slice(1)))) {
    const fate = chaos.record.kills.find((kill) => kill.name === name)
      ? 'SIGKILLed'
      : chaos.drain?.name === name
        ? `SIGTERMed, ${chaos.drain.ok ? 'drained, exit 0' : `NOT drained (${chaos.drain.exit}, ${chaos.drain.abandoned} abandoned)`}`
        : 'ran to the end';
    log(
      `  ${name.padEnd(4)} ${String(count).padStart(6)}  ${((100 * count) / Math.max(1, total)).toFixed(1).padStart(5)}%  ${fate}${stats.abandonedByClient.get(name) ? `; ${stats.abandonedByClient.get(name)} reply(ies) found it gone` : ''}`,
    );
  }
  if (!options.noChaos) {
    const drain = chaos.drain;
    log(
      drain
        ? `Drain: ${drain.name} got SIGTERM with ${drain.inFlightAtSignal} request(s) in flight (${drain.heldAnswersAtSignal} answer repl${drain.heldAnswersAtSignal === 1 ? 'y' : 'ies'} held); ` +
            `${drain.abandoned} abandoned; exit ${drain.exit} after ${seconds(drain.drainMs)}${drain.forced ? ' (SIGKILLed after the grace period)' : ''}: ${drain.ok ? 'ok' : 'FAILED'}`
        : 'Drain: no worker was SIGTERMed (see chaos errors): FAILED',
    );
  }

  log('');
  renderStrandedTasks(stranded).forEach((line) => log(line));

  if (pki) {
    log('');
    log("Mutual TLS: connections the frontend must refuse, each through the product's own start-up path");
    for (const refusal of refusals) log(`  ${refusal.ok ? 'refused' : 'FAILED '}  ${refusal.who}: ${refusal.detail}`);
    log(
      `TLS: workers and driver connected with TEMPORAL_TLS_CA_PATH, TEMPORAL_TLS_SERVER_NAME=${TLS_SERVER_NAME}, TEMPORAL_TLS_CERT_PATH/KEY_PATH; refusals: ${refusals.every((refusal) => refusal.ok) ? 'ok' : 'FAILED'}`,
    );
  }
  if (sidecar) {
    log('');
    log("Authorization: calls the server's JWT authorizer must refuse, through the product's client");
    for (const refusal of authorizationRefusals) log(`  ${refusal.ok ? 'refused' : 'FAILED '}  ${refusal.who}: ${refusal.detail}`);
    log(
      `Authorization: workers and driver held default:write tokens of ${sidecar.ttlS} s in TEMPORAL_API_KEY_FILE, renewed ${sidecar.renewed} time(s); ` +
        `the fleet ${outlivedFirstToken ? 'outlived its first token' : 'ended before its first token expired'}` +
        `${sidecar.problems.length > 0 ? ` (${sidecar.problems.length} write(s) FAILED: ${sidecar.problems[0] ?? ''})` : ''}; ` +
        `refusals: ${authorizationRefusals.every((refusal) => refusal.ok) ? 'ok' : 'FAILED'}; renewal: ${renewalOk ? 'ok' : 'FAILED'}`,
    );
  }

  await release(resources);
  if (options.keepLogs || !ok) log(`prod-check: logs, bundle and the PostgreSQL data kept in ${runDir}${options.keepLogs ? '' : ' (the run failed)'}`);
  else await rm(runDir, { recursive: true, force: true });
  log(summaryLine(summary, 'prod-check'));
  return ok;
}

async function main(): Promise<number> {
  let options: ProdCheckOptions | undefined;
  try {
    options = parseProdCheckArgs(process.argv.slice(2), () => randomInt(0, 2 ** 31));
  } catch (error) {
    if (error instanceof ChaosArgumentError) {
      process.stderr.write(`prod-check: ${error.message}\n\n${USAGE}\n`);
      return 2;
    }
    throw error;
  }
  if (options === undefined) {
    log(USAGE);
    return 0;
  }
  let releases: ServerBinaries[];
  try {
    releases = provide(options);
  } catch (error) {
    if (error instanceof MissingPrerequisite) {
      process.stderr.write(`prod-check: ${error.message}\n`);
      return 3;
    }
    throw error;
  }

  const resources: Resources = {};
  const interrupted = (signal: NodeJS.Signals) => {
    process.stderr.write(`\nprod-check: ${signal}: killing every process of the run${resources.runDir ? `; logs kept in ${resources.runDir}` : ''}\n`);
    killAllChildren();
    resources.postgres?.stopSync();
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    return (await run(options, releases, resources)) ? 0 : 1;
  } catch (error) {
    process.stderr.write(`prod-check: the run could not complete: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    await release(resources);
    if (resources.runDir) process.stderr.write(`prod-check: logs kept in ${resources.runDir}\n`);
    return 1;
  }
}

process.on('exit', killAllChildren);
main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`prod-check: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
