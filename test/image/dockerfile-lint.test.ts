/**
 * The Dockerfiles are linted by hadolint (scripts/lint-docker.sh, `npm run lint:docker`): the
 * project's pass, and a Dockerfile with what the rules exist to catch fails, each finding by its code.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCommand } from '../helpers/command-run.js';
import { PROJECT_ROOT } from '../../scripts/lib/temporal-binaries.js';

const LINT = join(PROJECT_ROOT, 'scripts', 'lint-docker.sh');

describe('hadolint over the Dockerfiles', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dockerfile-lint-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("passes the product's and the sandbox's Dockerfiles", async () => {
    const run = await runCommand('bash', [LINT]);
    assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  });

  it('fails a Dockerfile with an unpinned base, an unpinned package, a cd in RUN and a user by name', async () => {
    const broken = join(dir, 'Dockerfile');
    await writeFile(
      broken,
      ['FROM node:latest', 'RUN apt-get update && apt-get install -y curl', 'RUN cd /app && npm ci', 'USER node', 'CMD node dist/src/worker.js', ''].join('\n'),
    );
    const run = await runCommand('bash', [LINT, broken]);
    assert.notEqual(run.code, 0);
    for (const code of ['DL3007', 'DL3008', 'DL3003', 'DL3066', 'DL3025']) assert.match(run.stdout, new RegExp(`${code} `), `${code} in:\n${run.stdout}`);
  });
});
