/**
 * What image-check reads off the stages' output without running it: sizes, devDependencies that
 * reached the runtime node_modules, and compiled code importing a package the runtime does not have.
 */
import { builtinModules } from 'node:module';
import { existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Bytes of every file under `path` (symlinks counted as links, not followed). */
export function sizeOf(path: string): number {
  const stat = lstatSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((total, name) => total + sizeOf(join(path, name)), 0);
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

interface Lockfile {
  packages?: Record<string, { dev?: boolean }>;
}

/** Packages the lock marks dev-only (`"dev": true`) that are installed under `appDir` anyway. */
export function devPackagesInstalled(appDir: string): string[] {
  const lock = JSON.parse(readFileSync(join(appDir, 'package-lock.json'), 'utf8')) as Lockfile;
  return Object.entries(lock.packages ?? {})
    .filter(([path, entry]) => path !== '' && entry.dev === true && existsSync(join(appDir, path)))
    .map(([path]) => path.replace(/^.*node_modules\//, ''));
}

function jsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return jsFiles(path);
    return entry.isFile() && entry.name.endsWith('.js') ? [path] : [];
  });
}

/** `import ... from 'x'` / `export ... from 'x'` (a statement, from the start of a line: not text in a string), `import 'x'`, `import('x')`. */
const IMPORT = /^\s*(?:(?:import|export)\s[^'"`;]*?\bfrom\s*|import\s*)['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm;

/**
 * Every package a compiled file under `dir` imports (static or dynamic, by a literal specifier)
 * that is neither a Node built-in nor one of `dependencies`: "file: package" lines.
 */
export function undeclaredImports(dir: string, dependencies: readonly string[]): string[] {
  const allowed = new Set(dependencies);
  const problems: string[] = [];
  for (const file of jsFiles(dir)) {
    for (const [, statement, dynamic] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const specifier = statement ?? dynamic;
      if (!specifier || specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) continue;
      const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
      if (builtinModules.includes(name) || allowed.has(name)) continue;
      problems.push(`${relative(dir, file)}: ${specifier}`);
    }
  }
  return problems;
}
