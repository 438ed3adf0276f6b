/**
 * The configuration reference (docs/configuration.md, .env.example) is what `npm run docs:config`
 * writes from the zod schemas of the settings modules, regenerated here in memory; and nothing outside
 * src/settings/load.ts reads process.env but what DIRECT_READS lists (and the reference explains).
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CONFIG_REFERENCE_COMMAND, DIRECT_READS, renderConfigReference, staleReferenceFiles } from '../../scripts/lib/config-reference.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the configuration reference', () => {
  const rendered = renderConfigReference(ROOT);

  it(`docs/configuration.md and .env.example are what \`${CONFIG_REFERENCE_COMMAND}\` writes from the settings modules`, () => {
    assert.deepEqual(
      staleReferenceFiles(ROOT, rendered).map(({ message }) => message),
      [],
    );
  });

  it('names a stale file, its first differing line and the command that writes it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'config-reference-'));
    try {
      await mkdir(join(dir, 'docs'));
      await writeFile(join(dir, 'docs/configuration.md'), rendered['docs/configuration.md']);
      await writeFile(
        join(dir, '.env.example'),
        rendered['.env.example'].replace('TEMPORAL_TASK_QUEUE=aggregation-connections', 'TEMPORAL_TASK_QUEUE=old-queue'),
      );
      const [stale, ...more] = staleReferenceFiles(dir, rendered);
      assert.equal(more.length, 0);
      assert.equal(stale?.file, '.env.example');
      assert.match(
        stale.message,
        /^\.env\.example is stale: line \d+ is "TEMPORAL_TASK_QUEUE=old-queue", the schemas give "TEMPORAL_TASK_QUEUE=aggregation-connections"/,
      );
      assert.match(stale.message, /Run `npm run docs:config` and commit it/);
      await rm(join(dir, 'docs/configuration.md'));
      assert.deepEqual(
        staleReferenceFiles(dir, rendered).map(({ message }) => message.split(':')[0]),
        ['docs/configuration.md is missing', '.env.example is stale'],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('documents every variable with its default and its readers, secrets blank in .env.example', () => {
    const markdown = rendered['docs/configuration.md'];
    assert.match(markdown, /^\| `TEMPORAL_TASK_QUEUE` \| `aggregation-connections` \| worker, client, sdk floor worker \| /m);
    assert.match(markdown, /^\| `WORKER_BECOME_CURRENT` \| `when-unset` \(worker\); `yes` \(dev stack\) \| worker, dev stack \| /m);
    assert.match(markdown, /^\| `SANDBOX_PORT` \| `4010` \| sandbox, dev stack, demo \| /m);
    assert.match(markdown, /^\| `CONSOLE_TOKEN` \| unset \(console\); generated \(dev stack\) \|.*Required unless operators sign in/m);
    assert.match(markdown, /^## Tests and tooling$/m);
    assert.match(markdown, /^### What reads process\.env directly$/m);
    assert.match(markdown, / Held by \[src\/settings\/temporal\.ts\]\(\.\.\/src\/settings\/temporal\.ts\)\.$/m, 'each section names the module that holds it');
    assert.match(markdown, /^\| worker \| `loadWorkerConfig` \(\[src\/settings\/worker\.ts\]\(\.\.\/src\/settings\/worker\.ts\)\) \|/m);
    const example = rendered['.env.example'];
    for (const secret of ['PAYLOAD_ENCRYPTION_KEY', 'CONSOLE_TOKEN', 'AGGREGATOR_AUTH_SECRET', 'CONNECTION_PASSWORD', 'TEMPORAL_API_KEY'])
      assert.match(example, new RegExp(`^${secret}=$`, 'm'));
    assert.match(example, /^PAYLOAD_STORE_THRESHOLD_BYTES=131072$/m);
    assert.match(example, /^TEMPORAL_SERVER_VERSION=\d+\.\d+\.\d+$/m, 'the release scripts/lib/temporal-versions.env declares');
    assert.doesNotMatch(example, /^TEST_CONCURRENCY=/m, "the tests' variables are in docs/configuration.md only");
  });
});

// ---- process.env outside src/settings/load.ts ----------------------------------------------------

const SCANNED = ['src', 'scripts', 'bench', 'test'];
/** Files that talk about process.env (this check), not read it. */
const ABOUT_IT = new Set(['src/settings/load.ts', 'scripts/lib/config-reference.ts', 'test/docs/config-reference.test.ts']);
/** process.env, process['env'], `{ env } = process`, `import { env } from 'node:process'`. */
const READS = [
  /\bprocess\.env\b/,
  /\bprocess\s*\[\s*['"`]env['"`]\s*\]/,
  /\{[^}]*\benv\b[^}]*\}\s*=\s*process\b/,
  /import\s*\{[^}]*\benv\b[^}]*\}\s*from\s*['"](?:node:)?process['"]/,
];

async function sourceFiles(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) files.push(...(await sourceFiles(path)));
    } else if (/\.[cm]?[jt]s$/.test(entry.name) && !ABOUT_IT.has(path)) {
      files.push(path);
    }
  }
  return files;
}

/**
 * Lines of code (comments left out) that touch process.env beyond what DIRECT_READS allows their
 * file, as `file:line: text`; and which entries of DIRECT_READS matched in which of their files.
 */
async function unlistedReads(): Promise<{ unlisted: string[]; used: Set<string> }> {
  const unlisted: string[] = [];
  const used = new Set<string>();
  for (const file of (await Promise.all(SCANNED.map(sourceFiles))).flat()) {
    const allowed = DIRECT_READS.map((read, index) => ({ read, index })).filter(({ read }) => read.files.includes(file));
    const lines = (await readFile(join(ROOT, file), 'utf8')).split('\n');
    lines.forEach((text, index) => {
      if (/^\s*(\*|\/\/|\/\*)/.test(text) || !READS.some((pattern) => pattern.test(text))) return;
      let rest = text;
      for (const { read, index: readIndex } of allowed) {
        const without = rest.replace(read.pattern, '');
        if (without !== rest) used.add(`${readIndex} ${file}`);
        rest = without;
      }
      if (READS.some((pattern) => pattern.test(rest))) unlisted.push(`${file}:${index + 1}: ${text.trim()}`);
    });
  }
  return { unlisted, used };
}

describe('process.env outside src/settings/load.ts', () => {
  it('is never read for a setting: only passed on to child processes, or read where docs/configuration.md says why', async () => {
    const { unlisted } = await unlistedReads();
    assert.deepEqual(
      unlisted,
      [],
      'read the setting through a loader of a settings module (documented with doc(...), then `npm run docs:config`); ' +
        'if the line passes the environment on to a child process, or cannot load the settings modules, add it to DIRECT_READS in scripts/lib/config-reference.ts with the reason',
    );
  });

  it('every file of every entry of DIRECT_READS still does what the entry excuses', async () => {
    const { used } = await unlistedReads();
    const stale = DIRECT_READS.flatMap((read, index) => read.files.filter((file) => !used.has(`${index} ${file}`)).map((file) => `${file}: ${read.what}`));
    assert.deepEqual(stale, [], 'remove these files (or entries) from DIRECT_READS in scripts/lib/config-reference.ts, then `npm run docs:config`');
  });
});
