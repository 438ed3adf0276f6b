/**
 * The Grafana dashboard shipped beside temporal-compose.yml (grafana/dashboards/aggregation-worker.json)
 * queries only what the worker exports, under the names and labels it exports them with. A real
 * worker process (src/worker.ts from the product's bundle, as production starts it) serves
 * /metrics on a real dev server while connections run against the real sandbox: one answered after
 * its end user's challenge (a wrong answer the service rejects, then the right one), one polled
 * while its data is pending, one the service refuses, one the service throttles (TOO_MANY_REQUESTS),
 * one with an input the worker refuses, one cancelled, one left waiting for its answer, and a
 * workflow type the build does not have (its workflow task fails). Its cache holds one workflow, so
 * the connection waiting for an answer is evicted and replayed. Every PromQL expression of the
 * dashboard (panels and variables) is read for the metrics and labels it uses; each one the worker's
 * page lacks is named. A tenant's book of four logins is refreshed to its report through a window
 * of two: three refreshed, one whose connection meets a challenge nobody answers (needs-end-user).
 * The product's own metrics (aggregation_*) must also show that traffic: each outcome it produced,
 * the connection left waiting counted by status, and the book refresh's outcomes, window and
 * connections in flight.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { freePort } from '../../scripts/lib/free-port.js';
import { PROJECT_ROOT } from '../../scripts/lib/temporal-binaries.js';
import { BookReportNotReadyError, ConnectionsClient, type BookReport } from '../../src/client/index.js';
import { bookEntryWorkflowId } from '../../src/contract/book/book-definitions.js';
import { SANDBOX_PASSWORD, SCENARIOS, describeScenario } from '../../sandbox/scenarios.js';
import { awaitFirstStepUpdate, submitAnswerUpdate } from '../../src/contract/connection/connection-definitions.js';
import { startProcessStack, type ProcessStack } from '../helpers/process-stack.js';
import { uniqueId, waitFor } from '../helpers/temporal.js';
import { exportedMetrics, exportedSamples, promqlNames, variableQueryNames, type QueryNames } from './promql.js';

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
    (panel.targets ?? []).map((target) => ({
      where: `panel "${String(panel.title)}" ${String(target.refId)}`,
      names: promqlNames(typeof target.expr === 'string' ? target.expr : ''),
    })),
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

/** The product's series the traffic of exerciseWorker produces: at least `min` (or exactly `exactly`) each. */
interface ExpectedSeries {
  readonly metric: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly min?: number;
  readonly exactly?: number;
}

function expectedProductSeries(taskQueue: string, throttledTenant: string): ExpectedSeries[] {
  const counted = (metric: string, labels: Record<string, string>): ExpectedSeries => ({ metric, labels, min: 1 });
  return [
    counted('aggregation_answers', { outcome: 'rejected' }),
    counted('aggregation_answers', { outcome: 'session_open' }),
    counted('aggregation_polls', { operation: 'accounts_detail', result: 'pending' }),
    counted('aggregation_polls', { operation: 'accounts_detail', result: 'ready' }),
    counted('aggregation_service_call_failures', { failure_type: 'InvalidCredentials', service_code: 'INVALID_LOGIN' }),
    counted('aggregation_service_call_failures', { failure_type: 'InvalidSecurityResponse', service_code: 'INVALID_SECURITY_RESPONSE' }),
    counted('aggregation_service_call_failures', { failure_type: 'ServiceUnavailable', service_code: 'TOO_MANY_REQUESTS' }),
    counted('aggregation_throttles', { customer_id: throttledTenant }),
    // The connection left waiting for its answer, and no other connection running on the queue.
    { metric: 'aggregation_connections', labels: { status: 'AwaitingAnswer' }, exactly: 1 },
    { metric: 'aggregation_connections', labels: { status: 'Authorizing' }, exactly: 0 },
    { metric: 'aggregation_connections', labels: { status: 'Retrieving' }, exactly: 0 },
  ].map((series) => ({ ...series, labels: { namespace: 'default', task_queue: taskQueue, ...series.labels } }));
}

/** Each expected series the page lacks, or has with another value. */
function productProblems(page: string, expected: readonly ExpectedSeries[]): string[] {
  return expected.flatMap(({ metric, labels, min, exactly }) => {
    const found = exportedSamples(page, metric).find((sample) => Object.entries(labels).every(([name, value]) => sample.labels[name] === value));
    const series = `${metric}${JSON.stringify(labels)}`;
    if (!found) return [`${series} is not exported`];
    if (exactly !== undefined && found.value !== exactly) return [`${series} is ${found.value}, not ${exactly}`];
    if (min !== undefined && !(found.value >= min)) return [`${series} is ${found.value}, not at least ${min}`];
    return [];
  });
}

async function provisionedDatasourceUid(): Promise<string> {
  const text = await readFile(DATASOURCE_FILE, 'utf8');
  assert.match(text, /^\s*type:\s*prometheus\s*$/m, `${DATASOURCE_FILE} provisions a Prometheus data source`);
  return /^\s*uid:\s*["']?([\w-]+)["']?\s*$/m.exec(text)?.[1] ?? assert.fail(`${DATASOURCE_FILE} gives its data source a uid`);
}

/**
 * Runs on the worker's queue every kind of event the dashboard charts; returns the workflows left
 * open: the one whose task keeps failing and the connection waiting for its answer.
 */
async function exerciseWorker(stack: ProcessStack, taskQueue: string, throttledTenant: string): Promise<WorkflowHandle[]> {
  const customerId = uniqueId('tenant');
  const start = (args: unknown, workflowType = 'connectionWorkflow') =>
    stack.client.workflow.start(workflowType, { taskQueue, workflowId: uniqueId('dashboard'), args: [args] });
  const live = (username: string, tenant = customerId) => ({
    customerId: tenant,
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
  // A wrong answer reaches the service (answerChallenge), which rejects it; the same question comes back.
  const wrong = Object.fromEntries(Object.keys(ANSWER).map((key) => [key, ['not the answer']]));
  const rejected = await answered.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: first.challengeSet.id, responses: wrong }] });
  if (rejected.outcome !== 'rejected' || !rejected.nextChallengeSet) assert.fail(`the service rejects a wrong answer, not ${JSON.stringify(rejected)}`);
  // The right one opens the session; the evicted connection replays and completes.
  const outcome = await answered.executeUpdate(submitAnswerUpdate, { args: [{ challengeSetId: rejected.nextChallengeSet.id, responses: ANSWER }] });
  assert.equal(outcome.outcome, 'accepted');
  await answered.result();
  // The service throttles a tenant's first data requests (TOO_MANY_REQUESTS); the connection waits and completes.
  await (await start(live('rate_limited', throttledTenant))).result();
  // Failed connections: the service refuses the login (a failed activity); the worker refuses the input (a failed local activity).
  await assert.rejects((await start(live('invalid_login'))).result(), WorkflowFailedError);
  await assert.rejects((await start({ customerId, session: { kind: 'unknown' } })).result(), WorkflowFailedError);
  // A connection its client cancels while it waits for an answer.
  const cancelled = await start(live('security_question'));
  await cancelled.executeUpdate(awaitFirstStepUpdate);
  await cancelled.cancel();
  await assert.rejects(cancelled.result(), WorkflowFailedError);
  // A connection left waiting for its end user: the one the status gauge counts.
  const waiting = await start(live('security_question'));
  await waiting.executeUpdate(awaitFirstStepUpdate);
  // A workflow type this build does not have (a deploy gone wrong): its workflow task fails and is retried.
  return [waiting, await start({}, 'workflowTypeThisBuildDoesNotHave')];
}

/** A book refreshed on the worker's queue: its tenant and cadence, the report of its refresh, and its entries (left open). */
interface RefreshedBook {
  readonly customerId: string;
  readonly cadence: string;
  readonly report: BookReport;
  readonly entries: readonly WorkflowHandle[];
}

/** Sandbox logins whose data is pending for one poll each. */
const BOOK_REFRESHED = 3;
/** The window, held there by its bounds (floor and ceiling): the gauge's last value is known. */
const BOOK_WINDOW = 2;

/**
 * Enrols BOOK_REFRESHED fresh logins and a trusted-device one in a tenant's book and refreshes it to
 * its report: the refreshed connections and the one that meets a challenge nobody answers
 * (needs-end-user), through a window of BOOK_WINDOW.
 */
async function refreshBook(stack: ProcessStack, taskQueue: string): Promise<RefreshedBook> {
  const books = new ConnectionsClient({ client: stack.client, taskQueue }).books;
  const customerId = uniqueId('book');
  const cadence = 'nightly';
  // The sandbox derives a LoginId from the username, per tenant: distinct usernames, distinct logins.
  const savedLogin = async (username: string): Promise<string> => {
    const response = await fetch(`${stack.sandbox.url}/sandbox/${encodeURIComponent(customerId)}/logins`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username, pendingPolls: 1 }),
    });
    assert.ok(response.ok, `the sandbox saved a ${username} login: HTTP ${response.status}`);
    return ((await response.json()) as { LoginId: string }).LoginId;
  };
  const loginIds: string[] = [];
  const enrol = async (username: string, session: 'cached' | 'refresh') => {
    const loginId = await savedLogin(username);
    await books.enrol({ customerId, loginId, cadence, session, products: { accountsDetail: {} }, timing: { pollIntervalMs: 100 } });
    loginIds.push(loginId);
  };
  for (let n = 1; n <= BOOK_REFRESHED; n += 1) await enrol(`pending_polls_${n}`, 'cached');
  // A refresh of a trusted-device login meets its challenge: the connection ends EndUserActionRequired.
  await enrol('trusted_device', 'refresh');
  await waitFor(async () => (await books.count({ customerId, cadence })) === loginIds.length, { describe: `${loginIds.length} logins in the book` });
  const { refreshWorkflowId } = await books.run({ customerId, cadence }, { window: { floor: BOOK_WINDOW, ceiling: BOOK_WINDOW, start: BOOK_WINDOW } });
  const report = await waitFor(
    async () => {
      try {
        return await books.report(refreshWorkflowId);
      } catch (error) {
        if (error instanceof BookReportNotReadyError) return undefined;
        throw error;
      }
    },
    { timeoutMs: 90_000, intervalMs: 250, describe: `the report of ${refreshWorkflowId}` },
  );
  const { counts } = report;
  if (report.status !== 'completed' || counts.refreshed !== BOOK_REFRESHED || counts.needsEndUser !== 1 || counts.done !== loginIds.length) {
    assert.fail(`the book refresh completes with ${BOOK_REFRESHED} refreshed and 1 needing its end user, not ${report.status} ${JSON.stringify(counts)}`);
  }
  const entries = loginIds.map((loginId) => stack.client.workflow.getHandle(bookEntryWorkflowId(customerId, loginId)));
  return { customerId, cadence, report, entries };
}

/**
 * The book refresh's series: its outcomes counted once each (the workflow meter skips replays, and the
 * refresh is evicted and replayed), its window and in flight both 0 once it ended. Recorded from
 * workflow code, they carry the SDK's workflow labels (taskQueue and workflowType, not task_queue).
 */
function expectedBookSeries(taskQueue: string, { customerId, cadence, report }: RefreshedBook): ExpectedSeries[] {
  const labels = { namespace: 'default', taskQueue, workflowType: 'bookRefreshWorkflow', customer_id: customerId, cadence };
  return [
    { metric: 'aggregation_book_outcomes', labels: { ...labels, outcome: 'refreshed' }, exactly: report.counts.refreshed },
    { metric: 'aggregation_book_outcomes', labels: { ...labels, outcome: 'needs-end-user' }, exactly: report.counts.needsEndUser },
    // Ended: the window holds no room (left at its last value, it read as a refresh still running).
    { metric: 'aggregation_book_window', labels, exactly: 0 },
    { metric: 'aggregation_book_in_flight', labels, exactly: 0 },
  ];
}

describe('the Grafana dashboard of the worker', () => {
  let stack: ProcessStack;
  let dashboard: Dashboard;
  let datasourceUid: string;
  let exported: Map<string, Set<string>> = new Map();
  let page = '';
  let expected: ExpectedSeries[] = [];
  let open: WorkflowHandle[] = [];

  before(
    async () => {
      dashboard = JSON.parse(await readFile(DASHBOARD_FILE, 'utf8')) as Dashboard;
      datasourceUid = await provisionedDatasourceUid();
      stack = await startProcessStack();
      const taskQueue = uniqueId('dashboard');
      const throttledTenant = uniqueId('throttled');
      expected = expectedProductSeries(taskQueue, throttledTenant);
      const port = await freePort();
      // A cache of one workflow: the second open connection evicts the first. Connections counted by status every second.
      await stack.startWorker(taskQueue, {
        env: { WORKER_METRICS_HOST: '127.0.0.1', WORKER_METRICS_PORT: String(port), WORKER_MAX_CACHED_WORKFLOWS: '1', WORKER_STATUS_GAUGE_INTERVAL_S: '1' },
      });
      open = await exerciseWorker(stack, taskQueue, throttledTenant);
      const book = await refreshBook(stack, taskQueue);
      open.push(...book.entries);
      expected.push(...expectedBookSeries(taskQueue, book));
      // Counters are recorded as the worker handles each task, maybe after a client saw the result,
      // and the gauge at its next count: scrape until the page holds all the dashboard needs and all
      // the traffic made (the tests below name what is missing).
      await waitFor(
        async () => {
          page = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
          exported = exportedMetrics(page);
          return exportProblems(dashboard, exported).length === 0 && productProblems(page, expected).length === 0;
        },
        { timeoutMs: 30_000, intervalMs: 500, describe: 'the metrics the dashboard queries' },
      ).catch(() => undefined);
    },
    { timeout: 300_000 },
  );

  after(async () => {
    for (const handle of open) await handle.terminate('the dashboard test is done with it');
    await stack?.stop();
  });

  it('is a Grafana dashboard whose panels and variables query the provisioned Prometheus data source', () => {
    assert.deepEqual(shapeProblems(dashboard, datasourceUid), []);
    assert.ok(
      dashboardQueries(dashboard).every(({ names }) => names.selectors.length > 0),
      'every query selects a metric',
    );
  });

  it('queries only metrics the worker exports, by labels they carry', () => {
    assert.ok(exported.size > 0, 'the worker served its metrics');
    const problems = exportProblems(dashboard, exported);
    assert.deepEqual(problems, [], `${DASHBOARD_FILE}:\n  ${problems.join('\n  ')}`);
  });

  it("counts the traffic's answers, polls, failed calls and throttles, the connections by status, and the book refresh's outcomes and window", () => {
    const problems = productProblems(page, expected);
    assert.deepEqual(problems, [], problems.join('\n'));
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
          targets: [
            {
              refId: 'A',
              expr: 'sum by (no_such_grouping) (rate(temporal_bogus_total[5m])) / sum by (no_such_grouping) (temporal_num_pollers{no_such_label="x"})',
            },
          ],
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
