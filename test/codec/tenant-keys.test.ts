/**
 * A key per tenant on a real OpenBao: a tenant's payloads (its workflow id names it in the
 * serialization context) are sealed with data keys of its own transit key, made on first use; a
 * reader granted one tenant is refused another's by the KMS; payloads sealed before (the product's
 * key) keep reading; destroying one tenant's key makes its payloads fail KeyDestroyedError by name
 * while another tenant's read on; a process that may not create a tenant's key is refused by name.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { defaultPayloadConverter, type Payload, type SerializationContext } from '@temporalio/common';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { keySourceFor, type TransitEncryption } from '../../src/codec/key-provider.js';
import { KeyDestroyedError, KeyProviderRefusedError } from '../../src/codec/payload-errors.js';
import type { VaultSettings } from '../../src/codec/vault-client.js';
import { transitKeyId } from '../../src/codec/vault-transit.js';
import { tenantReaderPolicy } from '../../scripts/lib/openbao-server.js';
import { KMS_TEST_CACHE, payload, SECRET, text } from '../helpers/kms-codec.js';
import { startOpenBao, workerPolicy, type OpenBaoServer } from '../helpers/openbao.js';

const KEY = 'aggregation-payloads';
const inWorkflow = (workflowId: string): SerializationContext => ({ type: 'workflow', namespace: 'default', workflowId });

let bao: OpenBaoServer;
let workerToken: string;

/** A process's codec (its own key source: nothing cached from another) with keys per tenant or not. */
function processOn(vault: VaultSettings, tenantKeys = true): EncryptionCodec {
  const section: TransitEncryption = {
    provider: 'vault-transit',
    keyId: transitKeyId(KEY),
    vault,
    transit: { mount: 'transit', key: KEY },
    cache: KMS_TEST_CACHE,
    tenantKeys,
  };
  return new EncryptionCodec(keySourceFor(section));
}

async function sealed(codec: EncryptionCodec, workflowId: string | undefined, value: unknown = SECRET): Promise<Payload> {
  const [encoded] = await codec.encode([payload(value)], workflowId === undefined ? undefined : inWorkflow(workflowId));
  return encoded ?? assert.fail('one payload encoded');
}

async function opened(codec: EncryptionCodec, encoded: Payload): Promise<unknown> {
  const [decoded] = await codec.decode([encoded]);
  return defaultPayloadConverter.fromPayload(decoded ?? assert.fail('one payload decoded'));
}

before(async () => {
  bao = await startOpenBao();
  assert.equal(bao.transitKey, KEY);
  workerToken = await bao.token('worker', workerPolicy(KEY));
});

after(async () => {
  await bao?.stop();
});

describe('a key per tenant on OpenBao', () => {
  const worker = () => processOn(bao.settings({ auth: { kind: 'token', token: workerToken } }));

  it("seals a tenant's payloads under its own transit key, made on first use, naming the tenant; payloads of no tenant keep the product's key", async () => {
    const codec = worker();
    for (const [workflowId, tenant] of [
      ['connection-lender-a:app-1', 'lender-a'],
      ['book-entry-lender-b:login-7', 'lender-b'],
      ['book-lender-b:nightly-2026-11-28T22:00:00Z', 'lender-b'],
      ['throttle-lender-a', 'lender-a'],
    ] as const) {
      const encoded = await sealed(codec, workflowId);
      assert.equal(text(encoded.metadata?.['encryption-key-id']), `vault-transit:${KEY}-tenant-${tenant}`, workflowId);
      assert.equal(text(encoded.metadata?.['encryption-tenant']), tenant, workflowId);
      assert.deepEqual(await opened(worker(), encoded), SECRET, `${workflowId}: another process reads it through the KMS`);
    }
    assert.deepEqual((await bao.api('GET', `transit/keys/${KEY}-tenant-lender-a`)).data?.name, `${KEY}-tenant-lender-a`, "the tenant's key exists now");
    for (const workflowId of ['fleet-budget', undefined]) {
      const encoded = await sealed(codec, workflowId);
      assert.equal(text(encoded.metadata?.['encryption-key-id']), `vault-transit:${KEY}`, String(workflowId));
      assert.equal(encoded.metadata?.['encryption-tenant'], undefined, String(workflowId));
    }
  });

  it("lets a reader granted tenant A open A's payloads, and the KMS refuses it B's and the product's", async () => {
    const codec = worker();
    const ofA = await sealed(codec, 'connection-lender-a:app-2');
    const ofB = await sealed(codec, 'connection-lender-b:app-2');
    const ofProduct = await sealed(codec, 'fleet-budget');
    const readerOfA = processOn(bao.settings({ auth: { kind: 'token', token: await bao.token('reader-of-a', tenantReaderPolicy(KEY, 'lender-a')) } }));
    assert.deepEqual(await opened(readerOfA, ofA), SECRET);
    for (const [name, other] of [
      ["B's", ofB],
      ["the product's", ofProduct],
    ] as const) {
      await assert.rejects(opened(readerOfA, other), (error: unknown) => {
        assert.ok(error instanceof KeyProviderRefusedError, `${name}: ${String(error)}`);
        assert.equal(error.status, 403);
        assert.doesNotMatch(error.message, /Everyday/);
        return true;
      });
    }
  });

  it("reads the payloads written before keys per tenant (under the product's key)", async () => {
    const before = await sealed(processOn(bao.settings({ auth: { kind: 'token', token: workerToken } }), false), 'connection-lender-a:app-3');
    assert.equal(text(before.metadata?.['encryption-key-id']), `vault-transit:${KEY}`);
    assert.deepEqual(await opened(worker(), before), SECRET);
  });

  it("forgets a lender when its key is destroyed: its payloads fail KeyDestroyedError naming the tenant, another tenant's read on", async () => {
    const codec = worker();
    const ofC = await sealed(codec, 'connection-lender-c:app-4');
    const ofB = await sealed(codec, 'connection-lender-b:app-4');
    await bao.api('POST', `transit/keys/${KEY}-tenant-lender-c/config`, { deletion_allowed: true });
    await bao.api('DELETE', `transit/keys/${KEY}-tenant-lender-c`);
    const reader = worker();
    await assert.rejects(opened(reader, ofC), (error: unknown) => {
      assert.ok(error instanceof KeyDestroyedError, String(error));
      assert.equal(error.tenant, 'lender-c');
      assert.match(error.message, /^key destroyed: .*tenant "lender-c"/);
      return true;
    });
    assert.deepEqual(await opened(reader, ofB), SECRET, "another tenant's payloads still read");
  });

  it("refuses by name a process whose policy leaves out the tenants' keys", async () => {
    const productOnly = `path "transit/datakey/plaintext/${KEY}" { capabilities = ["update"] }\n`;
    const codec = processOn(bao.settings({ auth: { kind: 'token', token: await bao.token('product-only', productOnly) } }));
    await assert.rejects(sealed(codec, 'connection-lender-d:app-5'), (error: unknown) => {
      assert.ok(error instanceof KeyProviderRefusedError, String(error));
      assert.equal(error.status, 403);
      assert.match(
        error.message,
        /tenant "lender-d"'s data keys come from transit key "aggregation-payloads-tenant-lender-d", and this process's policy does not allow transit\/datakey\/plaintext\/<key>-tenant-\*/,
      );
      return true;
    });
  });

  it("gives a worker no hold on a tenant key's config: it cannot lower the minimum version nor allow deletion", async () => {
    await sealed(worker(), 'connection-lender-e:app-6');
    const asWorker = bao.settings({ auth: { kind: 'token', token: workerToken } });
    const answer = await fetch(`${asWorker.address}/v1/transit/keys/${KEY}-tenant-lender-e/config`, {
      method: 'POST',
      headers: { 'x-vault-token': workerToken, 'content-type': 'application/json' },
      body: JSON.stringify({ deletion_allowed: true }),
    });
    assert.equal(answer.status, 403, await answer.text());
  });
});
