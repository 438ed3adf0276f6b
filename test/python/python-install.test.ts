// npm test: needs a server (PyPI: pip downloads the lock's wheels, or takes them from its cache)
/**
 * The Python page's install works as written, from a fresh venv: its Install section's shell block
 * (docs/python-pipeline.md, read here so the page and the test cannot drift) runs verbatim in a copy of
 * the checkout's python/, then the venv imports the package from that copy's src/ (the editable install).
 * And without hatchling's dev-mode-dirs (python/pyproject.toml) the editable install fails as the issue
 * found it, "No module named 'editables'": the setting is what makes the page's command work.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const PAGE = join(REPO, 'docs/python-pipeline.md');

/** Runs a command to its end, keeping its exit code and output (a failure is a result here, not an error). */
function run(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { ...options, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** The first ```sh block after the page's `## Install` heading. */
function installCommands(markdown: string): string {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Install\n'));
  const block = section && /^```sh\n([\s\S]*?)^```$/m.exec(section);
  if (!block?.[1]) throw new Error(`${PAGE}: no \`\`\`sh block under "## Install"`);
  return block[1];
}

describe("the Python page's install, from a fresh venv", () => {
  let checkout: string;
  let commands: string;
  before(async () => {
    commands = installCommands(await readFile(PAGE, 'utf8'));
    checkout = await mkdtemp(join(tmpdir(), 'python-install-'));
    // What the commands read of a checkout: the project, its lock and its sources (no caches).
    for (const path of ['python/pyproject.toml', 'python/requirements.lock', 'python/src']) {
      await cp(join(REPO, path), join(checkout, path), { recursive: true, filter: (source) => !['__pycache__', '.mypy_cache'].includes(basename(source)) });
    }
  });
  after(async () => {
    await rm(checkout, { recursive: true, force: true });
  });

  // The caller's environment (pip's index, certificates and cache settings), without a venv of its own.
  const env = (): NodeJS.ProcessEnv => {
    const { VIRTUAL_ENV: _venv, PYTHONPATH: _path, PYTHONHOME: _home, ...rest } = process.env;
    return rest;
  };

  it('runs the Install block verbatim, and the venv imports the package from the checkout', async () => {
    assert.match(commands, /-m venv/, 'the block makes a venv');
    assert.match(commands, /--require-hashes -r python\/requirements\.lock/, 'the block installs the lock');
    assert.match(commands, /-e python\//, 'the block installs the package, editable');
    const started = performance.now();
    const install = await run('bash', ['-euo', 'pipefail', '-c', commands], { cwd: checkout, env: env() });
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    process.stdout.write(`python-install: the page's Install block took ${seconds} s\n`);
    assert.equal(install.code, 0, `the page's install failed (exit ${install.code}):\n${install.stdout.slice(-4000)}\n${install.stderr.slice(-4000)}`);

    // From elsewhere, so the import comes from the install and not from the working directory.
    const probe = 'import aggregation_connections.client as client, aggregation_connections.contract.names as names; print(client.__file__); print(names.CONNECTION_WORKFLOW_TYPE)';
    const imported = await run(join(checkout, '.venv/bin/python'), ['-c', probe], { cwd: tmpdir(), env: env() });
    assert.equal(imported.code, 0, `the installed package does not import:\n${imported.stderr}`);
    const [file, workflowType] = imported.stdout.trim().split('\n');
    assert.equal(file, join(checkout, 'python/src/aggregation_connections/client/__init__.py'), 'an editable install: the sources of the checkout');
    assert.equal(workflowType, 'connectionWorkflow');
  });

  it("fails without the dev-mode-dirs setting, as the page's command did", async () => {
    const pyproject = join(checkout, 'python/pyproject.toml');
    const text = await readFile(pyproject, 'utf8');
    assert.match(text, /^dev-mode-dirs = \["src"\]$/m);
    await writeFile(pyproject, text.replace(/^dev-mode-dirs = .*$/m, ''));
    const editable = commands.split('\n').find((line) => line.includes('-e python/')) ?? '';
    const again = await run('bash', ['-euo', 'pipefail', '-c', `. .venv/bin/activate && ${editable}`], { cwd: checkout, env: env() });
    assert.notEqual(again.code, 0, 'hatchling made an editable install without dev-mode-dirs: the setting may go (and this test with it)');
    assert.match(`${again.stdout}\n${again.stderr}`, /No module named 'editables'/);
  });
});
