/**
 * The Python side of the repository for tests: the venv of python/requirements.lock (made or reused by
 * scripts/python-env.sh, in the cache beside the Temporal binaries) and a way to run python/ in it.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { motoServerPath } from '../../scripts/lib/moto-binary.js';
import { openBaoPath } from '../../scripts/lib/openbao-binary.js';
import { TEMPORAL_CACHE_DIR } from '../../scripts/lib/temporal-binaries.js';
import { runCommand, type CommandRun } from './command-run.js';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));

let venv: Promise<string> | undefined;

/** The venv's directory (made on first use in this process). */
export function pythonEnv(): Promise<string> {
  venv ??= runCommand('bash', ['scripts/python-env.sh']).then(({ code, stdout, stderr }) => {
    if (code !== 0) throw new Error(`scripts/python-env.sh failed (exit ${code}):\n${stderr}`);
    return stdout.trim();
  });
  return venv;
}

/** Runs `python <args>` in the venv, in python/, with `env` added to PATH, HOME, the cache, bao's path and moto_server's. */
export async function runPython(args: readonly string[], env: Record<string, string> = {}): Promise<CommandRun> {
  const base: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TEMPORAL_CACHE_DIR,
    OPENBAO_PATH: openBaoPath(),
    MOTO_SERVER_PATH: motoServerPath(),
  };
  return runCommand(`${await pythonEnv()}/bin/python`, args, { cwd: `${REPO}python`, env: { ...base, ...env } });
}

/**
 * pytest on `files` in the venv with `env` (a JUnit report written in `dir`); fails unless every test
 * ran and passed, at least `atLeast` of them: a module that skips (it did not see its variables) fails.
 */
export async function runPytest(dir: string, files: readonly string[], env: Record<string, string>, atLeast: number): Promise<void> {
  const report = join(dir, `pytest-${files.length}-${Date.now()}.xml`);
  const result = await runPython(['-m', 'pytest', '-p', 'no:cacheprovider', `--junitxml=${report}`, ...files], env);
  process.stdout.write(result.stdout.split('\n').slice(-15).join('\n'));
  assert.equal(result.code, 0, `pytest failed:\n${result.stdout.slice(-8000)}\n${result.stderr.slice(-4000)}`);
  const suite = /<testsuite [^>]*>/.exec(await readFile(report, 'utf8'))?.[0] ?? '';
  const count = (name: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(suite)?.[1] ?? 0);
  assert.ok(count('tests') >= atLeast, `pytest collected ${count('tests')} tests (report: ${suite})`);
  assert.equal(count('skipped'), 0, `pytest skipped tests: the module did not see its variables (report: ${suite})`);
}
