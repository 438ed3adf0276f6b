/**
 * The configuration reference, rendered from the zod schemas of the settings modules (src/settings/,
 * and the tools' own beside them: each variable's description, default and secrecy on its schema;
 * the groups with the module that holds each, and the readers, in scripts/lib/config-registry.ts):
 *   docs/configuration.md  every variable by group: default, which processes read it, what it does;
 *                          the processes and their loaders; what still reads process.env directly, and why
 *   .env.example           the product's variables, grouped and commented, defaults shown, secrets blank
 * `npm run docs:config` (scripts/generate-config-reference.ts) writes them; test/docs/config-reference.test.ts
 * renders them in memory and fails when a file differs, and checks DIRECT_READS against the code.
 * Nothing here reads the environment: the output depends on the sources only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { CONFIG_GROUPS, CONFIG_READERS, type ConfigReader } from './config-registry.js';
import { type GroupDoc, type VariableDoc } from '../../src/settings/document.js';

export const CONFIG_REFERENCE_COMMAND = 'npm run docs:config';
export const CONFIG_REFERENCE_FILES = ['docs/configuration.md', '.env.example'] as const;
export type ConfigReferenceFile = (typeof CONFIG_REFERENCE_FILES)[number];

/** One variable as a reader parses it. */
interface Reading {
  readonly reader: ConfigReader;
  readonly schema: z.ZodType;
}

interface Variable {
  readonly name: string;
  /** Its own schema in its group (the description and default the reference leads with). */
  readonly schema: z.ZodType;
  readonly readings: readonly Reading[];
  /** The module that declares it: its group's, or the shared section's whose variables the group takes in. */
  readonly module: string;
}

interface Group {
  readonly doc: GroupDoc;
  /** The module that holds the group's schemas. */
  readonly module: string;
  readonly variables: readonly Variable[];
}

function groupDoc(schema: z.ZodObject, module: string): GroupDoc {
  const meta = schema.meta() as Partial<GroupDoc> | undefined;
  if (!meta?.title || !meta.description)
    throw new Error(`${module}: a group of CONFIG_GROUPS (${Object.keys(schema.shape).join(', ')}) has no title or description: wrap it in group(...)`);
  return meta as GroupDoc;
}

function variableDoc(name: string, schema: z.ZodType): VariableDoc {
  const meta = schema.meta() as Partial<VariableDoc> | undefined;
  if (!meta?.description) throw new Error(`${name} has no description: wrap its schema in doc(...) in the module CONFIG_GROUPS names for it`);
  return meta as VariableDoc;
}

/** Where the settings live: src/settings/ and the modules CONFIG_GROUPS names (the tools' own). */
function settingsModules(root: string): Map<string, string> {
  const paths = new Set([
    ...readdirSync(join(root, 'src/settings'))
      .filter((file) => file.endsWith('.ts'))
      .map((file) => `src/settings/${file}`),
    ...CONFIG_GROUPS.map((group) => group.module),
  ]);
  return new Map([...paths].map((path) => [path, readFileSync(join(root, path), 'utf8')]));
}

/** The module that declares `name`: its group's module when that one does, else the one module whose schema documents it. */
function holderOf(modules: ReadonlyMap<string, string>, groupModule: string, name: string): string {
  if (new RegExp(`\\b${name}:`).test(modules.get(groupModule) ?? '')) return groupModule;
  const holders = [...modules].filter(([, source]) => new RegExp(`\\b${name}: doc\\(`).test(source)).map(([path]) => path);
  if (holders.length !== 1)
    throw new Error(
      `CONFIG_GROUPS: ${groupModule} does not declare ${name}, and ${holders.length === 0 ? 'no settings module does' : `${holders.join(', ')} all do`}: name the module that holds its group`,
    );
  return holders[0]!;
}

/**
 * The variables by group, in the order of CONFIG_GROUPS and of each group's object; throws on a
 * variable no group or no reader has, and on a group whose module does not declare its variables.
 */
function collect(root: string): Group[] {
  const readings = new Map<string, Reading[]>();
  for (const reader of CONFIG_READERS) {
    for (const object of reader.variables) {
      for (const [name, schema] of Object.entries(object.shape)) {
        const list = readings.get(name) ?? [];
        if (!list.some((reading) => reading.reader === reader)) list.push({ reader, schema: schema as z.ZodType });
        readings.set(name, list);
      }
    }
  }
  const owned = new Set<string>();
  const modules = settingsModules(root);
  const groups = CONFIG_GROUPS.map(({ variables: object, module }) => {
    const variables: Variable[] = [];
    for (const [name, schema] of Object.entries(object.shape)) {
      if (owned.has(name)) continue;
      owned.add(name);
      const read = readings.get(name);
      if (!read) throw new Error(`${module}: ${name} is in a group but no reader of CONFIG_READERS reads it`);
      variableDoc(name, schema as z.ZodType);
      variables.push({ name, schema: schema as z.ZodType, readings: read, module: holderOf(modules, module, name) });
    }
    return { doc: groupDoc(object, module), module, variables };
  });
  const orphans = [...readings.keys()].filter((name) => !owned.has(name));
  if (orphans.length > 0) throw new Error(`CONFIG_READERS: ${orphans.join(', ')} belong to no group of CONFIG_GROUPS (scripts/lib/config-registry.ts)`);
  return groups;
}

/** `NAME=value` and `${NAME:-value}` lines of a repository file: the defaults it declares. */
function declaredDefault(root: string, file: string, name: string): string {
  const text = readFileSync(join(root, file), 'utf8');
  const escaped = name.replace(/[^A-Z0-9_]/g, '');
  const value = new RegExp(`^${escaped}="?([^"\\n]*)"?$`, 'm').exec(text)?.[1] ?? new RegExp(`\\$\\{${escaped}:-([^}]*)\\}`).exec(text)?.[1];
  if (value === undefined) throw new Error(`${name}'s default is declared in ${file}, which does not declare it`);
  return value;
}

/** What a schema defaults to: a value as the variable would spell it, words, or nothing (unset); `required` when it must be set. */
type Default =
  | { readonly kind: 'value'; readonly text: string }
  | { readonly kind: 'words'; readonly text: string }
  | { readonly kind: 'unset' }
  | { readonly kind: 'required' };

function defaultOf(root: string, name: string, schema: z.ZodType): Default {
  const doc = variableDoc(name, schema);
  if (doc.defaultFrom) return { kind: 'value', text: declaredDefault(root, doc.defaultFrom, name) };
  if (doc.defaultText) return { kind: 'words', text: doc.defaultText };
  if (schema instanceof z.ZodDefault) {
    const value: unknown = schema.def.defaultValue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return { kind: 'value', text: String(value) };
    if (Array.isArray(value) && value.every((entry) => typeof entry === 'string')) return { kind: 'value', text: value.join(',') };
    throw new Error(`${name}'s default is not text: say it in words (doc(..., { defaultText }))`);
  }
  return schema.safeParse(undefined).success ? { kind: 'unset' } : { kind: 'required' };
}

const sameDefault = (a: Default, b: Default) => a.kind === b.kind && ('text' in a ? a.text : '') === ('text' in b ? b.text : '');

/** The variable's default for each reader, merged where they agree. */
function defaultsOf(root: string, variable: Variable): { default: Default; readers: string[] }[] {
  const merged: { default: Default; readers: string[] }[] = [];
  for (const { reader, schema } of variable.readings) {
    const value = defaultOf(root, variable.name, schema);
    const entry = merged.find((candidate) => sameDefault(candidate.default, value));
    if (entry) entry.readers.push(reader.name);
    else merged.push({ default: value, readers: [reader.name] });
  }
  return merged;
}

/** The variable's description, then what a reader with a schema of its own adds ("dev stack: ..."). */
function descriptionsOf(variable: Variable): string[] {
  const own = variableDoc(variable.name, variable.schema).description;
  const texts = [own];
  for (const { reader, schema } of variable.readings) {
    const text = variableDoc(variable.name, schema).description;
    if (!texts.includes(text) && !texts.some((shown) => shown.endsWith(`: ${text}`)))
      texts.push(`${reader.name}: ${text.charAt(0).toLowerCase()}${text.slice(1)}`);
  }
  return texts;
}

/** Where a variable is declared apart from its section's module (a shared section a process takes in): the sentence saying so. */
const heldApart = (group: Group, variable: Variable) => (variable.module === group.module ? [] : [`Held by \`${variable.module}\`.`]);

const isSecret = (variable: Variable) =>
  variable.readings.some(({ schema }) => variableDoc(variable.name, schema).secret === true) || variableDoc(variable.name, variable.schema).secret === true;

// ---- docs/configuration.md ----------------------------------------------------------------------

/** Text for a paragraph or a table cell: markdown-safe outside `code`, pipes escaped everywhere. */
function cell(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part) =>
      part.startsWith('`')
        ? part
        : part
            .replace(/([*_\\[\]])/g, '\\$1')
            .replace(/</g, '&lt;')
            .replace(/>/g, '&gt;'),
    )
    .join('')
    .replace(/\|/g, '\\|');
}

function defaultCell(value: Default): string {
  switch (value.kind) {
    case 'value':
      return value.text === '' ? 'empty' : `\`${value.text}\``;
    case 'words':
      return cell(value.text);
    case 'unset':
      return '—';
    case 'required':
      return '**required**';
  }
}

/** A place in the code that reads process.env itself (src/settings/load.ts aside), and why it may. */
export interface DirectRead {
  /** Repository paths, / separated. */
  readonly files: readonly string[];
  /** What it does with process.env: the part of a line it may be (matched anywhere on the line, `g`). */
  readonly pattern: RegExp;
  readonly what: string;
  /** Why; or the reader of CONFIG_READERS whose reason it is. */
  readonly why: string | { readonly reader: string };
}

const PATH_AND_HOME = /\b(?:PATH|HOME|TMPDIR): [^,]*?process\.env\.(?:PATH|HOME|TMPDIR)\b/g;

/**
 * Every read of process.env outside src/settings/load.ts. Passing the environment on to a child process is
 * not reading configuration: the child parses what it gets with its own loader.
 */
export const DIRECT_READS: readonly DirectRead[] = [
  {
    files: [
      'scripts/run-tests.mjs',
      'scripts/dev-stack.ts',
      'scripts/compose-check.ts',
      'bench/runtimes.ts',
      'bench/aggregator-throughput.ts',
      'test/cli/cli.test.ts',
      'test/compose/compose-check.test.ts',
      'test/settings/node-runtime.test.ts',
      'test/run-tests.test.ts',
      'test/provisioning/provision-script.test.ts',
    ],
    pattern: /\.\.\.process\.env\b/g,
    what: 'passes its whole environment on to a child process (`{ ...process.env, X: y }`)',
    why: 'the child is a process of the product or a script, which parses what it gets with its own loader',
  },
  {
    files: [
      'scripts/chaos/fleet.ts',
      'scripts/deploy-check/deploy-check.ts',
      'scripts/prod-check/tls-refusals.ts',
      'scripts/image-check/image-processes.ts',
      'scripts/lib/openbao-server.ts',
      'scripts/security-check/attacks.ts',
      'scripts/security-check/console-process.ts',
      'scripts/security-check/operator-attacks.ts',
      'bench/runtimes.ts',
      'bench/bench-processes.ts',
      'bench/burst/stack.ts',
      'test/settings/config.test.ts',
      'test/helpers/minio.ts',
      'test/helpers/openbao.ts',
      'test/helpers/moto.ts',
      'test/helpers/python-env.ts',
      'test/helpers/processes.ts',
      'test/helpers/temporal-cli.ts',
      'test/dev-stack/dev-stack-process.ts',
      'test/sandbox/state-file.test.ts',
      'test/settings/node-runtime.test.ts',
      'test/workflows/large-results.test.ts',
    ],
    pattern: PATH_AND_HOME,
    what: "gives a child process (or a loader, as that child would see it) a bare environment with the operating system's PATH and HOME (and TMPDIR, where the test run gives one)",
    why: "the child must find node and its tools as this process does; they are the operating system's variables, not settings of ours",
  },
  {
    files: ['scripts/image-check/stages.ts', 'bench/bench-processes.ts'],
    pattern: /Object\.entries\(process\.env\)/g,
    what: "passes a filtered copy of its environment on: image:check's build stages without npm's own variables; the benchmarks' worker with the shell's WORKER_*, VM_*, NODE_OPTIONS and MALLOC_ARENA_MAX",
    why: 'passing on, as above: the worker parses them with loadWorkerConfig',
  },
  {
    files: ['bench/burst/stack.ts'],
    pattern: /process\.env\.UNATTENDED_ADMISSION\b/g,
    what: "passes the shell's UNATTENDED_ADMISSION on to the burst's stack: its workers and the client it loads (`UNATTENDED_ADMISSION=window npm run bench:burst -- --storm`)",
    why: 'passing on, as above: the workers parse it with loadWorkerConfig and the client with loadClientConfig, so both hold the same setting',
  },
  {
    files: ['bench/bench-processes.ts'],
    pattern: /process\.env\.ALLOW_UNSUPPORTED_NODE\b/g,
    what: 'passes ALLOW_UNSUPPORTED_NODE on to the processes a benchmark starts and to the loaders it calls with an environment of its own (runtimeOverride)',
    why: 'bench/runtimes.ts runs the benchmarks on the runtime the project left: the permission must reach every process they start; each parses it with its loader',
  },
  {
    files: ['scripts/lib/temporal-binaries.ts'],
    pattern: /process\.env\.PATH\b/g,
    what: 'searches PATH for an executable (onPath: the temporal CLI, docker-compose, setpriv)',
    why: "PATH is the operating system's search path, read as a shell reads it",
  },
  {
    files: ['test/replay/suite-histories.test.ts'],
    pattern: /(?:delete )?process\.env\[WORKER_REGISTRY_ENV\](?: = \w+)?/g,
    what: 'sets and removes TEST_WORKER_REGISTRY_DIR when run alone (writes, not reads)',
    why: 'the helpers it calls read it with loadTestConfig, as under `npm test`',
  },
  {
    files: ['test/python/python-install.test.ts'],
    pattern: /\.\.\.rest \} = process\.env\b/g,
    what: "passes its environment on to the documented pip commands, without a venv's VIRTUAL_ENV, PYTHONPATH and PYTHONHOME",
    why: "pip's index, certificate and cache variables are pip's own; the fresh venv must not see the caller's",
  },
  {
    files: ['bench/sdk-floor/worker.ts'],
    pattern: /process\.env\.\w+/g,
    what: 'reads TEMPORAL_ADDRESS, TEMPORAL_TASK_QUEUE and SDK_FLOOR_WORKFLOWS_PATH',
    why: { reader: 'sdk floor worker' },
  },
  { files: ['bench/vm-watchdog-probe.cjs'], pattern: /process\.env\.\w+/g, what: 'reads VM_WATCHDOG and VM_PROBE_OUT', why: { reader: 'vm probe' } },
];

function reasonOf(read: DirectRead): string {
  if (typeof read.why === 'string') return read.why;
  const name = read.why.reader;
  const reader = CONFIG_READERS.find((candidate) => candidate.name === name);
  if (!reader?.reason) throw new Error(`DIRECT_READS: no reader "${name}" with a reason in CONFIG_READERS`);
  return reader.reason;
}

function renderMarkdown(root: string, groups: readonly Group[]): string {
  const lines = [
    '# Configuration reference',
    '',
    `<!-- Generated by \`${CONFIG_REFERENCE_COMMAND}\` (scripts/generate-config-reference.ts) from the zod schemas of the settings modules: edit the descriptions in the module each section names, then regenerate. -->`,
    '',
    'Every environment variable: its default, which processes read it, what it does and which module holds it. The settings',
    "modules ([src/settings/](../src/settings/): one per process and one per shared section; the tests', benchmarks', demo's and",
    "toolchain's own beside those tools) declare them, and [src/settings/load.ts](../src/settings/load.ts) is the only reader of the",
    'environment: each process parses its variables with its loader once, at start, and a bad value stops it with a message',
    'naming each offending variable. An empty value means "use the default". [.env.example](../.env.example) lists the',
    "product's variables, grouped and commented, from the same schemas.",
    '',
    '## Processes and their loaders',
    '',
    '| Read by | Loader | Programs |',
    '|---|---|---|',
    ...CONFIG_READERS.map(
      (reader) =>
        `| ${reader.name} | ${reader.loader ? `\`${reader.loader}\` (${reader.module ? `[${reader.module}](../${reader.module})` : ''})` : `none: ${cell(reader.reason ?? '')}`} | ${cell(reader.programs)} |`,
    ),
  ];
  for (const group of groups) {
    lines.push(
      '',
      `## ${group.doc.title}`,
      '',
      `${cell(group.doc.description)} Held by [${group.module}](../${group.module}).`,
      '',
      '| Variable | Default | Read by | What it does |',
      '|---|---|---|---|',
    );
    for (const variable of group.variables) {
      const defaults = defaultsOf(root, variable);
      const shown =
        defaults.length === 1
          ? defaultCell(defaults[0]!.default)
          : defaults.map((entry) => `${defaultCell(entry.default)} (${entry.readers.join(', ')})`).join('; ');
      const readers = variable.readings.map(({ reader }) => reader.name).join(', ');
      lines.push(
        `| \`${variable.name}\` | ${shown} | ${readers} | ${cell([...descriptionsOf(variable), ...heldApart(group, variable)].join(' '))}${isSecret(variable) ? ' (secret)' : ''} |`,
      );
    }
  }
  lines.push(
    '',
    '### What reads process.env directly',
    '',
    'Nothing outside src/settings/load.ts reads a setting from process.env; test/docs/config-reference.test.ts holds the code to this',
    'list (DIRECT_READS in scripts/lib/config-reference.ts). What remains passes the environment on, or cannot load the settings modules:',
    '',
    '| Files | What | Why |',
    '|---|---|---|',
    ...DIRECT_READS.map((read) => `| ${read.files.map((file) => `\`${file}\``).join(', ')} | ${cell(read.what)} | ${cell(reasonOf(read))} |`),
    '',
    'scripts/provision-temporal.sh and scripts/provision-node.sh (bash) read their variables themselves: see the provisioning reader above.',
    '',
  );
  return lines.join('\n');
}

// ---- .env.example -------------------------------------------------------------------------------

const WIDTH = 100;

/** `text` as `# ` comment lines of at most WIDTH characters. */
function comment(text: string): string[] {
  const lines: string[] = [];
  let line = '#';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line.length + 1 + word.length > WIDTH && line !== '#') {
      lines.push(line);
      line = '#';
    }
    line += ` ${word}`;
  }
  if (line !== '#') lines.push(line);
  return lines;
}

function renderEnvExample(root: string, groups: readonly Group[]): string {
  const lines = [
    ...comment(
      `Every setting of the product's processes, grouped, with its default (generated by \`${CONFIG_REFERENCE_COMMAND}\` from the zod schemas of src/settings/, each group naming its module; docs/configuration.md says which processes read each one, and lists the tests' and benchmarks' variables too).`,
    ),
    ...comment(
      'Every setting is optional for `npm start` (the dev stack). src/settings/load.ts is the only reader of the environment: a bad value stops the process at start with a message naming each offending variable. An empty value means "use the default". Secrets are left blank.',
    ),
  ];
  for (const group of groups) {
    if (group.doc.envExample === false) continue;
    const title = `# --- ${group.doc.title} `;
    lines.push('', title.padEnd(WIDTH, '-'), ...comment(`${group.doc.description} Held by ${group.module}.`), '');
    for (const variable of group.variables) {
      const defaults = defaultsOf(root, variable);
      const own = defaultOf(root, variable.name, variable.schema);
      const notes = [...descriptionsOf(variable), ...heldApart(group, variable)];
      if (defaults.length > 1)
        notes.push(
          `Default: ${defaults.map((entry) => `${'text' in entry.default ? entry.default.text : entry.default.kind} (${entry.readers.join(', ')})`).join('; ')}.`,
        );
      else if (own.kind === 'words') notes.push(`Default: ${own.text}.`);
      else if (own.kind === 'required') notes.push('Required.');
      lines.push(...comment(notes.join(' ')), `${variable.name}=${own.kind === 'value' && !isSecret(variable) ? own.text : ''}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Both files as they should be, by path from the repository root. */
export function renderConfigReference(root: string): Record<ConfigReferenceFile, string> {
  const groups = collect(root);
  return { 'docs/configuration.md': renderMarkdown(root, groups), '.env.example': renderEnvExample(root, groups) };
}

/**
 * The files on disk under `root` that differ from `rendered`, each with a sentence naming it, its
 * first differing line and the command that writes it; empty when none.
 */
export function staleReferenceFiles(root: string, rendered: Readonly<Record<ConfigReferenceFile, string>>): { file: ConfigReferenceFile; message: string }[] {
  return CONFIG_REFERENCE_FILES.flatMap((file) => {
    let current: string;
    try {
      current = readFileSync(join(root, file), 'utf8');
    } catch {
      return [{ file, message: `${file} is missing: run \`${CONFIG_REFERENCE_COMMAND}\` and commit it` }];
    }
    if (current === rendered[file]) return [];
    const have = current.split('\n');
    const want = rendered[file].split('\n');
    const line = want.findIndex((text, index) => have[index] !== text);
    const at = line < 0 ? have.length : line;
    return [
      {
        file,
        message:
          `${file} is stale: line ${at + 1} is ${JSON.stringify(have[at] ?? '(end of file)')}, the schemas give ${JSON.stringify(want[at] ?? '(end of file)')}. ` +
          `Run \`${CONFIG_REFERENCE_COMMAND}\` and commit it (edit descriptions in the settings module its section names, never in ${file})`,
      },
    ];
  });
}
