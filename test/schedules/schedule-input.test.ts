/**
 * What the pipeline may ask when it schedules a refresh: each bad field is refused before anything
 * reaches Temporal, by a message naming the field and the rule.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeIssues } from '../../src/validation/parse-or-refuse.js';
import { cadenceArgsOf, formatCadenceDuration, LoginRef, RefreshScheduleInput, type RefreshScheduleArgs } from '../../src/client/refresh-schedule-input.js';

const LOGIN_ID = 'd2fb8533-57d8-5ac8-b8ba-00e2a5a46ca4';
const VALID: RefreshScheduleArgs = {
  customerId: 'demo-lender',
  loginId: LOGIN_ID,
  products: { accountsDetail: { WithTransactions: true } },
  cadence: { kind: 'daily', at: '02:30', timeZone: 'America/Toronto' },
};

function problemsOf(args: unknown): string {
  const parsed = RefreshScheduleInput.safeParse(args);
  assert.equal(parsed.success, false, `expected ${JSON.stringify(args)} to be refused`);
  return parsed.success ? '' : describeIssues(parsed.error);
}

describe('refresh schedule requests', () => {
  it('accepts a daily schedule and applies the defaults (cached session, 15m jitter)', () => {
    const parsed = RefreshScheduleInput.parse(VALID);
    assert.equal(parsed.session, 'cached');
    assert.deepEqual(parsed.cadence, { kind: 'daily', at: { hour: 2, minute: 30 }, timeZone: 'America/Toronto', jitter: 15 * 60_000 });
    assert.deepEqual(cadenceArgsOf(parsed.cadence), { kind: 'daily', at: '02:30', timeZone: 'America/Toronto', jitter: '15m' });
  });

  it('accepts an interval in seconds, minutes, hours or days', () => {
    for (const [every, ms] of [
      ['90s', 90_000],
      ['15m', 900_000],
      ['6h', 21_600_000],
      ['1d', 86_400_000],
    ] as const) {
      const parsed = RefreshScheduleInput.parse({ ...VALID, cadence: { kind: 'interval', every } });
      assert.deepEqual(parsed.cadence, { kind: 'interval', every: ms, jitter: 0 });
      assert.equal(formatCadenceDuration(ms), every);
    }
  });

  it('refuses a time that is not HH:MM on a 24-hour clock', () => {
    for (const at of ['24:00', '2:30', '02:60', 'two thirty', '']) {
      assert.equal(problemsOf({ ...VALID, cadence: { kind: 'daily', at } }), 'cadence.at: must be HH:MM on a 24-hour clock (00:00 to 23:59)');
    }
  });

  it('refuses a time zone the runtime does not know, naming it', () => {
    assert.equal(
      problemsOf({ ...VALID, cadence: { kind: 'daily', at: '02:30', timeZone: 'Mars/Olympus_Mons' } }),
      'cadence.timeZone: unknown time zone "Mars/Olympus_Mons" (an IANA name such as America/Toronto or UTC)',
    );
  });

  it('refuses a zero or malformed interval and a jitter longer than it', () => {
    assert.equal(problemsOf({ ...VALID, cadence: { kind: 'interval', every: '0m' } }), 'cadence.every: must be at least 1s');
    assert.equal(
      problemsOf({ ...VALID, cadence: { kind: 'interval', every: 'hourly' } }),
      'cadence.every: must be a duration such as 90s, 15m, 6h or 1d (got "hourly")',
    );
    assert.equal(problemsOf({ ...VALID, cadence: { kind: 'interval', every: '10m', jitter: '1h' } }), 'cadence.jitter: must not be longer than the interval');
    assert.equal(problemsOf({ ...VALID, cadence: { kind: 'daily', at: '02:30', jitter: '1d' } }), 'cadence.jitter: must be less than 1d');
  });

  it('refuses an unknown cadence kind', () => {
    assert.equal(problemsOf({ ...VALID, cadence: { kind: 'weekly' } }), 'cadence.kind: must be daily or interval');
  });

  it('refuses an empty or malformed LoginId and a customer id that cannot be a key', () => {
    assert.equal(problemsOf({ ...VALID, loginId: '' }), 'loginId: must not be empty');
    assert.equal(problemsOf({ ...VALID, loginId: 'not-a-login' }), 'loginId: must be a UUID');
    assert.match(problemsOf({ ...VALID, customerId: 'demo:lender' }), /^customerId: must start with a letter or digit/);
    const ref = LoginRef.safeParse({ customerId: 'demo-lender', loginId: '  ' });
    assert.equal(ref.success ? '' : describeIssues(ref.error), 'loginId: must not be empty');
  });

  it('refuses a schedule without products or with a live session', () => {
    assert.equal(problemsOf({ ...VALID, products: {} }), 'products: must request at least one of accountsDetail, investments, attributes');
    assert.match(problemsOf({ ...VALID, session: 'live' }), /^session: /);
  });
});
