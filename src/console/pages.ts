/**
 * The console's page: static files read from ./page/ at each request, and the TypeScript modules
 * the page shares with the CLI (src/presentation/), served as JavaScript at /shared/<name>.js.
 * Served for GET and HEAD only: any other method at their address is not found, as before there
 * were routes.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import type * as TypeScript from 'typescript';
import { SECURITY_HEADERS } from '../http/json-http.js';

const PAGE_DIR = fileURLToPath(new URL('./page/', import.meta.url));
const HTML = 'text/html; charset=utf-8';
const JAVASCRIPT = 'text/javascript; charset=utf-8';
const STATIC_FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: HTML },
  '/index.html': { file: 'index.html', type: HTML },
  '/api.js': { file: 'api.js', type: JAVASCRIPT },
  '/dom.js': { file: 'dom.js', type: JAVASCRIPT },
  '/counts.js': { file: 'counts.js', type: JAVASCRIPT },
  '/app.js': { file: 'app.js', type: JAVASCRIPT },
  '/books': { file: 'books.html', type: HTML },
  '/books.html': { file: 'books.html', type: HTML },
  '/books.js': { file: 'books.js', type: JAVASCRIPT },
  '/audit': { file: 'audit.html', type: HTML },
  '/audit.html': { file: 'audit.html', type: HTML },
  '/audit.js': { file: 'audit.js', type: JAVASCRIPT },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};

/**
 * The shared modules the page imports (`import { formatElapsed } from '/shared/durations.js'`), by
 * their address: only these are served, and no part of the address reaches the file system. Each is
 * a module of src/presentation/ that imports nothing (it reaches the browser as it is, unbundled).
 */
const SHARED_MODULES: Record<string, string> = {
  '/shared/durations.js': 'durations',
  '/shared/images.js': 'images',
};
/** src/presentation/ from this file: src/console/ when run from source, dist/src/console/ compiled. */
const SHARED_DIR = new URL('../presentation/', import.meta.url);

/** True when `pathname` is a page file and the request a GET or HEAD: it has been answered. */
export async function servePage(request: IncomingMessage, response: ServerResponse, pathname: string): Promise<boolean> {
  const method = request.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') return false;
  let body: Buffer | string;
  let type: string;
  const asset = Object.hasOwn(STATIC_FILES, pathname) ? STATIC_FILES[pathname] : undefined;
  const shared = Object.hasOwn(SHARED_MODULES, pathname) ? SHARED_MODULES[pathname] : undefined;
  if (asset !== undefined) {
    body = await readFile(`${PAGE_DIR}${asset.file}`);
    type = asset.type;
  } else if (shared !== undefined) {
    body = await sharedModule(shared);
    type = JAVASCRIPT;
  } else {
    return false;
  }
  response.writeHead(200, { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': 'no-store' });
  response.end(method === 'HEAD' ? undefined : body);
  return true;
}

/** Each shared module's JavaScript, read or transpiled once per process. */
const sharedJavaScript = new Map<string, Promise<string>>();

function sharedModule(name: string): Promise<string> {
  let javascript = sharedJavaScript.get(name);
  if (javascript === undefined) {
    javascript = sharedModuleJavaScript(new URL(`${name}.js`, SHARED_DIR), new URL(`${name}.ts`, SHARED_DIR));
    // A failure is not kept: the next request tries again (and says why again).
    javascript.catch(() => sharedJavaScript.delete(name));
    sharedJavaScript.set(name, javascript);
  }
  return javascript;
}

/**
 * A shared module's JavaScript: the compiled file when there is one (`npm run build` puts it in
 * dist/ beside the compiled console, which is what the image runs), else its TypeScript source
 * transpiled by the `typescript` package (a devDependency: the console run from source by tsx, as
 * the dev stack and the tests run it). The image has the compiled file, so it never needs TypeScript.
 */
export async function sharedModuleJavaScript(compiled: URL, source: URL): Promise<string> {
  if (existsSync(compiled)) return readFile(compiled, 'utf8');
  let text: string;
  try {
    text = await readFile(source, 'utf8');
  } catch (error) {
    throw new Error(`the console's shared module is neither compiled at ${fileURLToPath(compiled)} nor a source at ${fileURLToPath(source)}`, { cause: error });
  }
  let typescript: typeof TypeScript;
  try {
    // By a name in a variable: a compiled console never comes here, and the image's check of
    // compiled imports (scripts/image-check/inspect.ts) looks for packages a compiled file needs.
    const packageName = 'typescript';
    typescript = ((await import(packageName)) as { default: typeof TypeScript }).default;
  } catch (error) {
    throw new Error(
      `the console's shared module is not compiled at ${fileURLToPath(compiled)} (run npm run build), and its source ${fileURLToPath(source)} cannot be transpiled without the typescript package`,
      { cause: error },
    );
  }
  const { ModuleKind, ScriptTarget } = typescript;
  return typescript.transpileModule(text, { fileName: fileURLToPath(source), compilerOptions: { module: ModuleKind.ESNext, target: ScriptTarget.ES2022 } })
    .outputText;
}
