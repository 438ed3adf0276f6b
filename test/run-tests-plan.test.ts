/**
 * How `npm test` chooses and orders its files (scripts/lib/test-plan.ts), on a small project made in a
 * temporary directory: the import graph as tsx resolves it, the unit tier's judgement, `--changed`,
 * the runs-alone marker, and the recorded timings (slowest first; a file cut by a kill is no figure).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { findTestFiles, ImportGraph, readTimings, recordTimings, runsAlone, slowestFirst } from '../scripts/lib/test-plan.js';

let root: string;
const at = (path: string) => join(root, path);

function write(path: string, text: string): void {
  mkdirSync(dirname(at(path)), { recursive: true });
  writeFileSync(at(path), text);
}

before(() => {
  root = mkdtempSync(join(tmpdir(), 'test-plan-'));
  write('src/pure.ts', 'export const one = 1;\n');
  write('src/uses-pure.ts', "import { one } from './pure.js';\nexport const two = one + 1;\n");
  write('src/dynamic.ts', "export const load = () => import('./pure.js');\n");
  write('test/helpers/temporal.ts', "import { TestWorkflowEnvironment } from '@temporalio/testing';\nexport { TestWorkflowEnvironment };\n");
  write('test/helpers/index.ts', "export * from './temporal.js';\n");
  write('test/pure.test.ts', "import { two } from '../src/uses-pure.js';\nimport { it } from 'node:test';\nit('adds', () => two);\n");
  write('test/dynamic.test.ts', "import { load } from '../src/dynamic.js';\nimport { it } from 'node:test';\nit('loads', () => load());\n");
  write(
    'test/server.test.ts',
    "import type { Foo } from './types.js';\nimport { TestWorkflowEnvironment } from './helpers/index.js';\nvoid TestWorkflowEnvironment;\n",
  );
  write('test/types.ts', 'export type Foo = string;\n');
  write(
    'test/marked.test.ts',
    "// Runs a script that starts a server.\n// npm test: needs a server (the script's)\nimport { it } from 'node:test';\nit('runs', () => ['scripts/start.sh', '../python/x']);\n",
  );
  write('scripts/lib/minio-binary.ts', "export const minioPath = () => 'minio';\n");
  write('test/helpers/minio.ts', "import { minioPath } from '../../scripts/lib/minio-binary.js';\nexport const startMinio = () => minioPath();\n");
  write('test/s3.test.ts', "import { startMinio } from './helpers/minio.js';\nimport { it } from 'node:test';\nit('stores', () => startMinio());\n");
  write('test/compose.test.ts', "import { it } from 'node:test';\nit('checks', () => ['npm', 'run', 'compose:check']);\n");
  write('test/python.test.ts', "import { it } from 'node:test';\nit('runs pytest', () => ['python/', 'tests']);\n");
  write('test/alone.test.ts', "// npm test: runs alone (it loads every core)\nimport { it } from 'node:test';\nit('works', () => {});\n");
  write('test/fixtures/skipped.test.ts', "import { it } from 'node:test';\nit('is a fixture', () => {});\n");
});

after(() => rmSync(root, { recursive: true, force: true }));

void describe('the test plan', () => {
  void it('finds *.test.ts below test/, leaving fixtures out, sorted', () => {
    assert.deepEqual(
      findTestFiles(at('test')).map((file) => file.slice(root.length + 1)),
      [
        'test/alone.test.ts',
        'test/compose.test.ts',
        'test/dynamic.test.ts',
        'test/marked.test.ts',
        'test/pure.test.ts',
        'test/python.test.ts',
        'test/s3.test.ts',
        'test/server.test.ts',
      ],
    );
  });

  void it('follows imports as tsx resolves them: .js to .ts, re-exports, type imports and import()', () => {
    const graph = new ImportGraph(root);
    assert.deepEqual([...graph.closure(at('test/pure.test.ts')).files].map((file) => file.slice(root.length + 1)).sort(), [
      'src/pure.ts',
      'src/uses-pure.ts',
      'test/pure.test.ts',
    ]);
    assert.ok(graph.closure(at('test/dynamic.test.ts')).files.has(at('src/pure.ts')));
    const server = graph.closure(at('test/server.test.ts'));
    assert.ok(server.files.has(at('test/types.ts')) && server.files.has(at('test/helpers/temporal.ts')));
    assert.ok(server.packages.has('@temporalio/testing'));
  });

  void it('puts in the unit tier only files that reach no server, by import or by their own word', () => {
    const graph = new ImportGraph(root);
    assert.equal(graph.needsServer(at('test/pure.test.ts')), false);
    assert.equal(graph.needsServer(at('test/server.test.ts')), true, 'a server reached through a re-export');
    assert.equal(graph.needsServer(at('test/marked.test.ts')), true, 'the marker, with a reason after it');
  });

  void it('--changed: a file is affected through its imports, or by a changed non-source file one of them names', () => {
    const graph = new ImportGraph(root);
    assert.equal(graph.affectedBy(at('test/pure.test.ts'), ['src/pure.ts']), true);
    assert.equal(graph.affectedBy(at('test/dynamic.test.ts'), ['src/pure.ts']), true);
    assert.equal(graph.affectedBy(at('test/server.test.ts'), ['src/pure.ts']), false);
    assert.equal(graph.affectedBy(at('test/marked.test.ts'), ['scripts/start.sh']), true);
    assert.equal(graph.affectedBy(at('test/pure.test.ts'), ['scripts/start.sh', 'README.md']), false);
    assert.equal(graph.affectedBy(at('test/python.test.ts'), ['python/aggregation/client.py']), true, "a test that names 'python/'");
    assert.equal(graph.affectedBy(at('test/marked.test.ts'), ['python/aggregation/client.py']), false, "'../python/' is another path");
    assert.equal(graph.affectedBy(at('test/marked.test.ts'), ['scripts/other.sh']), false, "'scripts/' alone says nothing: the import graph follows it");
  });

  void it('names the binaries provisioned before the tests that a file needs: by what it imports, or by the script it names', () => {
    const graph = new ImportGraph(root);
    assert.deepEqual(graph.provisionedLater(at('test/s3.test.ts')), ['minio']);
    assert.deepEqual(graph.provisionedLater(at('test/compose.test.ts')), ['compose']);
    assert.deepEqual(graph.provisionedLater(at('test/pure.test.ts')), []);
  });

  void it('reads the runs-alone marker in the first lines only', () => {
    assert.equal(runsAlone(at('test/alone.test.ts')), true);
    assert.equal(runsAlone(at('test/pure.test.ts')), false);
  });

  void it('orders slowest first, files with no figure yet before all, then by path', () => {
    const files = ['a', 'b', 'c', 'd', 'e'];
    assert.deepEqual(
      slowestFirst(files, { a: 1, b: 30, d: 30, e: 2 }, (file) => file),
      ['c', 'b', 'd', 'e', 'a'],
    );
  });

  void it('records timings by merging into what was there, and reads a damaged file as none', () => {
    const path = at('cache/test-timings.json');
    assert.deepEqual(readTimings(path), {});
    recordTimings(path, { 'test/a.test.ts': 12.5, 'test/b.test.ts': 3 });
    recordTimings(path, { 'test/b.test.ts': 4 });
    assert.deepEqual(readTimings(path), { 'test/a.test.ts': 12.5, 'test/b.test.ts': 4 });
    writeFileSync(path, readFileSync(path, 'utf8').slice(0, 10));
    assert.deepEqual(readTimings(path), {});
    writeFileSync(path, JSON.stringify({ 'test/a.test.ts': 'slow', 'test/b.test.ts': 2 }));
    assert.deepEqual(readTimings(path), { 'test/b.test.ts': 2 });
  });
});
