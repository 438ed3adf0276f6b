/**
 * `npm run docs:config`: writes docs/configuration.md and .env.example from the zod schemas of
 * the settings modules (scripts/lib/config-registry.ts lists them, scripts/lib/config-reference.ts renders them). Prints what it wrote or left as it was.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_REFERENCE_FILES, renderConfigReference, staleReferenceFiles } from './lib/config-reference.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const rendered = renderConfigReference(root);
const stale = new Set(staleReferenceFiles(root, rendered).map(({ file }) => file));
for (const file of CONFIG_REFERENCE_FILES) {
  if (stale.has(file)) writeFileSync(join(root, file), rendered[file]);
  console.log(`docs:config: ${stale.has(file) ? 'wrote' : 'up to date:'} ${file}`);
}
