/**
 * Properties of the aggregation client over generated answers, the variation a real service sends
 * and more: every field the spec lets vary (nulls, other types, absent), members the spec does not
 * name at every level, any JSON at all, and bytes that are not JSON. Served by a fake fetch that
 * counts the requests, so each property also says how often the client asked.
 * - Passed-through data is preserved: the records come back as sent, unknown members included.
 * - Acted-on fields are validated: a broken RequestId, LoginId, record list or status is refused
 *   by name as UnexpectedResponse, never retryable.
 * - Nothing answered is retried: any JSON 2xx either reads or fails for good.
 * - No credentials are resent: whatever a live Authorize is answered, the workflow's decision is
 *   never "send again" nor "open a new session" (which would send the credentials again).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ApplicationFailure } from '@temporalio/common';
import { createAggregatorClient } from '../../src/aggregator/client.js';
import { AggregatorError, UnexpectedResponseError } from '../../src/aggregator/errors.js';
import { MAX_GARBLED_READS, toActivityFailure } from '../../src/activities/failures.js';
import { afterFailedAuthorize } from '../../src/workflows/connection/authorize.js';

const RUNS = 200;
const BASE = 'http://aggregator.test';

/** A client whose every request is answered `status` + `text`; `requests` counts them. */
function clientAnswering(status: number, text: string) {
  const counter = { requests: 0 };
  const fakeFetch = (() => {
    counter.requests += 1;
    return Promise.resolve(new Response(text, { status, headers: { 'content-type': 'application/json' } }));
  }) as typeof fetch;
  return { client: createAggregatorClient({ baseUrl: BASE, customerId: 'lender', fetch: fakeFetch, timeoutMs: 5_000 }), counter };
}

const NAMED = new Set([
  'Id',
  'Date',
  'Code',
  'Description',
  'Debit',
  'Credit',
  'Balance',
  'Transactions',
  'TransitNumber',
  'InstitutionNumber',
  'OverdraftLimit',
  'Title',
  'AccountNumber',
  'Category',
  'Type',
  'Currency',
  'Holder',
  'HttpStatusCode',
  'RequestId',
  'Login',
  'Accounts',
  'Institution',
  'Links',
  'Username',
  'IsScheduledRefresh',
  'LastRefresh',
  '__proto__',
  'constructor',
]);
/** Members the spec does not name, with any JSON value. */
const extras = fc.dictionary(
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,11}$/).filter((key) => !NAMED.has(key)),
  fc.jsonValue({ maxDepth: 2 }),
  { maxKeys: 3 },
);
/** A passed-through field: as the spec shows it, null, another JSON value, or absent (undefined: left out). */
function varied<T>(usual: fc.Arbitrary<T>) {
  return fc.oneof({ weight: 3, arbitrary: usual }, fc.constant(null), fc.constant(undefined), fc.jsonValue({ maxDepth: 1 }));
}
const date = fc.oneof(
  fc.date({ min: new Date('2000-01-01'), max: new Date('2030-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
  fc.date({ min: new Date('2000-01-01'), max: new Date('2030-12-31'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10).replaceAll('-', '/')),
  fc.date({ min: new Date('2000-01-01'), max: new Date('2030-12-31'), noInvalidDate: true }).map((d) => d.toISOString()),
);
const amount = fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 });

/** Drops the members generated as undefined, as a service leaves a field out. */
function record(fields: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries({ ...fields, ...extra }).filter(([, value]) => value !== undefined));
}

const transaction = fc
  .record({
    Id: fc.uuid(),
    Date: varied(date),
    Code: varied(fc.string({ maxLength: 6 })),
    Description: varied(fc.string({ maxLength: 30 })),
    Debit: varied(amount),
    Credit: varied(amount),
    Balance: varied(amount),
    extra: extras,
  })
  .map(({ extra, ...fields }) => record(fields, extra));
const account = fc
  .record({
    Id: fc.uuid(),
    Title: varied(fc.string({ maxLength: 20 })),
    AccountNumber: varied(fc.string({ maxLength: 12 })),
    Category: varied(fc.constantFrom('Operations', 'Credits', 'Savings')),
    Type: varied(fc.string({ maxLength: 10 })),
    Currency: varied(fc.constantFrom('CAD', 'USD')),
    Balance: varied(fc.record({ Available: varied(amount), Current: varied(amount), Limit: varied(amount) }).map((balance) => record(balance, {}))),
    Transactions: varied(fc.array(transaction, { maxLength: 4 })),
    extra: extras,
  })
  .map(({ extra, ...fields }) => record(fields, extra));
const login = fc
  .record({
    Id: fc.uuid(),
    Username: varied(fc.string({ maxLength: 10 })),
    IsScheduledRefresh: varied(fc.boolean()),
    LastRefresh: varied(fc.string({ maxLength: 24 })),
    Type: varied(fc.constantFrom('Personal', 'Business')),
    extra: extras,
  })
  .map(({ extra, ...fields }) => record(fields, extra));
/** An accounts-detail answer whose envelope holds, everything else varied. */
const accountsDetail = fc
  .record({
    HttpStatusCode: fc.constantFrom(200, undefined),
    RequestId: fc.uuid(),
    Login: login,
    Accounts: fc.array(account, { maxLength: 4 }),
    Institution: varied(fc.string({ maxLength: 12 })),
    extra: extras,
  })
  .map(({ extra, ...fields }) => record(fields, extra));

/** Something is at `path` (as a DataWarning writes it: `Accounts[0].Balance`) in `body`. */
function pathExists(body: unknown, path: string): boolean {
  if (path === '') return true;
  let at: unknown = body;
  for (const part of path.match(/[^.[\]]+/g) ?? []) {
    if (typeof at !== 'object' || at === null) return false;
    const key = Array.isArray(at) ? Number(part) : part;
    if (!(key in at)) return false;
    at = (at as Record<string | number, unknown>)[key];
  }
  return true;
}

/** Every string in a JSON value (the applicant's data a warning must never quote). */
function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(stringsOf);
  return [];
}

describe('the aggregation client over generated answers', () => {
  it('keeps passed-through records as the service sent them, unknown members and nulls included, and names only fields that exist', async () => {
    await fc.assert(
      fc.asyncProperty(accountsDetail, async (body) => {
        const text = JSON.stringify(body);
        // What went over the wire (JSON has no -0: a generated -0 arrives as 0).
        const sent = JSON.parse(text) as typeof body;
        const { client, counter } = clientAnswering(200, text);
        const result = await client.getAccountsDetail('6f1b1c1e-0000-4000-8000-000000000001');
        assert.equal(counter.requests, 1);
        assert.equal(result.kind, 'ready');
        if (result.kind !== 'ready') return;
        assert.deepEqual(result.data.Accounts, sent.Accounts, 'the records as sent');
        assert.equal(result.requestId, body.RequestId);
        for (const warning of result.warnings) {
          assert.equal(warning.operation, 'GetAccountsDetail');
          // The field itself may be missing (a required one left out); the record it belongs to is there.
          const record = warning.path.replace(/(\.[^.[\]]+|\[\d+\])$/, '');
          assert.ok(pathExists(body, record) || warning.problem.includes('more fields'), `a warning names a field of a record of the answer: ${warning.path}`);
          for (const text of stringsOf(body).filter((text) => text.length >= 8)) assert.ok(!warning.problem.includes(text), 'a warning never quotes a value');
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('refuses an answer whose RequestId, LoginId, record list or status is broken, by name, once and for good', async () => {
    const breaking = fc.oneof(
      fc.record({ field: fc.constant('RequestId'), value: fc.oneof(fc.string({ maxLength: 20 }), fc.constant(null), fc.integer(), fc.constant(undefined)) }),
      fc.record({
        field: fc.constant('Login'),
        value: fc.oneof(fc.constant(null), fc.string(), fc.record({ Id: fc.oneof(fc.string({ maxLength: 20 }), fc.constant(null)) }), fc.constant(undefined)),
      }),
      fc.record({
        field: fc.constant('Accounts'),
        value: fc.oneof(
          fc.constant(null),
          fc.string(),
          fc.dictionary(fc.string(), fc.integer()),
          fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { minLength: 1 }),
          fc.constant(undefined),
        ),
      }),
      fc.record({
        field: fc.constant('HttpStatusCode'),
        value: fc.oneof(
          fc.integer({ min: 100, max: 599 }).filter((code) => code !== 200),
          fc.string(),
        ),
      }),
    );
    await fc.assert(
      fc.asyncProperty(accountsDetail, breaking, async (valid, { field, value }) => {
        const body = record({ ...valid, [field]: value }, {});
        const { client, counter } = clientAnswering(200, JSON.stringify(body));
        const error = await client.getAccountsDetail('6f1b1c1e-0000-4000-8000-000000000001').then(
          () => assert.fail(`accepted an answer with ${field} = ${JSON.stringify(value)}`),
          (caught: unknown) => caught,
        );
        assert.ok(error instanceof UnexpectedResponseError, `UnexpectedResponseError, not ${String(error)}`);
        assert.equal(error.retryable, false);
        assert.equal(error.delivery, 'answered');
        assert.match(error.message, new RegExp(field));
        assert.equal(counter.requests, 1);
        const failure = toActivityFailure(error, { attempt: 1 });
        assert.ok(failure instanceof ApplicationFailure && failure.nonRetryable && failure.type === 'UnexpectedResponse');
      }),
      { numRuns: RUNS },
    );
  });

  it('never retries a JSON answer the service gave, whatever it is', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(200, 202, 203), fc.jsonValue({ maxDepth: 3 }), async (status, body) => {
        const { client, counter } = clientAnswering(status, JSON.stringify(body));
        const error = await client.getAccountsDetailAsync('6f1b1c1e-0000-4000-8000-000000000001').then(
          () => undefined,
          (caught: unknown) => caught,
        );
        assert.equal(counter.requests, 1);
        if (error === undefined) return;
        assert.ok(error instanceof AggregatorError, `not an AggregatorError: ${error instanceof Error ? error.message : JSON.stringify(error)}`);
        const failure = toActivityFailure(error, { attempt: 1 });
        assert.ok(failure instanceof ApplicationFailure && failure.nonRetryable, `${error.message} must not be retried`);
      }),
      { numRuns: RUNS },
    );
  });

  it('never sends a live Authorize again, nor opens a new session, over any reply it got', async () => {
    const reply = fc.oneof(
      fc.record({ status: fc.constantFrom(200, 202, 203), text: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) }),
      fc.record({ status: fc.constantFrom(200, 203), text: fc.string({ maxLength: 40 }).filter((text) => !isJson(text)) }),
    );
    await fc.assert(
      fc.asyncProperty(reply, async ({ status, text }) => {
        const { client, counter } = clientAnswering(status, text);
        const error = await client.authorizeLive({ institution: 'SandboxBank', username: 'applicant', password: 'secret' }).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        assert.equal(counter.requests, 1, 'the client itself never sends twice');
        if (error === undefined) return;
        const next = afterFailedAuthorize(toActivityFailure(error, { attempt: 1 }), false);
        assert.ok(
          next === 'fail' || next === 'fail-unsent',
          `a live Authorize answered HTTP ${status} ${JSON.stringify(text.slice(0, 60))} must not be sent again (decided: ${next})`,
        );
      }),
      { numRuns: RUNS },
    );
  });

  it('reads a garbled data answer again a few times at most, then fails it by name', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 40 }).filter((text) => text !== '' && !isJson(text)),
        fc.integer({ min: 1, max: 10 }),
        async (text, attempt) => {
          const { client } = clientAnswering(200, text);
          const error = await client.getAccountsDetailAsync('6f1b1c1e-0000-4000-8000-000000000001').then(
            () => assert.fail('a body that is not JSON was read'),
            (caught: unknown) => caught,
          );
          const failure = toActivityFailure(error, { attempt });
          assert.ok(failure instanceof ApplicationFailure && failure.type === 'UnexpectedResponse');
          assert.equal(failure.nonRetryable, attempt >= MAX_GARBLED_READS, `attempt ${attempt}`);
        },
      ),
      { numRuns: RUNS },
    );
  });
});

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
