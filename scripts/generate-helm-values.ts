/**
 * `npm run helm:generate`: writes the Helm chart's values.schema.json and files/variables.yaml, and
 * the values reference docs/helm-values.md, from the settings schemas (scripts/lib/helm-values-schema.ts).
 * Prints what it wrote or left as it was.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HELM_GENERATED_FILES, renderHelmGenerated, staleHelmFiles } from './lib/helm-values-schema.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const rendered = renderHelmGenerated();
const stale = new Set(staleHelmFiles(root));
for (const file of HELM_GENERATED_FILES) {
  if (stale.has(file)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), rendered[file]);
  }
  console.log(`helm:generate: ${stale.has(file) ? 'wrote' : 'up to date:'} ${file}`);
}
