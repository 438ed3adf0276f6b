/**
 * docs/nexus.md's Python caller is the file the Nexus end-to-end test runs
 * (python/tests/e2e/nexus_caller_example.py, from its first import on): a reader copies what ran.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const root = new URL('../../', import.meta.url);

void describe("docs/nexus.md's Python caller", () => {
  void it('is python/tests/e2e/nexus_caller_example.py, from its first import on', () => {
    const page = readFileSync(new URL('docs/nexus.md', root), 'utf8');
    const block = /## A caller workflow \(Python\)[\s\S]*?```python\n([\s\S]*?)```/.exec(page)?.[1];
    assert.ok(block, 'docs/nexus.md has a ```python block under "## A caller workflow (Python)"');
    const file = readFileSync(new URL('python/tests/e2e/nexus_caller_example.py', root), 'utf8');
    assert.equal(block, file.slice(file.indexOf('from __future__')));
  });
});
