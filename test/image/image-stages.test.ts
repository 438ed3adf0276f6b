// image:check runs a Dockerfile's RUN steps on this machine: a step that failed on the registry's
// network (npm's own `network` error, a reset socket) runs again, at most twice, and says so; any
// other failure ends the check at once with the step's log.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseDockerfile } from '../../scripts/image-check/dockerfile.js';
import { runStages, StageError } from '../../scripts/image-check/stages.js';

/** A RUN that fails `failures` times with `words` on stderr, then succeeds; counts its attempts in a file. */
function flakyRun(failures: number, words: string): string {
  return `RUN n=$(cat attempts 2>/dev/null || echo 0); n=$((n+1)); echo $n > attempts; if [ $n -le ${failures} ]; then echo '${words}' >&2; exit 1; fi`;
}

describe('image:check stages', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'image-stages-test-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function run(name: string, runLine: string): Promise<{ lines: string[]; outcome: unknown }> {
    const lines: string[] = [];
    const stages = parseDockerfile(`FROM node:24-slim AS build\nWORKDIR /app\n${runLine}\n`);
    const outcome = await runStages({ stages, contextDir: dir, workDir: join(dir, name), report: (line) => lines.push(line) }).then(
      (done) => done,
      (error: unknown) => error,
    );
    return { lines, outcome };
  }

  it('runs a step again when npm says the network failed, and reports each retry', async () => {
    const { lines, outcome } = await run(
      'reset-once',
      flakyRun(1, 'npm error network Invalid response body while trying to fetch https://registry.npmjs.org/webpack: read ECONNRESET'),
    );
    assert.ok(outcome instanceof Map, `the stage ran: ${String(outcome)}`);
    assert.equal(lines.filter((line) => line.includes("the registry's network failed")).length, 1);
    assert.match(lines.join('\n'), /running it again \(1 of 2\)/);
  });

  it('gives up after two retries and shows the last log', async () => {
    const { lines, outcome } = await run('reset-always', flakyRun(9, 'npm error code ECONNRESET'));
    assert.ok(outcome instanceof StageError, `a StageError: ${String(outcome)}`);
    assert.match(outcome.message, /npm error code ECONNRESET/);
    assert.equal(lines.filter((line) => line.includes("the registry's network failed")).length, 2);
  });

  it('does not retry a failure of any other kind', async () => {
    const { lines, outcome } = await run('not-network', flakyRun(1, 'npm error code ERESOLVE'));
    assert.ok(outcome instanceof StageError, `a StageError: ${String(outcome)}`);
    assert.match(outcome.message, /ERESOLVE/);
    assert.equal(
      lines.some((line) => line.includes('running it again')),
      false,
    );
  });
});
