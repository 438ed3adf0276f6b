/**
 * The Python package's own tests (python/tests/, pytest) and its type check (mypy --strict), run as
 * part of the README's test command: the venv comes from scripts/python-env.sh, so a fresh machine
 * builds it once from the lock. A pytest run that fails, or collects no test, fails here.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pythonEnv, runPython } from '../helpers/python-env.js';

describe('the Python package', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pytest-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('passes its pytest suite, which collects tests', async () => {
    const report = join(dir, 'pytest.xml');
    const result = await runPython(['-m', 'pytest', '-p', 'no:cacheprovider', `--junitxml=${report}`]);
    process.stdout.write(result.stdout.split('\n').slice(-15).join('\n'));
    assert.equal(result.code, 0, `pytest failed:\n${result.stdout.slice(-8000)}\n${result.stderr.slice(-4000)}`);
    const suite = /<testsuite [^>]*\btests="(\d+)"[^>]*>/.exec(await readFile(report, 'utf8'));
    const collected = Number(suite?.[1] ?? 0);
    assert.ok(collected > 0, `pytest collected no test (report: ${suite?.[0] ?? 'none'})`);
  });

  it('type-checks with mypy --strict', async () => {
    const result = await runPython(['-m', 'mypy', '--cache-dir', join(await pythonEnv(), '.mypy_cache')]);
    assert.equal(result.code, 0, `mypy --strict found problems:\n${result.stdout}\n${result.stderr}`);
  });
});
