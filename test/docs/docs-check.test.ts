/**
 * The documentation is checked against the code (scripts/lib/docs-check.ts): README.md, docs/ and
 * src/**\/README.md must have no broken relative link or anchor, name no npm script package.json
 * lacks, and every ```ts example must compile against the current code (a block starting with
 * `// fragment` is exempt). The checker itself is shown to fail on small markdown files in a
 * temporary project: a broken link and anchor, unknown scripts, a block that does not compile.
 * The block of Python signatures is left to test/docs/python-api.test.ts: this file runs no Python,
 * so it stays in the fast tier.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkDocs, docsFiles, formatFinding, githubSlug, markdownAnchors, type DocsFinding } from '../../scripts/lib/docs-check.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSCONFIG = join(ROOT, 'tsconfig.json');
const FENCE = '```';

void describe('the documentation', () => {
  void it('README.md, docs/ and src/**/README.md: links resolve, npm scripts exist, TypeScript examples compile', () => {
    const files = docsFiles(ROOT);
    assert.ok(files.some((file) => file.endsWith('README.md')) && files.length > 1, 'the README and the docs are found');
    const findings = checkDocs(ROOT, { files, pythonApi: false });
    if (findings.length > 0) assert.fail(`${findings.length} finding(s) in the docs:\n${findings.map(formatFinding).join('\n')}`);
  });
});

void describe('GitHub heading anchors', () => {
  void it('lower-cases, drops punctuation and markup, keeps hyphens and underscores, turns spaces into hyphens', () => {
    assert.equal(githubSlug('Encrypting payloads (bank passwords, MFA answers, holder data)'), 'encrypting-payloads-bank-passwords-mfa-answers-holder-data');
    assert.equal(
      githubSlug('A nightly refresh burst under the fleet budget (`npm run bench:burst`)'),
      'a-nightly-refresh-burst-under-the-fleet-budget-npm-run-benchburst',
    );
    assert.equal(githubSlug("A lender's book — 2,000 logins"), 'a-lenders-book--2000-logins');
    assert.equal(githubSlug('**Bold** and [a link](docs/x.md) with `snake_case` and __em__'), 'bold-and-a-link-with-snake_case-and-em');
    assert.equal(githubSlug('Réglages élevés'), 'réglages-élevés');
  });

  void it('numbers repeated headings, reads setext headings and HTML ids, and skips code blocks', () => {
    const anchors = markdownAnchors(
      ['# Tests', '', '## Tests', '', 'Setext', '======', '', `${FENCE}sh`, '# not a heading', FENCE, '<a id="custom"></a>'].join('\n'),
    );
    assert.deepEqual([...anchors].sort(), ['custom', 'setext', 'tests', 'tests-1']);
  });
});

void describe('the docs checker on a temporary project', () => {
  let root: string;
  let findings: DocsFinding[];

  async function put(path: string, lines: string[]): Promise<string> {
    const file = join(root, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, lines.join('\n'));
    return file;
  }

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'docs-check-'));
    await put('package.json', [JSON.stringify({ type: 'module', scripts: { build: 'tsc', 'docs:check': 'tsx x.ts' } })]);
    await put('src/money.ts', ['export function cents(amount: number): number {', '  return Math.round(amount * 100);', '}']);
    const readme = await put('README.md', [
      '# Project',
      '',
      '## Section two',
      '',
      'See [the guide](docs/guide.md#in-order) and [money](src/money.ts), [upstream](https://example.com/x.md).',
    ]);
    const guide = await put('docs/guide.md', [
      '# In order', // 1
      '',
      'Back to [the top](../README.md#section-two), [here](#in-order), `[code](nowhere.md)` is code.', // 3
      'A [broken link](missing.md) and a [broken anchor](../README.md#section-three)', // 4
      'and one [out of the repository](../../elsewhere.md). Run `npm run build`, `npm run docs:check`.', // 5
      'Then `npm run deploy:everything` and `npm start`.', // 6
      '',
      `${FENCE}ts`, // 8
      "import { cents } from '../src/money.js';",
      'const total: number = cents(12.5);',
      'console.log(total);',
      FENCE,
      '',
      `${FENCE}typescript`, // 14
      "import { cents } from '../src/money.js';",
      '',
      "const wrong: string = cents('12.50');", // 17
      FENCE,
      '',
      `${FENCE}ts`, // 20
      '// fragment',
      'connections.answer(key, { responses });',
      FENCE,
      '',
      `${FENCE}sh`, // 25
      'npm run not-checked-as-code-but-as-a-script',
      'cat [x](nowhere.md)',
      FENCE,
      '',
      'Same names in two blocks do not collide: each block is a module.',
      `${FENCE}ts`, // 31
      'const total = 1;',
      'await Promise.resolve(total);',
      FENCE,
    ]);
    findings = checkDocs(root, { files: [readme, guide], tsconfig: TSCONFIG });
  });

  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const of = (check: DocsFinding['check']) => findings.filter((finding) => finding.check === check);

  void it('finds the missing file, the missing anchor and the link out of the repository, nothing else', () => {
    assert.deepEqual(
      of('link').map(formatFinding),
      [
        'docs/guide.md:4: link: missing.md: no such file (docs/missing.md)',
        'docs/guide.md:4: link: ../README.md#section-three: no heading with the anchor #section-three in README.md',
        'docs/guide.md:5: link: ../../elsewhere.md: outside the repository',
      ],
      findings.map(formatFinding).join('\n'),
    );
  });

  void it('finds the npm scripts package.json does not have, in prose and in code blocks', () => {
    assert.deepEqual(of('npm-script').map(formatFinding), [
      'docs/guide.md:6: npm-script: npm run deploy:everything: no such script in package.json',
      'docs/guide.md:6: npm-script: npm start: no such script in package.json',
      'docs/guide.md:26: npm-script: npm run not-checked-as-code-but-as-a-script: no such script in package.json',
    ]);
  });

  void it('compiles the blocks against the code beside the markdown file, naming file, block line and diagnostic', () => {
    const typescript = of('typescript');
    assert.deepEqual(
      typescript.map(({ file, line }) => `${file}:${line}`),
      ['docs/guide.md:17', 'docs/guide.md:17'],
      'only the block at line 14 fails: the import of ../src/money.js resolves, the fragment is skipped, blocks do not share a scope',
    );
    assert.match(typescript[0]?.message ?? '', /^typescript block at line 14: TS2322: Type 'number' is not assignable to type 'string'/);
    assert.match(
      typescript[1]?.message ?? '',
      /^typescript block at line 14: TS2345: Argument of type 'string' is not assignable to parameter of type 'number'/,
    );
  });

  void it('fails a block whose import does not resolve from the markdown file', async () => {
    const moved = await put('guide.md', [`${FENCE}ts`, "import { cents } from '../src/money.js';", 'cents(1);', FENCE]);
    const [finding, ...rest] = checkDocs(root, { files: [moved], tsconfig: TSCONFIG });
    assert.equal(rest.length, 0);
    assert.equal(finding?.line, 2);
    assert.match(finding?.message ?? '', /^typescript block at line 1: TS2307: Cannot find module '\.\.\/src\/money\.js'/);
  });
});
