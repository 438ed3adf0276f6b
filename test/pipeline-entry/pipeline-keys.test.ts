/**
 * The pipeline entry's key files and settings without a server: a key matched to its tenant by its
 * hash, a file read again when it changes, a malformed or deleted file failing closed, a bad file
 * refusing the start, and PIPELINE_KEY_FILES parsed and required.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { keyHashPrefix, mintPipelineKey, parseKeyFile, pipelineKeyHash, PipelineKeyFileError, PipelineKeys } from '../../src/identity/pipeline-keys.js';
import { ConfigError } from '../../src/settings/load.js';
import { loadPipelineEntryConfig } from '../../src/settings/pipeline-entry.js';

const dir = mkdtempSync(join(tmpdir(), 'pipeline-keys-'));
after(() => rmSync(dir, { recursive: true, force: true }));

void describe('pipeline keys', () => {
  void it('mints 256-bit keys whose hash is the SHA-256 of the key', () => {
    const { key, hash } = mintPipelineKey();
    assert.match(key, /^pk_[A-Za-z0-9_-]{43}$/);
    assert.equal(hash, pipelineKeyHash(key));
    assert.match(hash, /^[0-9a-f]{64}$/);
    assert.notEqual(mintPipelineKey().key, key);
  });

  void it('reads hashes, comments and blank lines, naming a line that is not a hash', () => {
    const { hash } = mintPipelineKey();
    assert.deepEqual(parseKeyFile(`# lender-a\n\n${hash}\n`), { hashes: [hash] });
    assert.deepEqual(parseKeyFile(`${hash}\n${hash.toUpperCase()}\n`), { problem: 'line 2 is not a SHA-256 in lower-case hex (64 characters 0-9a-f)' });
  });

  void it("names a key's tenant, takes a rotation's second key at once, and fails closed on a malformed or deleted file", () => {
    const a = mintPipelineKey();
    const b = mintPipelineKey();
    const next = mintPipelineKey();
    const fileA = join(dir, 'a.keys');
    const fileB = join(dir, 'b.keys');
    writeFileSync(fileA, `${a.hash}\n`);
    writeFileSync(fileB, `${b.hash}\n`);
    const reported: string[] = [];
    const keys = new PipelineKeys(
      new Map([
        ['lender-a', fileA],
        ['lender-b', fileB],
      ]),
      { recheckMs: 0, report: (line) => reported.push(line) },
    );
    assert.deepEqual(keys.identify(a.key), { customerId: 'lender-a', keyHashPrefix: keyHashPrefix(a.hash) });
    assert.equal(keys.identify(b.key)?.customerId, 'lender-b');
    assert.equal(keys.identify(next.key), undefined);
    assert.equal(keys.identify(a.hash), undefined, 'the hash is not the key');
    writeFileSync(fileA, `${a.hash}\n${next.hash}\n`);
    assert.equal(keys.identify(next.key)?.customerId, 'lender-a');
    assert.equal(keys.identify(a.key)?.customerId, 'lender-a');
    writeFileSync(fileA, `${next.hash}\nnot a hash\n`);
    assert.equal(keys.identify(next.key), undefined, 'a malformed file accepts no key of its tenant');
    assert.equal(keys.identify(b.key)?.customerId, 'lender-b', 'the other tenant is unaffected');
    assert.match(reported.join('\n'), /the key file of lender-a .* line 2 is not a SHA-256/);
    unlinkSync(fileA);
    assert.equal(keys.identify(next.key), undefined, 'a deleted file revokes its keys');
    writeFileSync(fileA, `${next.hash}\n`);
    assert.equal(keys.identify(next.key)?.customerId, 'lender-a');
  });

  void it('looks at a file again only after the recheck interval, and reports a broken file once per change', () => {
    const first = mintPipelineKey();
    const second = mintPipelineKey();
    const file = join(dir, 'throttled.keys');
    writeFileSync(file, `${first.hash}\n`);
    let clock = 10_000;
    const reported: string[] = [];
    const keys = new PipelineKeys(new Map([['lender-t', file]]), { recheckMs: 1_000, now: () => clock, report: (line) => reported.push(line) });
    assert.equal(keys.identify(first.key)?.customerId, 'lender-t');
    // Another size: a rewrite of the same size within the file system's timestamp tick looks unchanged.
    writeFileSync(file, `# rotated\n${second.hash}\n`);
    clock += 999;
    assert.equal(keys.identify(second.key), undefined, 'within the interval the file is not read again');
    assert.equal(keys.identify(first.key)?.customerId, 'lender-t');
    clock += 1;
    assert.equal(keys.identify(second.key)?.customerId, 'lender-t', 'after it, the rotation is taken');
    assert.equal(keys.identify(first.key), undefined, 'and the removed key refused');
    writeFileSync(file, 'not a hash\n');
    clock += 1_000;
    assert.equal(keys.identify(second.key), undefined);
    clock += 1_000;
    assert.equal(keys.identify(second.key), undefined);
    assert.equal(reported.length, 1, `one report for one broken file: ${reported.join(' | ')}`);
  });

  void it('refuses to start on a file it cannot read or parse, naming it', () => {
    const bad = join(dir, 'bad.keys');
    writeFileSync(bad, 'xyz\n');
    assert.throws(
      () => new PipelineKeys(new Map([['lender-a', bad]])),
      (error: unknown) => error instanceof PipelineKeyFileError && /lender-a: .*bad\.keys is not a list of key hashes: line 1/.test(error.message),
    );
    assert.throws(() => new PipelineKeys(new Map([['lender-a', join(dir, 'none.keys')]])), /none\.keys cannot be read \(ENOENT\)/);
  });
});

void describe('the pipeline entry settings', () => {
  void it('reads PIPELINE_KEY_FILES and CALLBACK_URLS, and requires a key file', () => {
    const config = loadPipelineEntryConfig({
      PIPELINE_KEY_FILES: 'lender-a=/run/a.keys, lender-b=/run/b.keys',
      CALLBACK_URLS: 'lender-a=https://hooks.lender-a.example/loans',
      PIPELINE_ENTRY_PORT: '9001',
    });
    assert.deepEqual(
      [...config.keyFiles],
      [
        ['lender-a', '/run/a.keys'],
        ['lender-b', '/run/b.keys'],
      ],
    );
    assert.deepEqual([...config.callbackUrls], [['lender-a', ['https://hooks.lender-a.example/loans']]]);
    assert.equal(config.port, 9001);
    assert.equal(config.host, '127.0.0.1');
    const problems = (env: NodeJS.ProcessEnv) => {
      try {
        loadPipelineEntryConfig(env);
      } catch (error) {
        if (error instanceof ConfigError) return error.problems.join('\n');
        throw error;
      }
      return '';
    };
    assert.match(problems({}), /PIPELINE_KEY_FILES: is required/);
    assert.match(problems({ PIPELINE_KEY_FILES: 'lender-a' }), /PIPELINE_KEY_FILES: "lender-a": must be a comma-separated list of <customerId>=<file>/);
    assert.match(problems({ PIPELINE_KEY_FILES: 'lender-a=/a,lender-a=/b' }), /lender-a appears twice/);
    assert.match(problems({ PIPELINE_KEY_FILES: 'entry-x=/a' }), /must not begin with "entry-"/);
  });
});
