/** The key layout shared by the drivers: safe segments, deterministic shortening, strict parsing. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkClaim, encodeKeySegment, parsePayloadKey, payloadKey, workflowKeyPrefix } from '../../src/payload-store/object-keys.js';

const HASH = 'c'.repeat(64);

/** The refusal's reason (checkClaim returns a string when it refuses). */
function reason(result: ReturnType<typeof checkClaim>): string {
  return typeof result === 'string' ? result : assert.fail(`accepted ${result.key}`);
}

void describe('payload keys', () => {
  void it('encodes an id to letters, digits, ".", "_", "-" and %XX, never ".", ".." or a leading dot', () => {
    assert.equal(encodeKeySegment('connection-demo-lender:app-1'), 'connection-demo-lender%3Aapp-1');
    assert.equal(encodeKeySegment('..'), '%2E.');
    assert.equal(encodeKeySegment('.'), '%2E');
    assert.equal(encodeKeySegment('a/b\\c'), 'a%2Fb%5Cc');
    assert.equal(encodeKeySegment('~'), '%7E');
    assert.equal(encodeKeySegment('é'), '%C3%A9');
    assert.equal(encodeKeySegment('v1.2'), 'v1.2');
  });

  void it('shortens a long id deterministically with a hash of the whole id, distinct for ids sharing a beginning', () => {
    const long = 'x'.repeat(300);
    const a = encodeKeySegment(`${long}-a`);
    const b = encodeKeySegment(`${long}-b`);
    assert.equal(a, encodeKeySegment(`${long}-a`));
    assert.notEqual(a, b);
    assert.ok(a.length <= 120, `${a.length} characters`);
    assert.match(encodeKeySegment('%'.repeat(100)), /^(%25)+~[0-9a-f]{32}$/, 'never cut inside an escape');
  });

  void it('lays keys out by namespace, owner and hash, and parses back only keys of that layout', () => {
    const key = payloadKey({ kind: 'workflow', namespace: 'default', id: 'connection-x:1' }, HASH);
    assert.equal(key, `default/workflows/connection-x%3A1/${HASH}`);
    assert.ok(key.startsWith(workflowKeyPrefix('default', 'connection-x:1')));
    assert.deepEqual(parsePayloadKey(key), { namespaceSegment: 'default', kind: 'workflows', idSegment: 'connection-x%3A1', sha256: HASH });
    for (const bad of [
      `default/workflows/../${HASH}`,
      `default/workflows/.hidden/${HASH}`,
      `default/other/x/${HASH}`,
      `default/workflows/x/${HASH}/more`,
      `/default/workflows/x/${HASH}`,
      `default/workflows/x/${HASH.toUpperCase()}`,
      `default/workflows/a%2/${HASH}`,
    ]) {
      assert.equal(parsePayloadKey(bad), undefined, bad);
    }
  });

  void it('checks a claim against the root, the layout and the hash the key is named after', () => {
    const key = `root/default/workflows/w/${HASH}`;
    assert.deepEqual(checkClaim({ key, hashAlgorithm: 'sha256', hashValue: HASH }, 'root/'), { key, relativeKey: `default/workflows/w/${HASH}`, sha256: HASH });
    assert.match(reason(checkClaim({ key, hashAlgorithm: 'sha256', hashValue: HASH }, 'other/')), /outside this store's prefix/);
    assert.match(reason(checkClaim({ key, hashAlgorithm: 'sha256', hashValue: 'd'.repeat(64) }, 'root/')), /not named after the claimed hash/);
    assert.match(reason(checkClaim({ key: 42, hashAlgorithm: 'sha256', hashValue: HASH }, '')), /no key/);
    // The stock drivers' spelling, written since; both spellings disagreeing is refused.
    assert.deepEqual(checkClaim({ key, hash_algorithm: 'sha256', hash_value: HASH }, 'root/'), {
      key,
      relativeKey: `default/workflows/w/${HASH}`,
      sha256: HASH,
    });
    assert.match(
      reason(checkClaim({ key, hash_algorithm: 'sha256', hash_value: HASH, hashValue: 'd'.repeat(64) }, 'root/')),
      /hash_value and hashValue differ/,
    );
  });
});
