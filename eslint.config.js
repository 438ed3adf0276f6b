// typescript-eslint with type information; workflow code is kept deterministic by banning
// Node built-ins, HTTP clients and activity implementations there (type imports stay allowed).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const SDK_INTERNALS = { group: ['@temporalio/*/lib/*'], message: 'SDK internals come through src/sdk/internals.ts, which says why no public API does it.' };

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.temporal/**', 'artifacts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // node:test's describe/it return promises that the runner itself awaits.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] },
          ],
        },
      ],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
    },
  },
  {
    // The SDK's internals (its lib/ paths) come through one adapter, which says why each has no public API.
    files: ['**/*.ts'],
    ignores: ['src/sdk/internals.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: [SDK_INTERNALS] }] },
  },
  {
    // The tracing interceptors are bundled with the workflows, and so is the contract they share with
    // the client and the activities (connection-input.ts and connection-schemas.ts, which validate
    // with zod, only as types).
    files: ['src/workflows/**/*.ts', 'src/tracing/workflow-interceptors.ts', 'src/contract/**/*.ts', 'src/nexus/relay-workflow.ts', 'src/nexus/relay-ids.ts'],
    ignores: ['src/contract/connection/connection-input.ts', 'src/contract/connection/connection-schemas.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'http', 'https', 'crypto', 'os', 'child_process'],
              message: 'Workflows must be deterministic: no Node built-ins.',
            },
            SDK_INTERNALS,
            { group: ['ky', '**/aggregator/client*', '**/sandbox/*'], message: 'Workflows reach the service only through activities.' },
            { group: ['**/activities/*', '**/activities'], message: 'Import activities by type only.', allowTypeImports: true },
            {
              group: ['zod', 'zod/*', '**/aggregator/schemas*', '**/connection-input*', '**/connection-schemas*'],
              message: 'Types only: the SDK evaluates the workflow bundle for every workflow, so zod stays out of it (validation runs in input-activities.ts).',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The console's browser pages: ES modules served as they are, importing each other and the
    // modules they share with the CLI (/shared/<name>.js). tsc checks their names against lib.dom and
    // their imports (tsconfig.page.json, tsconfig.page-books.json, tsconfig.page-audit.json), which is
    // why no-undef, which knows no browser global, is off.
    files: ['src/console/page/**/*.js'],
    languageOptions: { sourceType: 'module' },
    rules: { 'no-undef': 'off' },
  },
  {
    // What the pages share with the CLI reaches the browser unbundled (src/console/pages.ts
    // serves it as /shared/<name>.js): no Node built-in, no package, only each other.
    files: ['src/presentation/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^(?!\\./)', message: 'The console page imports this module in the browser: import only ./ modules of src/presentation/.' }] },
      ],
    },
  },
  {
    // CommonJS on purpose: preloaded with --require into every thread of a worker (bench experiments).
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', process: 'readonly', setInterval: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
