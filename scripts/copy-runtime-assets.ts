/**
 * `npm run build`, after tsc: copies what src/ reads at run time and tsc does not emit (the console's
 * page: HTML, JS, CSS) to the same place under dist/src/, so the compiled code finds it beside itself.
 * Every file of src/ that is neither TypeScript nor a README goes; nothing is listed by hand.
 */
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const from = resolve(process.argv[2] ?? 'src');
const to = resolve(process.argv[3] ?? 'dist/src');

function assets(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return assets(path);
    return entry.isFile() && !entry.name.endsWith('.ts') && !entry.name.endsWith('.md') ? [path] : [];
  });
}

const copied = assets(from);
for (const file of copied) {
  const target = join(to, relative(from, file));
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(file, target);
}
process.stdout.write(
  `${copied.length} runtime asset(s) copied from ${relative(process.cwd(), from) || '.'} to ${relative(process.cwd(), to)}: ${copied.map((file) => relative(from, file)).join(', ')}\n`,
);
