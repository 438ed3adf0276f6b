/**
 * `npm run docs:python-api`: rewrites the block of Python signatures in docs/python-pipeline.md (the
 * lines between its api-signatures markers) with what python/tests/api_signatures.py prints from the
 * package, run in the project's venv (scripts/python-env.sh). `npm run docs:check` fails while the
 * block and the code differ (scripts/lib/docs-check.ts). Prints what it wrote or left as it was;
 * exits 1 when the generator cannot run or the page has no markers.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PYTHON_API_PAGE, renderPythonApi, withPythonApi } from './lib/docs-check.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const rendered = renderPythonApi(root);
if (!rendered.ok) {
  console.error(`docs:python-api: ${rendered.problem}`);
  process.exitCode = 1;
} else {
  const page = join(root, PYTHON_API_PAGE);
  const current = readFileSync(page, 'utf8');
  const next = withPythonApi(current, rendered.signatures);
  if (next !== current) writeFileSync(page, next);
  console.log(`docs:python-api: ${next === current ? 'up to date:' : 'wrote'} ${PYTHON_API_PAGE}`);
}
