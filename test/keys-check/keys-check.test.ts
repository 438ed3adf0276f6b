/**
 * `npm run keys:check` at a small size, as a subprocess: a real OpenBao on its own storage, the dev
 * server, the sandbox and a worker process with the vault-transit key provider; connections held
 * awaiting an answer, polling and in retention timers while the transit key is rotated, the worker
 * SIGKILLed and OpenBao restarted. Nothing may be lost or undecodable, every connection must end as
 * its flow expects, both key versions must be in the histories, and the KMS calls must be counted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countKmsCalls } from '../../scripts/keys-check/kms-calls.js';
import { failureReport, runHarness } from '../helpers/harness-run.js';

const ENTRY = 'scripts/keys-check/keys-check.ts';
/** The small run takes about a minute and a half on 2 quiet cores; the runner's per-test limit is 5. */
const RUN_TIMEOUT_MS = 240_000;
const SUMMARY = /^keys-check: (\d+) connections, (\d+) completed as expected, (\d+) lost, (\d+) undecodable, (\d+) KMS calls, key versions ([\d,]+|none)$/;

void describe('npm run keys:check', () => {
  void it("counts the KMS calls on the product's key and its tenants' keys from the audit log, and the refused ones", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kms-calls-'));
    try {
      const entry = (type: string, path: string, error?: string) => JSON.stringify({ type, request: { path }, ...(error ? { error } : {}) });
      const log = [
        entry('request', 'transit/datakey/plaintext/aggregation-payloads'),
        entry('request', 'transit/datakey/plaintext/aggregation-payloads-tenant-a'),
        entry('request', 'transit/decrypt/aggregation-payloads-tenant-a'),
        entry('response', 'transit/decrypt/aggregation-payloads-tenant-a', 'permission denied'),
        entry('request', 'transit/decrypt/other-key'),
        entry('request', 'transit/keys/aggregation-payloads-tenant-a'),
      ].join('\n');
      await writeFile(join(dir, 'audit.log'), `${log}\n`);
      assert.deepEqual(await countKmsCalls(join(dir, 'audit.log'), 'transit', 'aggregation-payloads'), { datakey: 2, decrypt: 1, refused: 1 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  void it('refuses a bad argument with exit code 2, naming it', async () => {
    const { code, output } = await runHarness(ENTRY, ['--connections', 'many'], 60_000);
    assert.equal(code, 2, failureReport(output));
    assert.match(output, /--connections must be an integer from 6 to 2000, got "many"/);
    const unknown = await runHarness(ENTRY, ['--rotate-twice'], 60_000);
    assert.equal(unknown.code, 2, failureReport(unknown.output));
    assert.match(unknown.output, /unknown argument "--rotate-twice"/);
  });

  void it('loses and garbles nothing through a key rotation, a worker SIGKILL and an OpenBao restart', { timeout: RUN_TIMEOUT_MS + 20_000 }, async () => {
    const { code, signal, stdout, output } = await runHarness(
      ENTRY,
      ['--connections', '6', '--workers', '1', '--kms-down-ms', '4000', '--deadline-ms', '150000'],
      RUN_TIMEOUT_MS,
    );
    const report = `\n${failureReport(output)}`;
    const last = stdout.trimEnd().split('\n').at(-1) ?? '';
    const match = SUMMARY.exec(last);
    assert.ok(match, `the last line is not the summary (exit ${code ?? signal})${report}`);
    const [connections, completed, lost, undecodable, kmsCalls] = match.slice(1, 6).map(Number) as [number, number, number, number, number];
    assert.equal(connections, 6, report);
    assert.equal(lost, 0, `lost connections${report}`);
    assert.equal(undecodable, 0, `undecodable payloads${report}`);
    assert.equal(completed, connections, `every connection completed as expected${report}`);
    assert.ok(kmsCalls > 0, `KMS calls counted from the audit log${report}`);
    assert.equal(match[6], '1,2', `payloads of the key version before and after the rotation${report}`);
    // Every kind was in flight when the key was rotated.
    assert.match(stdout, /in flight: .*awaiting an answer/, report);
    assert.match(stdout, /in flight: .*polling/, report);
    assert.match(stdout, /in flight: .*retention timer waiting/, report);
    assert.match(stdout, /transit key aggregation-payloads rotated: v1 -> v2, and its [1-9]\d* tenant key\(s\) with it/, report);
    assert.match(stdout, /SIGKILL worker w1/, report);
    assert.match(stdout, /openbao started again on its storage .* and unsealed/, report);
    // The KMS outage stopped no worker (only the rehearsal's own SIGKILL).
    assert.match(stdout, /Workers: 1 SIGKILLed by the rehearsal; 0 exited on their own after polling/, report);
    assert.doesNotMatch(stdout, /"Worker failed" in their logs/, report);
    assert.equal(code, 0, `exit code${report}`);
  });
});
