// The house's import rules (.dependency-cruiser.cjs, run by `npm run lint`) hold on src/ and refuse
// each kind of break by its rule's name: an app importing another, a room importing one above it, a
// circle, and a room the rules do not list.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../scripts/lib/temporal-binaries.js';

const run = promisify(execFile);
const DEPCRUISE = join(PROJECT_ROOT, 'node_modules', '.bin', 'depcruise');

async function cruise(cwd: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(DEPCRUISE, ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], { cwd });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

describe('the import rules', () => {
  let tree: string;
  before(() => {
    tree = mkdtempSync(join(tmpdir(), 'import-rules-'));
    copyFileSync(join(PROJECT_ROOT, '.dependency-cruiser.cjs'), join(tree, '.dependency-cruiser.cjs'));
    writeFileSync(join(tree, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', allowJs: false } }));
    const files: Record<string, string> = {
      'src/cli/main.ts': 'export const cli = 1;\n',
      'src/console/app.ts': "import { cli } from '../cli/main.js';\nexport const app = cli;\n",
      'src/client/connections.ts': 'export const client = 1;\n',
      'src/contract/ids.ts': "import { client } from '../client/connections.js';\nexport const ids = client;\n",
      'src/codec/a.ts': "import { b } from './b.js';\nexport const a = () => b();\n",
      'src/codec/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
      'src/gadgets/thing.ts': "import { ids } from '../contract/ids.js';\nexport const thing = ids;\n",
    };
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(tree, path)), { recursive: true });
      writeFileSync(join(tree, path), text);
    }
  });
  after(() => rmSync(tree, { recursive: true, force: true }));

  it('hold on the project', async () => {
    const result = await cruise(PROJECT_ROOT);
    assert.equal(result.code, 0, result.output);
    assert.match(result.output, /no dependency violations found/);
  });

  it('refuse an app importing another, an import upwards, a circle and an unlisted room, each by name', async () => {
    const result = await cruise(tree);
    assert.notEqual(result.code, 0, result.output);
    assert.match(result.output, /no-app-imports-another-cli: src\/console\/app\.ts → src\/cli\/main\.ts/);
    assert.match(result.output, /floor-1-looks-up: src\/contract\/ids\.ts → src\/client\/connections\.ts/);
    assert.match(result.output, /no-circular: src\/codec\/a\.ts → \s+src\/codec\/b\.ts →\s+src\/codec\/a\.ts/);
    assert.match(result.output, /rooms-are-listed: src\/gadgets\/thing\.ts/);
  });
});
