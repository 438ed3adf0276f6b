/**
 * The console's page: static files read from ./page/ at each request. Served for GET and HEAD only:
 * any other method at their address is not found, as before there were routes.
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { SECURITY_HEADERS } from './http.js';

const PAGE_DIR = fileURLToPath(new URL('./page/', import.meta.url));
const STATIC_FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/api.js': { file: 'api.js', type: 'text/javascript; charset=utf-8' },
  '/dom.js': { file: 'dom.js', type: 'text/javascript; charset=utf-8' },
  '/format.js': { file: 'format.js', type: 'text/javascript; charset=utf-8' },
  '/counts.js': { file: 'counts.js', type: 'text/javascript; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/books': { file: 'books.html', type: 'text/html; charset=utf-8' },
  '/books.html': { file: 'books.html', type: 'text/html; charset=utf-8' },
  '/books.js': { file: 'books.js', type: 'text/javascript; charset=utf-8' },
  '/audit': { file: 'audit.html', type: 'text/html; charset=utf-8' },
  '/audit.html': { file: 'audit.html', type: 'text/html; charset=utf-8' },
  '/audit.js': { file: 'audit.js', type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};

/** True when `pathname` is a page file and the request a GET or HEAD: it has been answered. */
export async function servePage(request: IncomingMessage, response: ServerResponse, pathname: string): Promise<boolean> {
  const method = request.method ?? 'GET';
  const asset = Object.hasOwn(STATIC_FILES, pathname) ? STATIC_FILES[pathname] : undefined;
  if (asset === undefined || (method !== 'GET' && method !== 'HEAD')) return false;
  const body = await readFile(`${PAGE_DIR}${asset.file}`);
  response.writeHead(200, { ...SECURITY_HEADERS, 'content-type': asset.type, 'cache-control': 'no-store' });
  response.end(method === 'HEAD' ? undefined : body);
  return true;
}
