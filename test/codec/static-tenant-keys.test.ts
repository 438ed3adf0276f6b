/**
 * Keys per tenant in static mode (PAYLOAD_TENANT_KEYS_DIR), through the codec with the serialization
 * context the SDK hands it: a tenant's payloads sealed with its own key file's first key and naming
 * the tenant, the fleet's with the product's key as before; a reader given tenant A's file alone
 * cannot open B's; a rotation and a forget reach a running process within the recheck time; a
 * missing file is made only where allowed, two processes agreeing on one key; a bad file is named
 * without its keys; one tenant's key cannot write into another tenant's workflow.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { defaultPayloadConverter, type Payload, type SerializationContext } from '@temporalio/common';
import { EncryptionCodec } from '../../src/codec/encryption-codec.js';
import { StaticKeySource } from '../../src/codec/key-source.js';
import { KeyDestroyedError, PayloadDecryptionError, TenantKeyMissingError, UnknownEncryptionKeyError } from '../../src/codec/payload-errors.js';
import { StaticTenantKeySource, TENANT_KEY_FILE_RECHECK_MS } from '../../src/codec/static-tenant-keys.js';
import { destroyTenantKeyFile, readTenantKeyFile, TenantKeyFileError } from '../../src/codec/tenant-key-files.js';
import { UNDECODABLE_ENCODING } from '../../src/codec/undecodable.js';

const root = mkdtempSync(join(tmpdir(), 'static-tenant-keys-'));
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => {
  const dir = join(root, `keys-${(dirs += 1)}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
};

const PRODUCT = { keyId: 'product', key: Buffer.alloc(32, 1) };
const keyLine = (keyId: string, key = randomBytes(32)) => `${keyId}:${key.toString('base64')}\n`;
const writeKeys = (dir: string, tenant: string, text: string) => writeFileSync(join(dir, `${tenant}.key`), text, { mode: 0o600 });
const inWorkflow = (workflowId: string): SerializationContext => ({ type: 'workflow', namespace: 'default', workflowId });
const text = (bytes: Uint8Array | null | undefined) => (bytes ? Buffer.from(bytes).toString() : undefined);

/** A clock the test moves: the recheck is time-driven. */
function clock() {
  let at = 1_000_000;
  return { now: () => at, pass: (ms: number) => (at += ms) };
}

function codecOn(dir: string, { createMissing = false, now = Date.now, mark = false }: { createMissing?: boolean; now?: () => number; mark?: boolean } = {}) {
  const source = new StaticTenantKeySource(new StaticKeySource(PRODUCT), { dir, createMissing }, now);
  return { source, codec: new EncryptionCodec(source, { markUndecodableMessages: mark }) };
}

async function seal(codec: EncryptionCodec, workflowId: string | undefined, value: unknown = { password: 'Everyday' }): Promise<Payload> {
  const [encoded] = await codec.encode([defaultPayloadConverter.toPayload(value)], workflowId === undefined ? undefined : inWorkflow(workflowId));
  return encoded ?? assert.fail('encoded');
}

async function open(codec: EncryptionCodec, payload: Payload, workflowId?: string): Promise<unknown> {
  const [decoded] = await codec.decode([payload], workflowId === undefined ? undefined : inWorkflow(workflowId));
  return defaultPayloadConverter.fromPayload(decoded ?? assert.fail('decoded'));
}

describe('keys per tenant in static mode', () => {
  it("seals a tenant's payloads with its file's first key, naming the tenant; the fleet's exactly as one configured key does", async () => {
    const dir = freshDir();
    writeKeys(dir, 'lender-a', keyLine('a-2026-11') + keyLine('a-2026-10'));
    const { codec } = codecOn(dir);
    const sealed = await seal(codec, 'connection-lender-a:app-1');
    assert.equal(text(sealed.metadata?.['encryption-key-id']), 'a-2026-11');
    assert.equal(text(sealed.metadata?.['encryption-tenant']), 'lender-a');
    assert.equal(sealed.metadata?.['encryption-format'], undefined, 'still the static format');
    assert.deepEqual(await open(codec, sealed), { password: 'Everyday' });

    const fleet = await seal(codec, 'fleet-budget');
    const oneKey = await seal(new EncryptionCodec(PRODUCT), 'fleet-budget');
    assert.deepEqual(Object.keys(fleet.metadata ?? {}).sort(), Object.keys(oneKey.metadata ?? {}).sort());
    assert.equal(text(fleet.metadata?.['encryption-key-id']), 'product');
    assert.deepEqual(await open(new EncryptionCodec(PRODUCT), fleet), { password: 'Everyday' }, "a process of one key reads the fleet's payloads as before");
  });

  it("lets a reader given tenant A's file alone open A's payloads and none of B's", async () => {
    const writerDir = freshDir();
    const a = randomBytes(32);
    writeKeys(writerDir, 'lender-a', keyLine('a-1', a));
    writeKeys(writerDir, 'lender-b', keyLine('b-1'));
    const { codec: writer } = codecOn(writerDir);
    const ofA = await seal(writer, 'connection-lender-a:app-1');
    const ofB = await seal(writer, 'connection-lender-b:app-1');

    const readerDir = freshDir();
    writeKeys(readerDir, 'lender-a', keyLine('a-1', a));
    const { codec: reader } = codecOn(readerDir);
    assert.deepEqual(await open(reader, ofA), { password: 'Everyday' });
    await assert.rejects(
      open(reader, ofB),
      (error: unknown) => error instanceof KeyDestroyedError && error.tenant === 'lender-b' && /no longer|is gone/.test(error.message),
    );
    await assert.rejects(open(new EncryptionCodec(PRODUCT), ofA), /this process has no keys per tenant/, 'nor does the product key alone');

    // A's key relabelled as B's: B's file has no such key id, and the label cannot choose A's file.
    const relabelled = { ...ofA, metadata: { ...ofA.metadata, 'encryption-tenant': Buffer.from('lender-b') } };
    await assert.rejects(open(writer, relabelled), (error: unknown) => error instanceof UnknownEncryptionKeyError);
  });

  it("refuses a payload sealed with one tenant's key in a workflow of another (a worker marks it as a rejected message)", async () => {
    const dir = freshDir();
    writeKeys(dir, 'lender-a', keyLine('a-1'));
    writeKeys(dir, 'lender-b', keyLine('b-1'));
    const { codec } = codecOn(dir);
    const ofA = await seal(codec, 'connection-lender-a:app-1', { answers: ['Montreal'] });
    await assert.rejects(
      open(codec, ofA, 'connection-lender-b:app-1'),
      (error: unknown) => error instanceof PayloadDecryptionError && /sealed for tenant "lender-a" in a workflow of tenant "lender-b"/.test(error.message),
    );
    assert.deepEqual(await open(codec, ofA, 'connection-lender-a:app-1'), { answers: ['Montreal'] }, 'its own workflow reads it');
    const { codec: worker } = codecOn(dir, { mark: true });
    const [marked] = await worker.decode([ofA], inWorkflow('connection-lender-b:app-1'));
    assert.equal(text(marked?.metadata?.encoding), UNDECODABLE_ENCODING);
  });

  it('takes up a rotation within the recheck time and keeps reading what the earlier key sealed', async () => {
    const dir = freshDir();
    const first = keyLine('a-1');
    writeKeys(dir, 'lender-a', first);
    const time = clock();
    const { codec } = codecOn(dir, { now: time.now });
    const before = await seal(codec, 'connection-lender-a:app-1');
    const second = keyLine('a-2');
    writeKeys(dir, 'lender-a', second + first);
    assert.equal(text((await seal(codec, 'connection-lender-a:app-1')).metadata?.['encryption-key-id']), 'a-1', 'the copy in memory until the recheck');
    time.pass(TENANT_KEY_FILE_RECHECK_MS);
    const rotated = await seal(codec, 'connection-lender-a:app-1');
    assert.equal(text(rotated.metadata?.['encryption-key-id']), 'a-2');
    assert.deepEqual(await open(codec, before), { password: 'Everyday' });

    // Another process rotated: a key id this one has not seen is looked for in the file at once.
    const { codec: other } = codecOn(dir, { now: time.now });
    writeKeys(dir, 'lender-a', keyLine('a-3') + second + first);
    const { codec: rotator } = codecOn(dir, { now: time.now });
    assert.deepEqual(await open(other, rotated), { password: 'Everyday' });
    assert.deepEqual(await open(other, await seal(rotator, 'connection-lender-a:app-1')), { password: 'Everyday' });
  });

  it('forgets a tenant whose file is destroyed: its keys leave memory at the recheck, others read on', async () => {
    const dir = freshDir();
    writeKeys(dir, 'lender-a', keyLine('a-1'));
    writeKeys(dir, 'lender-b', keyLine('b-1'));
    const time = clock();
    const { codec } = codecOn(dir, { now: time.now });
    const ofA = await seal(codec, 'connection-lender-a:app-1');
    const ofB = await seal(codec, 'connection-lender-b:app-1');
    assert.equal(destroyTenantKeyFile(join(dir, 'lender-a.key')), 'destroyed');
    assert.equal(destroyTenantKeyFile(join(dir, 'lender-a.key')), 'already-gone');
    time.pass(TENANT_KEY_FILE_RECHECK_MS);
    await assert.rejects(
      open(codec, ofA),
      (error: unknown) =>
        error instanceof KeyDestroyedError &&
        error.keptIn === 'key-file' &&
        error.keyName === join(dir, 'lender-a.key') &&
        /key destroyed: .*tenant "lender-a", whose key file .* is gone/.test(error.message),
    );
    await assert.rejects(seal(codec, 'connection-lender-a:app-2'), (error: unknown) => error instanceof TenantKeyMissingError && error.tenant === 'lender-a');
    assert.deepEqual(await open(codec, ofB), { password: 'Everyday' });
  });

  it("makes a missing tenant's file only where allowed: mode 0600 in a 0700 directory, and two processes racing agree on one key", async () => {
    const dir = join(freshDir(), 'made');
    const [one, two] = [codecOn(dir, { createMissing: true }).codec, codecOn(dir, { createMissing: true }).codec];
    const [fromOne, fromTwo] = await Promise.all([seal(one, 'connection-new-lender:app-1'), seal(two, 'connection-new-lender:app-2')]);
    assert.equal(text(fromOne.metadata?.['encryption-key-id']), text(fromTwo.metadata?.['encryption-key-id']));
    assert.match(text(fromOne.metadata?.['encryption-key-id']) ?? '', /^tenant-[0-9a-f]{16}$/);
    assert.equal(statSync(join(dir, 'new-lender.key')).mode & 0o777, 0o600);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.deepEqual(await open(two, fromOne), { password: 'Everyday' });

    const elsewhere = codecOn(freshDir()).codec;
    await assert.rejects(
      seal(elsewhere, 'connection-new-lender:app-1'),
      (error: unknown) =>
        error instanceof TenantKeyMissingError &&
        /tenant "new-lender" has no payload key: no file .*new-lender\.key; onboard the tenant first/.test(error.message),
    );
    await assert.rejects(open(codecOn(join(root, 'never-made')).codec, fromOne), KeyDestroyedError, 'reading never makes a file');
  });

  it('names a bad key file and its line, never its keys', () => {
    const dir = freshDir();
    const secret = randomBytes(32).toString('base64');
    const cases: [string, RegExp][] = [
      [`a-1:${secret}\nnot a key line\n`, /line 2 must be <key id>:<base64 of 32 bytes>/],
      [`a-1:${secret}\na-1:${secret}\n`, /line 2: key id a-1 appears twice/],
      [`a 1:${secret}\n`, /line 1: the key id must be 1 to 64/],
      [`a-1:${randomBytes(16).toString('base64')}\n`, /line 1 \(key id a-1\): the key must be base64 of exactly 32 bytes, got 16/],
      ['\n\n', /holds no key/],
    ];
    for (const [content, problem] of cases) {
      writeKeys(dir, 'bad', content);
      assert.throws(
        () => readTenantKeyFile(join(dir, 'bad.key')),
        (error: unknown) =>
          error instanceof TenantKeyFileError &&
          problem.test(error.message) &&
          !error.message.includes(secret) &&
          error.message.startsWith(`tenant key file ${join(dir, 'bad.key')}: `),
        content.slice(0, 12),
      );
    }
    writeKeys(dir, 'shared', `a-1:${secret}\n`);
    chmodSync(join(dir, 'shared.key'), 0o640);
    assert.throws(() => readTenantKeyFile(join(dir, 'shared.key')), /is readable or writable by group or others \(mode 0640\): chmod 600 it/);
    assert.equal(readTenantKeyFile(join(dir, 'absent.key')), undefined);
  });

  it("counts each key's seals, a tenant's as its own key id", async () => {
    const dir = freshDir();
    writeKeys(dir, 'lender-a', keyLine('a-1'));
    const { source, codec } = codecOn(dir);
    const seals: [string, number][] = [];
    source.onSeal((keyId, uses) => seals.push([keyId, uses]));
    await seal(codec, 'connection-lender-a:app-1');
    await codec.encode([defaultPayloadConverter.toPayload(1), defaultPayloadConverter.toPayload(2)], inWorkflow('fleet-budget'));
    assert.deepEqual(seals, [
      ['a-1', 1],
      ['product', 2],
    ]);
  });

  it('destroys a key file by overwriting it before removing it', () => {
    const dir = freshDir();
    const path = join(dir, 'lender-z.key');
    writeKeys(dir, 'lender-z', keyLine('z-1'));
    // A second name for the same bytes shows what the removal left on disk.
    const witness = join(dir, 'witness');
    linkSync(path, witness);
    const size = readFileSync(path).length;
    assert.equal(destroyTenantKeyFile(path), 'destroyed');
    assert.throws(() => statSync(path), /ENOENT/);
    assert.deepEqual(readFileSync(witness), Buffer.alloc(size), 'the key bytes were overwritten with zeros');
    unlinkSync(witness);
  });
});
