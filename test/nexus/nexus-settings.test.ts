/** NEXUS_ENDPOINT_TENANTS and NEXUS_ENDPOINT_KEY_FILES as the worker reads them, and a boundary key file. */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadWorkerConfig } from '../../src/settings/worker.js';
import { nexusTaskQueueOf } from '../../src/settings/nexus.js';
import { NexusKeyFileError, readBoundaryKey } from '../../src/nexus/configured-workers.js';

const BASE = { PAYLOAD_ENCRYPTION: 'off' } as const;

describe('the connections Nexus service settings', () => {
  it("reads the endpoints' tenants and key files, off by default", () => {
    assert.equal(loadWorkerConfig({ ...BASE }).nexus.endpointTenants.size, 0);
    const config = loadWorkerConfig({
      ...BASE,
      NEXUS_ENDPOINT_TENANTS: 'lender-a-connections=lender-a, lender-b-connections=lender-b',
      NEXUS_ENDPOINT_KEY_FILES: 'lender-a-connections=/run/a.key',
    });
    assert.deepEqual(
      [...config.nexus.endpointTenants],
      [
        ['lender-a-connections', 'lender-a'],
        ['lender-b-connections', 'lender-b'],
      ],
    );
    assert.deepEqual([...config.nexus.keyFiles], [['lender-a-connections', '/run/a.key']]);
    assert.equal(nexusTaskQueueOf(config.temporal.taskQueue, 'lender-a-connections'), `${config.temporal.taskQueue}-nexus-lender-a-connections`);
  });

  it('refuses an entry that is not <endpoint>=<customerId>, an endpoint named twice and a key file of an unmapped endpoint', () => {
    assert.throws(
      () => loadWorkerConfig({ ...BASE, NEXUS_ENDPOINT_TENANTS: 'lender-a' }),
      /NEXUS_ENDPOINT_TENANTS.*"lender-a": must be a comma-separated list of <endpoint>=<customerId>/s,
    );
    assert.throws(() => loadWorkerConfig({ ...BASE, NEXUS_ENDPOINT_TENANTS: 'e1=a,e1=b' }), /endpoint e1 appears twice/);
    assert.throws(
      () => loadWorkerConfig({ ...BASE, NEXUS_ENDPOINT_TENANTS: 'e1=a', NEXUS_ENDPOINT_KEY_FILES: 'e2=/k' }),
      /endpoint e2 is not in NEXUS_ENDPOINT_TENANTS/,
    );
  });

  it('reads a boundary key file as <keyId>:<base64 of 32 bytes> and refuses anything else', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nexus-key-'));
    const good = join(dir, 'good.key');
    writeFileSync(good, `lender-a:${Buffer.alloc(32, 7).toString('base64')}\n`);
    const key = readBoundaryKey('e1', good);
    assert.equal(key.keyId, 'lender-a');
    assert.equal(Buffer.from(key.key).length, 32);
    const bad = join(dir, 'bad.key');
    writeFileSync(bad, Buffer.alloc(16).toString('base64'));
    assert.throws(() => readBoundaryKey('e1', bad), NexusKeyFileError);
    assert.throws(() => readBoundaryKey('e1', join(dir, 'missing.key')), /cannot read the key file of endpoint e1/);
  });
});
