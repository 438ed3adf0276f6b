import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  AccountsDetailResponse,
  AccountsSummaryResponse,
  AttributesResponse,
  AuthorizeResponse,
  InvestmentsResponse,
  StatementsResponse,
  type AccountsDetailOptions,
} from '../../src/aggregator/schemas.js';
import { selectAccounts } from '../../sandbox/banking-data.js';
import { generateLargeBankData, materializeLargeBankData } from '../../sandbox/large-bank-data.js';
import { largeAccountsJson } from '../../sandbox/large-bank-json.js';
import { LARGE_LOGIN_LIMITS, SANDBOX_PASSWORD } from '../../sandbox/scenarios.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import type { Account, Transaction } from '../../sandbox/spec-shapes.js';
import { specAccounts } from '../helpers/spec-data.js';
import { assertError, cachedSession, clientFor, fetchAccounts, freshTenant, listing, parsesWith, type Call } from './helpers.js';

let sandbox: Sandbox;
let call: Call;
let asOf: string;
before(async () => {
  sandbox = await createSandbox();
  call = clientFor(sandbox);
  asOf = (await listing(call)).asOf;
});
after(async () => sandbox.close());

const bank = (tenant: string, op: string) => `/v3/${tenant}/BankingServices/${op}`;
const cents = (n: number) => Math.round(n * 100) / 100;
const daysBefore = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) - days * 86_400_000).toISOString().slice(0, 10);

/** The year of accounts of a saved large login, through a cached session. */
async function year(username: string, tenant = freshTenant(), options: Record<string, unknown> = { DaysOfTransactions: 'Days365' }) {
  const session = await cachedSession(call, tenant, username, 0);
  const { body } = await fetchAccounts(call, tenant, session.requestId, options);
  return { ...session, tenant, accounts: specAccounts(parsesWith(AccountsDetailResponse, body).Accounts) };
}

/** Asserts the shape the issue asks for: sizes, dates in the last 365 days, order and running balances. */
function assertLargeData(accounts: readonly Account[], accountCount: number, perAccount: number): void {
  assert.equal(accounts.length, accountCount);
  const oldestAllowed = daysBefore(asOf, 364);
  const ids = new Set<string>();
  for (const account of accounts) {
    const transactions = account.Transactions ?? [];
    assert.equal(transactions.length, perAccount, account.Title);
    assert.equal(account.Balance.Current, transactions[0]?.Balance, `${account.Title}: Balance.Current is the newest transaction's Balance`);
    const chronological = [...transactions].reverse();
    for (let i = 0; i < chronological.length; i++) {
      const current = chronological[i] as Transaction;
      assert.ok(current.Date >= oldestAllowed && current.Date <= asOf, `${current.Date} within the 365 days ending ${asOf}`);
      assert.ok((current.Debit === null) !== (current.Credit === null), 'exactly one of Debit and Credit');
      ids.add(current.Id);
      const previous = chronological[i - 1];
      if (previous === undefined) continue;
      assert.ok(previous.Date <= current.Date, 'newest first');
      assert.equal(current.Balance, cents(previous.Balance + (current.Credit ?? 0) - (current.Debit ?? 0)), `${account.Title} ${current.Id}`);
    }
  }
  assert.equal(ids.size, accountCount * perAccount, 'transaction ids are unique');
}

describe('large logins', () => {
  it('answers exactly the requested accounts and transactions, all in the last 365 days, with consistent balances', async () => {
    const { accounts } = await year('large_3x200');
    assertLargeData(accounts, 3, 200);
    assert.equal(accounts[0]?.Type, 'Chequing');
    assert.ok(accounts.every((a) => a.Holder?.Name));
  });

  it('serves large_10x5000 (50,000 transactions) in full with DaysOfTransactions Days365', async () => {
    const { accounts } = await year('large_10x5000');
    assertLargeData(accounts, 10, 5000);
  });

  it('logs in live without MFA and, saved, through a cached Authorize', async () => {
    const tenant = freshTenant();
    const live = await call('POST', bank(tenant, 'Authorize'), {
      Institution: 'SandboxBank',
      Username: 'large_2x50',
      Password: SANDBOX_PASSWORD,
      MostRecentCached: false,
      Save: true,
    });
    assert.equal(live.status, 200, live.text);
    const authorized = parsesWith(AuthorizeResponse, live.body);
    const { body } = await fetchAccounts(call, tenant, authorized.RequestId, { DaysOfTransactions: 'Days365' });
    const liveAccounts = specAccounts(parsesWith(AccountsDetailResponse, body).Accounts);
    assertLargeData(liveAccounts, 2, 50);

    const cached = await call('POST', bank(tenant, 'Authorize'), { LoginId: authorized.Login?.Id, MostRecentCached: true });
    assert.equal(cached.status, 200, cached.text);
    const again = await fetchAccounts(call, tenant, parsesWith(AuthorizeResponse, cached.body).RequestId, { DaysOfTransactions: 'Days365' });
    assert.deepEqual(parsesWith(AccountsDetailResponse, again.body).Accounts, liveAccounts);
  });

  it('answers the same data on a second request, from the cache, and the same again in a new sandbox', async () => {
    const tenant = freshTenant();
    const first = await year('large_3x200', tenant);
    const before = sandbox.dataCacheStats();
    const second = await year('large_3x200', tenant);
    const after = sandbox.dataCacheStats();
    assert.deepEqual(second.accounts, first.accounts);
    assert.equal(after.generated, before.generated, 'not generated again');
    assert.equal(after.serialized, before.serialized, 'not serialized again');
    assert.equal(after.hits, before.hits + 1);

    // Deterministic from the seed (tenant + username), not only cached.
    const other = await createSandbox();
    try {
      const otherCall = clientFor(other);
      const session = await cachedSession(otherCall, tenant, 'large_3x200', 0);
      const { body } = await fetchAccounts(otherCall, tenant, session.requestId, { DaysOfTransactions: 'Days365' });
      assert.deepEqual(parsesWith(AccountsDetailResponse, body).Accounts, first.accounts);
    } finally {
      await other.close();
    }
    assert.notDeepEqual((await year('large_3x200')).accounts, first.accounts, 'another tenant has other data');
  });

  it('honours Days90, AccountsFilter, WithTransactions, WithBalance and WithAccountIdentity', async () => {
    const { tenant, requestId, accounts } = await year('large_3x200');
    const quarter = parsesWith(AccountsDetailResponse, (await fetchAccounts(call, tenant, requestId)).body).Accounts;
    const from = daysBefore(asOf, 89);
    assert.deepEqual(
      quarter.map((a) => a.Transactions),
      accounts.map((a) => (a.Transactions ?? []).filter((t) => t.Date >= from)),
    );
    const only = accounts[1]?.Id ?? assert.fail();
    const options = { AccountsFilter: [only], WithBalance: false, WithAccountIdentity: false, DaysOfTransactions: 'Days365' };
    const filtered = parsesWith(AccountsDetailResponse, (await fetchAccounts(call, tenant, requestId, options)).body).Accounts;
    assert.deepEqual(
      filtered.map((a) => a.Id),
      [only],
    );
    assert.deepEqual(filtered[0]?.Balance, { Available: null, Current: null, Limit: null });
    assert.equal(filtered[0]?.Holder, undefined);
    assert.deepEqual(filtered[0]?.Transactions, accounts[1]?.Transactions);
    const bare = parsesWith(AccountsDetailResponse, (await fetchAccounts(call, tenant, requestId, { WithTransactions: false })).body).Accounts;
    assert.ok(bare.length === 3 && bare.every((a) => a.Transactions === undefined));
    const summary = await call('POST', bank(tenant, 'GetAccountsSummary'), { RequestId: requestId });
    assert.equal(parsesWith(AccountsSummaryResponse, summary.body).Accounts.length, 3);
  });

  it('writes from its columns exactly the JSON the materialized accounts stringify to', () => {
    const data = generateLargeBankData('seed-for-json', '2026-10-31', { accounts: 6, transactionsPerAccount: 400 });
    const materialized = materializeLargeBankData(data);
    const optionSets: AccountsDetailOptions[] = [
      {},
      { DaysOfTransactions: 'Days365' },
      { DateFrom: '2026-03-01', DateTo: '2026-03-31', AccountsFilter: [data.accounts[2]?.fields.Id ?? ''] },
      { WithTransactions: false, WithBalance: false, WithAccountIdentity: false },
    ];
    for (const options of optionSets) {
      assert.equal(
        Buffer.concat(largeAccountsJson(data, '2026-10-31', options)).toString('utf8'),
        JSON.stringify(selectAccounts(materialized, '2026-10-31', options)),
        JSON.stringify(options),
      );
    }
  });

  it('serves attributes computed from the same transactions, investments and statements', async () => {
    const { tenant, loginId, requestId, accounts } = await year('large_4x300');
    const answer = await call('GET', `/v3/${tenant}/insight/login/${loginId}/attributes/${requestId}/GetAllAttributes`);
    assert.equal(answer.status, 200, answer.text.slice(0, 300));
    const all = parsesWith(AttributesResponse, answer.body).Groups.AllAttributes ?? assert.fail();
    const transactions = accounts.flatMap((a) => a.Transactions ?? []);
    const nsf = transactions.filter((t) => t.Debit !== null && /\bNSF\b/.test(t.Description)).length;
    assert.deepEqual(all.count_nsf, nsf === 0 ? 'NONE_DETECTED' : nsf);
    assert.equal(all.balance_current, cents(accounts.reduce((s, a) => s + (a.Balance.Current ?? 0), 0)));
    const deposits = transactions.reduce((s, t) => s + (t.Credit ?? 0), 0);
    assert.equal(all.avg_monthly_deposit, cents(deposits / 12));

    const investments = await call('POST', `/v3/${tenant}/Investments`, { LoginId: loginId, RequestId: requestId, MostRecentCached: true });
    assert.equal(investments.status, 200, investments.text.slice(0, 300));
    parsesWith(InvestmentsResponse, investments.body);
    const statements = await call('POST', bank(tenant, 'GetStatements'), { RequestId: requestId, NumberOfStatements: 'Months3' });
    assert.equal(parsesWith(StatementsResponse, statements.body).StatementsByAccount.length, 4);
  });

  it('is listed among the username patterns with its limits', async () => {
    const body = (await call('GET', '/sandbox/scenarios')).body as { patterns: { pattern: string; example: string; limits?: unknown }[] };
    const large = body.patterns.find((p) => p.pattern === 'large_<accounts>x<transactions>') ?? assert.fail('pattern listed');
    assert.equal(large.example, 'large_100x5000');
    assert.deepEqual(large.limits, LARGE_LOGIN_LIMITS);
    assert.deepEqual(LARGE_LOGIN_LIMITS, {
      accounts: { min: 1, max: 500 },
      transactionsPerAccount: { min: 1, max: 20_000 },
      totalTransactions: { max: 1_000_000 },
    });
  });

  it('refuses sizes outside the limits with a message naming the limit', async () => {
    const tenant = freshTenant();
    const refusals: [string, RegExp][] = [
      ['large_0x10', /accounts must be from 1 to 500 \(got 0\)/],
      ['large_501x10', /accounts must be from 1 to 500 \(got 501\)/],
      ['large_10x0', /transactions per account must be from 1 to 20,000 \(got 0\)/],
      ['large_10x20001', /transactions per account must be from 1 to 20,000 \(got 20001\)/],
      ['large_100x10001', /at most 1,000,000 in total \(got 1,000,100\)/],
      ['large_ten', /malformed: the pattern is large_<accounts>x<transactions>/],
    ];
    for (const [username, message] of refusals) {
      const created = await call('POST', `/sandbox/${tenant}/logins`, { username });
      assertError(created, 400, 'INVALID_REQUEST');
      assert.match((created.body as { Message: string }).Message, message, username);
    }
    const live = await call('POST', bank(tenant, 'Authorize'), {
      Institution: 'SandboxBank',
      Username: 'large_501x10',
      Password: SANDBOX_PASSWORD,
      MostRecentCached: false,
    });
    assertError(live, 401, 'INVALID_USERNAME');
    assert.match((live.body as { Message: string }).Message, /accounts must be from 1 to 500/);
    // The largest allowed sizes are accepted (nothing is generated until data is asked for).
    for (const username of ['large_500x2000', 'large_50x20000', 'large_1x1']) {
      assert.equal((await call('POST', `/sandbox/${tenant}/logins`, { username })).status, 200, username);
    }
  });
});
