/**
 * A tenant's book refreshed as one operation, on a real dev server with the real worker and the real
 * sandbox over HTTP: enrolment and paged listing through visibility; a refresh that keeps a sliding
 * window of connection children, reads the book a page at a time and continues as new after each
 * drained page, starting each login once and keeping a report page per page; flagged and malformed
 * entries reported and skipped; pause, resume, resize and cancel as updates; a login forgotten
 * mid-refresh skipped; the window growing while children are fast, shrinking to its floor while the
 * service is down, and the book completing after with nothing failed.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import proto from '@temporalio/proto';
import { TypedSearchAttributes } from '@temporalio/common';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  BookEntryNotFoundError,
  BookRefreshNotFoundError,
  BookReportNotReadyError,
  BookRefreshRefusedError,
  ConnectionsClient,
  InvalidBookRequestError,
  type BookOutcome,
  type BookProgress,
  type BookReport,
} from '../../src/client/index.js';
import {
  BOOK_ENTRY_MEMO,
  BOOK_ENTRY_WORKFLOW_TYPE,
  bookConnectionWorkflowId,
  bookEntryWorkflowId,
  bookLoginEndedSignal,
  type BookLoginEnded,
  type BookRefreshInput,
} from '../../src/contract/book/book-definitions.js';
import { BookCadenceKey, CustomerIdKey, LoginIdKey } from '../../src/contract/search-attributes.js';
import { createSandboxLogin } from '../../bench/sandbox-fixtures.js';
import { Worker } from '@temporalio/worker';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';
import { workerDataConverterFor } from '../../src/codec/data-converter.js';
import { TEST_ENCRYPTION, startConnectionStack, type ConnectionStack } from '../helpers/connection-stack.js';
import { recordHistory } from '../helpers/histories.js';
import { refreshHistoryShape } from '../helpers/refresh-history.js';
import { productWorkflowCode } from '../helpers/test-tier.js';
import { createDevEnvironment, uniqueId, waitFor } from '../helpers/temporal.js';
import { progressUntil as progressUntilOf, reportWhenEnded } from './book-waits.js';

const EventType = proto.temporal.api.enums.v1.EventType;

let env: TestWorkflowEnvironment;
let stack: ConnectionStack;
let client: ConnectionsClient;

before(async () => {
  // Its own namespace: its refreshes size their windows against every running refresh's, and other
  // files' books run beside it on the shared server.
  env = await createDevEnvironment({ namespace: uniqueId('book-refresh') });
  stack = await startConnectionStack(env, { tenantPauses: true });
  client = new ConnectionsClient({ client: stack.client, taskQueue: stack.taskQueue });
});

after(async () => {
  await stack?.stop();
  await env?.teardown();
});

let loginsMade = 0;
/** A fresh saved login (the sandbox derives a LoginId from the username) whose data stays pending for `pendingPolls` polls. */
async function freshLogin(pendingPolls = 1): Promise<string> {
  loginsMade += 1;
  return savedLogin(`pending_polls_${loginsMade}`, pendingPolls);
}

/** The saved login of a sandbox scenario (one per username and tenant), its data pending for `pendingPolls` polls. */
function savedLogin(username: string, pendingPolls = 1): Promise<string> {
  return createSandboxLogin(stack.sandboxUrl, stack.customerId, username, pendingPolls);
}

/** Enrols `count` fresh logins in `cadence`, polling every `pollIntervalMs`; returns them in enrolment order. */
async function enrolLogins(cadence: string, count: number, options: { pendingPolls?: number; pollIntervalMs?: number } = {}): Promise<string[]> {
  const logins: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const loginId = await freshLogin(options.pendingPolls ?? 1);
    await client.books.enrol({
      customerId: stack.customerId,
      loginId,
      cadence,
      products: { accountsDetail: {} },
      timing: { pollIntervalMs: options.pollIntervalMs ?? 50 },
    });
    logins.push(loginId);
  }
  await waitFor(async () => (await client.books.count({ customerId: stack.customerId, cadence })) === count, {
    describe: `${count} logins enrolled in ${cadence}`,
  });
  return logins;
}

function reportOf(refreshWorkflowId: string, timeoutMs?: number): Promise<BookReport> {
  return reportWhenEnded(client.books, refreshWorkflowId, timeoutMs);
}

function progressUntil(refreshWorkflowId: string, predicate: (progress: BookProgress) => boolean, describe: string, timeoutMs?: number): Promise<BookProgress> {
  return progressUntilOf(client.books, refreshWorkflowId, predicate, describe, timeoutMs);
}

async function allOutcomes(report: BookReport): Promise<BookOutcome[]> {
  const outcomes: BookOutcome[] = [];
  for (let page = 1; page <= report.pages.length; page += 1) outcomes.push(...(await client.books.reportPage(report.refreshWorkflowId, page)).outcomes);
  return outcomes;
}

/** Every run of a workflow id (a refresh that continued as new has several), oldest first. */
async function runsOf(workflowId: string) {
  const runs = [];
  for await (const info of stack.client.workflow.list({ query: `WorkflowId = ${JSON.stringify(workflowId)}` })) runs.push(info);
  return runs.sort((a, b) => a.startTime.getTime() - b.startTime.getTime());
}

function run(cadence: string, input: Parameters<ConnectionsClient['books']['run']>[1] = {}) {
  return client.books.run({ customerId: stack.customerId, cadence }, input);
}

void describe('a book of saved logins', () => {
  void it('enrols logins, lists the book a page at a time, finds and removes an entry, and refuses bad requests naming the field', async () => {
    const cadence = 'listing';
    const logins = await enrolLogins(cadence, 5);
    const seen: string[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const page = await client.books.list({ customerId: stack.customerId, cadence, pageSize: 2, ...(pageToken ? { pageToken } : {}) });
      seen.push(...page.entries.map((entry) => entry.loginId));
      pageToken = page.nextPageToken;
      pages += 1;
    } while (pageToken);
    assert.deepEqual([...seen].sort(), [...logins].sort(), 'every login once over the pages');
    assert.ok(pages >= 3, `5 logins at 2 a page take 3 pages, took ${pages}`);

    // An entry whose record this client cannot open (started raw, its memo unsealed): named beside the page, never failing it.
    const unreadableLogin = randomUUID();
    const raw = new Client({ connection: env.connection, namespace: env.namespace ?? 'default' });
    const unreadable = await raw.workflow.start(BOOK_ENTRY_WORKFLOW_TYPE, {
      taskQueue: stack.taskQueue,
      workflowId: bookEntryWorkflowId(stack.customerId, unreadableLogin),
      startDelay: '10 minutes',
      memo: {
        [BOOK_ENTRY_MEMO.enrolment]: {
          customerId: stack.customerId,
          loginId: unreadableLogin,
          cadence,
          session: 'cached',
          products: { accountsDetail: {} },
          enrolledAt: new Date().toISOString(),
        },
      },
      typedSearchAttributes: new TypedSearchAttributes([
        { key: CustomerIdKey, value: stack.customerId },
        { key: LoginIdKey, value: unreadableLogin },
        { key: BookCadenceKey, value: cadence },
      ]),
    });
    try {
      await waitFor(async () => (await client.books.count({ customerId: stack.customerId, cadence })) === 6, {
        describe: 'the unreadable entry in visibility',
      });
      const page = await client.books.list({ customerId: stack.customerId, cadence, pageSize: 10 });
      assert.deepEqual(page.entries.map((entry) => entry.loginId).sort(), [...logins].sort(), 'the readable entries all listed');
      assert.deepEqual(
        page.unreadable?.map((row) => row.workflowId),
        [unreadable.workflowId],
      );
      assert.match(page.unreadable?.[0]?.problem ?? '', /not sealed/);
    } finally {
      await unreadable.terminate('test over');
    }

    const entry = await client.books.entry({ customerId: stack.customerId, loginId: logins[0] as string });
    assert.equal(entry.cadence, cadence);
    assert.equal(entry.session, 'cached');
    assert.deepEqual(entry.products, { accountsDetail: {} });

    assert.equal(await client.books.remove({ customerId: stack.customerId, loginId: logins[0] as string }), 'removed');
    await waitFor(async () => (await client.books.count({ customerId: stack.customerId, cadence })) === 4, {
      describe: 'the removed login gone from the book',
    });
    await assert.rejects(client.books.entry({ customerId: stack.customerId, loginId: logins[0] as string }), BookEntryNotFoundError);

    const bad: [() => Promise<unknown>, RegExp][] = [
      [() => client.books.enrol({ customerId: stack.customerId, loginId: 'not-a-uuid', products: { accountsDetail: {} } }), /loginId/],
      [
        () => client.books.enrol({ customerId: stack.customerId, loginId: randomUUID(), cadence: 'Night Time', products: { accountsDetail: {} } }),
        /cadence: must be lower-case/,
      ],
      [() => client.books.enrol({ customerId: stack.customerId, loginId: randomUUID(), products: {} }), /products: must request at least one/],
      [() => client.books.schedule({ customerId: stack.customerId, when: { kind: 'daily', at: '25:00' } }), /when\.at: must be HH:MM/],
      [
        () => client.books.schedule({ customerId: stack.customerId, when: { kind: 'interval', every: '1h' }, window: { floor: 9, ceiling: 3 } }),
        /window: floor must be at most ceiling/,
      ],
      [() => client.books.resize('book-x:nightly-now', { size: 0 }), /resize: size: must be a whole number from 1 to 1000/],
      [() => client.books.reportPage('book-x:nightly-now', 0), /page: must be a whole number/],
    ];
    for (const [call, message] of bad) {
      await assert.rejects(call(), (error: unknown) => error instanceof InvalidBookRequestError && message.test(error.message), String(message));
    }
  });

  void it('refreshes a book page by page, continuing as new only after each page drained, each login once, flagged and malformed entries reported and skipped', async () => {
    const cadence = 'paging';
    const refreshed = await enrolLogins(cadence, 5);
    // A trusted-device login: a refresh meets its challenge, so it ends EndUserActionRequired and is flagged.
    const needsEndUser = await savedLogin('trusted_device');
    await client.books.enrol({
      customerId: stack.customerId,
      loginId: needsEndUser,
      cadence,
      session: 'refresh',
      products: { accountsDetail: {} },
      timing: { pollIntervalMs: 50 },
    });
    // A record no client would write (started by hand): reported as malformed, never fatal.
    const malformed = randomUUID();
    await stack.client.workflow.start(BOOK_ENTRY_WORKFLOW_TYPE, {
      taskQueue: stack.taskQueue,
      workflowId: bookEntryWorkflowId(stack.customerId, malformed),
      args: [{ customerId: stack.customerId, loginId: malformed, cadence, session: 'cached', products: {}, enrolledAt: new Date().toISOString() }],
      memo: {
        [BOOK_ENTRY_MEMO.enrolment]: {
          customerId: stack.customerId,
          loginId: malformed,
          cadence,
          session: 'cached',
          products: { statements: true },
          enrolledAt: new Date().toISOString(),
        },
      },
      typedSearchAttributes: new TypedSearchAttributes([
        { key: CustomerIdKey, value: stack.customerId },
        { key: LoginIdKey, value: malformed },
        { key: BookCadenceKey, value: cadence },
      ]),
    });
    await waitFor(async () => (await client.books.count({ customerId: stack.customerId, cadence })) === 7, { describe: '7 entries' });

    const { refreshWorkflowId, started } = await run(cadence, { pageSize: 3, window: { floor: 1, ceiling: 3, start: 2 } });
    assert.equal(started, true);
    const report = await reportOf(refreshWorkflowId);
    assert.equal(report.status, 'completed');
    assert.equal(report.total, 7);
    assert.equal(report.counts.done, 7);
    assert.equal(report.counts.refreshed, 5);
    assert.equal(report.counts.needsEndUser, 1);
    assert.equal(report.counts.malformed, 1);
    assert.equal(report.counts.failed, 0, JSON.stringify(report.counts));
    assert.equal(report.pages.length, 3, '7 logins at 3 a page');
    const ended = await client.books.progress(refreshWorkflowId);
    assert.equal(ended.status, 'completed', 'an ended refresh still answers its progress');
    assert.equal(ended.counts.done, 7);

    const outcomes = await allOutcomes(report);
    assert.deepEqual(outcomes.map((outcome) => outcome.loginId).sort(), [...refreshed, needsEndUser, malformed].sort(), 'each login once over the pages');
    for (const loginId of refreshed) assert.equal(outcomes.find((outcome) => outcome.loginId === loginId)?.outcome, 'refreshed');
    assert.equal(outcomes.find((outcome) => outcome.loginId === needsEndUser)?.outcome, 'needs-end-user');
    assert.match(outcomes.find((outcome) => outcome.loginId === malformed)?.problem ?? '', /products/);

    // One run per page; no connection of a page outlived its run (drained before continue-as-new), and each login has one connection that night.
    const runs = await runsOf(refreshWorkflowId);
    assert.equal(runs.length, 3, `runs: ${runs.map((r) => r.status.name).join(', ')}`);
    assert.deepEqual(
      runs.slice(0, 2).map((r) => r.status.name),
      ['CONTINUED_AS_NEW', 'CONTINUED_AS_NEW'],
    );
    const histories = await Promise.all(runs.map((r) => stack.client.workflow.getHandle(refreshWorkflowId, r.runId).fetchHistory()));
    const shapes = await Promise.all(histories.map((history) => refreshHistoryShape(history)));
    for (const loginId of [...refreshed, needsEndUser]) {
      const childId = bookConnectionWorkflowId(stack.customerId, loginId, report.night);
      const childRuns = await runsOf(childId);
      assert.equal(childRuns.length, 1, `one connection for ${loginId} this night`);
      const child = childRuns[0]!;
      // One workflow per login: the connection itself, started by a run of the refresh (not its child: its result stays out of the refresh's history).
      assert.equal(child.parentExecution, undefined, `${childId} has no parent`);
      const startedBy = shapes.findIndex((shape) => shape.starts.some((start) => start.workflowId === childId));
      assert.ok(startedBy >= 0, `${childId} started by a run of the refresh`);
      assert.equal(shapes[startedBy]?.loginEnds.filter(({ end }) => end.workflowId === childId).length, 1, `${childId} told that run its end once`);
      const next = runs[startedBy + 1];
      if (next) assert.ok((child.closeTime?.getTime() ?? Infinity) <= next.startTime.getTime(), `${childId} ended before the next page's run began`);
    }
    // A refresh's history holds a few bytes per login, never a connection's result (accounts, transactions); no connection is its child.
    for (const history of histories) {
      const events = history.events ?? [];
      const childTypes = events
        .map((e) => e.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name)
        .filter((name) => name !== undefined && name !== null);
      assert.deepEqual([...new Set(childTypes)], ['bookReportPageWorkflow'], 'its only child is its report page');
      for (const event of events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED)) {
        const bytes = (event.workflowExecutionSignaledEventAttributes?.input?.payloads ?? []).reduce((sum, payload) => sum + (payload.data?.length ?? 0), 0);
        assert.ok(bytes < 1024, `a connection's end in the refresh's history is ${bytes} B`);
      }
    }

    // The flagged login is now listed as needing its end user, and the next night skips it without a connection.
    const flagged = await client.books.list({ customerId: stack.customerId, cadence, needsEndUser: true });
    assert.deepEqual(
      flagged.entries.map((entry) => entry.loginId),
      [needsEndUser],
    );
    assert.equal(flagged.entries[0]?.flag?.reason, 'EndUserActionRequired');
    const second = await run(cadence, { pageSize: 10 });
    const secondReport = await reportOf(second.refreshWorkflowId);
    assert.equal(secondReport.counts.refreshed, 5);
    assert.equal(secondReport.counts.needsEndUser, 1);
    assert.equal((await runsOf(bookConnectionWorkflowId(stack.customerId, needsEndUser, secondReport.night))).length, 0, 'no connection for a flagged login');
  });

  void it('pauses (no connection starts until resumed), pins the window with resize, and refuses updates that make no sense', async () => {
    const cadence = 'pausing';
    await enrolLogins(cadence, 6, { pendingPolls: 2, pollIntervalMs: 300 });
    const { refreshWorkflowId } = await run(cadence, { window: { floor: 1, ceiling: 4, start: 1 } });
    await progressUntil(refreshWorkflowId, (progress) => progress.started >= 1, 'a first connection');
    // Forged ends (sealed with the tenant's key, as a pipeline could): one for a connection never started, one of no known shape. Both dropped.
    const refresh = stack.client.workflow.getHandle(refreshWorkflowId);
    await refresh.signal(bookLoginEndedSignal, {
      workflowId: bookConnectionWorkflowId(stack.customerId, randomUUID(), 'forged'),
      ended: 'completed',
      pollWaitMs: 0,
    });
    await refresh.signal(bookLoginEndedSignal, { workflowId: 42, ended: 'exploded' } as unknown as BookLoginEnded);

    const pinned = await client.books.resize(refreshWorkflowId, { size: 2 });
    assert.equal(pinned.window.pinned, 2);
    assert.equal(pinned.window.size, 2);
    assert.match(pinned.window.lastChange?.reason ?? '', /pinned by an operator at 2/);

    const paused = await client.books.pause(refreshWorkflowId, 'the test pauses');
    assert.equal(paused.status, 'paused');
    // A page the running refresh has not written yet is "not ready", not "no such refresh".
    await assert.rejects(client.books.reportPage(refreshWorkflowId, paused.page), (error: unknown) => {
      assert.ok(error instanceof BookReportNotReadyError, String(error));
      assert.match(error.message, new RegExp(`has not written page ${paused.page} of its report yet`));
      return true;
    });
    await assert.rejects(client.books.reportPage(`${refreshWorkflowId}-none`, 1), BookRefreshNotFoundError);
    await progressUntil(refreshWorkflowId, (progress) => progress.inFlight === 0, 'the connections in flight to end');
    const resumed = await client.books.resume(refreshWorkflowId);
    assert.equal(resumed.status, 'running');
    await assert.rejects(client.books.resize(refreshWorkflowId, { size: 5000 }), InvalidBookRequestError);

    const report = await reportOf(refreshWorkflowId);
    assert.equal(report.counts.refreshed, 6);
    assert.deepEqual([report.counts.done, report.counts.failed, report.started], [6, 0, 6], 'the forged ends counted nothing');
    assert.ok(report.pausedMs > 0, 'paused time is counted');
    await assert.rejects(
      client.books.pause(refreshWorkflowId),
      (error: unknown) => error instanceof BookRefreshRefusedError && /has ended \(COMPLETED\)/.test(error.message),
      'an ended refresh refuses a pause',
    );

    // In history: no connection started between the pause and the resume, and never more than 2 in flight once pinned.
    const history = await stack.client.workflow.getHandle(refreshWorkflowId).fetchHistory();
    const events = history.events ?? [];
    const shape = await refreshHistoryShape(history);
    const accepted = events.filter((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
    const nameOf = (event: (typeof events)[number]) => event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
    const pauseAt = events.indexOf(accepted.find((event) => nameOf(event) === 'pauseBook')!);
    const resumeAt = events.indexOf(accepted.find((event) => nameOf(event) === 'resumeBook')!);
    assert.ok(pauseAt > 0 && resumeAt > pauseAt, 'pause then resume in the same run');
    const startsWhilePaused = shape.starts.filter(({ eventIndex }) => eventIndex > pauseAt && eventIndex < resumeAt);
    assert.equal(startsWhilePaused.length, 0, 'no connection started while paused');
    assert.equal(shape.starts.length, 6, 'six connections started');
    let inFlight = 0;
    let most = 0;
    const pinAt = events.indexOf(accepted.find((event) => nameOf(event) === 'resizeBook')!);
    // The forged ends are in history too (dropped by the refresh): only ends of connections it started count.
    const startedIds = new Set(shape.starts.map(({ workflowId }) => workflowId));
    const ends = shape.loginEnds.filter(({ end }) => startedIds.has(end.workflowId));
    assert.equal(shape.loginEnds.length - ends.length, 2, 'both forged ends reached the refresh');
    const moves = [...shape.starts.map(({ eventIndex }) => ({ eventIndex, by: 1 })), ...ends.map(({ eventIndex }) => ({ eventIndex, by: -1 }))].sort(
      (a, b) => a.eventIndex - b.eventIndex || a.by - b.by,
    );
    for (const { eventIndex, by } of moves) {
      inFlight += by;
      if (eventIndex > pinAt + 1) most = Math.max(most, inFlight);
    }
    assert.ok(most >= 1 && most <= 2, `at most 2 in flight once pinned, saw ${most}`);
  });

  void it('a run paused, resized and with a child terminated mid-window (its login forgotten) continues as new, and both runs replay on this code', async () => {
    const cadence = 'replayed';
    // Visibility lists the newest enrolment first: page 1 is [forgotten, slow, quick], page 2 [last].
    const last = await freshLogin(2);
    const quick = await freshLogin(2);
    const slow = await freshLogin(20);
    const forgotten = await freshLogin(1_000);
    for (const loginId of [last, quick, slow, forgotten]) {
      await client.books.enrol({ customerId: stack.customerId, loginId, cadence, products: { accountsDetail: {} }, timing: { pollIntervalMs: 250 } });
    }
    await waitFor(async () => (await client.books.count({ customerId: stack.customerId, cadence })) === 4, { describe: '4 logins enrolled' });
    // Silent connections read every second (30 s by default): the terminated one is found while the slow one is still out.
    const { refreshWorkflowId } = await run(cadence, { pageSize: 3, window: { floor: 1, ceiling: 3, start: 2 }, control: { silentCheckMs: 1_000 } });
    await progressUntil(refreshWorkflowId, (progress) => progress.inFlight === 2, 'two connections in flight');
    assert.equal((await client.books.pause(refreshWorkflowId, 'the replay rehearsal pauses')).status, 'paused');
    assert.equal((await client.books.resize(refreshWorkflowId, { size: 3 })).window.pinned, 3);
    // What a forget does to a login in flight, by hand (a forget waits out its session's CARD_IN_USE
    // first): out of the book, then its running connection terminated, while the slow one is still out.
    assert.equal(await client.books.remove({ customerId: stack.customerId, loginId: forgotten }), 'removed');
    await waitFor(async () => (await client.books.count({ customerId: stack.customerId, cadence })) === 3, {
      describe: 'the removed login gone from the book',
    });
    const night = (await client.books.progress(refreshWorkflowId)).night;
    await stack.client.workflow.getHandle(bookConnectionWorkflowId(stack.customerId, forgotten, night)).terminate('the test forgets the login');
    await progressUntil(refreshWorkflowId, (progress) => progress.inFlight === 1, 'the terminated child to end');
    assert.equal((await client.books.resume(refreshWorkflowId)).status, 'running');

    const report = await reportOf(refreshWorkflowId);
    const outcomes = await allOutcomes(report);
    assert.deepEqual(
      outcomes.map((outcome) => [outcome.loginId, outcome.outcome, outcome.problem]).sort(),
      [
        [forgotten, 'forgotten', undefined],
        [last, 'refreshed', undefined],
        [quick, 'refreshed', undefined],
        [slow, 'refreshed', undefined],
      ].sort(),
      'the terminated child is told forgotten (its login left the book), not failed',
    );
    assert.equal(report.pages.length, 2);

    const runs = await runsOf(refreshWorkflowId);
    assert.equal(runs.length, 2, 'one run per page');
    const [first, second] = await Promise.all(runs.map((info) => stack.client.workflow.getHandle(refreshWorkflowId, info.runId).fetchHistory()));
    const firstShape = await refreshHistoryShape(first!);
    assert.deepEqual(firstShape.updates, ['pauseBook', 'resizeBook', 'resumeBook']);
    assert.ok(
      firstShape.silentChecks.some(({ statuses, othersInFlight }) => statuses.some(({ status }) => status === 'TERMINATED') && othersInFlight >= 1),
      JSON.stringify(firstShape.silentChecks),
    );
    assert.ok(firstShape.continuedAsNew, 'page 1 continued as new');
    assert.ok((await refreshHistoryShape(second!)).completed, 'page 2 completed');

    // A refresh names its children and its night after its own id: each replays under it.
    const replays = [
      { name: 'book-refresh-page-1-paused-resized-terminated', history: first! },
      { name: 'book-refresh-page-2-after-continue-as-new', history: second! },
    ];
    for (const { name, history } of replays) {
      await Worker.runReplayHistory(
        { ...productWorkflowCode(), dataConverter: workerDataConverterFor({ encryption: TEST_ENCRYPTION }), replayName: name },
        history,
        refreshWorkflowId,
      );
    }
    if (loadTestConfig().recordHistories) for (const { name, history } of replays) await recordHistory(name, history, refreshWorkflowId);
  });

  void it('cancels a refresh: connections in flight are cancelled, none starts after, and the report says so', async () => {
    const cadence = 'cancelling';
    await enrolLogins(cadence, 5, { pendingPolls: 3, pollIntervalMs: 1_000 });
    const { refreshWorkflowId } = await run(cadence, { window: { floor: 2, ceiling: 2, start: 2 } });
    await progressUntil(refreshWorkflowId, (progress) => progress.inFlight === 2, 'two connections in flight');
    const cancelling = await client.books.cancel(refreshWorkflowId, 'the test cancels');
    assert.equal(cancelling.status, 'cancelling');
    const report = await reportOf(refreshWorkflowId);
    assert.equal(report.status, 'cancelled');
    assert.equal(report.counts.done, 5, 'every login of the page has an outcome');
    assert.ok(report.counts.cancelled >= 3, `in flight and not started: cancelled (${JSON.stringify(report.counts)})`);
    const events = (await stack.client.workflow.getHandle(refreshWorkflowId).fetchHistory()).events ?? [];
    const cancelAt = events.findIndex(
      (event) =>
        event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED &&
        event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'cancelBook',
    );
    assert.ok(cancelAt > 0, 'the cancel is in history');
    const startsAfter = events
      .slice(cancelAt)
      .filter(
        (event) =>
          event.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED &&
          event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowType?.name === 'connectionWorkflow',
      );
    assert.equal(startsAfter.length, 0, 'no connection started after the cancel');
    const outcomes = await allOutcomes(report);
    // A child asked to start but cancelled before its start reached history never existed on the
    // server (the SDK drops the start command): its outcome is cancelled with an id no workflow has.
    // Under load both in-flight children can be such (seen twice at concurrency 3: one of two, then
    // both). Every child whose start is in history must be CANCELLED.
    const initiated = new Set(
      events
        .filter((event) => event.eventType === EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)
        .map((event) => event.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId),
    );
    for (const outcome of outcomes.filter((o) => o.outcome === 'cancelled' && o.workflowId && initiated.has(o.workflowId))) {
      const description = await stack.client.workflow.getHandle(outcome.workflowId!).describe();
      assert.equal(description.status.name, 'CANCELLED', `${outcome.workflowId} was cancelled`);
    }
  });

  void it('cancelled as a workflow (the Web UI, `temporal workflow cancel`), it cancels its connections and still writes its report', async () => {
    const cadence = 'cancelled-workflow';
    await enrolLogins(cadence, 3, { pendingPolls: 3, pollIntervalMs: 1_000 });
    const { refreshWorkflowId } = await run(cadence, { window: { floor: 1, ceiling: 1, start: 1 } });
    await progressUntil(refreshWorkflowId, (progress) => progress.inFlight === 1, 'a connection in flight');
    await stack.client.workflow.getHandle(refreshWorkflowId).cancel();
    const report = await reportOf(refreshWorkflowId);
    assert.equal(report.status, 'cancelled');
    assert.equal(report.counts.done, 3, JSON.stringify(report.counts));
    assert.equal(report.counts.cancelled, 3, 'the one in flight and the two not started');
  });

  void it('skips a login forgotten after its page was read and reports it forgotten, with no connection for it', async () => {
    const cadence = 'forgetting';
    // Visibility lists the newest enrolment first: the first login enrolled is the page's last.
    const logins = await enrolLogins(cadence, 4, { pendingPolls: 2, pollIntervalMs: 300 });
    const last = logins[0] as string;
    const { refreshWorkflowId } = await run(cadence, { window: { floor: 1, ceiling: 1, start: 1 } });
    await progressUntil(refreshWorkflowId, (progress) => progress.started >= 1, 'a first connection');
    const record = await client.logins.forget({ customerId: stack.customerId, loginId: last });
    assert.equal(record.book, 'removed');
    const report = await reportOf(refreshWorkflowId);
    const outcome = (await allOutcomes(report)).find((o) => o.loginId === last);
    assert.equal(outcome?.outcome, 'forgotten', JSON.stringify(outcome));
    assert.equal(report.counts.refreshed, 3);
    assert.equal((await runsOf(bookConnectionWorkflowId(stack.customerId, last, report.night))).length, 0, 'no connection for the forgotten login');
  });

  void it('halves the window when the service throttles the tenant (TOO_MANY_REQUESTS), and completes the book with nothing failed', async () => {
    const cadence = 'throttled';
    await enrolLogins(cadence, 16, { pollIntervalMs: 50 });
    const limit = (tenants: Record<string, number | null>, retryAfterSeconds: number | null) =>
      fetch(`${stack.sandboxUrl}/sandbox/rate-limits`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tenants, retryAfterSeconds }),
      });
    // 1 a second with a 5 s Retry-After: exceeded even by a slow, busy fleet, and a pause long enough for the refresh to see.
    assert.ok((await limit({ [stack.customerId]: 1 }, 5)).ok, 'the sandbox took the limit');
    try {
      const { refreshWorkflowId } = await run(cadence, { window: { floor: 1, ceiling: 8, start: 8 }, control: { throttleCheckMs: 0 } });
      const throttled = await progressUntil(
        refreshWorkflowId,
        (progress) => /throttled the tenant/.test(progress.window.lastChange?.reason ?? ''),
        'the window to react to the throttle',
        60_000,
      );
      const change = throttled.window.lastChange!;
      assert.equal(change.to, Math.max(1, Math.floor(change.from / 2)), `halved: ${JSON.stringify(change)}`);
      assert.ok((await limit({ [stack.customerId]: null }, null)).ok);
      const report = await reportOf(refreshWorkflowId, 120_000);
      assert.equal(report.counts.refreshed, 16);
      assert.equal(report.counts.failed, 0, JSON.stringify(report.counts.failedByType));
    } finally {
      await limit({ [stack.customerId]: null }, null);
    }
  });

  void it('grows the window while children are fast, shrinks it to its floor while the service is down, and completes the book after with nothing failed', async () => {
    const cadence = 'outage';
    await enrolLogins(cadence, 30, { pollIntervalMs: 50 });
    const control: BookRefreshInput['control'] = { slackMs: 50 };
    const { refreshWorkflowId } = await run(cadence, { pageSize: 100, window: { floor: 1, ceiling: 6, start: 1 }, control });
    const grown = await progressUntil(refreshWorkflowId, (progress) => progress.window.size >= 3, 'the window to grow', 60_000);
    // Judged by the live path where the server counts it (it does here), by the children's time elsewhere.
    assert.match(grown.window.lastChange?.reason ?? '', /live tasks waited at most \d+ ms to start .*and the service answers/);

    stack.setServiceFault('status=503');
    try {
      const shrunk = await progressUntil(
        refreshWorkflowId,
        (progress) => progress.window.size === 1,
        'the window at its floor while the service is down',
        60_000,
      );
      assert.match(shrunk.window.lastChange?.reason ?? '', /not keeping up|their best time/);
    } finally {
      stack.setServiceFault(undefined);
    }
    const report = await reportOf(refreshWorkflowId, 180_000);
    assert.equal(report.status, 'completed');
    assert.equal(report.counts.failed, 0, `nothing a retry fixes failed: ${JSON.stringify(report.counts.failedByType)}`);
    assert.equal(report.counts.refreshed, 30);
    assert.ok(
      report.windowChanges.some((change) => change.to > change.from),
      'grew',
    );
    assert.ok(
      report.windowChanges.some((change) => change.to === 1 && change.from > 1),
      'shrank to the floor',
    );
  });

  void it('two books refreshing at once publish their windows and each sizes its own as a share of both', async () => {
    const [first, second] = ['shared-a', 'shared-b'];
    await enrolLogins(first, 10, { pendingPolls: 2, pollIntervalMs: 200 });
    await enrolLogins(second, 10, { pendingPolls: 2, pollIntervalMs: 200 });
    const input = { window: { floor: 1, ceiling: 6, start: 3 }, control: { fleetCheckMs: 0 } };
    const refreshes = [await run(first, input), await run(second, input)];
    const seen = await Promise.all(
      refreshes.map(({ refreshWorkflowId }) =>
        progressUntil(refreshWorkflowId, (progress) => progress.window.share?.refreshes === 2, "the other book's window seen", 60_000),
      ),
    );
    for (const progress of seen) {
      const share = progress.window.share!;
      assert.equal(share.weight, 1);
      assert.equal(share.fleetWeight, 2, 'two books of weight 1');
      assert.ok(share.fleetSize >= progress.window.size, `the fleet's windows hold this one's: ${JSON.stringify(share)}`);
      assert.equal(share.size, share.fleetSize / 2);
    }
    // What each publishes is in its memo (encrypted with the rest), where the other read it.
    const memo = await stack.client.workflow
      .getHandle(refreshes[0]!.refreshWorkflowId)
      .describe()
      .then((description) => description.memo);
    const published = (memo?.window ?? {}) as Record<string, unknown>;
    assert.deepEqual(
      Object.keys(published)
        .sort()
        .filter((key) => key !== 'crowding' && key !== 'crowdingUntil'),
      ['size', 'weight'],
    );
    // A crowding is published with the time it holds until (after which the others leave it out).
    if (published.crowding !== undefined) assert.equal(typeof published.crowdingUntil, 'number', JSON.stringify(published));
    const reports = await Promise.all(refreshes.map(({ refreshWorkflowId }) => reportOf(refreshWorkflowId, 180_000)));
    for (const report of reports) {
      assert.equal(report.counts.refreshed, 10);
      assert.equal(report.counts.failed, 0, JSON.stringify(report.counts.failedByType));
    }
  });
});
