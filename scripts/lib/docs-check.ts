/**
 * Checks the repository's documentation against the code (`npm run docs:check`, and in `npm test`
 * by test/docs/docs-check.test.ts): README.md, docs/**\/*.md and src/**\/README.md.
 *
 * - every relative link (inline, reference definition, HTML href/src) names an existing file or
 *   folder inside the repository, and a `#anchor` into a markdown file names one of its headings
 *   (GitHub's slugs: lower case, punctuation dropped, spaces to hyphens, -1, -2… for repeats);
 * - every `npm run <script>` (and npm start/test/stop/restart) is a script of package.json;
 * - every ```ts / ```typescript block compiles against the current code with the project's
 *   compilerOptions, as a module placed in the markdown file's folder, so that its relative imports
 *   resolve as written there ('../src/client/index.js' from docs/). The blocks are never written to
 *   disk: the compiler host serves them from memory. A block whose first line is `// fragment` is
 *   skipped;
 * - the block of Python signatures between `<!-- api-signatures:begin -->` and
 *   `<!-- api-signatures:end -->` (docs/python-pipeline.md's API block) is what
 *   python/tests/api_signatures.py prints from the package now, run in the project's venv
 *   (scripts/python-env.sh); a difference names the page's first differing line and `npm run
 *   docs:python-api`, which rewrites the block. Python that cannot run is a finding, never a pass.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

export type DocsCheck = 'link' | 'npm-script' | 'typescript' | 'python-api';

export interface DocsFinding {
  /** The markdown file, relative to the root, with / separators. */
  file: string;
  /** 1-based line in that file. */
  line: number;
  check: DocsCheck;
  message: string;
}

export interface CodeBlock {
  /** First word of the info string, lower case ('' when none). */
  lang: string;
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
}

export interface ParsedMarkdown {
  blocks: CodeBlock[];
  /** The file with fenced blocks and inline code blanked out (same length, same lines). */
  prose: string;
}

export const FRAGMENT_MARKER = '// fragment';
const TS_LANGS = new Set(['ts', 'typescript']);

export function formatFinding(finding: DocsFinding): string {
  return `${finding.file}:${finding.line}: ${finding.check}: ${finding.message}`;
}

/** README.md, docs/**\/*.md and src/**\/README.md under `root`, absolute and sorted. */
export function docsFiles(root: string): string[] {
  const files = existsSync(join(root, 'README.md')) ? [join(root, 'README.md')] : [];
  const under = (dir: string, keep: (name: string) => boolean) =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
          .filter((path) => !path.split(sep).includes('node_modules') && keep(path.split(sep).pop() ?? ''))
          .map((path) => join(root, dir, path))
      : [];
  files.push(...under('docs', (name) => name.endsWith('.md')), ...under('src', (name) => name === 'README.md'));
  return files.sort();
}

/** Fenced code blocks, and the text outside them with inline code spans blanked. */
export function parseMarkdown(text: string): ParsedMarkdown {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  const proseLines: string[] = [];
  let open: { fence: string; indent: number; lang: string; line: number; body: string[] } | undefined;
  for (const [index, line] of lines.entries()) {
    if (open) {
      const close = /^\s*(`{3,}|~{3,})\s*$/.exec(line)?.[1] ?? '';
      if (close[0] === open.fence[0] && close.length >= open.fence.length) {
        blocks.push({ lang: open.lang, line: open.line, text: open.body.join('\n') });
        open = undefined;
      } else {
        open.body.push(line.replace(new RegExp(`^ {0,${open.indent}}`), ''));
      }
      proseLines.push(blank(line));
      continue;
    }
    const fence = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence && !(fence[2]?.startsWith('`') && fence[3]?.includes('`'))) {
      open = {
        fence: fence[2] ?? '```',
        indent: fence[1]?.length ?? 0,
        lang: (fence[3]?.trim().split(/\s+/)[0] ?? '').toLowerCase(),
        line: index + 1,
        body: [],
      };
      proseLines.push(blank(line));
      continue;
    }
    proseLines.push(line);
  }
  if (open) blocks.push({ lang: open.lang, line: open.line, text: open.body.join('\n') });
  // A code span ends on the same run of backticks, within its paragraph.
  const prose = proseLines.join('\n').replace(/(?<!`)(`+)(?!`)(?:[^\n`]|`(?!\1)|\n(?![ \t]*\n))+?(?<!`)\1(?!`)/g, blank);
  return { blocks, prose };
}

function blank(text: string): string {
  return text.replace(/[^\n]/g, ' ');
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line += 1;
  return line;
}

/** GitHub's anchor of a heading's text (github-slugger without the repeat counter). */
export function githubSlug(heading: string): string {
  return headingText(heading)
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The text GitHub renders for a heading's markdown: code spans kept, links and emphasis reduced to their text. */
function headingText(markdown: string): string {
  return markdown
    .split(/(`+[^`]*`+)/)
    .map((part, index) =>
      index % 2 === 1
        ? part.replace(/^`+\s?|\s?`+$/g, '')
        : part
            .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
            .replace(/<[^>]+>/g, '')
            .replace(/\\([\\`*_{}[\]()#+\-.!])/g, '$1')
            .replace(/[*~]+/g, '')
            .replace(/(^|[^\p{L}\p{N}_])_+|_+(?=[^\p{L}\p{N}]|$)/gu, '$1'),
    )
    .join('')
    .trim();
}

/** Every anchor a markdown file offers: its headings' slugs (repeats numbered as GitHub does) and HTML ids/names. */
export function markdownAnchors(text: string): Set<string> {
  const { prose } = parseMarkdown(text);
  const raw = text.split('\n');
  const lines = prose.split('\n');
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  const add = (heading: string) => {
    const base = githubSlug(heading);
    let slug = base;
    while (anchors.has(slug)) {
      const count = (counts.get(base) ?? 0) + 1;
      counts.set(base, count);
      slug = `${base}-${count}`;
    }
    anchors.add(slug);
  };
  for (const [index, line] of lines.entries()) {
    // Headings are read from the raw line (their code spans count), where the prose line is not blank.
    const source = raw[index] ?? '';
    const atx = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line.trim() === '' ? '' : source);
    if (atx) {
      add(atx[1] ?? '');
      continue;
    }
    // A setext underline: the raw line is all = or all -, under a paragraph line outside a block.
    const previous = raw[index - 1] ?? '';
    if (index > 0 && line.trim() && /^ {0,3}(=+|-+)[ \t]*$/.test(source) && lines[index - 1]?.trim() && !/^ {0,3}(#|[-*+>|]|\d+[.)])/.test(previous)) {
      add(previous.trim());
    }
  }
  for (const match of text.matchAll(/<[a-z][^>]*?\s(?:id|name)\s*=\s*["']([^"']+)["']/gi)) anchors.add(match[1] ?? '');
  return anchors;
}

interface Link {
  target: string;
  line: number;
}

/** Link destinations outside code: inline links and images, reference definitions, HTML href/src. */
export function markdownLinks(prose: string): Link[] {
  const links: Link[] = [];
  const patterns = [
    /\]\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g,
    /^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)/gm,
    /<(?:a|img|source)\b[^>]*?\s(?:href|src|srcset)\s*=\s*["']([^"']+)["']/gi,
  ];
  for (const pattern of patterns) {
    for (const match of prose.matchAll(pattern)) {
      const target = (match[1] ?? '').replace(/^<(.*)>$/, '$1');
      if (target) links.push({ target, line: lineAt(prose, match.index) });
    }
  }
  return links.sort((a, b) => a.line - b.line);
}

/** `npm run <script>` and npm start/test/stop/restart, anywhere in the file (code blocks included). */
export function npmScripts(text: string): Array<{ script: string; line: number }> {
  const found: Array<{ script: string; line: number }> = [];
  for (const match of text.matchAll(/\bnpm[ \t]+(?:run(?:-script)?[ \t]+(?:-{1,2}[\w-]+[ \t]+)*([A-Za-z0-9][\w:.-]*)|(start|test|stop|restart)\b)/g)) {
    const script = (match[1] ?? match[2] ?? '').replace(/[.:-]+$/, '');
    found.push({ script, line: lineAt(text, match.index) });
  }
  return found;
}

function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//');
}

function checkLinks(root: string, file: string, prose: string, anchorsOf: (path: string) => Set<string>): Array<Omit<DocsFinding, 'file' | 'check'>> {
  const findings: Array<Omit<DocsFinding, 'file' | 'check'>> = [];
  for (const { target, line } of markdownLinks(prose)) {
    if (isExternal(target)) continue;
    const [pathPart = '', fragment] = target.split('#', 2);
    let path: string;
    try {
      path = decodeURIComponent(pathPart.split('?')[0] ?? '');
    } catch {
      findings.push({ line, message: `${target}: not a valid URL path` });
      continue;
    }
    const resolved = path === '' ? file : path.startsWith('/') ? join(root, path) : resolve(dirname(file), path);
    const inside = relative(root, resolved);
    if (inside.startsWith('..') || isAbsolute(inside)) {
      findings.push({ line, message: `${target}: outside the repository` });
    } else if (!existsSync(resolved)) {
      findings.push({ line, message: `${target}: no such file (${inside.split(sep).join('/')})` });
    } else if (fragment !== undefined && fragment !== '' && resolved.endsWith('.md') && statSync(resolved).isFile()) {
      let anchor: string;
      try {
        anchor = decodeURIComponent(fragment);
      } catch {
        anchor = fragment;
      }
      if (!anchorsOf(resolved).has(anchor))
        findings.push({ line, message: `${target}: no heading with the anchor #${anchor} in ${inside.split(sep).join('/') || 'this file'}` });
    }
  }
  return findings;
}

/** The project's compilerOptions, for checking example blocks only (nothing emitted, every block a module). */
function exampleCompilerOptions(tsconfig: string): { options: ts.CompilerOptions; errors: readonly ts.Diagnostic[] } {
  const config = ts.readConfigFile(tsconfig, (path) => ts.sys.readFile(path));
  if (config.error) return { options: {}, errors: [config.error] };
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, dirname(tsconfig), undefined, tsconfig);
  const {
    rootDir: _rootDir,
    outDir: _outDir,
    sourceMap: _sourceMap,
    declaration: _declaration,
    composite: _composite,
    incremental: _incremental,
    tsBuildInfoFile: _tsBuildInfoFile,
    ...options
  } = parsed.options;
  return {
    options: { ...options, noEmit: true, moduleDetection: ts.ModuleDetectionKind.Force },
    errors: parsed.errors.filter((error) => error.code !== 18003),
  };
}

interface Example {
  file: string;
  block: CodeBlock;
  /** Where the compiler sees it: beside the markdown file, so its relative imports resolve from there. */
  virtualPath: string;
}

function checkExamples(examples: Example[], tsconfig: string): Array<{ example: Example; line: number; message: string }> {
  if (examples.length === 0) return [];
  const { options, errors } = exampleCompilerOptions(tsconfig);
  if (errors.length > 0) {
    const message = errors.map((error) => ts.flattenDiagnosticMessageText(error.messageText, ' ')).join('; ');
    return examples.map((example) => ({
      example,
      line: example.block.line,
      message: `typescript block at line ${example.block.line}: ${tsconfig}: ${message}`,
    }));
  }
  const byPath = new Map(examples.map((example) => [resolve(example.virtualPath), example]));
  const disk = ts.createCompilerHost(options, true);
  const host: ts.CompilerHost = {
    ...disk,
    fileExists: (path) => byPath.has(resolve(path)) || disk.fileExists(path),
    readFile: (path) => byPath.get(resolve(path))?.block.text ?? disk.readFile(path),
    getSourceFile: (path, languageVersion, onError, shouldCreate) => {
      const example = byPath.get(resolve(path));
      return example ? ts.createSourceFile(path, example.block.text, languageVersion, true) : disk.getSourceFile(path, languageVersion, onError, shouldCreate);
    },
  };
  const program = ts.createProgram({ rootNames: [...byPath.keys()], options, host });
  const findings: Array<{ example: Example; line: number; message: string }> = [];
  for (const [path, example] of byPath) {
    const source = program.getSourceFile(path);
    if (!source) continue;
    // As tsc: a block that does not parse reports that alone, not the type errors that follow from it.
    const syntactic = program.getSyntacticDiagnostics(source);
    for (const diagnostic of syntactic.length > 0 ? syntactic : program.getSemanticDiagnostics(source)) {
      const at = diagnostic.start === undefined ? 0 : source.getLineAndCharacterOfPosition(diagnostic.start).line;
      const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n    ');
      findings.push({ example, line: example.block.line + 1 + at, message: `typescript block at line ${example.block.line}: TS${diagnostic.code}: ${text}` });
    }
  }
  return findings;
}

// ---- the block of Python signatures ------------------------------------------------------------

/** The lines (each alone on its line, once) around a page's block of Python signatures. */
export const PYTHON_API_BEGIN = '<!-- api-signatures:begin -->';
export const PYTHON_API_END = '<!-- api-signatures:end -->';
/** The page that must hold the block: when it is checked and has no markers, that is a finding. */
export const PYTHON_API_PAGE = 'docs/python-pipeline.md';
/** Prints the block's signatures from the package (its docstring holds the rule for "public"). */
export const PYTHON_API_GENERATOR = 'python/tests/api_signatures.py';
/** Rewrites the block (scripts/generate-python-api.ts). */
export const PYTHON_API_COMMAND = 'npm run docs:python-api';

/** What the generator printed, or why it could not run. */
export type PythonApi = { ok: true; signatures: string } | { ok: false; problem: string };

function lastLines(text: string, count = 8): string {
  return text.trim().split('\n').slice(-count).join('\n');
}

/**
 * Runs PYTHON_API_GENERATOR in `root`'s python/, with the venv scripts/python-env.sh makes (or
 * reuses) there, as the tests of test/python/ do: a machine without Python gets the script's reason.
 */
export function renderPythonApi(root: string): PythonApi {
  const env = spawnSync('bash', [join(root, 'scripts/python-env.sh')], { cwd: root, encoding: 'utf8' });
  if (env.error) return { ok: false, problem: `bash scripts/python-env.sh did not start: ${env.error.message}` };
  if (env.status !== 0)
    return {
      ok: false,
      problem: `the project's Python is missing: scripts/python-env.sh failed (${env.status === null ? `signal ${env.signal}` : `exit ${env.status}`}): ${lastLines(env.stderr)}`,
    };
  const python = join(env.stdout.trim(), 'bin/python');
  // -B: the check writes no bytecode into the checkout.
  const run = spawnSync(python, ['-B', PYTHON_API_GENERATOR.replace(/^python\//, '')], { cwd: join(root, 'python'), encoding: 'utf8' });
  if (run.error) return { ok: false, problem: `${python} did not start: ${run.error.message}` };
  if (run.status !== 0)
    return {
      ok: false,
      problem: `${PYTHON_API_GENERATOR} failed (${run.status === null ? `signal ${run.signal}` : `exit ${run.status}`}): ${lastLines(run.stderr)}`,
    };
  return { ok: true, signatures: run.stdout };
}

/** The lines the page holds between the markers: the signatures as a ```python block. */
export function pythonApiBlock(signatures: string): string[] {
  return ['```python', ...signatures.replace(/\n$/, '').split('\n'), '```'];
}

/** The markers' 0-based lines; undefined when the text has neither; a problem when they are not one pair in order. */
function pythonApiMarkers(lines: readonly string[]): { begin: number; end: number } | { problem: string; line: number } | undefined {
  const at = (marker: string) => lines.flatMap((line, index) => (line.trim() === marker ? [index] : []));
  const [begins, ends] = [at(PYTHON_API_BEGIN), at(PYTHON_API_END)];
  if (begins.length === 0 && ends.length === 0) return undefined;
  const [begin, end] = [begins[0], ends[0]];
  if (begins.length === 1 && ends.length === 1 && begin !== undefined && end !== undefined && begin < end) return { begin, end };
  return {
    problem: `the block of Python signatures needs one ${PYTHON_API_BEGIN} line and then one ${PYTHON_API_END} line (found ${begins.length} and ${ends.length}, in ${begin !== undefined && end !== undefined && end < begin ? 'the wrong' : 'that'} order)`,
    line: (begin ?? end ?? 0) + 1,
  };
}

/**
 * The Python API block of a markdown text against the generator's output (called only when the text
 * has the markers, or `required`): [] when they agree, else the page's first differing line.
 */
export function checkPythonApi(
  text: string,
  api: () => PythonApi,
  { required = false }: { required?: boolean } = {},
): Array<{ line: number; message: string }> {
  const lines = text.split('\n');
  const markers = pythonApiMarkers(lines);
  if (markers === undefined) {
    return required
      ? [
          {
            line: 1,
            message: `no ${PYTHON_API_BEGIN} … ${PYTHON_API_END} block: the page shows the Python package's signatures there (add the two lines, then run \`${PYTHON_API_COMMAND}\`)`,
          },
        ]
      : [];
  }
  if ('problem' in markers) return [{ line: markers.line, message: markers.problem }];
  const rendered = api();
  if (!rendered.ok) return [{ line: markers.begin + 1, message: `cannot compare the block of Python signatures with the code: ${rendered.problem}` }];
  const have = lines.slice(markers.begin + 1, markers.end);
  const want = pythonApiBlock(rendered.signatures);
  const index = Array.from({ length: Math.max(have.length, want.length) }, (_, i) => i).find((i) => have[i] !== want[i]);
  if (index === undefined) return [];
  return [
    {
      // Past the page's last line of the block: the end marker's line.
      line: markers.begin + 2 + Math.min(index, have.length),
      message:
        `the block of Python signatures differs from the code at its line ${index + 1}: the page has ${JSON.stringify(have[index] ?? '(the end of the block)')}, ` +
        `${PYTHON_API_GENERATOR} gives ${JSON.stringify(want[index] ?? '(the end of the block)')}. Run \`${PYTHON_API_COMMAND}\` to rewrite the block`,
    },
  ];
}

/** `text` with the lines between its markers replaced by `signatures`' block; throws without one pair of markers. */
export function withPythonApi(text: string, signatures: string): string {
  const lines = text.split('\n');
  const markers = pythonApiMarkers(lines);
  if (markers === undefined) throw new Error(`no ${PYTHON_API_BEGIN} … ${PYTHON_API_END} lines`);
  if ('problem' in markers) throw new Error(`line ${markers.line}: ${markers.problem}`);
  return [...lines.slice(0, markers.begin + 1), ...pythonApiBlock(signatures), ...lines.slice(markers.end)].join('\n');
}

export interface CheckDocsOptions {
  /** Markdown files to check (absolute); default docsFiles(root). */
  files?: string[];
  /** The compilerOptions of the examples; default <root>/tsconfig.json. */
  tsconfig?: string;
  /**
   * The checkout whose python/ renders the block of Python signatures (default: `root`); false leaves
   * the block unchecked (the fast tier's docs test, which runs no Python: test/docs/python-api.test.ts checks it).
   */
  pythonApi?: string | false;
}

/** Every finding in the root's documentation, by file and line; [] when the docs are in order. */
export function checkDocs(
  root: string,
  { files = docsFiles(root), tsconfig = join(root, 'tsconfig.json'), pythonApi = root }: CheckDocsOptions = {},
): DocsFinding[] {
  const name = (file: string) => relative(root, file).split(sep).join('/');
  const packageJson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const scripts = new Set(Object.keys(packageJson.scripts ?? {}));
  const anchorCache = new Map<string, Set<string>>();
  const anchorsOf = (path: string) => {
    let anchors = anchorCache.get(path);
    if (!anchors) anchorCache.set(path, (anchors = markdownAnchors(readFileSync(path, 'utf8'))));
    return anchors;
  };

  // Rendered once a run, and only for a page that has the block.
  let rendered: PythonApi | undefined;
  const renderedApi = () => (rendered ??= renderPythonApi(pythonApi || root));

  const findings: DocsFinding[] = [];
  const examples: Example[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const { blocks, prose } = parseMarkdown(text);
    for (const finding of checkLinks(root, file, prose, anchorsOf)) findings.push({ file: name(file), check: 'link', ...finding });
    for (const { script, line } of npmScripts(text)) {
      if (!scripts.has(script))
        findings.push({
          file: name(file),
          line,
          check: 'npm-script',
          message: `npm ${script === 'start' || script === 'test' || script === 'stop' || script === 'restart' ? '' : 'run '}${script}: no such script in package.json`,
        });
    }
    if (pythonApi !== false) {
      for (const finding of checkPythonApi(text, renderedApi, { required: name(file) === PYTHON_API_PAGE }))
        findings.push({ file: name(file), check: 'python-api', ...finding });
    }
    for (const block of blocks) {
      if (!TS_LANGS.has(block.lang) || block.text.split('\n')[0]?.trim() === FRAGMENT_MARKER) continue;
      examples.push({ file, block, virtualPath: `${file}.block-line-${block.line}.ts` });
    }
  }
  for (const { example, line, message } of checkExamples(examples, tsconfig)) findings.push({ file: name(example.file), line, check: 'typescript', message });
  return findings.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}
