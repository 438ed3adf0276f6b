/**
 * The "v2" of the deploy rehearsal: a copy of the product's source with one change that breaks the
 * replay of v1's connection histories (one more activity before retrieval), bundled the way a build
 * bundles the product. Its build id then differs from v1's because its code does.
 */
import { cp, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { WORKFLOW_CODE } from '../../src/bundle/workflow-code.js';
import { bundleWorkflows } from '../../src/worker/deployment.js';
import { PROJECT_ROOT } from '../lib/temporal-binaries.js';

/** Where v2 inserts its extra step (the line that starts the retrieval, `result = await retrieveProducts(`), and the step: a regular activity that v1's histories never scheduled. */
const RETRIEVAL_CALL = /^( *)(?:const )?result = await retrieveProducts\(/m;
const EXTRA_ACTIVITY =
  "    await proxyActivities<InputActivities>({ startToCloseTimeout: '10s', summary: 'v2: check the input again before retrieval' }).validateConnectionInput(args);\n";

export class V2BuildError extends Error {
  override readonly name = 'V2BuildError';
}

/** The connection workflow's source with v2's change; refuses when the code no longer has the place it changes. */
export function withExtraActivity(source: string): string {
  if (!RETRIEVAL_CALL.test(source))
    throw new V2BuildError(
      'src/workflows/connection/connection.ts no longer calls retrieveProducts where deploy-check inserts its v2 step: update scripts/deploy-check/v2-build.ts',
    );
  const imports = /import \{([^}]*)\} from '@temporalio\/workflow';/.exec(source);
  if (!imports?.[1]) throw new V2BuildError("src/workflows/connection/connection.ts has no import from '@temporalio/workflow' to extend");
  const names = imports[1]
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const withProxy = source.replace(imports[0], `import { ${[...new Set([...names, 'proxyActivities'])].join(', ')} } from '@temporalio/workflow';`);
  return withProxy.replace(RETRIEVAL_CALL, (line: string) => EXTRA_ACTIVITY + line);
}

/** Copies src/ (with package.json, tsconfig.json and a link to node_modules) into `dir`, changes it, bundles it. */
export async function buildV2Bundle(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  await cp(join(PROJECT_ROOT, 'src'), join(dir, 'src'), { recursive: true });
  for (const file of ['package.json', 'tsconfig.json']) await cp(join(PROJECT_ROOT, file), join(dir, file));
  await symlink(join(PROJECT_ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const workflowPath = join(dir, 'src', 'workflows', 'connection', 'connection.ts');
  await writeFile(workflowPath, withExtraActivity(await readFile(workflowPath, 'utf8')));
  // The product's own bundle options, every path moved into the copy.
  const relocate = (path: string) => join(dir, relative(PROJECT_ROOT, path));
  const code = await bundleWorkflows({
    workflowsPath: relocate(WORKFLOW_CODE.workflowsPath),
    payloadConverterPath: relocate(WORKFLOW_CODE.payloadConverterPath),
    failureConverterPath: relocate(WORKFLOW_CODE.failureConverterPath),
    workflowInterceptorModules: WORKFLOW_CODE.workflowInterceptorModules.map(relocate),
    preloadModules: WORKFLOW_CODE.preloadModules.map(relocate),
  });
  const bundlePath = join(dir, 'workflow-bundle.js');
  await writeFile(bundlePath, code);
  return bundlePath;
}
