/**
 * What every payload store driver must do, run against each real one (a temp directory, MinIO):
 * round trips, content-addressed keys, deleting exactly one workflow's payloads, refusing untrusted
 * claims, and typed errors for missing or altered payloads.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { defaultPayloadConverter, StorageDriverClaim, type Payload, type StorageDriverStoreContext, type StorageDriverTargetInfo } from '@temporalio/common';
import { PayloadClaimRejectedError, StoredPayloadIntegrityError, StoredPayloadNotFoundError, type PayloadStoreDriver } from '../../src/payload-store/index.js';
import { uniqueId } from '../helpers/temporal.js';

export interface DriverUnderTest {
  readonly driver: PayloadStoreDriver;
  /** What every key starts with ("" or "<prefix>/"). */
  readonly root: string;
  /** Every stored object's key, as claims name it. */
  listKeys(): Promise<string[]>;
  readStored(key: string): Promise<Uint8Array>;
  /** Overwrites a stored object (to simulate tampering or corruption). */
  writeStored(key: string, bytes: Uint8Array): Promise<void>;
  stop(): Promise<void>;
}

export function workflowContext(workflowId: string, namespace = 'default'): StorageDriverStoreContext {
  return { target: { kind: 'workflow', namespace, id: workflowId, runId: randomBytes(8).toString('hex'), type: 'connectionWorkflow' } };
}

function payloadOf(value: unknown): Payload {
  return defaultPayloadConverter.toPayload(value);
}

/** Metadata and data as Buffers (a decoded payload holds Buffers, an encoded one Uint8Arrays). */
function comparable(payload: Payload): { metadata: Record<string, Buffer>; data: Buffer } {
  const metadata = Object.fromEntries(Object.entries(payload.metadata ?? {}).map(([name, value]) => [name, Buffer.from(value ?? [])]));
  return { metadata, data: Buffer.from(payload.data ?? []) };
}

function keyOf(claim: StorageDriverClaim): string {
  return claim.claimData.key ?? assert.fail('a claim names its key');
}

export function describeDriverContract(title: string, setup: () => Promise<DriverUnderTest>): void {
  void describe(title, () => {
    let subject: DriverUnderTest;
    let driver: PayloadStoreDriver;
    before(async () => {
      subject = await setup();
      driver = subject.driver;
    });
    after(async () => {
      await subject?.stop();
    });

    void it('retrieves stored payloads byte for byte and in order', async () => {
      const payloads = [
        payloadOf({ accounts: [{ id: 1, balance: 12.5 }], note: 'é ✓' }),
        { metadata: { encoding: new TextEncoder().encode('binary/plain'), extra: new Uint8Array([0, 255]) }, data: randomBytes(300_000) },
        payloadOf('second'),
      ];
      const claims = await driver.store(workflowContext(uniqueId('round-trip')), payloads);
      assert.equal(claims.length, 3);
      const copies = claims.map((claim) => new StorageDriverClaim({ ...claim.claimData }));
      const retrieved = await driver.retrieve({}, copies);
      assert.deepEqual(retrieved.map(comparable), payloads.map(comparable));
    });

    void it('stores a payload under <namespace>/workflows/<workflow id>/<sha256 of its bytes>, the same key on a retry', async () => {
      const workflowId = uniqueId('content-addressed');
      const payload = payloadOf({ big: 'x'.repeat(1000) });
      const [first] = await driver.store(workflowContext(workflowId), [payload]);
      const [retry] = await driver.store(workflowContext(workflowId), [payload]);
      const [other] = await driver.store(workflowContext(workflowId), [payloadOf({ big: 'y'.repeat(1000) })]);
      assert.ok(first && retry && other);
      assert.match(keyOf(first), new RegExp(`^${subject.root}default/workflows/${workflowId}/[0-9a-f]{64}$`));
      assert.deepEqual(retry.claimData, first.claimData, 'a retry writes the same key');
      assert.notEqual(keyOf(other), keyOf(first));
      assert.equal(first.claimData.hash_algorithm, 'sha256');
      assert.ok(keyOf(first).endsWith(`/${first.claimData.hash_value}`));
      const keys = await subject.listKeys();
      assert.equal(keys.filter((key) => key === keyOf(first)).length, 1, 'one object for the payload stored twice');
    });

    void it("files a workflow's activity payloads under the workflow, and a standalone activity's under its own id", async () => {
      const workflowId = uniqueId('activity-owner');
      const activityId = uniqueId('standalone');
      const fromActivityInWorkflow: StorageDriverTargetInfo = { kind: 'workflow', namespace: 'default', id: workflowId, type: 'connectionWorkflow' };
      const standalone: StorageDriverTargetInfo = { kind: 'activity', namespace: 'default', id: activityId, type: 'retrieveAccounts' };
      const [inWorkflow] = await driver.store({ target: fromActivityInWorkflow }, [payloadOf('activity result')]);
      const [own] = await driver.store({ target: standalone }, [payloadOf('standalone result')]);
      const [unscoped] = await driver.store({}, [payloadOf('no identity')]);
      assert.ok(inWorkflow && own && unscoped);
      assert.ok(keyOf(inWorkflow).startsWith(`${subject.root}default/workflows/${workflowId}/`));
      assert.ok(keyOf(own).startsWith(`${subject.root}default/activities/${activityId}/`));
      assert.match(keyOf(unscoped), new RegExp(`^${subject.root}~/unscoped/[0-9a-f]{64}$`));
      assert.equal((await driver.retrieve({}, [unscoped]))[0]?.data?.length, payloadOf('no identity').data?.length);
    });

    void it("deleteWorkflowPayloads removes exactly that workflow's payloads, in one namespace or in all", async () => {
      const target = uniqueId('forget-me');
      const neighbour = `${target}-2`; // shares the prefix of the id, not its directory
      const targetClaims = await driver.store(workflowContext(target), [payloadOf('a'), payloadOf('b')]);
      const neighbourClaims = await driver.store(workflowContext(neighbour), [payloadOf('a')]);
      const otherNamespaceClaims = await driver.store(workflowContext(target, 'other-namespace'), [payloadOf('c')]);

      assert.equal(await driver.deleteWorkflowPayloads(target, { namespace: 'default' }), 2);
      for (const claim of targetClaims) await assert.rejects(driver.retrieve({}, [claim]), StoredPayloadNotFoundError);
      assert.equal((await driver.retrieve({}, neighbourClaims)).length, 1, "the neighbour's payload is kept");
      assert.equal((await driver.retrieve({}, otherNamespaceClaims)).length, 1, 'another namespace is kept when one is named');

      assert.equal(await driver.deleteWorkflowPayloads(target), 1, 'without a namespace, every namespace');
      await assert.rejects(driver.retrieve({}, otherNamespaceClaims), StoredPayloadNotFoundError);
      assert.equal(await driver.deleteWorkflowPayloads(target), 0, 'deleting again finds nothing');
      const remaining = await subject.listKeys();
      assert.ok(remaining.some((key) => key === keyOf(neighbourClaims[0] ?? assert.fail())));
      assert.ok(!remaining.some((key) => key.includes(`/workflows/${target}/`)));
    });

    void it('keeps awkward workflow ids (slashes, dots, unicode, very long) apart, inside the store and deletable', async () => {
      const base = uniqueId('awkward');
      const ids = [`../${base}`, `${base}/../../x`, `.${base}`, `${base}:app-1`, `${base} ünï ✓`, `${base}-${'long'.repeat(200)}`, `${base}~%2F`];
      const claims = await Promise.all(ids.map((id) => driver.store(workflowContext(id), [payloadOf(id)])));
      const keys = claims.map(([claim]) => keyOf(claim ?? assert.fail()));
      assert.equal(new Set(keys.map((key) => key.slice(0, key.lastIndexOf('/')))).size, ids.length, 'one directory per id');
      for (const key of keys) {
        assert.ok(key.startsWith(`${subject.root}default/workflows/`), key);
        assert.ok(!key.split('/').some((segment) => segment === '..' || segment === '.' || segment.startsWith('.')), key);
        assert.ok(key.length < 400, `key of ${key.length} characters`);
      }
      for (const [index, id] of ids.entries()) {
        const [payload] = await driver.retrieve({}, claims[index] ?? []);
        assert.equal(defaultPayloadConverter.fromPayload(payload ?? assert.fail()), id);
        assert.equal(await driver.deleteWorkflowPayloads(id, { namespace: 'default' }), 1, id);
      }
    });

    void it('refuses a tampered or foreign claim with a PayloadClaimRejectedError, never reading outside the store', async () => {
      const [claim] = await driver.store(workflowContext(uniqueId('tampered')), [payloadOf('secret')]);
      assert.ok(claim);
      const { key, hash_value: hashValue } = claim.claimData as { key: string; hash_value: string };
      const zeros = '0'.repeat(64);
      const tampered: Record<string, string>[] = [
        { ...claim.claimData, key: '../../../../etc/passwd' },
        { ...claim.claimData, key: '/etc/passwd' },
        { ...claim.claimData, key: `${subject.root}default/workflows/../../../${hashValue}` },
        { ...claim.claimData, key: `${subject.root}default/workflows/..%2F..%2F/${hashValue}` },
        { ...claim.claimData, key: `elsewhere/${key}` },
        { ...claim.claimData, key: key.replace(hashValue, zeros) },
        { ...claim.claimData, hash_value: zeros },
        { ...claim.claimData, hash_algorithm: 'md5' },
        { hash_algorithm: 'sha256', hash_value: hashValue },
        // An earlier claim's spelling beside the current one, saying something else.
        { ...claim.claimData, hashValue: zeros },
      ];
      for (const claimData of tampered) {
        await assert.rejects(driver.retrieve({}, [new StorageDriverClaim(claimData)]), (error: unknown) => {
          assert.ok(error instanceof PayloadClaimRejectedError, `${JSON.stringify(claimData)}: ${String(error)}`);
          assert.equal(error.name, 'PayloadClaimRejectedError');
          assert.ok(error.message.includes(driver.location), error.message);
          return true;
        });
      }
    });

    void it('reads a claim written before the stock spelling (hashAlgorithm, hashValue)', async () => {
      const payload = payloadOf({ written: 'before' });
      const [claim] = await driver.store(workflowContext(uniqueId('camel-case')), [payload]);
      assert.ok(claim);
      const { hash_algorithm: hashAlgorithm, hash_value: hashValue, ...rest } = claim.claimData;
      assert.deepEqual([hashAlgorithm, typeof hashValue], ['sha256', 'string']);
      const [read] = await driver.retrieve({}, [new StorageDriverClaim({ ...rest, hashAlgorithm: 'sha256', hashValue: hashValue ?? '' })]);
      assert.deepEqual(read && comparable(read), comparable(payload));
    });

    void it('names the key and the store when a claimed payload is missing', async () => {
      const workflowId = uniqueId('missing');
      const sha256 = 'a'.repeat(64);
      const key = `${subject.root}default/workflows/${workflowId}/${sha256}`;
      await assert.rejects(driver.retrieve({}, [new StorageDriverClaim({ key, hash_algorithm: 'sha256', hash_value: sha256 })]), (error: unknown) => {
        assert.ok(error instanceof StoredPayloadNotFoundError, String(error));
        assert.equal(error.key, key);
        assert.equal(error.location, driver.location);
        assert.ok(error.message.includes(key) && error.message.includes(driver.location), error.message);
        return true;
      });
    });

    void it('refuses stored bytes that no longer match their hash with a StoredPayloadIntegrityError', async () => {
      const [claim] = await driver.store(workflowContext(uniqueId('corrupt')), [payloadOf({ amount: 100 })]);
      assert.ok(claim);
      const stored = Buffer.from(await subject.readStored(keyOf(claim)));
      await subject.writeStored(keyOf(claim), Buffer.from(stored.toString('latin1').replace('100', '999'), 'latin1'));
      await assert.rejects(driver.retrieve({}, [claim]), (error: unknown) => {
        assert.ok(error instanceof StoredPayloadIntegrityError, String(error));
        assert.equal(error.expectedSha256, claim.claimData.hash_value);
        return true;
      });
    });
  });
}
