// npm test: needs a server
// The Dockerfile cannot rot unnoticed: `npm run image:check` runs its stages on this machine (no Docker
// engine: the real npm ci, npm run build and npm ci --omit=dev from the .dockerignore'd context), then
// the image's CMD as a non-root user against the real dev server, with its HEALTHCHECK. Broken copies
// of the Dockerfile are refused before anything runs. The full run needs the npm registry (or a warm cache).
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCommand, type CommandRun } from '../helpers/command-run.js';
import { PROJECT_ROOT } from '../../scripts/lib/temporal-binaries.js';

const SCRIPT = join(PROJECT_ROOT, 'scripts', 'image-check', 'image-check.ts');

function imageCheck(args: readonly string[] = []): Promise<CommandRun> {
  return runCommand(process.execPath, ['--import', 'tsx', SCRIPT, ...args]);
}

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

describe('npm run image:check', { concurrency: true }, () => {
  let dir: string;
  let original: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'image-check-test-'));
    original = await readFile(join(PROJECT_ROOT, 'Dockerfile'), 'utf8');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** A copy of the Dockerfile with one change, in the temp dir. */
  async function brokenCopy(name: string, from: string | RegExp, to: string): Promise<string> {
    const text = original.replace(from, to);
    assert.notEqual(text, original, `the change for ${name} must apply to the Dockerfile`);
    const path = join(dir, `${name}.Dockerfile`);
    await writeFile(path, text);
    return path;
  }

  // Two npm installs, a tsc build and a bundle: minutes on a fresh machine's 2 cores beside three
  // other test files (300 s when Go builds ran beside the tests, 2026-11-28). A hang guard, not a bound.
  it(
    'builds the stages without an engine and runs the CMD worker as non-root: a connection completes, healthy while running, 503 while draining, exit 0',
    { timeout: 600_000 },
    async () => {
      const run = await imageCheck();
      assert.equal(run.code, 0, `exit code; stderr:\n${run.stderr}\nstdout:\n${run.stdout}`);
      assert.match(run.stdout, /^ {2}RUN npm ci --prefer-offline --no-audit --no-fund/m);
      assert.match(run.stdout, /^ {2}RUN npm run build/m);
      assert.match(run.stdout, /^ {2}RUN npm ci --omit=dev/m);
      assert.match(run.stdout, /no dev-only package installed; compiled imports all in dependencies; bundle carries both converters/);
      assert.match(
        run.stdout,
        /^ {2}worker {4}node dist\/src\/worker\.js \(uid (?!0\))\d+\): started; HEALTHCHECK http:\/\/127\.0\.0\.1:\d+\/healthz: 200 \{"state":"RUNNING"\}/m,
      );
      assert.match(run.stdout, /via node dist\/src\/cli\/main\.js start \+ watch: Completed/);
      assert.match(run.stdout, /HEALTHCHECK during the drain: .*503 (STOPPING|DRAINING)/);
      assert.match(run.stdout, /worker exited 0 after/);
      assert.match(
        lastLine(run.stdout),
        /^image-check: the Dockerfile's stages ran without an engine .* exit 0 after SIGTERM; sandbox and console healthy; .* the image itself was not built \(no Docker engine\)$/,
      );
    },
  );

  it('refuses a Dockerfile whose CMD runs a file the build cannot produce, before running anything', async () => {
    const run = await imageCheck(['--dockerfile', await brokenCopy('bad-cmd', '"dist/src/worker.js"]', '"dist/src/wrker.js"]')]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /CMD runs dist\/src\/wrker\.js, but there is no src\/wrker\.ts to compile it from/);
    assert.match(lastLine(run.stderr), /^image-check: .*bad-cmd\.Dockerfile is out of step with the project: 1 problem\(s\) above; nothing was run$/);
    assert.doesNotMatch(run.stdout, /RUN npm ci/);
  });

  it('refuses a runtime stage that installs devDependencies or runs as root', async () => {
    const withDev = await imageCheck(['--dockerfile', await brokenCopy('with-dev', 'npm ci --omit=dev', 'npm ci')]);
    assert.equal(withDev.code, 1);
    assert.match(withDev.stderr, /the final stage \(runtime\) does not run `npm ci --omit=dev`/);
    const asRoot = await imageCheck(['--dockerfile', await brokenCopy('as-root', /^USER 1000:1000$/m, 'USER root')]);
    assert.equal(asRoot.code, 1);
    assert.match(asRoot.stderr, /the image runs as root: set a non-root USER/);
  });

  it('refuses a stage on another Node.js major than the one .nvmrc pins', async () => {
    const run = await imageCheck(['--dockerfile', await brokenCopy('old-node', /^FROM node:24-slim AS runtime$/m, 'FROM node:20-slim AS runtime')]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /stage runtime is FROM node:20-slim, not node:24-slim \(the major \.nvmrc pins\)/);
    assert.match(lastLine(run.stderr), /out of step with the project: 1 problem\(s\) above; nothing was run$/);
  });

  it('refuses a HEALTHCHECK that probes another port than WORKER_HEALTH_PORT', async () => {
    const run = await imageCheck(['--dockerfile', await brokenCopy('bad-port', 'ENV WORKER_HEALTH_PORT=8081', 'ENV WORKER_HEALTH_PORT=8082')]);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /HEALTHCHECK probes http:\/\/127\.0\.0\.1:8081\/healthz, not http:\/\/127\.0\.0\.1:<WORKER_HEALTH_PORT>\/healthz \(ENV WORKER_HEALTH_PORT=8082\)/,
    );
  });

  it('refuses an instruction it does not know how to run, naming its line', async () => {
    const run = await imageCheck(['--dockerfile', await brokenCopy('with-add', 'COPY src ./src', 'ADD src ./src')]);
    assert.equal(run.code, 1);
    assert.match(lastLine(run.stderr), /^image-check: .*with-add\.Dockerfile cannot be checked: Dockerfile line \d+: ADD is not supported by image-check/);
  });
});
