/**
 * `npm run docs:check`: the documentation against the code (scripts/lib/docs-check.ts): relative
 * links and their anchors, `npm run` scripts, the TypeScript examples compiled, and the Python page's
 * signatures against the code (`npm run docs:python-api` rewrites them). Prints one line
 * a finding (file:line: check: message) and exits 1 when there is any.
 */
import { fileURLToPath } from 'node:url';
import { checkDocs, docsFiles, formatFinding } from './lib/docs-check.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const files = docsFiles(root);
const findings = checkDocs(root, { files });
for (const finding of findings) console.log(formatFinding(finding));
console.log(`docs:check: ${files.length} markdown file(s), ${findings.length} finding(s)`);
process.exitCode = findings.length > 0 ? 1 : 0;
