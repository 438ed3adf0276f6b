/**
 * Byte compatibility, TypeScript's side: payloads the Python codec wrote (the committed fixture and a
 * file written now by python/tests/payload_vectors.py) decode here, and payloads this codec writes now
 * decode in Python, with configured keys, the generated local key file, vault-transit against a
 * real OpenBao and aws-kms against moto's server; and payloads kept in the payload store (references as
 * history holds them, objects as the store keeps them), written by each side and read by the other.
 * (python/tests/test_cross_language.py checks the same from Python's side, and S3 on a real MinIO.)
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encryptionCodecFor } from '../../src/codec/data-converter.js';
import type { EncryptionSettings } from '../../src/codec/key-provider.js';
import { readOrCreateLocalKey } from '../../src/codec/local-key.js';
import { UnknownEncryptionKeyError } from '../../src/codec/payload-errors.js';
import { loadPayloadCodecConfig } from '../../src/settings/payload-codec.js';
import { LocalDirectoryStorageDriver } from '../../src/payload-store/index.js';
import { readStoredVectors, readVectors, writeStoredVectors, writeVectors } from '../../scripts/payload-vectors.js';
import { MOTO_CREDENTIALS, startMoto, type MotoServer } from '../helpers/moto.js';
import { startOpenBao, workerPolicy, type OpenBaoServer } from '../helpers/openbao.js';
import { REPO, runPython } from '../helpers/python-env.js';

const FIXTURES = join(REPO, 'test/fixtures/payload-vectors');
const FIXTURE_KEY = 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
const ELSEWHERE = { TEMPORAL_ADDRESS: 'temporal.bank.internal:7233' };
const STATIC = { ...ELSEWHERE, PAYLOAD_ENCRYPTION_KEY: FIXTURE_KEY, PAYLOAD_ENCRYPTION_KEY_ID: 'vectors-static' };

/** `adjust` completes a loaded section with what the settings do not carry (the tests' AWS credentials). */
type Adjust = (encryption: EncryptionSettings | undefined) => EncryptionSettings | undefined;

function codecOf(env: Record<string, string>, adjust: Adjust = (encryption) => encryption) {
  return encryptionCodecFor({ encryption: adjust(loadPayloadCodecConfig(env).encryption) }) ?? assert.fail('a codec');
}

/** Python writes a file this side reads, and reads the one this side writes, each with the same variables. */
async function bothWays(dir: string, env: Record<string, string>, adjust?: Adjust): Promise<void> {
  const fromPython = join(dir, 'python.json');
  const written = await runPython(['tests/payload_vectors.py', 'write', fromPython], env);
  assert.equal(written.code, 0, `Python could not write: ${written.stderr}`);
  const read = await readVectors(codecOf(env, adjust), fromPython);
  assert.deepEqual([read.writer, read.names.length], ['python', 5]);

  const fromTypeScript = join(dir, 'typescript.json');
  await writeVectors(codecOf(env, adjust), fromTypeScript);
  const decoded = await runPython(['tests/payload_vectors.py', 'read', fromTypeScript], env);
  assert.equal(decoded.code, 0, `Python could not read what TypeScript wrote: ${decoded.stdout}${decoded.stderr}`);
  assert.equal(decoded.stdout.match(/written by typescript/g)?.length, 5, decoded.stdout);
}

/** Puts a stored vector file's objects at their keys under `directory`, as a local store holds them. */
async function materialize(file: string, directory: string): Promise<void> {
  const vectors = JSON.parse(await readFile(file, 'utf8')) as { payloads: { stored: { key: string; bytes: string } }[] };
  for (const { stored } of vectors.payloads) {
    await mkdir(dirname(join(directory, stored.key)), { recursive: true });
    await writeFile(join(directory, stored.key), Buffer.from(stored.bytes, 'base64'));
  }
}

describe('payloads between TypeScript and Python', () => {
  let dir: string;
  let openbao: OpenBaoServer;
  let moto: MotoServer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'payload-vectors-'));
    openbao = await startOpenBao();
    moto = await startMoto();
  });
  after(async () => {
    await openbao?.stop();
    await moto?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the committed Python fixture with its key kept for decryption after a rotation', async () => {
    const rotated = { ...ELSEWHERE, PAYLOAD_ENCRYPTION_KEY: `${'A'.repeat(43)}=`, PAYLOAD_ENCRYPTION_KEY_ID: 'after-rotation', PAYLOAD_DECRYPTION_KEYS: `vectors-static:${FIXTURE_KEY}` };
    const read = await readVectors(codecOf(rotated), join(FIXTURES, 'python-static.json'));
    assert.deepEqual(read, { writer: 'python', keyId: 'vectors-static', names: ['input', 'unicode', 'null', 'large', 'metadata'] });
  });

  it('refuses the Python fixture without its key, naming the key id', async () => {
    const other = { ...ELSEWHERE, PAYLOAD_ENCRYPTION_KEY: `${'A'.repeat(43)}=`, PAYLOAD_ENCRYPTION_KEY_ID: 'other' };
    await assert.rejects(readVectors(codecOf(other), join(FIXTURES, 'python-static.json')), (error: unknown) => error instanceof UnknownEncryptionKeyError && error.keyId === 'vectors-static');
  });

  it('exchanges payloads under configured keys both ways in one run', async () => {
    await bothWays(await mkdtemp(join(dir, 'static-')), STATIC);
  });

  it('shares the generated local key file: Python makes it, TypeScript reads it, and the other way round', async () => {
    const pythonMade = await mkdtemp(join(dir, 'local-python-'));
    await bothWays(pythonMade, { TEMPORAL_ADDRESS: '127.0.0.1:7233', PAYLOAD_ENCRYPTION_KEY_FILE: join(pythonMade, 'payload-encryption.key') });
    const typeScriptMade = await mkdtemp(join(dir, 'local-typescript-'));
    const made = readOrCreateLocalKey(join(typeScriptMade, 'payload-encryption.key'));
    await bothWays(typeScriptMade, { TEMPORAL_ADDRESS: '127.0.0.1:7233', PAYLOAD_ENCRYPTION_KEY_FILE: join(typeScriptMade, 'payload-encryption.key') });
    assert.equal((await readVectors(codecOf({ ...ELSEWHERE, PAYLOAD_ENCRYPTION_KEY: made.key.toString('base64'), PAYLOAD_ENCRYPTION_KEY_ID: made.keyId }), join(typeScriptMade, 'python.json'))).keyId, made.keyId);
  });

  it('exchanges vault-transit payloads both ways, each side unwrapping the other\'s data key', async () => {
    const token = await openbao.token('vectors-worker', workerPolicy(openbao.transitKey));
    await bothWays(await mkdtemp(join(dir, 'transit-')), { ...ELSEWHERE, PAYLOAD_KEY_PROVIDER: 'vault-transit', PAYLOAD_VAULT_ADDR: openbao.address, PAYLOAD_VAULT_TOKEN: token });
  });

  it('exchanges aws-kms payloads both ways, each side unwrapping the other\'s data key through Decrypt', async () => {
    // The settings carry no credentials: this side's are handed to its section (as aws-kms-history.test.ts does), Python's boto3 finds them in its env.
    await bothWays(await mkdtemp(join(dir, 'aws-kms-')), { ...ELSEWHERE, ...moto.variables() }, (encryption) =>
      encryption?.provider === 'aws-kms' ? { ...encryption, aws: { ...encryption.aws, credentials: MOTO_CREDENTIALS } } : encryption,
    );
  });

  it('reads the committed Python stored fixture and its own from before the stock claim spelling', async () => {
    for (const fixture of ['python-stored.json', 'typescript-stored-camelcase-claims.json']) {
      const store = await mkdtemp(join(dir, 'stored-fixture-'));
      await materialize(join(FIXTURES, fixture), store);
      const read = await readStoredVectors(codecOf(STATIC), new LocalDirectoryStorageDriver({ directory: store }), join(FIXTURES, fixture));
      assert.equal(read.names.length, 3, fixture);
      assert.deepEqual(read.claimFields, fixture === 'python-stored.json' ? ['hash_algorithm', 'hash_value', 'key'] : ['hashAlgorithm', 'hashValue', 'key']);
    }
  });

  it('exchanges stored payloads through the local directory both ways in one run', async () => {
    const store = await mkdtemp(join(dir, 'stored-'));
    const env = { ...STATIC, PAYLOAD_STORE: 'local', PAYLOAD_STORE_DIRECTORY: store };
    const driver = new LocalDirectoryStorageDriver({ directory: store });
    const fromPython = join(store, '..', 'python-stored.json');
    const written = await runPython(['tests/payload_vectors.py', 'write-stored', fromPython], env);
    assert.equal(written.code, 0, `Python could not write: ${written.stderr}`);
    assert.deepEqual((await readStoredVectors(codecOf(STATIC), driver, fromPython)).writer, 'python');
    const fromTypeScript = join(store, '..', 'typescript-stored.json');
    await writeStoredVectors(codecOf(STATIC), driver, fromTypeScript);
    const decoded = await runPython(['tests/payload_vectors.py', 'read-stored', fromTypeScript], env);
    assert.equal(decoded.code, 0, `Python could not read what TypeScript stored: ${decoded.stdout}${decoded.stderr}`);
    assert.equal(decoded.stdout.match(/written by typescript, key id vectors-static, claim hash_algorithm hash_value key/g)?.length, 3, decoded.stdout);
  });
});
