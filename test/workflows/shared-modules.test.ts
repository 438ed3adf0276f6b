/**
 * The workflow bundle preloads the product's workflow code once per worker thread (WORKFLOW_CODE's
 * preloadModules), so every connection a thread runs shares those modules' top-level bindings. A
 * module-level `let` counter or Map would leak one connection's state into another and break replay.
 * This reads every product source file the bundle holds and refuses module-level state that can
 * change: `let`/`var`, `new` containers that are neither exported (the SDK deep-freezes shared
 * exports) nor typed read-only, and static class fields that are not readonly.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { productWorkflowBundle } from '../../scripts/lib/workflow-bundle.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Module-level declarations of one source file that could hold per-connection state, as "line: text". */
function mutableModuleState(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const problems: string[] = [];
  const at = (node: ts.Node, what: string) => problems.push(`${fileName}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}`);
  for (const statement of file.statements) {
    if (ts.isVariableStatement(statement)) {
      const exported = statement.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword) ?? false;
      if (!(statement.declarationList.flags & ts.NodeFlags.Const)) {
        at(statement, `module-level ${statement.declarationList.flags & ts.NodeFlags.Let ? 'let' : 'var'} is shared by every connection of a worker thread`);
        continue;
      }
      for (const declaration of statement.declarationList.declarations) {
        const readOnlyType = declaration.type !== undefined && /^Readonly|^readonly /.test(declaration.type.getText(file));
        if (declaration.initializer && ts.isNewExpression(declaration.initializer) && !exported && !readOnlyType) {
          at(
            declaration,
            `module-level "${declaration.name.getText(file)}" holds a new ${declaration.initializer.expression.getText(file)} that is neither exported (frozen) nor typed read-only`,
          );
        }
      }
    }
    if (ts.isClassDeclaration(statement)) {
      for (const member of statement.members) {
        const modifiers = ts.canHaveModifiers(member) ? (ts.getModifiers(member) ?? []) : [];
        const isStatic = modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.StaticKeyword);
        const isReadonly = modifiers.some((modifier) => modifier.kind === ts.SyntaxKind.ReadonlyKeyword);
        if (ts.isPropertyDeclaration(member) && isStatic && !isReadonly)
          at(member, `static field "${member.name.getText(file)}" of ${statement.name?.text ?? 'a class'} is shared by every connection`);
      }
    }
  }
  return problems;
}

describe('workflow modules shared by every connection of a worker thread', () => {
  let code = '';
  before(async () => {
    code = await productWorkflowBundle();
  });

  it('the bundle preloads the workflows, converters and interceptors', () => {
    const preload = /preloadModules\(\) \{([^}]*)\}/.exec(code)?.[1] ?? '';
    for (const module of [
      './src/workflows/index.ts',
      './src/codec/payload-converter.ts',
      './src/codec/failure-converter.ts',
      './src/tracing/workflow-interceptors.ts',
    ]) {
      assert.ok(preload.includes(`"${module}"`), `${module} is not preloaded`);
    }
  });

  it('no bundled product module keeps state that can change at module level', () => {
    const modules = [...new Set(code.match(/"\.\/src\/[^"]+\.ts"/g) ?? [])].map((id) => id.slice(3, -1));
    assert.ok(modules.includes('src/workflows/connection/connection.ts'), `the bundle's product modules were not found: ${modules.join(', ')}`);
    const problems = modules.flatMap((module) => mutableModuleState(module, readFileSync(join(root, module), 'utf8')));
    assert.deepEqual(problems, []);
  });

  it('the check refuses each kind of module-level state it is there to catch', () => {
    const source = [
      'let counter = 0;',
      'var legacy = 1;',
      'const cache = new Map<string, number>();',
      'const known: ReadonlySet<string> = new Set(["a"]);',
      'export const converter = new Converter();',
      'export const LIMIT = 4;',
      'class Registry { static entries = []; static readonly NAME = "r"; }',
      'export function f() { let local = 0; return local; }',
    ].join('\n');
    const problems = mutableModuleState('example.ts', source);
    assert.deepEqual(
      problems.map((problem) => problem.split(': ')[0]),
      ['example.ts:1', 'example.ts:2', 'example.ts:3', 'example.ts:7'],
    );
  });
});
