/**
 * The Grafana dashboard shipped beside temporal-compose.yml (grafana/dashboards/aggregation-worker.json)
 * queries only what the worker exports, under the names and labels it exports them with. A real
 * worker process (src/worker.ts from the product's bundle, as production starts it) serves
 * /metrics on a real dev server while connections run against the real sandbox: one answered after
 * its end user's challenge, one polled while its data is pending, one the service refuses, one
 * with an input the worker refuses, one cancelled, and a workflow type the build does not have (its
 * workflow task fails). Its cache holds one workflow, so the connection waiting for an answer is
 * evicted and replayed. Every PromQL expression of the dashboard (panels and variables) is read for
 * the metrics and labels it uses; each one the worker's page lacks is named.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { freePort } from '../../scripts/lib/free-port.js';
import { PROJECT_ROOT } from '../../scripts/lib/temporal-binaries.js';
import { SANDBOX_PASSWORD, SCENARIOS, describeScenario } from '../../src/sandbox/scenarios.js';
import { awaitFirstStepUpdate, submitAnswerUpdate } from '../../src/contract/connection-definitions.js';
import { startProcessStack, type ProcessStack } from '../helpers/process-stack.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';
import { exportedMetrics, promqlNames, variableQueryNames, type QueryNames } from './promql.js';

const DASHBOARD_FILE = join(PROJECT_ROOT, 'grafana', 'dashboards', 'aggregation-worker.json');
const DATASOURCE_FILE = join(PROJECT_ROOT, 'grafana', 'provisioning', 'datasources', 'prometheus.yml');
/** Labels Prometheus adds to every series it scrapes (prometheus/prometheus.yml): never on the worker's page. */
const TARGET_LABELS = new Set(['instance', 'job']);
/** Grafana's grid is 24 columns wide. */
const GRID_COLUMNS = 24;

const SECURITY_QUESTION = SCENARIOS.find((entry) => entry.username === 'security_question') ?? assert.fail('the sandbox has a security_question scenario');
const ANSWER = describeScenario(SECURITY_QUESTION).challengeSequence[0]?.answer ?? assert.fail('security_question asks one question');

interface DataSourceRef {
  readonly uid?: unknown;
}
interface Target {
  readonly refId?: unknown;
  readonly expr?: unknown;
  readonly datasource?: DataSourceRef;
}
interface Panel {
  readonly id?: unknown;
  readonly type?: unknown;
  readonly title?: unknown;
  readonly gridPos?: { readonly x?: unknown; readonly y?: unknown; readonly w?: unknown; readonly h?: unknown };
  readonly datasource?: DataSourceRef;
  readonly targets?: readonly Target[];
  /** The panels of a collapsed row. */
  readonly panels?: readonly Panel[];
}
interface Variable {
  readonly name?: unknown;
  readonly type?: unknown;
  readonly datasource?: DataSourceRef;
  readonly query?: unknown;
}
interface Dashboard {
  readonly uid?: unknown;
  readonly title?: unknown;
  readonly schemaVersion?: unknown;
  readonly panels?: readonly Panel[];
  readonly templating?: { readonly list?: readonly Variable[] };
}

function allPanels(dashboard: Dashboard): Panel[] {
  return (dashboard.panels ?? []).flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

/** Every PromQL query of the dashboard, with where it is. */
function dashboardQueries(dashboard: Dashboard): { where: string; names: QueryNames }[] {
  const queries = allPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ where: `panel "${String(panel.title)}" ${String(target.refId)}`, names: promqlNames(typeof target.expr === 'string' ? target.expr : '') })),
  );
  for (const variable of dashboard.templating?.list ?? []) {
    if (variable.type !== 'query') continue;
    const query = typeof variable.query === 'object' && variable.query !== null ? (variable.query as { query?: unknown }).query : variable.query;
    queries.push({ where: `variable $${String(variable.name)}`, names: variableQueryNames(typeof query === 'string' ? query : '') });
  }
  return queries;
}

/** What keeps Grafana from loading the dashboard as provisioned, or its queries from reaching the data source. */
function shapeProblems(dashboard: Dashboard, datasourceUid: string): string[] {
  const problems: string[] = [];
  if (typeof dashboard.uid !== 'string' || dashboard.uid === '') problems.push('the dashboard has no uid');
  if (typeof dashboard.title !== 'string' || dashboard.title === '') problems.push('the dashboard has no title');
  if (typeof dashboard.schemaVersion !== 'number') problems.push('the dashboard has no schemaVersion (a classic JSON model)');
  if (!Array.isArray(dashboard.panels) || dashboard.panels.length === 0) problems.push('the dashboard has no panels');
  const ids = new Set<unknown>();
  for (const panel of allPanels(dashboard)) {
    const name = `panel "${String(panel.title)}"`;
    if (typeof panel.title !== 'string' || panel.title === '') problems.push(`panel ${String(panel.id)} has no title`);
    if (typeof panel.id !== 'number' || ids.has(panel.id)) problems.push(`${name}: its id ${String(panel.id)} is missing or not unique`);
    ids.add(panel.id);
    if (typeof panel.type !== 'string') problems.push(`${name} has no type`);
    const { x, y, w, h } = panel.gridPos ?? {};
    if (![x, y, w, h].every(Number.isInteger) || (x as number) < 0 || (w as number) < 1 || (x as number) + (w as number) > GRID_COLUMNS) {
      problems.push(`${name}: gridPos ${JSON.stringify(panel.gridPos)} is not inside the ${GRID_COLUMNS} columns`);
    }
    if (panel.type === 'row') continue;
    if (panel.datasource?.uid !== datasourceUid) problems.push(`${name} queries data source ${JSON.stringify(panel.datasource?.uid)}, not ${datasourceUid}`);
    if (!Array.isArray(panel.targets) || panel.targets.length === 0) problems.push(`${name} has no targets`);
    const refIds = new Set<unknown>();
    for (const target of panel.targets ?? []) {
      if (typeof target.refId !== 'string' || refIds.has(target.refId)) problems.push(`${name}: refId ${String(target.refId)} is missing or not unique`);
      refIds.add(target.refId);
      if (typeof target.expr !== 'string' || target.expr.trim() === '') problems.push(`${name} ${String(target.refId)} has no expr`);
      if (target.datasource !== undefined && target.datasource.uid !== datasourceUid) {
        problems.push(`${name} ${String(target.refId)} queries data source ${JSON.stringify(target.datasource.uid)}, not ${datasourceUid}`);
      }
    }
  }
  for (const variable of dashboard.templating?.list ?? []) {
    if (variable.type === 'query' && variable.datasource?.uid !== datasourceUid) {
      problems.push(`variable $${String(variable.name)} queries data source ${JSON.stringify(variable.datasource?.uid)}, not ${datasourceUid}`);
    }
  }
  return problems;
}

/** The dashboard's metrics the page does not export, labels they do not carry, groupings none of a query's metrics has. */
function exportProblems(dashboard: Dashboard, exported: ReadonlyMap<string, ReadonlySet<string>>): string[] {
  const missing = new Map<string, string[]>();
  const problems: string[] = [];
  for (const { where, names } of dashboardQueries(dashboard)) {
    for (const { metric, labels } of names.selectors) {
      const carried = exported.get(metric);
      if (!carried) {
        missing.set(metric, [...(missing.get(metric) ?? []), where]);
        continue;
      }
      for (const label of labels) {
        if (!TARGET_LABELS.has(label) && !carried.has(label)) problems.push(`${where}: ${metric} has no label ${label}`);
      }
    }
    const present = names.selectors.filter(({ metric }) => exported.has(metric));
    if (present.length === 0) continue;
    for (const label of new Set(names.grouping)) {
      if (!TARGET_LABELS.has(label) && !present.some(({ metric }) => exported.get(metric)!.has(label))) {
        problems.push(`${where}: groups by ${label}, which none of ${present.map(({ metric }) => metric).join(', ')} has`);
      }
    }
  }
  return [...[...missing].map(([metric, places]) => `${metric} is not exported by the worker (${places.join('; ')})`), ...problems];
}

async function provisionedDatasourceUid(): Promise<string> {
  const text = await readFile(DATASOURCE_FILE, 'utf8');
  assert.match(text, /^\s*type:\s*prometheus\s*$/m, `${DATASOURCE_FILE} provisions a Prometheus data source`);
  return /^\s*uid:\s*["']?([\w-]+)["']?\s*$/m.exec(text)?.[1] ?? assert.fail(`${DATASOURCE_FILE} gives its data source a uid`);
}

/** Runs on the worker's queue every kind of event the dashboard charts; returns the workflow whose task keeps failing. */
async function exerciseWorker(stack: ProcessStack, taskQueue: string): Promise<WorkflowHandle> {
  const customerId = uniqueId('tenant');
  const start = (args: unknown, workflowType = 'connectionWorkflow') => stack.client.workflow.start(workflowType, { taskQueue, workflowId: uniqueId('dashboard'), args: [args] });
  const live = (username: string) => ({
    customerId,
    session: { kind: 'live', institution: 'SandboxBank', username, password: SANDBOX_PASSWORD },
    products: { accountsDetail: {} },
    timing: { pollIntervalMs: 100 },
  });

  // A connection waiting for its end user's answer: the only workflow in the cache.
  const answered = await start(live('security_question'));
  const first = await answered.executeUpdate(awaitFirstStepUpdate);
  if (first.step !== 'challenge') assert.fail(`security_question asks a question first, not ${first.step}`);
  // A connection whose data stays pending for two polls: it pushes the first out of the cache.
  const loginId = await stack.savedLogin(customerId, 'pending_polls_2');
  await (await start({ customerId, session: { kind: 'cached', loginId }, products: { accountsDetail: {} }, timing: { pollIntervalMs: 100 } })).result();
  // The answer reaches the service (answerChallenge); the evicted connection replays and completes.
  const outcome = await answered.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: first.challengeSet.id, responses: ANSWER }] });
  assert.equal(outcome.outcome, 'accepted');
  await answered.result();
  // Failed connections: the service refuses the login (a failed activity); the worker refuses the input (a failed local activity).
  await assert.rejects((await start(live('invalid_login'))).result(), WorkflowFailedError);
  await assert.rejects((await start({ customerId, session: { kind: 'unknown' } })).result(), WorkflowFailedError);
  // A connection its client cancels while it waits for an answer.
  const cancelled = await start(live('security_question'));
  await cancelled.executeUpdate(awaitFirstStepUpdate);
  await cancelled.cancel();
  await assert.rejects(cancelled.result(), WorkflowFailedError);
  // A workflow type this build does not have (a deploy gone wrong): its workflow task fails and is retried.
  return start({}, 'workflowTypeThisBuildDoesNotHave');
}

describe('the Grafana dashboard of the worker', () => {
  let stack: ProcessStack;
  let dashboard: Dashboard;
  let datasourceUid: string;
  let exported: Map<string, Set<string>> = new Map();
  let failing: WorkflowHandle | undefined;

  before(
    async () => {
      dashboard = JSON.parse(await readFile(DASHBOARD_FILE, 'utf8')) as Dashboard;
      datasourceUid = await provisionedDatasourceUid();
      stack = await startProcessStack();
      const taskQueue = uniqueId('dashboard');
      const port = await freePort();
      // A cache of one workflow: the second open connection evicts the first.
      await stack.startWorker(taskQueue, { env: { WORKER_METRICS_HOST: '127.0.0.1', WORKER_METRICS_PORT: String(port), WORKER_MAX_CACHED_WORKFLOWS: '1' } });
      failing = await exerciseWorker(stack, taskQueue);
      // Counters are recorded as the worker handles each task, maybe after a client saw the result:
      // scrape until the page holds all the dashboard needs (the test below names what is missing).
      await waitFor(
        async () => {
          exported = exportedMetrics(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
          return exportProblems(dashboard, exported).length === 0;
        },
        { timeoutMs: 30_000, intervalMs: 500, describe: 'the metrics the dashboard queries' },
      ).catch(() => undefined);
    },
    { timeout: 300_000 },
  );

  after(async () => {
    await failing?.terminate('the dashboard test is done with it');
    await stack?.stop();
  });

  it('is a Grafana dashboard whose panels and variables query the provisioned Prometheus data source', () => {
    assert.deepEqual(shapeProblems(dashboard, datasourceUid), []);
    assert.ok(dashboardQueries(dashboard).every(({ names }) => names.selectors.length > 0), 'every query selects a metric');
  });

  it('queries only metrics the worker exports, by labels they carry', () => {
    assert.ok(exported.size > 0, 'the worker served its metrics');
    const problems = exportProblems(dashboard, exported);
    assert.deepEqual(problems, [], `${DASHBOARD_FILE}:\n  ${problems.join('\n  ')}`);
  });

  it('names each metric and label of a query that the worker does not export', () => {
    const broken: Dashboard = {
      panels: [
        {
          id: 9999,
          type: 'timeseries',
          title: 'bogus',
          datasource: { uid: datasourceUid },
          gridPos: { x: 0, y: 999, w: 12, h: 8 },
          targets: [{ refId: 'A', expr: 'sum by (no_such_grouping) (rate(temporal_bogus_total[5m])) / sum by (no_such_grouping) (temporal_num_pollers{no_such_label="x"})' }],
        },
      ],
    };
    assert.deepEqual(exportProblems(broken, exported), [
      'temporal_bogus_total is not exported by the worker (panel "bogus" A)',
      'panel "bogus" A: temporal_num_pollers has no label no_such_label',
      'panel "bogus" A: groups by no_such_grouping, which none of temporal_num_pollers has',
    ]);
  });
});
