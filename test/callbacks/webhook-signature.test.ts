/**
 * The product's Standard Webhooks signatures against the reference library (`standardwebhooks` on
 * npm): what it signs, the library verifies; a rotation's two secrets each verify alone; a changed
 * body, id or timestamp, or an old timestamp, verifies with none. The Python library's check of the
 * same is in docs/pipelines.md's receiver example (test/docs/pipelines-examples-python.test.ts).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { signWebhook, WebhookSecretError } from '../../src/callbacks/webhook-signature.js';
import { readWebhookSecrets } from '../../src/callbacks/webhook-secrets.js';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;

void describe('webhook signatures', () => {
  void it('verify with the reference library, each secret of a rotation alone', () => {
    const [a, b] = [secret(), secret()];
    const body = JSON.stringify({ type: 'connection.completed', data: { n: 'é' } });
    const now = Date.now() / 1000;
    const headers = signWebhook([a, b], 'msg_1', now, body);
    assert.equal(headers['webhook-timestamp'], String(Math.floor(now)));
    assert.deepEqual(new Webhook(a).verify(body, headers), JSON.parse(body));
    assert.deepEqual(new Webhook(b).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(secret()).verify(body, headers));
    assert.throws(() => new Webhook(a).verify(`${body} `, headers), 'a changed body');
    assert.throws(() => new Webhook(a).verify(body, { ...headers, 'webhook-id': 'msg_2' }), 'another id');
    assert.throws(() => new Webhook(a).verify(body, { ...headers, 'webhook-timestamp': String(Math.floor(now) + 1) }), 'another timestamp');
    const old = signWebhook([a], 'msg_1', now - 600, body);
    assert.throws(() => new Webhook(a).verify(body, old), /timestamp/i, 'an old message (replay) is refused by the receiver');
  });

  void it('refuses secrets that are not whsec_ with 24 to 64 bytes', () => {
    for (const bad of ['', 'whsec_', 'secret', `whsec_${randomBytes(16).toString('base64')}`, `whsec_${randomBytes(65).toString('base64')}`, 'whsec_!!!']) {
      assert.throws(() => signWebhook([bad], 'msg_1', 0, '{}'), WebhookSecretError, bad);
    }
    assert.throws(() => signWebhook([], 'msg_1', 0, '{}'), /no secret/);
  });

  void it("reads a tenant's secrets file at each use, naming the tenant, file and line of a bad one", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'secrets-'));
    const file = join(dir, 'a');
    const [a, b] = [secret(), secret()];
    writeFileSync(file, `# rotation\n${a}\n\n${b}\n`);
    const files = new Map([['lender-a', file]]);
    assert.deepEqual(await readWebhookSecrets(files, 'lender-a'), [a, b]);
    writeFileSync(file, `${b}\n`);
    assert.deepEqual(await readWebhookSecrets(files, 'lender-a'), [b], 'the edit applies at the next read');
    writeFileSync(file, `${b}\nnot-a-secret\n`);
    await assert.rejects(readWebhookSecrets(files, 'lender-a'), /tenant lender-a .*line 2 of its secrets: a webhook secret must be whsec_/);
    writeFileSync(file, '# none\n');
    await assert.rejects(readWebhookSecrets(files, 'lender-a'), /holds no secret/);
    await assert.rejects(readWebhookSecrets(files, 'lender-b'), /tenant lender-b has no webhook secret file \(CALLBACK_SECRET_FILES\)/);
    await assert.rejects(
      readWebhookSecrets(new Map([['lender-a', join(dir, 'missing')]]), 'lender-a'),
      /cannot read the webhook secret file of tenant lender-a/,
    );
  });
});
