/**
 * The house's size rules (issue 63): at most two files of src/ over 400 lines, at most one function
 * over 120, each counted as prettier writes them. A file or function that grows past its bound
 * fails here with its name and size, so a split is decided when the code is written, not found in a
 * later read of the tree. The bounds are the counts, not the names: which file may be long moves
 * with the code.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '..', '..');
const FILE_LINES = 400;
const FILES_OVER = 2;
const FUNCTION_LINES = 120;
const FUNCTIONS_OVER = 1;

function sourceFiles(): string[] {
  return execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', 'src'], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file.endsWith('.ts'));
}

function lineCount(text: string): number {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

/** Every function-like node of `file` longer than `limit` lines, as `path:line name (lines)`. */
function longFunctions(file: string, text: string, limit: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const lines = source.getLineAndCharacterOfPosition(node.getEnd()).line - start + 1;
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
      if (lines > limit) found.push(`${file}:${start + 1} ${name} (${lines} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

void describe('the sizes of src/', () => {
  const files = sourceFiles().map((file) => ({ file, text: readFileSync(join(ROOT, file), 'utf8') }));

  void it(`has at most ${FILES_OVER} files over ${FILE_LINES} lines`, () => {
    const long = files.filter(({ text }) => lineCount(text) > FILE_LINES).map(({ file, text }) => `${file} (${lineCount(text)} lines)`);
    assert.ok(long.length <= FILES_OVER, `${long.length} files over ${FILE_LINES} lines, at most ${FILES_OVER} may be: ${long.join(', ')}`);
  });

  void it(`has at most ${FUNCTIONS_OVER} function over ${FUNCTION_LINES} lines`, () => {
    const long = files.flatMap(({ file, text }) => longFunctions(file, text, FUNCTION_LINES));
    assert.ok(long.length <= FUNCTIONS_OVER, `${long.length} functions over ${FUNCTION_LINES} lines, at most ${FUNCTIONS_OVER} may be: ${long.join(', ')}`);
  });

  void it('counts a long function and a long file on a sample, so the rules above can fail', () => {
    const body = Array.from({ length: FUNCTION_LINES + 5 }, (_, index) => `  const v${index} = ${index};`).join('\n');
    const sample = `export function long(): void {\n${body}\n}\nexport const short = () => 1;\n`;
    assert.deepEqual(longFunctions('sample.ts', sample, FUNCTION_LINES), [`sample.ts:1 long (${FUNCTION_LINES + 7} lines)`]);
    assert.equal(lineCount(sample), FUNCTION_LINES + 8);
  });
});
