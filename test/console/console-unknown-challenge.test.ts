/**
 * A challenge of a type the service's spec does not name, in the console's page (headless
 * Chromium), on a console of its own whose connections client is a stand-in holding one connection
 * awaiting an answer (no Temporal server: the end-to-end run through the sandbox's unknown_challenge
 * scenario is in console.test.ts). The page shows the type, the prompt and the Iterables as text
 * (never as markup), and sends the typed text keyed by the exact prompt, through the console's real
 * answer route; beside a known type, each is answered its own way in the one answer.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { loadTestConfig } from '../../scripts/lib/test-settings.js';
import { createConsoleServer, type ConsoleServer } from '../../src/console/app.js';
import type { ConnectionsClient, SecurityChallenge, SecurityResponses } from '../../src/client/index.js';
import type { AnswerOutcome, ConnectionState } from '../../src/contract/connection/connection-definitions.js';
import { ConnectionStateSchema } from '../../src/contract/connection/connection-schemas.js';
import { AnswerRejectedError } from '../../src/client/errors.js';
import { checkAnswer, describeProblems } from '../../src/workflows/connection/challenges.js';
import { tempAuditTrail } from '../helpers/audit.js';

const CHROMIUM = loadTestConfig().chromiumPath;
const TOKEN = 'console-unknown-challenge-token-0123456789';
const WORKFLOW_ID = 'connection-demo-lender:unknown-1';
/** Where the page tests leave their screenshots (gitignored), as console-stack.ts's CONSOLE_ARTIFACTS. */
const ARTIFACTS = fileURLToPath(new URL('../../artifacts/console/', import.meta.url));
const MARKUP = '<img src=x onerror="window.__injected=1">';

const SMS: SecurityChallenge = { Type: 'SmsCode', Prompt: `Enter the code we sent by SMS ${MARKUP}` };
const WITH_CHOICES: SecurityChallenge = {
  Type: 'PickOneOrType',
  Prompt: 'Which branch opened your account?',
  Iterables: ['Downtown', `Uptown ${MARKUP}`, 'x'.repeat(1000)],
};
const QUESTION: SecurityChallenge = { Type: 'QuestionAndAnswer', Prompt: 'What city were you born in?' };
/** Named like an Object method: still a type the spec does not name. */
const CONSTRUCTOR: SecurityChallenge = { Type: 'constructor', Prompt: 'Type the word on your card' };

interface Answered {
  readonly workflowId: string;
  readonly challengeSetId: string;
  readonly responses: SecurityResponses;
}

/** The one connection the stand-in holds, and the answers the console passed to it. */
const held: { state: ConnectionState; answers: Answered[] } = { state: awaiting([SMS]), answers: [] };

function awaiting(challenges: SecurityChallenge[], id = 'set-1'): ConnectionState {
  const now = new Date();
  return ConnectionStateSchema.parse({
    status: 'AwaitingAnswer',
    mode: 'live',
    customerId: 'demo-lender',
    institution: 'SandboxBank',
    requestId: '11111111-2222-4333-8444-555555555555',
    challengeSet: { id, challenges, presentedAt: now.toISOString(), attempt: 1, answerBy: new Date(now.getTime() + 600_000).toISOString() },
    totalPolls: 0,
    sessionRestarts: 0,
    retrieved: [],
    startedAt: now.toISOString(),
    updatedAt: now.toISOString(),
  });
}

/**
 * What the console's routes call on its client for this page; anything else is refused by name. An
 * answer is checked as the real client checks it before sending (the workflow's own rules).
 */
function standInConnections(): ConnectionsClient {
  const answer = (workflowId: string, body: { challengeSetId: string; responses: SecurityResponses }): Promise<AnswerOutcome> => {
    const problems = checkAnswer(held.state.challengeSet?.challenges ?? [], body.responses);
    if (problems.length > 0) return Promise.reject(new AnswerRejectedError(workflowId, 'client', describeProblems(problems), body.challengeSetId));
    held.answers.push({ workflowId, ...body });
    held.state = { ...held.state, status: 'Retrieving', challengeSet: undefined };
    return Promise.resolve({ outcome: 'accepted', status: 'Retrieving' });
  };
  const known: Record<string, unknown> = {
    list: () => Promise.resolve([]),
    getState: (workflowId: string) => (workflowId === WORKFLOW_ID ? Promise.resolve(held.state) : Promise.reject(new Error(`no connection ${workflowId}`))),
    callbackDelivery: () => Promise.resolve(undefined),
    activity: () => Promise.resolve([]),
    actingAs: () => ({ answer }),
    counts: { tenants: () => Promise.resolve({ tenants: [], more: false }), ofTenant: () => Promise.reject(new Error('no tenants here')) },
    schedules: { list: () => Promise.resolve([]) },
  };
  const client: unknown = standIn(known, 'connections');
  return client as ConnectionsClient;
}

/** `known`'s members; any other is a stand-in that throws, naming itself, once called. */
function standIn(known: Record<string, unknown>, path: string): unknown {
  const refuse = (): never => {
    throw new Error(`the page reached ${path}, which this test does not stand in for`);
  };
  return new Proxy(refuse, {
    get: (_target, key) => {
      const name = String(key);
      if (typeof key === 'string' && Object.hasOwn(known, key)) {
        const value = known[key];
        return typeof value === 'object' && value !== null ? standIn(value as Record<string, unknown>, `${path}.${name}`) : value;
      }
      return standIn({}, `${path}.${name}`);
    },
  });
}

let consoleServer: ConsoleServer;
let baseUrl: string;
let browser: Browser;
let context: BrowserContext;

before(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium, or set CHROMIUM_PATH`);
  await mkdir(ARTIFACTS, { recursive: true });
  consoleServer = createConsoleServer({ audit: tempAuditTrail(), connections: standInConnections(), token: TOKEN, defaultCustomerId: 'demo-lender' });
  baseUrl = (await consoleServer.listen(0, '127.0.0.1')).url;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
});

after(async () => {
  await context?.close();
  await browser?.close();
  await consoleServer?.close();
});

/** Opens the held connection's form in a signed-in page. */
async function openForm(state: ConnectionState): Promise<Page> {
  held.state = state;
  held.answers = [];
  const page = await context.newPage();
  assert.equal((await page.goto(`${baseUrl}/?token=${encodeURIComponent(TOKEN)}`))?.status(), 200);
  await page.goto(`${baseUrl}/#connection=${encodeURIComponent(WORKFLOW_ID)}`);
  await page.locator('#answer-form').waitFor();
  return page;
}

async function sendAndAwaitAcceptance(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Send answer' }).click();
  await page.locator('#message.ok', { hasText: 'Answer accepted' }).waitFor();
}

void describe('a challenge type the spec does not name, in the console page', () => {
  void it('shows its type and prompt as text and sends the typed text keyed by the exact prompt', async () => {
    const page = await openForm(awaiting([SMS]));
    const box = page.locator('fieldset.challenge');
    assert.equal(await box.getAttribute('data-type'), 'SmsCode');
    assert.equal(await box.locator('legend .type').textContent(), 'SmsCode');
    assert.match((await box.locator('legend').textContent()) ?? '', /Enter the code we sent by SMS <img src=x onerror="window.__injected=1">/);
    assert.equal(await page.locator('#detail img').count(), 0, 'the prompt is text, not markup');
    assert.match((await box.locator('.note').textContent()) ?? '', /SmsCode is a challenge type the service's spec does not name/);
    assert.equal(await box.locator('ul.choices').count(), 0, 'no choices were sent');

    // Nothing typed: refused in the page, nothing sent.
    await page.getByRole('button', { name: 'Send answer' }).click();
    await page.locator('#message.error', { hasText: 'type the answer' }).waitFor();
    assert.equal(held.answers.length, 0);

    await box.getByRole('textbox', { name: 'Answer' }).fill(' 246810 ');
    await sendAndAwaitAcceptance(page);
    assert.deepEqual(held.answers, [{ workflowId: WORKFLOW_ID, challengeSetId: 'set-1', responses: { [SMS.Prompt]: [' 246810 '] } }]);
    assert.equal(await page.evaluate(() => (window as unknown as { __injected?: number }).__injected), undefined);
    await page.close();
  });

  void it('lists its Iterables as text, for reference, and still takes free text', async () => {
    const page = await openForm(awaiting([WITH_CHOICES]));
    const box = page.locator('fieldset.challenge');
    const items = box.locator('ul.choices li');
    assert.equal(await items.count(), 3);
    assert.equal(await items.nth(0).textContent(), 'Downtown');
    assert.equal(await items.nth(1).textContent(), `Uptown ${MARKUP}`);
    assert.equal(await page.locator('#detail img').count(), 0, 'a choice is text, not markup');
    // A long one is cut in the list; its whole text is its title.
    assert.equal(await items.nth(2).textContent(), `${'x'.repeat(300)}… (1000 characters)`);
    assert.equal(await items.nth(2).getAttribute('title'), 'x'.repeat(1000));
    assert.equal(await box.locator('input[type="radio"], input[type="checkbox"]').count(), 0, 'the choices are not enforced');
    await page.screenshot({ path: `${ARTIFACTS}unknown-type-choices.png`, fullPage: true });
    await box.getByRole('textbox', { name: 'Answer' }).fill('Main Street');
    await sendAndAwaitAcceptance(page);
    assert.deepEqual(held.answers[0]?.responses, { [WITH_CHOICES.Prompt]: ['Main Street'] });
    await page.close();
  });

  void it('answers it beside a known type in one answer, and a type named like an Object method too', async () => {
    const page = await openForm(awaiting([QUESTION, SMS, CONSTRUCTOR]));
    const boxes = page.locator('fieldset.challenge');
    assert.deepEqual(await boxes.evaluateAll((nodes) => nodes.map((node) => (node as HTMLElement).dataset.type)), [
      'QuestionAndAnswer',
      'SmsCode',
      'constructor',
    ]);
    assert.equal(await boxes.nth(0).locator('.note').count(), 0, 'a known type is shown as before');
    await boxes.nth(0).getByRole('textbox').fill('Montreal');
    await boxes.nth(1).getByRole('textbox', { name: 'Answer' }).fill('246810');
    await boxes.nth(2).getByRole('textbox', { name: 'Answer' }).fill('PLUM');
    await page.screenshot({ path: `${ARTIFACTS}unknown-type-beside-known.png`, fullPage: true });
    await sendAndAwaitAcceptance(page);
    assert.deepEqual(held.answers[0]?.responses, { [QUESTION.Prompt]: ['Montreal'], [SMS.Prompt]: ['246810'], [CONSTRUCTOR.Prompt]: ['PLUM'] });
    await page.close();
  });
});
