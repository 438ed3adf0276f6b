/**
 * Property: for any saved login (any tenant, any pending_polls_<n> username, so the generated data
 * differs) and any account selection, the attributes the custom endpoint serves through our client
 * equal a recomputation from the transactions the accounts endpoint returned (Days365,
 * WithTransactions). The recomputation below is written from the documented definitions in
 * sandbox/attributes.ts, not by calling its compute functions.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createAggregatorClient } from '../../src/aggregator/client.js';
import type { AccountsDetail } from '../../src/aggregator/data-endpoints.js';
import type { DataResult } from '../../src/aggregator/exchange.js';
import { ATTRIBUTE_NAMES } from '../../sandbox/attributes.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import type { Account, Transaction } from '../../sandbox/spec-shapes.js';
import { specAccounts } from '../helpers/spec-data.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await createSandbox({ port: 0 });
});
after(async () => sandbox.close());

const NONE = 'NONE_DETECTED';
const DAY_MS = 86_400_000;
const dayNumber = (date: string) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;
const toCents = (value: number) => Math.round(value * 100) / 100;

type Value = number | typeof NONE;

/** The attributes, recomputed from the definitions. "Last N days" = asOf - N + 1 .. asOf inclusive. */
function recompute(accounts: readonly Account[], asOf: string): Record<string, Value> {
  const end = dayNumber(asOf);
  const within = (days: number) => (t: Transaction) => dayNumber(t.Date) > end - days && dayNumber(t.Date) <= end;
  const all = accounts.flatMap((a) => a.Transactions ?? []);
  const last = (days: number) => all.filter(within(days));
  const countOrNone = (list: readonly Transaction[]): Value => (list.length === 0 ? NONE : list.length);
  const sumOrNone = (list: readonly Transaction[], amount: (t: Transaction) => number, divisor = 1): Value =>
    list.length === 0 ? NONE : toCents(list.reduce((total, t) => total + amount(t), 0) / divisor);
  const isNsf = (t: Transaction) => t.Debit !== null && /\bNSF\b/i.test(t.Description);
  const balances90 = last(90).map((t) => t.Balance);

  // End-of-day balance of each Operations account over the last 90 days: the Balance after the
  // day's last transaction, else the previous day's; before the first transaction, the opening balance.
  const negativeDays = new Set<number>();
  for (const account of accounts.filter((a) => a.Category === 'Operations')) {
    // Listed newest first: reversed, then a stable sort by date, gives date order with same-day
    // transactions in the order they were posted.
    const chronological = [...(account.Transactions ?? [])]
      .reverse()
      .filter((t) => dayNumber(t.Date) <= end)
      .sort((a, b) => dayNumber(a.Date) - dayNumber(b.Date));
    const first = chronological[0];
    if (!first) continue;
    const opening = toCents(first.Balance - (first.Credit ?? 0) + (first.Debit ?? 0));
    for (let day = end - 89; day <= end; day++) {
      const upToDay = chronological.filter((t) => dayNumber(t.Date) <= day);
      const balance = upToDay.at(-1)?.Balance ?? opening;
      if (balance < 0) negativeDays.add(day);
    }
  }

  const oldest = all.reduce<number | undefined>((min, t) => (min === undefined || dayNumber(t.Date) < min ? dayNumber(t.Date) : min), undefined);
  return {
    account_age_days: oldest === undefined ? NONE : end - oldest,
    balance_current: accounts.length === 0 ? NONE : toCents(accounts.reduce((total, a) => total + (a.Balance.Current ?? 0), 0)),
    balance_max: balances90.length === 0 ? NONE : Math.max(...balances90),
    balance_min: balances90.length === 0 ? NONE : Math.min(...balances90),
    count_nsf: countOrNone(last(365).filter(isNsf)),
    count_nsf_30_days: countOrNone(last(30).filter(isNsf)),
    count_nsf_90_days: countOrNone(last(90).filter(isNsf)),
    avg_monthly_deposit: sumOrNone(
      last(365).filter((t) => t.Credit !== null),
      (t) => t.Credit ?? 0,
      12,
    ),
    sum_employer_income: sumOrNone(
      last(365).filter((t) => t.Credit !== null && t.Description.startsWith('PAYROLL ')),
      (t) => t.Credit ?? 0,
    ),
    average_monthly_free_cash_flow: sumOrNone(last(90), (t) => (t.Credit ?? 0) - (t.Debit ?? 0), 3),
    count_days_negative_balance_90_days: negativeDays.size === 0 ? NONE : negativeDays.size,
  };
}

/** Money sums may differ in the last binary digit by summation order; half a cent is equality at cent precision. */
function assertSameValue(name: string, served: unknown, expected: Value): void {
  if (typeof expected === 'number' && typeof served === 'number') {
    assert.ok(Math.abs(served - expected) < 0.005, `${name}: served ${served}, recomputed ${expected}`);
  } else {
    assert.equal(served, expected, name);
  }
}

const MUST_COVER = ['balance_current', 'balance_min', 'balance_max', 'count_nsf', 'sum_employer_income', 'account_age_days'];

describe('attributes property', () => {
  it('recomputes every attribute the sandbox defines', () => {
    const recomputed = Object.keys(recompute([], '2026-10-31'));
    for (const name of MUST_COVER) assert.ok(recomputed.includes(name), name);
    assert.deepEqual([...recomputed].sort(), [...ATTRIBUTE_NAMES].sort(), 'the recomputation covers exactly the served attribute names');
  });

  it('serves, for any saved login and account selection, the attributes recomputed from the returned transactions', async () => {
    let run = 0;
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.stringMatching(/^[a-z0-9]{1,12}$/),
        fc.integer({ min: 0, max: 20 }),
        fc.option(fc.subarray(['Operations', 'Credits'] as const), { nil: undefined }),
        fc.boolean(),
        async (tenantSeed, polls, categories, pickOneAccount) => {
          run += 1;
          const customerId = `prop-${process.pid}-${run}-${tenantSeed}`;
          const username = `pending_polls_${polls}`;
          // pendingPolls 0 keeps each run to a handful of requests; the username still seeds the data.
          const created = await fetch(`${sandbox.url}/sandbox/${customerId}/logins`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ username, pendingPolls: 0 }),
          });
          assert.equal(created.status, 200);
          const { LoginId } = (await created.json()) as { LoginId: string };
          const client = createAggregatorClient({ baseUrl: sandbox.url, customerId, timeoutMs: 10_000 });
          const authorized = await client.authorizeCached(LoginId);
          assert.equal(authorized.kind, 'ready');
          const requestId = authorized.requestId;

          let detail: DataResult<AccountsDetail> = await client.getAccountsDetail(requestId, { DaysOfTransactions: 'Days365', WithTransactions: true });
          for (let polls = 0; detail.kind === 'pending'; polls++) {
            assert.ok(polls < 10);
            detail = await client.getAccountsDetailAsync(requestId);
          }
          const accounts = specAccounts(detail.data.Accounts);
          seen.add(accounts[0]?.Id ?? '');

          const accountFilter = pickOneAccount && accounts[0] ? [accounts[0].Id] : undefined;
          const selected = accounts.filter(
            (a) =>
              (categories === undefined || (categories as readonly string[]).includes(a.Category)) &&
              (accountFilter === undefined || accountFilter.includes(a.Id)),
          );
          const served = await client.getCustomAttributes(LoginId, requestId, {
            MostRecentCached: true,
            Attributes: { Card: [...ATTRIBUTE_NAMES] },
            ...(categories === undefined ? {} : { Filters: { AccountCategory: [...categories] } }),
            ...(accountFilter === undefined ? {} : { AccountFilter: accountFilter }),
          });
          assert.equal(served.kind, 'ready');
          if (served.kind !== 'ready') return;
          const card = served.data.Groups.Card ?? assert.fail('no Card group');
          const expected = recompute(selected, sandbox.options.asOf);
          for (const name of ATTRIBUTE_NAMES)
            assertSameValue(`${name} (${username}, ${customerId}, ${selected.length} accounts)`, card[name], expected[name] ?? NONE);
        },
      ),
      { numRuns: 15 },
    );
    assert.ok(seen.size > 1, 'different tenants and usernames produced different data');
  });
});
