import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../src/settings/load.js';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import { nodeRuntimeProblem, SUPPORTED_NODE_MAJOR } from '../../src/settings/node-runtime.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pinned = readFileSync(join(root, '.nvmrc'), 'utf8').trim().replace(/^v/, '');
const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  engines: { node: string };
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  dependencyPins: Record<string, string>;
  allowScripts: Record<string, boolean>;
  allowScriptsReasons: Record<string, string>;
};
const majorOf = (version: string) => Number.parseInt(version, 10);

/** A directory holding a `node` that only answers --version with `version`: a machine's own runtime. */
function machineNode(version: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'machine-node-'));
  writeFileSync(join(dir, 'node'), `#!/bin/sh\necho v${version}\n`);
  chmodSync(join(dir, 'node'), 0o755);
  return dir;
}

function withPinnedNode(pathFirst: string, ...command: string[]) {
  return spawnSync('bash', [join(root, 'scripts/with-pinned-node.sh'), ...command], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${pathFirst}${delimiter}${process.env.PATH ?? ''}` },
  });
}

describe('the pinned Node.js runtime', () => {
  it('is one major in .nvmrc, engines, the Dockerfile and the code', () => {
    assert.match(pinned, /^\d+\.\d+\.\d+$/, '.nvmrc holds one exact release');
    assert.equal(majorOf(pinned), SUPPORTED_NODE_MAJOR);
    const engines = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(packageJson.engines.node);
    assert.ok(engines, `engines.node is a caret range of one major, got ${packageJson.engines.node}`);
    assert.equal(Number(engines[1]), SUPPORTED_NODE_MAJOR);
    const [, minor] = pinned.split('.').map(Number);
    assert.ok(minor! >= Number(engines[2]), `.nvmrc ${pinned} satisfies engines ${packageJson.engines.node}`);
    const froms = readFileSync(join(root, 'Dockerfile'), 'utf8').match(/^FROM\s+\S+/gm) ?? [];
    assert.ok(froms.length > 0);
    for (const from of froms) assert.equal(from, `FROM node:${SUPPORTED_NODE_MAJOR}-slim`);
  });

  it('runs this test suite', () => {
    assert.equal(majorOf(process.versions.node), SUPPORTED_NODE_MAJOR, `npm test runs on Node ${pinned}, not ${process.versions.node}`);
  });

  it('runs every npm script that starts node code', () => {
    const direct = Object.entries(packageJson.scripts).filter(
      // Provisioning runs before Node.js is there; ruff over python/ and hadolint over the Dockerfiles start no node at all.
      ([, command]) =>
        !command.startsWith('bash scripts/with-pinned-node.sh ') &&
        !command.startsWith('bash scripts/provision-temporal.sh') &&
        command !== 'bash scripts/lint-python.sh' &&
        command !== 'bash scripts/lint-docker.sh',
    );
    assert.deepEqual(direct, []);
  });

  it('refuses an end-of-life runtime with a message that names it and the way out', () => {
    const problem = nodeRuntimeProblem('20.20.2');
    assert.match(problem ?? '', /Node\.js 20\.20\.2: this product runs on Node\.js 24 LTS/);
    assert.match(problem ?? '', /npm scripts/);
    assert.equal(nodeRuntimeProblem(pinned), undefined);
    assert.equal(nodeRuntimeProblem('26.1.0'), undefined, 'a newer major is not refused at run time');
    assert.ok(nodeRuntimeProblem('not-a-version'), 'an unreadable version is refused, not trusted');
  });
});

describe('ALLOW_UNSUPPORTED_NODE', () => {
  it('takes only true, naming itself otherwise', () => {
    assert.throws(
      () => loadWorkerConfig({ ALLOW_UNSUPPORTED_NODE: 'yes' }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.deepEqual(error.problems, ['ALLOW_UNSUPPORTED_NODE: expected true or unset, got "yes"']);
        return true;
      },
    );
    assert.equal(loadWorkerConfig({ ALLOW_UNSUPPORTED_NODE: 'true' }).temporal.address, 'localhost:7233');
  });
});

describe('scripts/with-pinned-node.sh', () => {
  it('runs the pinned release from the cache when the machine has an older major', () => {
    const result = withPinnedNode(machineNode('20.20.2'), 'node', '--version');
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout.trim(), `v${pinned}`);
  });

  it("uses the machine's own node when it is the pinned major", () => {
    const own = `${SUPPORTED_NODE_MAJOR}.99.0`;
    const result = withPinnedNode(machineNode(own), 'node', '--version');
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout.trim(), `v${own}`);
  });

  it('refuses to run without a command', () => {
    const result = withPinnedNode(machineNode(pinned));
    assert.equal(result.status, 2);
    assert.match(result.stderr, /usage: .*with-pinned-node\.sh <command>/);
  });
});

describe('scripts/provision-node.sh', () => {
  it('refuses a version that is not one exact release, before fetching anything', () => {
    const result = spawnSync('bash', [join(root, 'scripts/provision-node.sh'), '24.x'], { encoding: 'utf8' });
    assert.equal(result.status, 2);
    assert.match(result.stderr, /expected a Node\.js version such as 24\.21\.0, got '24\.x'/);
  });
});

describe('dependency pins', () => {
  it('give a reason for each pin that names a real dependency', () => {
    const all = { ...packageJson.dependencies, ...packageJson.devDependencies };
    for (const [name, reason] of Object.entries(packageJson.dependencyPins)) {
      assert.ok(all[name], `dependencyPins names ${name}, which package.json does not depend on`);
      assert.ok(reason.length > 20, `the reason for ${name} says why`);
    }
  });
});

describe('install scripts', () => {
  it('are each allowed or denied in allowScripts, with a reason in allowScriptsReasons', () => {
    assert.deepEqual(Object.keys(packageJson.allowScriptsReasons).sort(), Object.keys(packageJson.allowScripts).sort());
    for (const [name, allowed] of Object.entries(packageJson.allowScripts)) {
      assert.equal(typeof allowed, 'boolean', `allowScripts says yes or no for ${name}`);
      assert.ok(packageJson.allowScriptsReasons[name]?.startsWith(`${allowed}: `), `the reason for ${name} starts with its choice`);
    }
  });
});
