/**
 * The console's Books page and its JSON API end to end: real dev server, worker with the book
 * workflows, sandbox, the console's HTTP server, and the page in headless Chromium pausing, pinning,
 * resuming and cancelling a running refresh beside the latest report. Screenshots land in
 * artifacts/console/; docs/images/books.png is taken by `npm run docs:screenshots`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { BookReportNotReadyError, type BookProgress, type BookReport, type ConnectionsClient } from '../../src/client/index.js';
import type { ConnectionStack } from '../helpers/connection-stack.js';
import { docsScreenshot } from '../helpers/docs-screenshot.js';
import { waitFor } from '../helpers/temporal.js';
import { CONSOLE_ARTIFACTS, CONSOLE_TEST_TOKEN, startConsoleStack, stopConsoleStack, type ConsoleStack } from './console-stack.js';

const ARTIFACTS = CONSOLE_ARTIFACTS;
const TOKEN = CONSOLE_TEST_TOKEN;
const bearer = { authorization: `Bearer ${TOKEN}` };

let stack: ConnectionStack;
let client: ConnectionsClient;
let baseUrl: string;
let context: BrowserContext;
let shared: ConsoleStack | undefined;

before(async () => {
  shared = await startConsoleStack();
  ({ stack, client, baseUrl, context } = shared);
});

after(async () => {
  await stopConsoleStack(shared);
});

let logins = 0;

/** Enrols `count` fresh saved logins (one sandbox username each) in `cadence`: instant ones, or each pending for one 10 s poll. */
async function book(cadence: string, count: number, pendingPolls: 0 | 1): Promise<void> {
  for (let index = 0; index < count; index += 1) {
    logins += 1;
    const response = await fetch(`${stack.sandboxUrl}/sandbox/${encodeURIComponent(stack.customerId)}/logins`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: `pending_ms_${logins}`, pendingPolls }),
    });
    assert.ok(response.ok, `the sandbox saved a login: ${response.status}`);
    const { LoginId } = (await response.json()) as { LoginId: string };
    await client.books.enrol({ customerId: stack.customerId, loginId: LoginId, cadence, products: { accountsDetail: {} } });
  }
  await waitFor(async () => (await client.books.count({ customerId: stack.customerId, cadence })) === count, { describe: `${count} logins in ${cadence}` });
}

/** A refresh of `cadence` that ended, for the latest report. */
async function endedRefresh(cadence: string): Promise<string> {
  await book(cadence, 2, 0);
  const { refreshWorkflowId } = await client.books.run({ customerId: stack.customerId, cadence });
  await waitFor(
    async () => {
      try {
        return await client.books.report(refreshWorkflowId);
      } catch (error) {
        if (error instanceof BookReportNotReadyError) return undefined;
        throw error;
      }
    },
    { timeoutMs: 60_000, intervalMs: 250, describe: `the report of ${refreshWorkflowId}` },
  );
  return refreshWorkflowId;
}

/** A refresh of `cadence` that stays running for tens of seconds (one connection at a time to start). */
async function runningRefresh(cadence: string): Promise<string> {
  await book(cadence, 3, 1);
  const { refreshWorkflowId } = await client.books.run({ customerId: stack.customerId, cadence }, { window: { floor: 1, ceiling: 3, start: 1 } });
  await waitFor(async () => (await client.books.progress(refreshWorkflowId)).started >= 1, { describe: 'a first connection' });
  return refreshWorkflowId;
}

function post(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { ...bearer, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const refreshPath = (refreshId: string, action = '') => `/api/books/refreshes/${encodeURIComponent(refreshId)}${action ? `/${action}` : ''}`;

interface Listed {
  customerId: string;
  refreshes: Array<{ refreshWorkflowId: string; executionStatus: string; progress?: BookProgress; report?: BookReport; problem?: string }>;
  latestReport: BookReport | null;
}

void describe('the Books API of the console', () => {
  void it('lists refreshes with their progress or report and the latest report, and pauses, resizes, resumes and cancels one', async () => {
    const ended = await endedRefresh('api-done');
    const running = await runningRefresh('api-live');

    const listed = await waitFor(
      async () => {
        const response = await fetch(`${baseUrl}/api/books/refreshes`, { headers: bearer });
        assert.equal(response.status, 200);
        const body = (await response.json()) as Listed;
        const live = body.refreshes.find((refresh) => refresh.refreshWorkflowId === running);
        return live && body.refreshes.some((refresh) => refresh.refreshWorkflowId === ended && refresh.report) ? body : undefined;
      },
      { describe: 'both refreshes listed' },
    );
    assert.equal(listed.customerId, stack.customerId, "the console's default tenant");
    assert.deepEqual(
      listed.refreshes.map((refresh) => refresh.refreshWorkflowId),
      [running, ended],
      'newest first',
    );
    const live = listed.refreshes[0];
    assert.equal(live?.progress?.status, 'running');
    assert.equal(live.progress.total, 3);
    assert.equal(live.progress.window.floor, 1);
    assert.equal(listed.refreshes[1]?.report?.counts.refreshed, 2);
    assert.equal(listed.latestReport?.refreshWorkflowId, ended);
    const onlyDone = (await (await fetch(`${baseUrl}/api/books/refreshes?cadence=api-done`, { headers: bearer })).json()) as Listed;
    assert.deepEqual(
      onlyDone.refreshes.map((refresh) => refresh.refreshWorkflowId),
      [ended],
    );

    const progress = await fetch(`${baseUrl}${refreshPath(running)}`, { headers: bearer });
    assert.equal(progress.status, 200);
    assert.equal(((await progress.json()) as { progress: BookProgress }).progress.refreshWorkflowId, running);
    const notReady = await fetch(`${baseUrl}${refreshPath(running, 'report')}`, { headers: bearer });
    assert.equal(notReady.status, 409);
    assert.equal(((await notReady.json()) as { error: string }).error, 'ReportNotReady');
    const report = (await (await fetch(`${baseUrl}${refreshPath(ended, 'report')}`, { headers: bearer })).json()) as { report: BookReport };
    assert.equal(report.report.status, 'completed');
    const page = (await (await fetch(`${baseUrl}${refreshPath(ended, 'report/pages/1')}`, { headers: bearer })).json()) as {
      page: { outcomes: Array<{ outcome: string }> };
    };
    assert.deepEqual(
      page.page.outcomes.map((outcome) => outcome.outcome),
      ['refreshed', 'refreshed'],
    );

    const paused = await post(refreshPath(running, 'pause'));
    assert.equal(paused.status, 200);
    assert.equal(((await paused.json()) as { progress: BookProgress }).progress.status, 'paused');
    const pinned = await post(refreshPath(running, 'resize'), { size: 2 });
    assert.equal(pinned.status, 200);
    assert.equal(((await pinned.json()) as { progress: BookProgress }).progress.window.pinned, 2);
    const tooBig = await post(refreshPath(running, 'resize'), { size: 5000 });
    assert.equal(tooBig.status, 400);
    assert.match(((await tooBig.json()) as { message: string }).message, /invalid book request: resize: size: /);
    const resumed = await post(refreshPath(running, 'resume'));
    assert.equal(((await resumed.json()) as { progress: BookProgress }).progress.status, 'running');
    const unpinned = await post(refreshPath(running, 'resize'), { unpin: true });
    assert.equal(((await unpinned.json()) as { progress: BookProgress }).progress.window.pinned, undefined);

    const cancelled = await post(refreshPath(running, 'cancel'), { reason: 'the console test is done' });
    assert.equal(cancelled.status, 200);
    const final = await waitFor(
      async () => {
        const response = await fetch(`${baseUrl}${refreshPath(running, 'report')}`, { headers: bearer });
        return response.status === 200 ? ((await response.json()) as { report: BookReport }).report : undefined;
      },
      { timeoutMs: 30_000, describe: 'the cancelled refresh to end' },
    );
    assert.equal(final.status, 'cancelled');
    const afterEnd = await post(refreshPath(running, 'pause'));
    assert.ok([404, 409].includes(afterEnd.status), `an ended refresh refuses a pause: ${afterEnd.status}`);
  });

  void it('refuses bad book requests, naming the problem, behind the token and same-origin', async () => {
    const unknown = `book-${stack.customerId}:nightly-2026-01-01T00:00:00Z`;
    const cases: Array<[Promise<Response>, number, RegExp]> = [
      [fetch(`${baseUrl}/api/books/refreshes?limit=0`, { headers: bearer }), 400, /invalid query: limit/],
      [fetch(`${baseUrl}/api/books/refreshes?tenant=x`, { headers: bearer }), 400, /invalid query/],
      [fetch(`${baseUrl}/api/books/refreshes?cadence=Night%20Time`, { headers: bearer }), 400, /cadence: must be lower-case/],
      [fetch(`${baseUrl}${refreshPath('connection-x-1')}`, { headers: bearer }), 400, /refresh id: must be a book refresh's workflow id/],
      [fetch(`${baseUrl}${refreshPath(unknown)}`, { headers: bearer }), 404, /no book refresh/],
      [fetch(`${baseUrl}${refreshPath(unknown, 'report/pages/0')}`, { headers: bearer }), 400, /invalid page/],
      [post(refreshPath(unknown, 'resize'), {}), 400, /invalid body: must be \{ size \} or \{ unpin: true \}/],
      [post(refreshPath(unknown, 'resize')), 415, /application\/json/],
      [post(refreshPath(unknown, 'pause'), { reason: 'x', size: 2 }), 400, /invalid body: .*size/],
      [post(refreshPath(unknown, 'resume'), { reason: 'x' }), 400, /invalid body: .*reason/],
      [post(refreshPath(unknown, 'cancel'), undefined, { origin: 'https://evil.example' }), 403, /cross-origin/],
      [fetch(`${baseUrl}${refreshPath(unknown, 'pause')}`, { headers: bearer }), 405, /use POST/],
      [post(refreshPath(unknown, 'explode')), 404, /no such page/],
      [fetch(`${baseUrl}/api/books/refreshes`), 401, /./],
    ];
    for (const [request, status, message] of cases) {
      const response = await request;
      const body = (await response.json()) as { message: string };
      assert.equal(response.status, status, body.message);
      assert.match(body.message, message);
    }
    assert.equal((await fetch(`${baseUrl}/books`)).status, 401, 'the page is behind the token too');
  });
});

void describe('the Books page in a browser', () => {
  async function openBooks(): Promise<Page> {
    const page = await context.newPage();
    const response = await page.goto(`${baseUrl}/books?token=${encodeURIComponent(TOKEN)}`);
    assert.equal(response?.status(), 200);
    assert.equal(new URL(page.url()).pathname, '/books');
    return page;
  }

  void it('shows each refresh with its progress and the latest report, and pauses, pins, unpins, resumes and cancels one', async () => {
    const ended = await endedRefresh('page-done');
    const running = await runningRefresh('page-live');
    const page = await openBooks();
    const row = page.locator(`#refreshes tr[data-refresh-id="${running}"]`);
    await row.waitFor({ timeout: 15_000 });
    await page.locator('#latest-report dd', { hasText: ended }).waitFor();
    assert.match((await row.textContent()) ?? '', /running/);
    assert.match((await row.textContent()) ?? '', /\d+\/3 \(\d+%\)/);
    assert.match((await page.locator('#latest-report').textContent()) ?? '', /Refreshed2/);

    await row.getByRole('button', { name: 'Pause' }).click();
    await page.locator('#books-message.ok', { hasText: `Pause: ${running} is paused` }).waitFor();
    await row.locator('.status', { hasText: 'paused' }).waitFor();

    await row.getByRole('spinbutton').fill('2');
    await row.getByRole('button', { name: 'Resize' }).click();
    await page.locator('#books-message.ok', { hasText: `Pinned at 2: ${running}` }).waitFor();
    await row.locator('td.window', { hasText: 'pinned at 2' }).waitFor();
    assert.equal((await client.books.progress(running)).window.pinned, 2);
    await page.screenshot({ path: `${ARTIFACTS}books-paused.png`, fullPage: true });

    await row.getByRole('button', { name: 'Unpin' }).click();
    await page.locator('#books-message.ok', { hasText: `Unpinned: ${running}` }).waitFor();
    await row.getByRole('button', { name: 'Resume' }).click();
    await row.locator('.status', { hasText: 'running' }).waitFor();
    // The docs' picture of the page: a refresh running, the latest report below.
    await docsScreenshot(page, 'books');

    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Cancel' }).click();
    await row.locator('.status', { hasText: 'cancelled' }).waitFor({ timeout: 30_000 });
    await page.locator('#latest-report dd', { hasText: running }).waitFor({ timeout: 10_000 });
    assert.equal(await row.getByRole('button').count(), 0, 'an ended refresh has no buttons');
    await page.screenshot({ path: `${ARTIFACTS}books-cancelled.png`, fullPage: true });
    await page.close();
  });

  void it("shows the refresh's refusal of a resize inline", async () => {
    const running = await runningRefresh('page-refuse');
    const page = await openBooks();
    const row = page.locator(`#refreshes tr[data-refresh-id="${running}"]`);
    await row.waitFor({ timeout: 15_000 });
    await row.getByRole('spinbutton').fill('5000');
    await row.getByRole('button', { name: 'Resize' }).click();
    const message = page.locator('#books-message.error');
    await message.waitFor();
    assert.match((await message.textContent()) ?? '', /resize .*: invalid book request: resize: size: /);
    await client.books.cancel(running, 'the test is done');
    await page.close();
  });
});
