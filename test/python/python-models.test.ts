/**
 * The Python contract stays what the TypeScript sources say: the committed schema.json, models.py and
 * names.py are exactly what scripts/generate-python-models.ts makes from this checkout (run
 * `npm run python:models` after changing a schema, a workflow's name, a status, a failure type, a
 * search attribute or a client variable), and the check notices a file that differs.
 */
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { driftedFiles, generatedFiles, MODELS_PATH, NAMES_PATH, SCHEMA_PATH } from '../../scripts/generate-python-models.js';
import { CONNECTION_FAILURE_TYPES } from '../../src/aggregator/failure-table.js';
import { submitAnswerUpdate } from '../../src/contract/connection/connection-definitions.js';
import { FAIRNESS_WEIGHT_LIMITS } from '../../src/contract/priority.js';
import { LoginIdKey } from '../../src/contract/search-attributes.js';
import { TemporalVars } from '../../src/settings/temporal.js';
import { REPO } from '../helpers/python-env.js';

describe('the generated Python contract models and names', () => {
  it('match the TypeScript sources of this checkout', () => {
    assert.deepEqual(driftedFiles(), [], 'run `npm run python:models` and commit the result');
  });

  it('are reported when a committed file differs from what the sources make', async () => {
    const copy = await mkdtemp(join(tmpdir(), 'python-models-'));
    try {
      await cp(join(REPO, 'python/src'), join(copy, 'python/src'), { recursive: true });
      await writeFile(join(copy, MODELS_PATH), '# edited by hand\n');
      assert.deepEqual(driftedFiles(copy), [MODELS_PATH]);
      await rm(join(copy, SCHEMA_PATH));
      assert.deepEqual(driftedFiles(copy), [SCHEMA_PATH, MODELS_PATH]);
      // A name retyped by hand in the generated file (as the Python modules once kept their copies).
      const names = await readFile(join(copy, NAMES_PATH), 'utf8');
      assert.ok(names.includes('CONNECTION_WORKFLOW_TYPE: Final = "connectionWorkflow"\n'), 'names.py names the connection workflow');
      await writeFile(join(copy, NAMES_PATH), names.replace('"connectionWorkflow"', '"connectionWorkflowV2"'));
      assert.deepEqual(driftedFiles(copy), [SCHEMA_PATH, MODELS_PATH, NAMES_PATH]);
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });

  it('take the names and defaults from the TypeScript modules', () => {
    const lines = (generatedFiles()[NAMES_PATH] ?? '').split('\n');
    // One of each kind: a message name, a failure type, a search attribute, a priority bound, a variable, its default and choices.
    for (const line of [
      `SUBMIT_ANSWER_UPDATE: Final = ${JSON.stringify(submitAnswerUpdate.name)}`,
      `    ${JSON.stringify(CONNECTION_FAILURE_TYPES.at(-1))},`,
      `LOGIN_ID_KEY: Final = SearchAttributeKey.for_keyword(${JSON.stringify(LoginIdKey.name)})`,
      `FAIRNESS_WEIGHT_MAX: Final = ${FAIRNESS_WEIGHT_LIMITS.max}`,
      '        "PAYLOAD_STORE_THRESHOLD_BYTES",',
      `TEMPORAL_TASK_QUEUE_DEFAULT: Final = ${JSON.stringify(TemporalVars.shape.TEMPORAL_TASK_QUEUE.parse(undefined))}`,
      'PAYLOAD_KEY_PROVIDER_CHOICES: Final = ("static", "vault-transit", "aws-kms")',
    ]) {
      assert.ok(lines.includes(line), `names.py has ${JSON.stringify(line)}`);
    }
  });
});
