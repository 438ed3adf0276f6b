/**
 * docs/pipelines.md's Python receiver (docs/examples/receiver.py, the standard library only), run in the
 * project's venv (scripts/python-env.sh, as the tests of test/python/ do): its `verify` accepts and
 * refuses the messages the TypeScript receiver does (test/docs/pipelines-examples.test.ts), signed by
 * the product's own signer with a rotation's two secrets: either secret, headers in any case; not a
 * tampered body, another webhook-id or signature, a secret the product does not hold, a timestamp ten
 * minutes old, nor a message without its signature.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { receiverCases } from '../helpers/callback-messages.js';
import { REPO, runPython } from '../helpers/python-env.js';

/** Imports the page's receiver and prints each case's verdict as JSON: the event, or why it was refused. */
const DRIVER = [
  'import json, sys',
  'sys.path.insert(0, sys.argv[1])',
  'import receiver',
  'out = []',
  'for case in json.load(open(sys.argv[2], encoding="utf-8")):',
  '    try:',
  '        out.append({"event": receiver.verify(case["secret"], case["body"].encode("utf-8"), case["headers"])})',
  '    except receiver.WebhookVerificationError as error:',
  '        out.append({"refused": str(error)})',
  'print(json.dumps(out))',
].join('\n');

describe("docs/pipelines.md's Python receiver", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pipelines-receiver-'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('accepts and refuses the same messages as the TypeScript receiver', async () => {
    const cases = receiverCases();
    const input = join(dir, 'cases.json');
    await writeFile(input, JSON.stringify(cases));
    // -B: importing docs/examples/receiver.py writes no bytecode into the checkout.
    const run = await runPython(['-B', '-c', DRIVER, join(REPO, 'docs/examples'), input]);
    assert.equal(run.code, 0, `python failed: ${run.stderr}`);
    const verdicts = JSON.parse(run.stdout) as Array<{ event?: unknown; refused?: string }>;
    assert.equal(verdicts.length, cases.length);
    const said = cases.map(({ name }, index) => `${name}: ${verdicts[index]?.refused ?? 'accepted'}`);
    cases.forEach(({ name, body, accepted }, index) => {
      const verdict = verdicts[index] ?? assert.fail(name);
      if (accepted) assert.deepEqual(verdict, { event: JSON.parse(body) as unknown }, name);
      else assert.ok(verdict.refused !== undefined, `${name}: accepted\n${said.join('\n')}`);
    });
    assert.ok(said.includes('a timestamp ten minutes old: timestamp more than 5 minutes away: a replay, or a wrong clock'), said.join('\n'));
    assert.ok(said.includes('a secret the product does not hold: no signature matches the secret'), said.join('\n'));
    assert.ok(said.includes('no signature: missing webhook-id, webhook-timestamp or webhook-signature'), said.join('\n'));
  });
});
