/**
 * The console's Audit page in headless Chromium (real dev server, worker, sandbox and console): an
 * answer sent through the console shows on the page with who sent it and its outcome, a tenant with
 * nothing shows that it has nothing, the export link carries the same query as JSON lines, and a
 * range the API refuses shows its message.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { describeScenario, SCENARIOS } from '../../sandbox/scenarios.js';
import { startAwaiting } from '../client/client-stack.js';
import { CONSOLE_TEST_TOKEN, startConsoleStack, stopConsoleStack, type ConsoleStack } from './console-stack.js';

const scenario = SCENARIOS.find((entry) => entry.username === 'security_question') ?? assert.fail('the security_question scenario');
const RIGHT_ANSWER = { challengeSetId: '1', responses: describeScenario(scenario).challengeSequence[0]?.answer ?? assert.fail('its first answer') };

let shared: ConsoleStack | undefined;

before(async () => {
  shared = await startConsoleStack();
});

after(async () => {
  await stopConsoleStack(shared);
});

describe('the Audit page in a browser', () => {
  it("shows the console's answer with who sent it and how it ended, exports the same query, and says why a range is refused", async () => {
    const { client, stack, baseUrl, context } = shared!;
    const workflowId = await startAwaiting(client, stack.customerId, 'security_question', scenario.institution);
    const answered = await fetch(`${baseUrl}/api/connections/${encodeURIComponent(workflowId)}/answer`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CONSOLE_TEST_TOKEN}`, 'content-type': 'application/json', origin: baseUrl },
      body: JSON.stringify(RIGHT_ANSWER),
    });
    assert.equal(answered.status, 200, await answered.text());

    const page = await context.newPage();
    try {
      const response = await page.goto(`${baseUrl}/audit?token=${encodeURIComponent(CONSOLE_TEST_TOKEN)}`);
      assert.equal(response?.status(), 200);
      const row = page.locator('#audit-entries tbody tr', { hasText: workflowId });
      await row.first().waitFor({ timeout: 10_000 });
      const cells = await row.first().locator('td').allTextContents();
      assert.deepEqual(cells.slice(1), ['the console token', 'answer', stack.customerId, workflowId, 'ok: accepted']);
      assert.match((await page.locator('#audit-message').textContent()) ?? '', new RegExp(`\\d+ entr(y|ies) of ${stack.customerId}`));

      await page.fill('#audit-customer', 'a-lender-with-nothing');
      await page.click('#audit-query button[type=submit]');
      await page.locator('#audit-empty').waitFor({ state: 'visible', timeout: 10_000 });
      assert.equal(await page.locator('#audit-entries tbody tr').count(), 0);
      const exported = await page.locator('#audit-export').getAttribute('href');
      assert.equal(exported, '/api/audit?customer=a-lender-with-nothing&format=jsonl');

      await page.fill('#audit-customer', '');
      await page.fill('#audit-from', '2026-11-29T12:00');
      await page.fill('#audit-to', '2026-11-29T11:00');
      await page.click('#audit-query button[type=submit]');
      await page.locator('#audit-message.error').waitFor({ timeout: 10_000 });
      assert.match((await page.locator('#audit-message').textContent()) ?? '', /from must be before to/);
    } finally {
      await page.close();
    }
  });
});
