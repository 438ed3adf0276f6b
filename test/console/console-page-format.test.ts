/**
 * The console page writes durations with the CLI's own code: src/presentation/durations.ts, which
 * the console serves to the browser as /shared/durations.js (src/console/pages.ts) and the
 * pages import. Checked here on a console of its own: the served JavaScript, imported as the browser
 * imports it (an ES module, here from a data: URL), writes what the CLI writes for a table of
 * durations; only the allowlisted modules are served; a compiled module is served as it is (what
 * the image does from dist/), and a module found neither compiled nor as a source is an error that
 * names both places. No page script keeps a copy of its own.
 */
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { createConsoleServer, type ConsoleServer } from '../../src/console/app.js';
import { sharedModuleJavaScript } from '../../src/console/pages.js';
import type { ConnectionsClient } from '../../src/client/index.js';
import { formatElapsed as cliFormatElapsed } from '../../src/cli/terminal-view.js';
import { formatElapsed, took } from '../../src/presentation/durations.js';
import { tempAuditTrail } from '../helpers/audit.js';

const TOKEN = 'console-page-format-token-0123456789';
const PAGE_DIR = new URL('../../src/console/page/', import.meta.url);
const DURATIONS = [
  -5_000, -1, 0, 1, 99, 999, 1_000, 1_001, 9_949, 9_950, 9_999, 10_000, 10_999, 59_999, 60_000, 61_000, 599_999, 3_599_999, 3_600_000, 3_661_000, 86_399_999,
  90_061_000, 360_000_000,
];

/** The console's Temporal client, never reached: serving the page needs none. */
function unreachableConnections(path = 'connections'): ConnectionsClient {
  const refuse = (): never => {
    throw new Error(`serving the page reached the console's Temporal client (${path})`);
  };
  return new Proxy(refuse, { get: (_target, key) => unreachableConnections(`${path}.${String(key)}`) }) as unknown as ConnectionsClient;
}

type Durations = { formatElapsed: (ms: number) => string; took: (ms: number) => string };

let consoleServer: ConsoleServer;
let baseUrl: string;

before(async () => {
  consoleServer = createConsoleServer({ audit: tempAuditTrail(), connections: unreachableConnections(), token: TOKEN });
  baseUrl = (await consoleServer.listen(0, '127.0.0.1')).url;
});

after(async () => {
  await consoleServer?.close();
});

function get(path: string, method = 'GET'): Promise<Response> {
  return fetch(`${baseUrl}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } });
}

void describe("the console page's durations", () => {
  let served: Durations;

  before(async () => {
    const response = await get('/shared/durations.js');
    assert.equal(response.status, 200);
    const javascript = await response.text();
    served = (await import(`data:text/javascript;base64,${Buffer.from(javascript).toString('base64')}`)) as Durations;
  });

  void it('serves /shared/durations.js as JavaScript under the console headers, a module with the helpers', async () => {
    const response = await get('/shared/durations.js');
    assert.equal(response.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.match(response.headers.get('content-security-policy') ?? '', /script-src 'self'/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    assert.match(await response.text(), /^export function formatElapsed\(ms\)/m, 'JavaScript, with no TypeScript left in it');
    const head = await get('/shared/durations.js', 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    assert.equal((await fetch(`${baseUrl}/shared/durations.js`)).status, 401, 'behind the console token, as the page is');
  });

  void it('formatElapsed writes what the CLI writes', () => {
    assert.equal(cliFormatElapsed, formatElapsed, 'the CLI writes with the shared module itself');
    for (const ms of DURATIONS) assert.equal(served.formatElapsed(ms), formatElapsed(ms), `${ms} ms`);
    assert.equal(served.formatElapsed(3_661_000), '1h 01m');
  });

  void it('took writes what the CLI writes, tenths below 10 s', () => {
    for (const ms of DURATIONS) assert.equal(served.took(ms), took(ms), `${ms} ms`);
    assert.equal(served.took(15_000), '15s', "the books page said 0m 15s where the CLI says 15s, before it shared the CLI's rule");
    assert.equal(served.took(9_949), '9.9s');
  });

  void it('serves only the allowlisted modules: any other address under /shared/ is not found', async () => {
    for (const path of [
      '/shared/x.js',
      '/shared/durations.ts',
      '/shared/durations',
      '/shared/../presentation/durations.ts',
      '/shared/%2e%2e/client/presentation.js',
      '/shared/',
      '/format.js',
    ]) {
      const response = await get(path);
      assert.equal(response.status, 404, path);
      assert.equal(((await response.json()) as { error: string }).error, 'NotFound', path);
    }
    assert.equal((await get('/shared/durations.js', 'POST')).status, 404, 'GET and HEAD only');
  });

  void it('the pages import the shared module as ES modules, and none keeps a copy of a CLI helper', async () => {
    const scripts = (await readdir(PAGE_DIR)).filter((name) => name.endsWith('.js'));
    const texts = new Map(await Promise.all(scripts.map(async (name) => [name, await readFile(new URL(name, PAGE_DIR), 'utf8')] as const)));
    for (const [name, text] of texts) assert.doesNotMatch(text, /function (formatElapsed|took)\b/, `${name} defines a duration helper of its own`);
    assert.match(texts.get('app.js') ?? '', /^import \{ formatElapsed \} from '\/shared\/durations\.js';$/m);
    assert.match(texts.get('books.js') ?? '', /^import \{ took \} from '\/shared\/durations\.js';$/m);
    // The images of a challenge are read as the CLI reads them (src/presentation/images.ts).
    for (const [name, text] of texts) assert.doesNotMatch(text, /data:image\\\/\[a-z\+\]/, `${name} keeps its own copy of the image prefix rule`);
    assert.match(texts.get('app.js') ?? '', /^import \{ imageBase64, isPlainBase64 \} from '\/shared\/images\.js';$/m);
    const images = (await import(`data:text/javascript;base64,${Buffer.from(await (await get('/shared/images.js')).text()).toString('base64')}`)) as {
      imageBase64(image: string): string;
      isPlainBase64(text: string): boolean;
    };
    assert.equal(images.imageBase64('data:image/png;base64,iVBORw0KGgo='), 'iVBORw0KGgo=');
    assert.equal(images.isPlainBase64('iVBORw0KGgo='), true);
    assert.equal(images.isPlainBase64('"><script>'), false);
    for (const page of ['/', '/books', '/audit']) {
      const html = await (await get(page)).text();
      const sources = [...html.matchAll(/<script\b[^>]*>/g)].map(([tag]) => tag);
      assert.ok(sources.length > 0, page);
      for (const tag of sources) assert.match(tag, /^<script type="module" src="\/[a-z]+\.js">$/, `${page}: ${tag}`);
    }
  });
});

void describe("where the console finds a shared module's JavaScript", () => {
  let dir: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'console-shared-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  void it('serves the compiled file as it is when there is one (the console run from dist/)', async () => {
    const compiled = join(dir, 'compiled.js');
    await writeFile(compiled, 'export const compiled = true;\n');
    assert.equal(await sharedModuleJavaScript(pathToFileURL(compiled), pathToFileURL(join(dir, 'absent.ts'))), 'export const compiled = true;\n');
  });

  void it('transpiles the TypeScript source when nothing is compiled (the console run from source)', async () => {
    const source = join(dir, 'source.ts');
    await writeFile(source, 'export function twice(n: number): number {\n  return 2 * n;\n}\n');
    const javascript = await sharedModuleJavaScript(pathToFileURL(join(dir, 'source.js')), pathToFileURL(source));
    assert.match(javascript, /^export function twice\(n\) \{$/m);
  });

  void it('names both places when the module is neither compiled nor a source', async () => {
    const compiled = join(dir, 'missing.js');
    const source = join(dir, 'missing.ts');
    await assert.rejects(sharedModuleJavaScript(pathToFileURL(compiled), pathToFileURL(source)), (error: Error) => {
      assert.ok(error.message.includes(compiled) && error.message.includes(source), error.message);
      return true;
    });
  });
});
