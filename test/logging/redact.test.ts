import assert from 'node:assert/strict';
import { it } from 'node:test';
import { redact } from '../../src/logging/redact.js';

it('redacts passwords, answers, tokens and holder identity at any depth, and keeps the rest', () => {
  const out = redact({
    workflowId: 'connection-1',
    input: { session: { username: 'alice', password: 'hunter2' }, responses: { 'City?': ['Paris'] } },
    headers: { Authorization: 'Bearer abc', 'x-api-key': 'k' },
    account: { Holder: { Name: 'Alice' }, Email: 'a@b.c' },
  });
  const text = JSON.stringify(out);
  for (const secret of ['hunter2', 'Paris', 'Bearer abc', '"k"', 'Alice', 'a@b.c']) assert.ok(!text.includes(secret), `${secret} leaked`);
  assert.ok(text.includes('connection-1'));
  assert.ok(text.includes('alice'));
});
