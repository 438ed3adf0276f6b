/**
 * docs/python-pipeline.md's block of Python signatures is what python/tests/api_signatures.py prints
 * from the package now, as the docs checker compares them (scripts/lib/docs-check.ts, `npm run
 * docs:check`); the checker refuses a copy of the page with one signature changed, naming that line
 * and `npm run docs:python-api`, whose rewrite gives the page back; a page without its block, or a
 * machine where the project's Python cannot run, is a finding, never a pass.
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  checkDocs,
  formatFinding,
  PYTHON_API_BEGIN,
  PYTHON_API_END,
  PYTHON_API_PAGE,
  renderPythonApi,
  withPythonApi,
  type DocsFinding,
} from '../../scripts/lib/docs-check.js';
import { pythonEnv } from '../helpers/python-env.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ORIGINAL = 'def connection_key(customer_id: str, application_id: str) -> str: ...';
const CHANGED = 'def connection_key(customer_id: str, application_ref: str) -> str: ...';

const pythonApiFindings = (findings: DocsFinding[]) => findings.filter(({ check }) => check === 'python-api');

describe("the Python page's block of signatures", () => {
  let dir: string;
  let page: string;
  before(async () => {
    await pythonEnv(); // made (or reused) as for the other Python tests; the checker then finds it ready
    dir = await mkdtemp(join(tmpdir(), 'python-api-'));
    page = await readFile(join(ROOT, PYTHON_API_PAGE), 'utf8');
    await writeFile(join(dir, 'package.json'), await readFile(join(ROOT, 'package.json'))); // the checker reads the scripts
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** `text` as the project's page in a temporary checkout, checked with this checkout's Python. */
  async function check(text: string, name = PYTHON_API_PAGE): Promise<DocsFinding[]> {
    const file = join(dir, name);
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, text);
    return pythonApiFindings(checkDocs(dir, { files: [file], pythonApi: ROOT }));
  }

  it(`docs/python-pipeline.md shows what python/tests/api_signatures.py prints from the package`, () => {
    const findings = pythonApiFindings(checkDocs(ROOT, { files: [join(ROOT, PYTHON_API_PAGE)] }));
    assert.deepEqual(findings.map(formatFinding), []);
    assert.ok(
      page.includes(`${PYTHON_API_BEGIN}\n\`\`\`python\n# aggregation_connections.client\nclass ConnectionsClient:\n`),
      'the block starts with the client',
    );
    assert.ok(page.includes(`\n${ORIGINAL}\n`), 'the signature this file changes is on the page');
  });

  it('refuses a copy with one signature changed, naming its line and the command that rewrites the block', async () => {
    const changed = page.replace(`\n${ORIGINAL}\n`, `\n${CHANGED}\n`);
    assert.notEqual(changed, page);
    const line = changed.split('\n').indexOf(CHANGED) + 1;
    const [finding, ...more] = await check(changed);
    assert.deepEqual(more.map(formatFinding), []);
    assert.equal(finding?.file, PYTHON_API_PAGE);
    assert.equal(finding.line, line, 'the page line of the changed signature');
    assert.match(formatFinding(finding), /^docs\/python-pipeline\.md:\d+: python-api: the block of Python signatures differs from the code at its line \d+: /);
    assert.ok(
      finding.message.includes(`the page has ${JSON.stringify(CHANGED)}, python/tests/api_signatures.py gives ${JSON.stringify(ORIGINAL)}`),
      finding.message,
    );
    assert.ok(finding.message.endsWith('Run `npm run docs:python-api` to rewrite the block'), finding.message);

    const rendered = renderPythonApi(ROOT);
    assert.ok(rendered.ok, rendered.ok ? '' : rendered.problem);
    assert.equal(withPythonApi(changed, rendered.signatures), page, 'the rewrite gives the page back');
  });

  it('refuses a block with a signature missing or added at its end, at the end marker', async () => {
    const lines = page.split('\n');
    const end = lines.indexOf(PYTHON_API_END);
    const withExtra = [...lines.slice(0, end - 1), 'def extra() -> None: ...', ...lines.slice(end - 1)].join('\n');
    const [extra] = await check(withExtra);
    assert.equal(extra?.line, end, 'the added line');
    assert.match(extra.message, /the page has "def extra\(\) -> None: \.\.\.", python\/tests\/api_signatures\.py gives "```"/);
    const withoutLast = [...lines.slice(0, end - 2), ...lines.slice(end - 1)].join('\n');
    const [missing] = await check(withoutLast);
    assert.equal(missing?.line, end - 1, 'where the missing line should be');
    assert.match(missing.message, /the page has "```", python\/tests\/api_signatures\.py gives "def encryption_from_env\(/);
  });

  it('refuses the page without its block, and markers that are not one pair in order', async () => {
    const without = page.replace(`${PYTHON_API_BEGIN}\n`, '').replace(`${PYTHON_API_END}\n`, '');
    assert.deepEqual((await check(without)).map(formatFinding), [
      `docs/python-pipeline.md:1: python-api: no ${PYTHON_API_BEGIN} … ${PYTHON_API_END} block: the page shows the Python package's signatures there (add the two lines, then run \`npm run docs:python-api\`)`,
    ]);
    assert.deepEqual(await check(without, 'docs/another-page.md'), [], 'another page need not have one');
    const twice = page.replace(`${PYTHON_API_END}\n`, `${PYTHON_API_END}\n${PYTHON_API_BEGIN}\n`);
    assert.match(
      (await check(twice)).map(formatFinding).join('\n'),
      /python-api: the block of Python signatures needs one <!-- api-signatures:begin --> line and then one <!-- api-signatures:end --> line \(found 2 and 1/,
    );
  });

  it('says the project’s Python is missing when scripts/python-env.sh cannot make it, rather than pass', async () => {
    const noPython = join(dir, 'no-python');
    await mkdir(join(noPython, 'scripts'), { recursive: true });
    // What scripts/python-env.sh says and does on a machine without python3.
    await writeFile(
      join(noPython, 'scripts/python-env.sh'),
      "echo '[python-env] python3 not found: install Python 3.11 or later (Debian: apt-get install python3 python3-venv)' >&2\nexit 1\n",
    );
    await chmod(join(noPython, 'scripts/python-env.sh'), 0o755);
    const file = join(dir, PYTHON_API_PAGE);
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, page);
    const findings = pythonApiFindings(checkDocs(dir, { files: [file], pythonApi: noPython }));
    assert.deepEqual(findings.map(formatFinding), [
      `docs/python-pipeline.md:${page.split('\n').indexOf(PYTHON_API_BEGIN) + 1}: python-api: cannot compare the block of Python signatures with the code: ` +
        "the project's Python is missing: scripts/python-env.sh failed (exit 1): [python-env] python3 not found: install Python 3.11 or later (Debian: apt-get install python3 python3-venv)",
    ]);
  });
});
