/**
 * The token file's watcher (src/temporal/api-key-file.ts) on its own, with holders that record what
 * they are given in place of the SDK's connections: a renewed token reaches every holder once; a file
 * that turns empty, malformed or missing keeps the last token, said once, and its recovery is said;
 * nothing it says holds a token. The worker against a real authorizer: test/prod-check/token-renewal.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { renewApiKey, watchApiKeyFile, type ApiKeyFileLog } from '../../src/temporal/api-key-file.js';
import { readApiKeyFile, TemporalApiKeyFileError } from '../../src/settings/temporal-api-key-file.js';

function recordingLog(): ApiKeyFileLog & { readonly lines: string[] } {
  const lines: string[] = [];
  return { lines, info: (message) => void lines.push(`info: ${message}`), warn: (message) => void lines.push(`warn: ${message}`) };
}

async function tokenFile(content: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'api-key-file-'));
  const path = join(dir, 'token');
  await writeFile(path, content);
  return path;
}

/** As a sidecar writes it: a new file renamed over the old. */
async function rewrite(path: string, content: string): Promise<void> {
  await writeFile(`${path}.next`, content);
  await rename(`${path}.next`, path);
}

void describe('the Temporal token file', () => {
  void it('gives a renewed token to every live connection once, sync or async, and says so without the token', async () => {
    const path = await tokenFile('token-1\n');
    const given: string[] = [];
    const holders = [
      { setApiKey: (key: string) => void given.push(`client:${key}`) },
      { setApiKey: (key: string) => Promise.resolve(void given.push(`native:${key}`)) },
    ];
    const log = recordingLog();
    const watch = watchApiKeyFile({ path, recheckMs: 60_000, current: 'token-1', holders, log });
    try {
      await watch.check();
      assert.deepEqual(given, [], 'an unchanged token is not set again');
      await rewrite(path, 'token-2\n');
      await watch.check();
      await watch.check();
      assert.deepEqual(given, ['client:token-2', 'native:token-2']);
      assert.deepEqual(log.lines, [`info: TEMPORAL_API_KEY_FILE: renewed the Temporal token from ${path}`]);
    } finally {
      watch.stop();
    }
  });

  void it('keeps the last token through an empty, malformed or missing file, says so once, and says when it holds a token again', async () => {
    const path = await tokenFile('token-1');
    const given: string[] = [];
    const log = recordingLog();
    const watch = watchApiKeyFile({ path, recheckMs: 60_000, current: 'token-1', holders: [{ setApiKey: (key) => void given.push(key) }], log });
    try {
      await rewrite(path, '');
      await watch.check();
      await rewrite(path, 'secret-half\nsecret-other-half\n');
      await watch.check();
      await rm(path);
      await watch.check();
      assert.deepEqual(given, [], 'the last token stays');
      assert.deepEqual(log.lines, [`warn: TEMPORAL_API_KEY_FILE: ${path} is empty; keeping the last token until the file holds one again`]);
      await rewrite(path, 'token-1\n');
      await watch.check();
      assert.equal(log.lines[1], `info: TEMPORAL_API_KEY_FILE: ${path} holds a token again (unchanged)`);
      await rewrite(path, 'not one token');
      await watch.check();
      assert.match(log.lines[2] ?? '', /does not hold one token .*keeping the last token/, 'a new failure after a recovery is said again');
      await rewrite(path, 'token-2');
      await watch.check();
      assert.deepEqual(given, ['token-2']);
      assert.deepEqual(log.lines.slice(3), [
        `info: TEMPORAL_API_KEY_FILE: ${path} holds a token again`,
        `info: TEMPORAL_API_KEY_FILE: renewed the Temporal token from ${path}`,
      ]);
      assert.ok(
        log.lines.every((line) => !/token-[12]|secret/.test(line)),
        'no token, no content in what it says',
      );
    } finally {
      watch.stop();
    }
  });

  void it('tries a token a connection refused again at the next check, and re-reads the file on its own every recheckMs', async () => {
    const path = await tokenFile('token-1');
    let refuse = true;
    const given: string[] = [];
    const log = recordingLog();
    const watch = watchApiKeyFile({
      path,
      recheckMs: 20,
      current: 'token-1',
      holders: [{ setApiKey: async (key) => (refuse ? Promise.reject(new Error('metadata refused')) : void given.push(key)) }],
      log,
    });
    try {
      await rewrite(path, 'token-2');
      while (!log.lines.some((line) => line.includes('did not take'))) await new Promise((resolve) => setTimeout(resolve, 10));
      refuse = false;
      while (given.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.deepEqual(given, ['token-2']);
      assert.match(
        log.lines[0] ?? '',
        /^warn: TEMPORAL_API_KEY_FILE: the connections did not take the renewed token from .* \(metadata refused\); trying again at the next check$/,
      );
    } finally {
      watch.stop();
    }
  });

  void it('is read as a connection opens, naming the path when it holds no token; and watched only when the token comes from a file', async () => {
    const path = await tokenFile(' token-1 \n');
    assert.equal(await readApiKeyFile(path), 'token-1');
    await writeFile(path, '\n');
    await assert.rejects(
      readApiKeyFile(path),
      (error: unknown) => error instanceof TemporalApiKeyFileError && error.message === `TEMPORAL_API_KEY_FILE: ${path} is empty`,
    );
    await assert.rejects(readApiKeyFile(`${path}-absent`), /TEMPORAL_API_KEY_FILE: cannot read .*-absent \(no such file\)/);
    assert.equal(renewApiKey({ apiKey: 'static' }, [], recordingLog()), undefined, 'TEMPORAL_API_KEY is not watched');
    const watch = renewApiKey({ apiKey: 'token-1', apiKeyFile: { path, recheckMs: 60_000 } }, [], recordingLog());
    assert.ok(watch);
    watch.stop();
  });
});
