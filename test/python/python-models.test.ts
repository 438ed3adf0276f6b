/**
 * The Python contract models stay what the zod schemas say: the committed schema.json and models.py
 * are exactly what scripts/generate-python-models.ts makes from this checkout (run
 * `npm run python:models` after changing a schema), and the check notices a file that differs.
 */
import assert from 'node:assert/strict';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { driftedFiles, MODELS_PATH, SCHEMA_PATH } from '../../scripts/generate-python-models.js';
import { REPO } from '../helpers/python-env.js';

describe('the generated Python contract models', () => {
  it('match the zod schemas of this checkout', () => {
    assert.deepEqual(driftedFiles(), [], 'run `npm run python:models` and commit the result');
  });

  it('are reported when a committed file differs from what the schemas make', async () => {
    const copy = await mkdtemp(join(tmpdir(), 'python-models-'));
    try {
      await cp(join(REPO, 'python/src'), join(copy, 'python/src'), { recursive: true });
      await writeFile(join(copy, MODELS_PATH), '# edited by hand\n');
      assert.deepEqual(driftedFiles(copy), [MODELS_PATH]);
      await rm(join(copy, SCHEMA_PATH));
      assert.deepEqual(driftedFiles(copy), [SCHEMA_PATH, MODELS_PATH]);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });
});
