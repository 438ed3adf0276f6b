/**
 * The floor's worker and activities as plain JavaScript (TypeScript's transpiler, no type check),
 * run by node as the product's image runs its worker: through tsx, source-mapped stacks would cost
 * it CPU the product's worker does not pay.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');

/** Where the floor's workflows are (the worker bundles them at start). */
export const FLOOR_WORKFLOWS_PATH = join(here, 'workflows.ts');

/**
 * Writes `text` to `path` whole or not at all: benches running at once (two test files) write the
 * same files, and a worker starting meanwhile must never load a half-written one.
 */
function writeWhole(path: string, text: string): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

/** Writes the compiled worker under node_modules/.cache so its imports resolve; returns its path from the project root. */
export function compiledFloorWorker(): string {
  const out = join(root, 'node_modules', '.cache', 'sdk-floor');
  mkdirSync(out, { recursive: true });
  writeWhole(join(out, 'package.json'), '{ "type": "module" }\n');
  for (const file of ['worker', 'activities']) {
    const { outputText } = ts.transpileModule(readFileSync(join(here, `${file}.ts`), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    writeWhole(join(out, `${file}.js`), outputText);
  }
  return relative(root, join(out, 'worker.js'));
}
