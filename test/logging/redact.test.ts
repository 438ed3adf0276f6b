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

it('redacts below any depth: a secret ten levels down, and a structure deeper than it reads is cut, never passed on', () => {
  let nested: Record<string, unknown> = { password: 'deep-secret' };
  for (let level = 0; level < 10; level += 1) nested = { level: nested };
  assert.ok(!JSON.stringify(redact(nested)).includes('deep-secret'), 'a password ten levels down leaked');
  let abyss: Record<string, unknown> = { note: 'deep-secret-too' };
  for (let level = 0; level < 200; level += 1) abyss = { level: abyss };
  const cut = JSON.stringify(redact(abyss));
  assert.ok(!cut.includes('deep-secret-too'), 'what lies below the depth limit is passed on');
  assert.match(cut, /nested too deep/);
});

it('names a cycle instead of following it, and redacts a value shared by two branches in both', () => {
  const shared = { token: 't0ken', id: 'kept' };
  const loop: Record<string, unknown> = { a: shared, b: shared };
  loop.self = loop;
  const text = JSON.stringify(redact(loop));
  assert.ok(!text.includes('t0ken'));
  assert.equal(text.match(/kept/g)?.length, 2);
  assert.match(text, /\[circular\]/);
});

it("redacts an unusable reply's excerpt (UnexpectedResponseError.replyExcerpt, the body the service sent) wherever an error carries it", () => {
  // As the SDK's "Activity failed" warning hands it over: the ApplicationFailure, the client's error as its cause.
  const body = JSON.stringify({ HttpStatusCode: 200, Accounts: [{ Holder: { Name: 'Alice Tremblay' } }] });
  const text = JSON.stringify(
    redact({
      error: {
        type: 'UnexpectedResponse',
        cause: { name: 'UnexpectedResponseError', operation: 'GetAccountsDetail', problem: 'RequestId: must be a UUID', replyExcerpt: body },
      },
    }),
  );
  assert.ok(!text.includes('Alice Tremblay'), 'the excerpt leaked');
  assert.ok(text.includes('RequestId: must be a UUID'), 'the problem (fields only) is kept');
  assert.ok(text.includes('GetAccountsDetail'));
});
