/**
 * The operator console end to end: real dev server, worker, sandbox, the console's HTTP server, and
 * the page in headless Chromium answering a challenge of every type. Screenshots land in
 * artifacts/console/ (gitignored); docs/images/console.png is taken by `npm run docs:screenshots`
 * (test/helpers/docs-screenshot.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { createConsoleServer } from '../../src/console/app.js';
import type { ConnectionsClient, SecurityChallenge, SecurityResponses } from '../../src/client/index.js';
import { COOKIE_NAME } from '../../src/console/auth.js';
import { MAX_BODY_BYTES } from '../../src/http/json-http.js';
import { ANSWER_LIMITS } from '../../src/workflows/connection/challenges.js';
import type { ConnectionStack } from '../helpers/connection-stack.js';
import { docsScreenshot } from '../helpers/docs-screenshot.js';
import { waitFor } from '../helpers/temporal.js';
import { startAwaiting as startAwaiting_ } from '../client/client-stack.js';
import { CONSOLE_ARTIFACTS, CONSOLE_TEST_TOKEN, startConsoleStack, stopConsoleStack, type ConsoleStack } from './console-stack.js';
import { correctAnswer } from '../client/scenario-answers.js';
import { tempAuditTrail } from '../helpers/audit.js';

const ARTIFACTS = CONSOLE_ARTIFACTS;
const TOKEN = CONSOLE_TEST_TOKEN;

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

function startAwaiting(username: string, institution: string): Promise<string> {
  return startAwaiting_(client, stack.customerId, username, institution);
}

async function openSignedIn(): Promise<Page> {
  const page = await context.newPage();
  const response = await page.goto(`${baseUrl}/?token=${encodeURIComponent(TOKEN)}`);
  assert.equal(response?.status(), 200);
  assert.equal(new URL(page.url()).search, '', 'the token leaves the address bar');
  return page;
}

async function openConnection(page: Page, workflowId: string): Promise<void> {
  await page.goto(`${baseUrl}/#connection=${encodeURIComponent(workflowId)}`);
  await page.locator('#answer-form').waitFor();
}

/** Fills the form for one challenge set with the sandbox's correct answers, then sends it. */
async function answerInPage(page: Page, workflowId: string, answer: SecurityResponses, screenshot: string): Promise<void> {
  const state = await client.getState(workflowId);
  const set = state.challengeSet;
  assert.ok(set, 'a challenge set is presented');
  await page.locator('#answer-form h3', { hasText: `Challenge set ${set.id}` }).waitFor();
  let sentByButton = false;
  for (const [index, challenge] of set.challenges.entries()) {
    const box = page.locator('fieldset.challenge').nth(index);
    sentByButton = (await fill(box, challenge, answer)) || sentByButton;
  }
  await page.screenshot({ path: `${ARTIFACTS}${screenshot}.png`, fullPage: true });
  if (!sentByButton) await page.getByRole('button', { name: 'Send answer' }).click();
  await page.locator('#message.ok', { hasText: 'Answer accepted' }).waitFor();
}

/** Returns true when filling the challenge also sent the form (the VERIFIED button). */
async function fill(box: Locator, challenge: SecurityChallenge, answer: SecurityResponses): Promise<boolean> {
  const values = answer[challenge.Prompt] ?? [];
  switch (challenge.Type) {
    case 'QuestionAndAnswer':
      if (challenge.Iterables?.length) {
        await box.locator('select').selectOption(values[0] ?? '');
        await box.locator('input[type="text"]').fill(values[1] ?? '');
      } else {
        await box.locator('input[type="text"]').fill(values[0] ?? '');
      }
      return false;
    case 'MultipleChoice':
      await box.getByRole('radio', { name: values[0] ?? '', exact: true }).check();
      return false;
    case 'MultipleChoiceMultipleAnswers':
      for (const value of values) await box.getByRole('checkbox', { name: value, exact: true }).check();
      return false;
    case 'TextOrCall': {
      const phone = (challenge.Iterables ?? []).find((option) => option in answer) ?? '';
      await box.getByRole('radio', { name: phone, exact: true }).check();
      await box.getByRole('radio', { name: answer[phone]?.[0] === 'Call' ? 'Voice call' : 'Text message' }).check();
      return false;
    }
    case 'ImageSelection': {
      const index = (challenge.Iterables ?? []).indexOf(values[0] ?? '');
      assert.ok(index >= 0, 'the correct image is among those offered');
      assert.equal(await box.locator('img').count(), 16);
      await box.locator(`button[data-index="${index}"]`).click();
      assert.equal(await box.locator(`button[data-index="${index}"]`).getAttribute('aria-pressed'), 'true');
      return false;
    }
    case 'WaitUntilEUAccept':
      await box.page().screenshot({ path: `${ARTIFACTS}trusted-device.png`, fullPage: true });
      await box.getByRole('button', { name: 'VERIFIED' }).click();
      return true;
    default:
      // A type the spec does not name: its type shown, one free-text field keyed by its prompt.
      assert.equal(await box.locator('legend .type').textContent(), challenge.Type);
      await box.getByRole('textbox', { name: 'Answer' }).fill(values[0] ?? '');
      return false;
  }
}

async function expectCompleted(page: Page, screenshot: string): Promise<void> {
  await page.locator('#status', { hasText: 'Completed' }).waitFor({ timeout: 30_000 });
  await page.screenshot({ path: `${ARTIFACTS}${screenshot}.png`, fullPage: true });
}

void describe('the operator console in a browser', () => {
  void it('lists a connection awaiting an answer and opens it on click', async () => {
    const id = await startAwaiting('security_question', 'SandboxBank');
    const page = await openSignedIn();
    const entry = page.locator('#awaiting button', { hasText: id });
    await entry.waitFor({ timeout: 15_000 });
    await page.screenshot({ path: `${ARTIFACTS}list.png`, fullPage: true });
    await entry.click();
    await page.locator('#status', { hasText: 'AwaitingAnswer' }).waitFor();
    // The docs' picture of the console: the connection in the list, its challenge open beside it.
    await page.locator('#answer-form h3', { hasText: 'Challenge set' }).waitFor();
    await docsScreenshot(page, 'console');
    await answerInPage(page, id, await correctAnswer(stack.sandboxUrl, 'security_question', 0), 'question-and-answer');
    await expectCompleted(page, 'question-and-answer-completed');
    await page.close();
  });

  void it('answers a security question, then picks the image among 16 pictures', async () => {
    const id = await startAwaiting('image_selection', 'SandboxPictureBank');
    const page = await openSignedIn();
    await openConnection(page, id);
    await answerInPage(page, id, await correctAnswer(stack.sandboxUrl, 'image_selection', 0), 'image-selection-question');
    await answerInPage(page, id, await correctAnswer(stack.sandboxUrl, 'image_selection', 1), 'image-selection');
    await expectCompleted(page, 'image-selection-completed');
    await page.close();
  });

  void it('answers multiple choice and multiple answers together, then chooses three new questions', async () => {
    const id = await startAwaiting('reset_questions', 'SandboxCreditUnion');
    const page = await openSignedIn();
    await openConnection(page, id);
    await answerInPage(page, id, await correctAnswer(stack.sandboxUrl, 'reset_questions', 0), 'multiple-choice');
    await answerInPage(page, id, await correctAnswer(stack.sandboxUrl, 'reset_questions', 1), 'choose-questions');
    await expectCompleted(page, 'reset-questions-completed');
    await page.close();
  });

  void it('chooses a phone and Text or Call, then enters the code sent', async () => {
    const id = await startAwaiting('two_step_code', 'SandboxMobileBank');
    const page = await openSignedIn();
    await openConnection(page, id);
    await answerInPage(page, id, await correctAnswer(stack.sandboxUrl, 'two_step_code', 0), 'text-or-call');
    await answerInPage(page, id, await correctAnswer(stack.sandboxUrl, 'two_step_code', 1), 'text-or-call-code');
    await expectCompleted(page, 'text-or-call-completed');
    await page.close();
  });

  void it('confirms a trusted-device approval with the VERIFIED button', async () => {
    const id = await startAwaiting('trusted_device', 'SandboxDeviceBank');
    const page = await openSignedIn();
    await openConnection(page, id);
    await answerInPage(page, id, await correctAnswer(stack.sandboxUrl, 'trusted_device', 0), 'trusted-device-sent');
    await expectCompleted(page, 'trusted-device-completed');
    await page.close();
  });

  void it('answers a challenge type the spec does not name with free text, beside a security question', async () => {
    const id = await startAwaiting('unknown_challenge_mixed', 'SandboxBank');
    const page = await openSignedIn();
    await openConnection(page, id);
    const unknown = page.locator('fieldset.challenge[data-type="PlainQuestion"]');
    assert.match((await unknown.locator('legend').textContent()) ?? '', /What is the name of the street you grew up on\?/);
    assert.match((await unknown.locator('.note').textContent()) ?? '', /PlainQuestion is a challenge type the service's spec does not name/);
    await answerInPage(page, id, await correctAnswer(stack.sandboxUrl, 'unknown_challenge_mixed', 0), 'unknown-challenge-type');
    await expectCompleted(page, 'unknown-challenge-type-completed');
    await page.close();
  });

  void it("shows the validator's message inline when an answer is refused, and takes the corrected one", async () => {
    const id = await startAwaiting('token_code', 'SandboxTokenBank');
    const page = await openSignedIn();
    await openConnection(page, id);
    await page.locator('fieldset.challenge input[type="text"]').fill('12345');
    await page.getByRole('button', { name: 'Send answer' }).click();
    const message = page.locator('#message.error');
    await message.waitFor();
    assert.match((await message.textContent()) ?? '', /Answer refused: .*6 digits/);
    await page.screenshot({ path: `${ARTIFACTS}refused-answer.png`, fullPage: true });
    const state = await client.getState(id);
    assert.equal(state.challengeSet?.attempt, 1, 'the refused answer never reached the service');

    await answerInPage(page, id, await correctAnswer(stack.sandboxUrl, 'token_code', 0), 'token-code');
    await answerInPage(page, id, await correctAnswer(stack.sandboxUrl, 'token_code', 1), 'token-code-question');
    await expectCompleted(page, 'token-code-completed');
    await page.close();
  });

  void it('shows service-provided text as text, never as markup', async () => {
    const page = await openSignedIn();
    // A workflow id full of markup reaches the page through the list and the detail view.
    await page.goto(`${baseUrl}/#connection=${encodeURIComponent('<img src=x onerror=alert(1)>')}`);
    await page.locator('#summary .message.error').waitFor();
    assert.equal(await page.locator('#summary img').count(), 0);
    assert.match((await page.locator('#summary').textContent()) ?? '', /<img src=x onerror=alert\(1\)>/);
    await page.close();
  });
});

void describe('the console API', () => {
  const bearer = { authorization: `Bearer ${TOKEN}` };

  void it('answers 401 to the page and the API without the token or with a wrong one', async () => {
    for (const path of ['/', '/app.js', '/api/connections']) {
      const response = await fetch(`${baseUrl}${path}`, { redirect: 'manual' });
      assert.equal(response.status, 401, path);
    }
    assert.equal((await fetch(`${baseUrl}/api/connections`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
    assert.equal((await fetch(`${baseUrl}/?token=wrong`, { redirect: 'manual' })).status, 401);
    assert.equal((await fetch(`${baseUrl}/api/connections`, { headers: { cookie: `${COOKIE_NAME}=wrong` } })).status, 401);
  });

  void it('answers GET /healthz without the token, and nothing else there', async () => {
    const health = await fetch(`${baseUrl}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { state: 'RUNNING' });
    assert.equal((await fetch(`${baseUrl}/healthz`, { method: 'POST' })).status, 401, 'only GET is open');
  });

  void it('sets an HttpOnly cookie from ?token= once and redirects without it', async () => {
    const response = await fetch(`${baseUrl}/?token=${encodeURIComponent(TOKEN)}`, { redirect: 'manual' });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), '/');
    const cookie = response.headers.get('set-cookie') ?? '';
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    assert.doesNotMatch(cookie, /Secure/, 'on loopback the console is plain http');
    const page = await fetch(`${baseUrl}/`, { headers: { cookie: cookie.split(';')[0] ?? '' } });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    // Beyond loopback (behind a TLS proxy) the cookie is Secure: a browser never sends it in clear.
    const exposed = createConsoleServer({ audit: tempAuditTrail(), connections: client, token: TOKEN, secureCookie: true });
    try {
      const url = (await exposed.listen(0)).url;
      const secure = await fetch(`${url}/?token=${encodeURIComponent(TOKEN)}`, { redirect: 'manual' });
      assert.match(secure.headers.get('set-cookie') ?? '', /; Secure/);
    } finally {
      await exposed.close();
    }
  });

  void it('lists connections with a bearer token and refuses an unknown status', async () => {
    const ok = await fetch(`${baseUrl}/api/connections?status=any&limit=5`, { headers: bearer });
    assert.equal(ok.status, 200);
    assert.ok(Array.isArray(((await ok.json()) as { connections: unknown[] }).connections));
    const bad = await fetch(`${baseUrl}/api/connections?status=Sleeping`, { headers: bearer });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { message: string }).message, /invalid query: status/);
  });

  void it('refuses answer bodies that are not JSON, malformed, oversized or cross-origin, naming the problem', async () => {
    const id = await startAwaiting('security_question', 'SandboxBank');
    const url = `${baseUrl}/api/connections/${encodeURIComponent(id)}/answer`;
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(url, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json', ...headers }, body });

    const notJson = await post('{');
    assert.equal(notJson.status, 400);
    assert.match(((await notJson.json()) as { message: string }).message, /not JSON/);

    const missing = await post(JSON.stringify({ responses: { a: ['b'] } }));
    assert.equal(missing.status, 400);
    assert.match(((await missing.json()) as { message: string }).message, /challengeSetId/);

    const emptyAnswers = await post(JSON.stringify({ challengeSetId: '1', responses: { a: [] } }));
    assert.equal(emptyAnswers.status, 400);
    assert.match(((await emptyAnswers.json()) as { message: string }).message, /responses\.a: needs at least one answer/);

    const huge = await post(JSON.stringify({ challengeSetId: '1', responses: { a: ['x'.repeat(MAX_BODY_BYTES)] } }));
    assert.equal(huge.status, 413);

    const text = await post('hello', { 'content-type': 'text/plain' });
    assert.equal(text.status, 415);

    const foreign = await post(JSON.stringify({ challengeSetId: '1', responses: { a: ['b'] } }), { origin: 'https://evil.example' });
    assert.equal(foreign.status, 403);

    const state = await client.getState(id);
    const wrongPrompt = await post(JSON.stringify({ challengeSetId: state.challengeSet?.id, responses: { 'Not asked': ['x'] } }));
    assert.equal(wrongPrompt.status, 422);
    const refused = (await wrongPrompt.json()) as { error: string; message: string };
    assert.equal(refused.error, 'AnswerRejected');
    assert.match(refused.message, /"Not asked" was not asked/);

    // Within the body limit but past an answer's size limit: refused naming the limit, nothing sent.
    const oversized = await post(
      JSON.stringify({ challengeSetId: state.challengeSet?.id, responses: { 'Not asked': ['x'.repeat(ANSWER_LIMITS.answerChars + 1)] } }),
    );
    assert.equal(oversized.status, 422);
    assert.match(((await oversized.json()) as { message: string }).message, new RegExp(`the limit is ${ANSWER_LIMITS.answerChars} characters an answer`));
    assert.equal((await client.getState(id)).challengeSet?.attempt, 1, 'nothing reached the service');

    const unknown = await fetch(`${baseUrl}/api/connections/connection-nobody-here`, { headers: bearer });
    assert.equal(unknown.status, 404);
    await client.cancel(id);
  });

  void it('lists refresh schedules, pauses, resumes, triggers and deletes one, and forgets its login', async () => {
    const loginId = await stack.savedLogin('no_mfa');
    const ref = { customerId: stack.customerId, loginId };
    await client.schedules.schedule({
      ...ref,
      products: { accountsDetail: { WithTransactions: true } },
      cadence: { kind: 'interval', every: '1h' },
      paused: true,
    });
    const post = (path: string, body?: unknown, headers: Record<string, string> = {}) =>
      fetch(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { ...bearer, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    type Listed = {
      customerId: string;
      schedules: Array<{
        loginId: string;
        paused: boolean;
        cadence: { every?: string };
        latest: { outcome: string; trigger: string; result?: unknown } | null;
      }>;
    };
    const listed = async () => {
      const response = await fetch(`${baseUrl}/api/schedules`, { headers: bearer });
      assert.equal(response.status, 200);
      const body = (await response.json()) as Listed;
      assert.equal(body.customerId, stack.customerId, "the console's default tenant");
      return body.schedules.find((schedule) => schedule.loginId === loginId);
    };
    const first = await waitFor(listed, { describe: 'the schedule in the listing' });
    assert.equal(first.paused, true);
    assert.equal(first.cadence.every, '1h');

    assert.equal((await post(`/api/schedules/${loginId}/resume`)).status, 200);
    assert.equal((await client.schedules.describe(ref)).paused, false);
    const paused = await post(`/api/schedules/${loginId}/pause`, { note: 'held from the console test' });
    assert.equal(paused.status, 200);
    assert.deepEqual(await paused.json(), { loginId, action: 'pause' });
    assert.equal((await client.schedules.describe(ref)).note, 'held from the console test');

    assert.equal((await post(`/api/schedules/${loginId}/trigger`, { customer: stack.customerId })).status, 200);
    const ran = await waitFor(
      async () => {
        const schedule = await listed();
        return schedule?.latest?.trigger === 'schedule' && schedule.latest.outcome !== 'running' ? schedule.latest : undefined;
      },
      { timeoutMs: 30_000, describe: 'the triggered run to end' },
    );
    assert.equal(ran.outcome, 'completed');
    assert.equal(ran.result, undefined, "the listing leaves the run's data out");

    const forgot = await post(`/api/logins/${loginId}/forget`);
    assert.equal(forgot.status, 200);
    const { record } = (await forgot.json()) as { record: { loginId: string; schedule: string; card: string } };
    assert.deepEqual([record.loginId, record.schedule, record.card], [loginId, 'deleted', 'deleted']);
    assert.equal(await listed(), undefined, 'the forgotten login has no schedule');
    const missing = await post(`/api/schedules/${loginId}/delete`);
    assert.equal(missing.status, 200);
    assert.deepEqual(await missing.json(), { loginId, schedule: 'none' });
    const notFound = await post(`/api/schedules/${loginId}/trigger`);
    assert.equal(notFound.status, 404);
    assert.equal(((await notFound.json()) as { error: string }).error, 'ScheduleNotFound');
  });

  void it('refuses bad schedule and forget requests, naming the problem', async () => {
    const loginId = '11111111-2222-3333-4444-555555555555';
    const post = (path: string, init: RequestInit = {}) =>
      fetch(`${baseUrl}${path}`, { method: 'POST', ...init, headers: { ...bearer, ...(init.headers as Record<string, string> | undefined) } });

    const badLogin = await post('/api/schedules/not-a-uuid/pause');
    assert.equal(badLogin.status, 400);
    assert.match(((await badLogin.json()) as { message: string }).message, /invalid login: loginId: must be a UUID/);

    const badField = await post(`/api/schedules/${loginId}/pause`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ note: 'x', paused: true }),
    });
    assert.equal(badField.status, 400);
    assert.match(((await badField.json()) as { message: string }).message, /invalid body: .*paused/);

    const notJson = await post(`/api/logins/${loginId}/forget`, { headers: { 'content-type': 'application/json' }, body: '{' });
    assert.equal(notJson.status, 400);
    assert.match(((await notJson.json()) as { message: string }).message, /not JSON/);

    const foreign = await post(`/api/logins/${loginId}/forget`, { headers: { origin: 'https://evil.example' } });
    assert.equal(foreign.status, 403);
    const badQuery = await fetch(`${baseUrl}/api/schedules?tenant=x`, { headers: bearer });
    assert.equal(badQuery.status, 400);
    assert.match(((await badQuery.json()) as { message: string }).message, /invalid query/);

    assert.equal((await post(`/api/schedules/${loginId}/explode`)).status, 404, 'no such action');
    assert.equal((await fetch(`${baseUrl}/api/schedules/${loginId}/pause`, { headers: bearer })).status, 405);
    assert.equal((await fetch(`${baseUrl}/api/schedules`, { method: 'POST', headers: bearer })).status, 405);
    assert.equal((await fetch(`${baseUrl}/api/schedules`)).status, 401, 'behind the token');
  });
});
