/**
 * Retry-After: parsed (seconds or HTTP-date, capped, garbage ignored), carried on the typed error as
 * `retryAfterMs` on refusals only, and passed on by the activities' failure conversion (details and
 * nextRetryDelay). No wall clock: dates are read against a fixed reference or the answer's Date header.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ApplicationFailure } from '@temporalio/common';
import { toActivityFailure } from '../../src/activities/failures.js';
import { createAggregatorClient } from '../../src/aggregator/client.js';
import { AggregatorServiceError } from '../../src/aggregator/errors.js';
import type { ServiceFailureDetails } from '../../src/aggregator/failure-table.js';
import { MAX_RETRY_AFTER_MS, parseHttpDate, parseRetryAfter } from '../../src/aggregator/retry-after.js';
import { createSandbox } from '../../sandbox/server.js';

const REFERENCE = Date.parse('2026-11-02T10:00:00Z');
const VALID_UUID = '00000000-0000-4000-8000-000000000000';

describe('parseRetryAfter', () => {
  it('reads delay-seconds', () => {
    assert.equal(parseRetryAfter('120', REFERENCE), 120_000);
    assert.equal(parseRetryAfter(' 1 ', REFERENCE), 1_000);
    assert.equal(parseRetryAfter('0', REFERENCE), 0);
  });

  it('reads the three HTTP-date forms against the reference', () => {
    assert.equal(parseRetryAfter('Mon, 02 Nov 2026 10:00:30 GMT', REFERENCE), 30_000);
    assert.equal(parseRetryAfter('mon, 02 nov 2026 10:01:00 gmt', REFERENCE), 60_000);
    assert.equal(parseRetryAfter('Monday, 02-Nov-26 10:00:05 GMT', REFERENCE), 5_000);
    assert.equal(parseRetryAfter('Mon Nov  2 10:00:07 2026', REFERENCE), 7_000);
    // A date already past: retry now.
    assert.equal(parseRetryAfter('Mon, 02 Nov 2026 09:59:00 GMT', REFERENCE), 0);
  });

  it('caps long waits at an hour', () => {
    assert.equal(MAX_RETRY_AFTER_MS, 3_600_000);
    assert.equal(parseRetryAfter('3601', REFERENCE), MAX_RETRY_AFTER_MS);
    assert.equal(parseRetryAfter('99999999999999999999999', REFERENCE), MAX_RETRY_AFTER_MS);
    assert.equal(parseRetryAfter('Tue, 03 Nov 2026 10:00:00 GMT', REFERENCE), MAX_RETRY_AFTER_MS);
  });

  it('ignores garbage and a missing header', () => {
    for (const garbage of [
      '',
      'soon',
      '1.5',
      '-1',
      '+5',
      '5s',
      '1e3',
      '0x10',
      '1, 2',
      'Mon, 02 Nov 2026 10:00:30 UTC',
      'Mon, 31 Feb 2026 10:00:30 GMT',
      'Mon, 02 Nov 2026 24:00:00 GMT',
      '2026-11-02T10:00:30Z',
    ]) {
      assert.equal(parseRetryAfter(garbage, REFERENCE), undefined, JSON.stringify(garbage));
    }
    assert.equal(parseRetryAfter(null, REFERENCE), undefined);
    assert.equal(parseRetryAfter(undefined, REFERENCE), undefined);
  });

  it('reads a two-digit year as at most 50 years ahead', () => {
    assert.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', REFERENCE), Date.UTC(1994, 10, 6, 8, 49, 37));
    assert.equal(parseHttpDate('Friday, 06-Nov-65 08:49:37 GMT', REFERENCE), Date.UTC(2065, 10, 6, 8, 49, 37));
    assert.equal(parseHttpDate('Friday, 06-Nov-76 08:49:37 GMT', REFERENCE), Date.UTC(2076, 10, 6, 8, 49, 37));
    assert.equal(parseHttpDate('Sunday, 06-Nov-77 08:49:37 GMT', REFERENCE), Date.UTC(1977, 10, 6, 8, 49, 37));
    assert.equal(parseHttpDate('Saturday, 06-Nov-80 08:49:37 GMT', REFERENCE), Date.UTC(1980, 10, 6, 8, 49, 37));
  });
});

// --- the client over a tiny server that answers what each test sets --------------------------

interface Canned {
  status: number;
  headers: OutgoingHttpHeaders;
  body: string;
}
let canned: Canned = { status: 500, headers: {}, body: '' };
let server: Server;
let baseUrl: string;
before(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(canned.status, { 'content-type': 'application/json', ...canned.headers });
      response.end(canned.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const errorBody = (status: number, code?: string) => JSON.stringify({ HttpStatusCode: status, Message: 'refused', ...(code ? { FlinksCode: code } : {}) });

async function serviceErrorFor(answer: Canned): Promise<AggregatorServiceError> {
  canned = answer;
  const client = createAggregatorClient({ baseUrl, customerId: 'retry-after', timeoutMs: 5_000 });
  try {
    await client.getAccountsDetail(VALID_UUID);
  } catch (error) {
    assert.ok(error instanceof AggregatorServiceError, String(error));
    return error;
  }
  assert.fail('expected an AggregatorServiceError');
}

describe('the client carries Retry-After on its typed error', () => {
  it('as retryAfterMs on a 429 in seconds', async () => {
    const error = await serviceErrorFor({ status: 429, headers: { 'retry-after': '7' }, body: errorBody(429, 'TOO_MANY_REQUESTS') });
    assert.equal(error.serviceCode, 'TOO_MANY_REQUESTS');
    assert.equal(error.retryable, true);
    assert.equal(error.delivery, 'refused');
    assert.equal(error.retryAfterMs, 7_000);
  });

  it("on a 503 as an HTTP-date, measured from the answer's Date header", async () => {
    const headers = { date: 'Mon, 02 Nov 2026 10:00:00 GMT', 'retry-after': 'Mon, 02 Nov 2026 10:02:00 GMT' };
    assert.equal((await serviceErrorFor({ status: 503, headers, body: errorBody(503) })).retryAfterMs, 120_000);
    // A proxy's 503 with a body that is not JSON still carries it.
    assert.equal((await serviceErrorFor({ status: 503, headers, body: 'Service Unavailable' })).retryAfterMs, 120_000);
  });

  it('on TOO_MANY_REQUESTS under 401 and 403, and on RETRY_LATER', async () => {
    for (const [status, code] of [
      [401, 'TOO_MANY_REQUESTS'],
      [403, 'TOO_MANY_REQUESTS'],
      [401, 'RETRY_LATER'],
    ] as const) {
      assert.equal(
        (await serviceErrorFor({ status, headers: { 'retry-after': '3' }, body: errorBody(status, code) })).retryAfterMs,
        3_000,
        `${status} ${code}`,
      );
    }
  });

  it('not when missing, garbage, or on an answer that is not a refusal', async () => {
    assert.equal((await serviceErrorFor({ status: 429, headers: {}, body: errorBody(429, 'TOO_MANY_REQUESTS') })).retryAfterMs, undefined);
    assert.equal(
      (await serviceErrorFor({ status: 429, headers: { 'retry-after': 'later' }, body: errorBody(429, 'TOO_MANY_REQUESTS') })).retryAfterMs,
      undefined,
    );
    assert.equal((await serviceErrorFor({ status: 400, headers: { 'retry-after': '5' }, body: errorBody(400, 'INVALID_REQUEST') })).retryAfterMs, undefined);
    assert.equal((await serviceErrorFor({ status: 500, headers: { 'retry-after': '5' }, body: errorBody(500, 'AGGREGATION_ERROR') })).retryAfterMs, undefined);
  });

  it("from the sandbox's own per-tenant limit", async () => {
    const sandbox = await createSandbox({ now: () => Date.parse('2026-11-02T10:00:00.500Z') });
    try {
      sandbox.updateRateLimits({ tenants: { limited: 1 } });
      const client = createAggregatorClient({ baseUrl: sandbox.url, customerId: 'limited', timeoutMs: 5_000 });
      await assert.rejects(
        client.getAccountsDetail(VALID_UUID),
        (error) => error instanceof AggregatorServiceError && error.serviceCode === 'SESSION_NONEXISTENT',
      );
      await assert.rejects(client.getAccountsDetail(VALID_UUID), (error: unknown) => {
        assert.ok(error instanceof AggregatorServiceError);
        assert.equal(error.httpStatus, 429);
        assert.equal(error.serviceCode, 'TOO_MANY_REQUESTS');
        assert.equal(error.delivery, 'refused');
        assert.equal(error.retryAfterMs, 1_000);
        return true;
      });
    } finally {
      await sandbox.close();
    }
  });
});

describe('activity failures', () => {
  it('carry retryAfterMs in the details and set nextRetryDelay from it when retryable', () => {
    const failure = toActivityFailure(new AggregatorServiceError('Authorize', 429, 'TOO_MANY_REQUESTS', 'slow down', undefined, 2_000));
    assert.ok(failure instanceof ApplicationFailure);
    assert.equal(failure.type, 'ServiceUnavailable');
    assert.equal(failure.nonRetryable, false);
    assert.equal(failure.nextRetryDelay, 2_000);
    const details = failure.details?.[0] as ServiceFailureDetails;
    assert.equal(details.retryAfterMs, 2_000);
    assert.equal(details.delivery, 'refused');
  });

  it('leave both out without a wait, with a zero wait, or when not retryable', () => {
    const none = toActivityFailure(new AggregatorServiceError('Authorize', 429, 'TOO_MANY_REQUESTS', 'slow down', undefined));
    assert.ok(none instanceof ApplicationFailure);
    assert.equal(none.nextRetryDelay, undefined);
    assert.equal(Object.hasOwn(none.details?.[0] as object, 'retryAfterMs'), false);

    const zero = toActivityFailure(new AggregatorServiceError('Authorize', 429, 'TOO_MANY_REQUESTS', 'slow down', undefined, 0));
    assert.ok(zero instanceof ApplicationFailure);
    assert.equal(zero.nextRetryDelay, undefined);
    assert.equal((zero.details?.[0] as ServiceFailureDetails).retryAfterMs, 0);

    const rejected = toActivityFailure(new AggregatorServiceError('Authorize', 401, 'INVALID_PASSWORD', 'no', undefined, 5_000));
    assert.ok(rejected instanceof ApplicationFailure);
    assert.equal(rejected.nonRetryable, true);
    assert.equal(rejected.nextRetryDelay, undefined);
  });
});
