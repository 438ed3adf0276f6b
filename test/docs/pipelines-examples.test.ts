/**
 * docs/pipelines.md's completion-callback receivers, as a lender copies them: docs/examples/receiver.ts
 * (node:http and the `standardwebhooks` npm package) and docs/examples/receiver.py (Python's standard
 * library only), each shown whole on the page (the page's block is the file, byte for byte), and the
 * page's event with the fields the product sends. Events are signed by the product's own signer
 * (src/callbacks/webhook-signature.ts) with a rotation's two secrets (test/helpers/callback-messages.ts),
 * and the TypeScript receiver accepts the event with either secret, over real HTTP too; refuses a
 * tampered body, another webhook-id, a secret the product does not hold and a timestamp ten minutes
 * old; acknowledges a repeated webhook-id without handing it on a second time; and answers a failed
 * store with a 500, so the retry is taken. No server, no Python: the fast tier. The Python receiver's
 * check of the same messages runs in the project's venv: test/docs/pipelines-examples-python.test.ts.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { callbackHandler, createReceiver, type CallbackEvent as ReceivedEvent } from '../../docs/examples/receiver.js';
import { parseMarkdown } from '../../scripts/lib/docs-check.js';
import { webhookIdOf, type CallbackEvent } from '../../src/contract/callbacks/callback-definitions.js';
import { completedEvent, NEW_SECRET, receiverCases, signed } from '../helpers/callback-messages.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const PAGE = join(REPO, 'docs/pipelines.md');

// The receiver's own type of the event takes the product's: a field renamed in the contract fails to compile here.
const _sameShape: ReceivedEvent = completedEvent();

async function pageBlocks() {
  return parseMarkdown(await readFile(PAGE, 'utf8')).blocks;
}

describe("docs/pipelines.md's receivers", () => {
  it('are on the page as they are in docs/examples/, whole', async () => {
    const blocks = await pageBlocks();
    for (const [file, lang] of [
      ['docs/examples/receiver.ts', 'ts'],
      ['docs/examples/receiver.py', 'python'],
    ] as const) {
      const text = (await readFile(join(REPO, file), 'utf8')).replace(/\n$/, '');
      const firstLine = text.split('\n')[0] ?? '';
      const block =
        blocks.find((each) => each.lang === lang && each.text.split('\n')[0] === firstLine) ??
        assert.fail(`docs/pipelines.md has no \`\`\`${lang} block beginning ${JSON.stringify(firstLine)} (${file})`);
      assert.equal(block.text, text, `the page's ${lang} block differs from ${file}: copy the file into the page`);
    }
  });

  it("shows the event with the fields the product sends, and a webhook-id of the event's run", async () => {
    const block =
      (await pageBlocks()).find((each) => each.lang === 'json' && each.text.includes('"connection.completed"')) ?? assert.fail('the event on the page');
    const shown = JSON.parse(block.text) as CallbackEvent;
    const sent = completedEvent();
    const keys = (value: object) => Object.keys(value).sort();
    assert.deepEqual(keys(shown), keys(sent));
    assert.deepEqual(keys(shown.data), keys(sent.data));
    assert.deepEqual(keys(shown.data.resultRef ?? {}), keys(sent.data.resultRef ?? {}));
    assert.equal(shown.data.resultRef?.url.split('/').pop(), webhookIdOf(shown.data.runId));
  });

  describe('the TypeScript receiver', () => {
    it('accepts what the product signs, with either secret of a rotation, and refuses what it did not', async () => {
      for (const { name, secret, body, headers, accepted } of receiverCases()) {
        const taken: string[] = [];
        const handle = callbackHandler(secret, (_event, webhookId) => void taken.push(webhookId));
        const answer = await handle(body, headers);
        assert.equal(answer.status, accepted ? 204 : 401, name);
        assert.deepEqual(taken, accepted ? [webhookIdOf((JSON.parse(body) as CallbackEvent).data.runId)] : [], name);
      }
    });

    it('hands the event on once per webhook-id: a repeat is acknowledged and dropped', async () => {
      const event = completedEvent();
      const taken: Array<{ event: ReceivedEvent; webhookId: string }> = [];
      const handle = callbackHandler(NEW_SECRET, (received, webhookId) => void taken.push({ event: received, webhookId }));
      const first = signed(event);
      assert.deepEqual(await handle(first.body, first.headers), { status: 204, body: '' });
      // The delivery posts the same bytes under the same id again (its 2xx was lost), signed anew.
      const again = signed(event);
      assert.deepEqual(await handle(again.body, again.headers), { status: 200, body: 'already received' });
      assert.deepEqual(taken, [{ event: JSON.parse(first.body) as ReceivedEvent, webhookId: webhookIdOf(event.data.runId) }]);
    });

    it('lets a failed store throw, and takes the retry', async () => {
      const message = signed(completedEvent());
      let failing = true;
      const taken: string[] = [];
      const handle = callbackHandler(NEW_SECRET, (_event, webhookId) => {
        if (failing) throw new Error('queue down');
        taken.push(webhookId);
      });
      await assert.rejects(handle(message.body, message.headers), /queue down/);
      failing = false;
      assert.equal((await handle(message.body, message.headers)).status, 204);
      assert.deepEqual(taken, [message.headers['webhook-id']]);
    });

    describe('over HTTP (node:http)', () => {
      const taken: string[] = [];
      let failNext = false;
      const server = createReceiver(NEW_SECRET, (_event, webhookId) => {
        if (failNext) {
          failNext = false;
          throw new Error('queue down');
        }
        taken.push(webhookId);
      });
      let url = '';
      before(async () => {
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
      });
      after(async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      });
      const post = (message: { body: string; headers: Record<string, string> }) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...message.headers }, body: message.body });

      it('answers 204, then 200 to a repeat, 401 to a forgery, 500 to an event it could not store', async () => {
        const message = signed(completedEvent());
        assert.equal((await post(message)).status, 204);
        const repeat = await post(message);
        assert.deepEqual([repeat.status, await repeat.text()], [200, 'already received']);
        const forged = await post({ body: message.body.replace('"lender-a"', '"lender-b"'), headers: message.headers });
        assert.deepEqual([forged.status, await forged.text()], [401, 'bad signature']);
        failNext = true;
        const unstored = signed(completedEvent());
        const refused = await post(unstored);
        assert.deepEqual([refused.status, await refused.text()], [500, 'not stored']);
        assert.equal((await post(unstored)).status, 204, 'the retry is taken');
        assert.deepEqual(taken, [message.headers['webhook-id'], unstored.headers['webhook-id']]);
      });
    });
  });
});
