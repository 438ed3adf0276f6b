/**
 * Which test files `npm test` runs and in what order (scripts/run-tests.mjs):
 * - the files under a directory, filtered by path;
 * - `--changed`: only those whose imports reach a file changed against git's HEAD;
 * - `--unit`: only those that need no server (nothing they import starts one or runs a provisioned
 *   program), the fast tier;
 * - slowest first, from the seconds each file took in earlier runs (recorded in the cache), so the
 *   longest file does not start last and hold the run open alone;
 * - files that say `// npm test: runs alone` in their first lines run with nothing beside them.
 * The import graph is read as text (relative `import`/`export ... from`/`import()` specifiers), as
 * tsx resolves them: `./x.js` is `./x.ts` when that exists.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A test file marks itself to run with no other file beside it (it measures or loads the whole machine). */
export const RUNS_ALONE_MARKER = '// npm test: runs alone';
/** A test file marks itself as needing a server that no import shows (a script it runs starts one). */
export const NEEDS_SERVER_MARKER = '// npm test: needs a server';

/**
 * What a test needs a server or a provisioned program for: a file whose imports reach one of these
 * is not in the unit tier. Repository paths, and package names.
 */
const NEEDS_A_SERVER = [
  'test/helpers/temporal.ts',
  'test/helpers/openbao.ts',
  'test/helpers/minio.ts',
  'test/helpers/moto.ts',
  'test/helpers/otel-collector.ts',
  'test/helpers/python-env.ts',
  'test/helpers/server-process.ts',
  'test/helpers/processes.ts',
  'test/helpers/harness-run.ts',
  'test/dev-stack/dev-stack-process.ts',
  'scripts/prod-check/postgres.ts',
  'scripts/lib/dev-environment.ts',
  'scripts/lib/dev-server.ts',
  'scripts/lib/stack-harness.ts',
  '@temporalio/testing',
  'playwright-core',
];

/**
 * The lanes of `scripts/provision-temporal.sh later` (provisioned while the tests run) and who needs
 * each: a file that reaches one of `reached` through imports, or whose own text names one of
 * `named` (a script it runs), starts only once that lane is ready.
 */
export const PROVISIONED_LATER: readonly { readonly lane: string; readonly reached: readonly string[]; readonly named: readonly string[] }[] = [
  // pytest starts its own MinIO from the cache (python/tests/minio.py): python-env.ts runs it.
  { lane: 'minio', reached: ['scripts/lib/minio-binary.ts', 'test/helpers/python-env.ts'], named: [] },
  { lane: 'moto', reached: ['scripts/lib/moto-binary.ts'], named: [] },
  { lane: 'otelcol', reached: ['test/helpers/otel-collector.ts'], named: [] },
  { lane: 'compose', reached: ['scripts/compose-check.ts'], named: ['compose:check'] },
  // The chart check's helm, KEDA CRDs and kubernetes-validate (test/helm/).
  { lane: 'helm', reached: ['scripts/lib/helm-tools.ts'], named: ['helm:check'] },
  // The operators page's `temporal` commands, run by test/codec/temporal-cli-codec.test.ts.
  { lane: 'cli', reached: ['test/helpers/temporal-cli.ts'], named: [] },
];

/** Every `*.test.ts` under `dir` (test/fixtures, node_modules and dot-folders left out), sorted. */
export function findTestFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      // test/fixtures holds the runner's own fixture files (test/run-tests.test.ts runs them with --dir).
      if (entry.name !== 'node_modules' && entry.name !== 'fixtures' && !entry.name.startsWith('.')) files.push(...findTestFiles(path));
    } else if (entry.isFile() && entry.name.endsWith('.test.ts')) {
      files.push(path);
    }
  }
  return files.sort();
}

const SPECIFIER =
  /(?:^|[^\w$.])(?:import|export)\s*(?:type\s+)?(?:[\w$*{},\s]+?\s+from\s+)?['"]([^'"]+)['"]|(?:^|[^\w$.])import\s*\(\s*['"]([^'"]+)['"]\s*\)/gm;
const SOURCE_EXTENSIONS = ['.ts', '.mts', '.mjs', '.js', '.tsx'];

/** The file a relative specifier names, as tsx finds it; undefined when there is none. */
function resolveRelative(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(m?js|jsx)$/, '');
  const candidates = [base, ...SOURCE_EXTENSIONS.map((ext) => stem + ext), ...SOURCE_EXTENSIONS.map((ext) => join(base, `index${ext}`))];
  return candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
}

/** The import graph of the repository's sources, read once per run and shared by every question. */
export class ImportGraph {
  private readonly edges = new Map<string, { files: string[]; packages: string[] }>();
  private readonly closures = new Map<string, { files: Set<string>; packages: Set<string> }>();
  private readonly texts = new Map<string, string>();

  constructor(private readonly root: string) {}

  /** What `file` imports directly: repository files (absolute) and package names. */
  private importsOf(file: string): { files: string[]; packages: string[] } {
    const known = this.edges.get(file);
    if (known) return known;
    const found = { files: [] as string[], packages: [] as string[] };
    this.edges.set(file, found);
    const text = this.text(file);
    for (const match of text.matchAll(SPECIFIER)) {
      const specifier = match[1] ?? match[2];
      if (!specifier) continue;
      if (specifier.startsWith('.')) {
        const target = resolveRelative(file, specifier);
        if (target && !target.includes(`${sep}node_modules${sep}`)) found.files.push(target);
      } else if (!specifier.startsWith('node:')) {
        // '@scope/name/sub' and 'name/sub' are the packages '@scope/name' and 'name'.
        const parts = specifier.split('/');
        found.packages.push(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!);
      }
    }
    return found;
  }

  /** A file's text, read once per run ('' when it cannot be read: nothing to follow). */
  private text(file: string): string {
    let text = this.texts.get(file);
    if (text === undefined) {
      try {
        text = readFileSync(file, 'utf8');
      } catch {
        text = '';
      }
      this.texts.set(file, text);
    }
    return text;
  }

  /** Every repository file `file` reaches through imports (itself included), and every package; worked out once per file. */
  closure(file: string): { files: Set<string>; packages: Set<string> } {
    const known = this.closures.get(file);
    if (known) return known;
    const files = new Set<string>([file]);
    const packages = new Set<string>();
    const queue = [file];
    while (queue.length > 0) {
      const next = queue.pop()!;
      const { files: imported, packages: used } = this.importsOf(next);
      for (const pkg of used) packages.add(pkg);
      for (const target of imported) {
        if (!files.has(target)) {
          files.add(target);
          queue.push(target);
        }
      }
    }
    this.closures.set(file, { files, packages });
    return { files, packages };
  }

  /** Whether anything `file` imports starts a server or runs a provisioned program (NEEDS_A_SERVER), or it says it needs one (NEEDS_SERVER_MARKER). */
  needsServer(file: string): boolean {
    if (hasMarker(this.text(file), NEEDS_SERVER_MARKER)) return true;
    const { files, packages } = this.closure(file);
    return NEEDS_A_SERVER.some((need) => (need.includes('/') && !need.startsWith('@') ? files.has(join(this.root, need)) : packages.has(need)));
  }

  /** The lanes of PROVISIONED_LATER that `file` needs. */
  provisionedLater(file: string): string[] {
    const { files } = this.closure(file);
    const text = this.text(file);
    return PROVISIONED_LATER.filter(
      ({ reached, named }) => reached.some((path) => files.has(join(this.root, path))) || named.some((name) => text.includes(name)),
    ).map(({ lane }) => lane);
  }

  /**
   * Whether `file` is affected by a change to `changed` (repository-relative paths): it reaches one
   * through imports, or a file it reaches names a changed non-source file by its path, or names the
   * top folder of one outside the TypeScript folders (`python/`, `grafana/`: a test that runs pytest
   * or reads a dashboard says so).
   */
  affectedBy(file: string, changed: readonly string[]): boolean {
    const { files } = this.closure(file);
    const reached = new Set([...files].map((path) => relative(this.root, path).split(sep).join('/')));
    const sources = changed.filter((path) => SOURCE_EXTENSIONS.some((ext) => path.endsWith(ext)));
    if (sources.some((path) => reached.has(path))) return true;
    const mentions = changed
      .filter((path) => !sources.includes(path))
      .flatMap((path) => {
        const top = path.includes('/') ? path.slice(0, path.indexOf('/') + 1) : undefined;
        return [path, ...(top && !TYPESCRIPT_FOLDERS.includes(top) ? [top] : [])];
      })
      // As a path of the repository: not the tail of another path ('../python/' is not 'python/').
      .map((mention) => new RegExp(`(?<![\\w./-])${mention.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    if (mentions.length === 0) return false;
    return [...files].some((path) => mentions.some((mention) => mention.test(this.text(path))));
  }
}

/** Top folders of TypeScript that the import graph follows: a mention of the folder alone says nothing. */
const TYPESCRIPT_FOLDERS = ['src/', 'scripts/', 'test/', 'bench/'];

/** Repository-relative paths changed against HEAD: staged, unstaged and untracked (not ignored). */
export function changedFiles(root: string): string[] {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
  return [...new Set([...git('diff', '--name-only', 'HEAD'), ...git('ls-files', '--others', '--exclude-standard')])].sort();
}

/** Whether one of the first 40 lines of `text` starts with `marker` (a reason may follow it). */
function hasMarker(text: string, marker: string): boolean {
  return text.split('\n', 40).some((line) => line.trim().startsWith(marker));
}

/** Whether `file` asks to run with no other file beside it (RUNS_ALONE_MARKER). */
export function runsAlone(file: string): boolean {
  return hasMarker(readFileSync(file, 'utf8'), RUNS_ALONE_MARKER);
}

/**
 * The seconds each file took in one whole run at the default concurrency, kept in the repository:
 * the order on a machine whose cache has no figures yet (a fresh CI machine), where the slowest files
 * starting last would hold the run open. The cache's own figures override them file by file.
 * Refresh it from the cache's test-timings.json after a whole run when the order has drifted.
 */
export const SEED_TIMINGS_PATH = fileURLToPath(new URL('./test-timings-seed.json', import.meta.url));

/** Seconds each file took in earlier runs, keyed by repository-relative path. */
export type Timings = Record<string, number>;

export function readTimings(path: string): Timings {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (!parsed || typeof parsed !== 'object') return {};
    return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, number] => typeof entry[1] === 'number' && Number.isFinite(entry[1])));
  } catch {
    return {}; // none yet, or a file cut by a kill: the order falls back
  }
}

/** Merges this run's seconds into the recorded ones (a file not run keeps its figure); written whole, then renamed. */
export function recordTimings(path: string, measured: Timings): void {
  const merged = { ...readTimings(path), ...measured };
  mkdirSync(dirname(path), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  writeFileSync(partial, `${JSON.stringify(merged, Object.keys(merged).sort(), 2)}\n`);
  renameSync(partial, path);
}

/**
 * Slowest first by recorded seconds; a file with no figure yet counts as slowest (a new file may be
 * long, and learning its time costs nothing more), then by path for a stable order.
 */
export function slowestFirst(files: readonly string[], timings: Timings, key: (file: string) => string): string[] {
  const seconds = (file: string) => timings[key(file)] ?? Number.POSITIVE_INFINITY;
  return [...files].sort((a, b) => seconds(b) - seconds(a) || (a < b ? -1 : a > b ? 1 : 0));
}
