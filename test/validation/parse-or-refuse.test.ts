import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { parseOrRefuse } from '../../src/validation/parse-or-refuse.js';

class RefusedError extends Error {
  constructor(
    readonly problem: string,
    options: ErrorOptions,
  ) {
    super(problem, options);
  }
}

const Login = z.object({ customerId: z.string().min(1), accounts: z.array(z.object({ balance: z.number() })) });

test('a value the schema holds comes back as the schema makes it', () => {
  const value = parseOrRefuse(Login.extend({ extra: z.string().default('x') }), { customerId: 'c', accounts: [] }, () => new Error('refused'));
  assert.deepEqual(value, { customerId: 'c', accounts: [], extra: 'x' });
});

test("a refusal is the caller's own error, naming every offending field by its path, with zod's error as its cause", () => {
  assert.throws(
    () => parseOrRefuse(Login, { customerId: '', accounts: [{ balance: 'ten' }] }, (problem, cause) => new RefusedError(problem, { cause })),
    (error: unknown) => {
      assert.ok(error instanceof RefusedError);
      assert.match(error.problem, /^customerId: .+; accounts\[0\]\.balance: .*number/);
      assert.ok(error.cause instanceof z.ZodError);
      return true;
    },
  );
});

test('a value that is not even an object is refused, not thrown past the caller', () => {
  assert.throws(
    () => parseOrRefuse(Login, 'not json', (problem) => new RefusedError(problem, {})),
    (error: unknown) => error instanceof RefusedError && error.problem.length > 0,
  );
});
