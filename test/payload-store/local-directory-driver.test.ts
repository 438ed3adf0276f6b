/**
 * The local-directory driver against a real temporary directory: the shared driver contract, plus
 * what only files have (atomic writes, private modes, the directory appearing on first use).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { defaultPayloadConverter } from '@temporalio/common';
import { LocalDirectoryStorageDriver, StoredPayloadIntegrityError, StoredPayloadNotFoundError } from '../../src/payload-store/index.js';
import { uniqueId } from '../helpers/temporal.js';
import { describeDriverContract, workflowContext } from './driver-contract.js';

async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(directory, join(entry.parentPath, entry.name)).split(sep).join('/'));
}

describeDriverContract('the local-directory driver', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'payload-store-'));
  const driver = new LocalDirectoryStorageDriver({ directory });
  return {
    driver,
    root: '',
    listKeys: () => filesUnder(directory),
    readStored: (key) => readFile(join(directory, key)),
    writeStored: (key, bytes) => writeFile(join(directory, key), bytes),
    stop: () => rm(directory, { recursive: true, force: true }),
  };
});

void describe('the local-directory driver on disk', () => {
  let parent: string;
  before(async () => {
    parent = await mkdtemp(join(tmpdir(), 'payload-store-disk-'));
  });
  after(async () => {
    await rm(parent, { recursive: true, force: true });
  });

  void it('creates its directory on first store and leaves only private, complete files (no temp files)', async () => {
    const directory = join(parent, 'not-yet', 'payloads');
    const driver = new LocalDirectoryStorageDriver({ directory });
    const workflowId = uniqueId('atomic');
    const payloads = Array.from({ length: 20 }, (_, index) => defaultPayloadConverter.toPayload({ index, body: 'z'.repeat(50_000) }));
    const claims = await driver.store(workflowContext(workflowId), payloads);
    const files = await filesUnder(directory);
    assert.equal(files.length, 20);
    assert.deepEqual(files.sort(), claims.map((claim) => claim.claimData.key).sort());
    assert.ok(!files.some((file) => file.endsWith('.tmp')), 'no temp file remains');
    for (const file of files) assert.equal((await stat(join(directory, file))).mode & 0o777, 0o600, file);
    assert.equal((await stat(join(directory, 'default'))).mode & 0o777, 0o700);
  });

  void it('rewrites a damaged file when the same payload is stored again (a retry heals it)', async () => {
    const driver = new LocalDirectoryStorageDriver({ directory: join(parent, 'heal') });
    const workflowId = uniqueId('heal');
    const payload = defaultPayloadConverter.toPayload({ statement: 'x'.repeat(10_000) });
    const [claim] = await driver.store(workflowContext(workflowId), [payload]);
    assert.ok(claim);
    await writeFile(join(parent, 'heal', claim.claimData.key ?? ''), 'damaged');
    await assert.rejects(driver.retrieve({}, [claim]), StoredPayloadIntegrityError);
    const [again] = await driver.store(workflowContext(workflowId), [payload]);
    assert.deepEqual(again?.claimData, claim.claimData);
    assert.deepEqual(defaultPayloadConverter.fromPayload((await driver.retrieve({}, [claim]))[0] ?? assert.fail()), { statement: 'x'.repeat(10_000) });
  });

  void it('resolves a relative directory against the working directory and names it in errors', async () => {
    const driver = new LocalDirectoryStorageDriver({ directory: relative(process.cwd(), join(parent, 'relative')) });
    assert.equal(driver.location, join(parent, 'relative'));
    const sha256 = 'b'.repeat(64);
    await assert.rejects(
      driver.retrieve({}, [{ claimData: { key: `default/workflows/w/${sha256}`, hash_algorithm: 'sha256', hash_value: sha256 } }]),
      (error: unknown) => error instanceof StoredPayloadNotFoundError && error.message.includes(join(parent, 'relative')),
    );
  });
});
