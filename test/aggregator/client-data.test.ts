/**
 * Contract tests of the aggregation client's data operations (accounts detail and summary,
 * statements, investments, attributes, DeleteCard) against the in-process sandbox over real HTTP.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAggregatorClient, type AggregatorClient } from '../../src/aggregator/client.js';
import type { AccountsDetail } from '../../src/aggregator/data-endpoints.js';
import type { DataResult } from '../../src/aggregator/exchange.js';
import { AggregatorServiceError } from '../../src/aggregator/errors.js';
import { SERVICE_CODES } from '../../src/aggregator/failure-table.js';
import { AttributePackageOperation, type AccountsDetailOptions } from '../../src/aggregator/schemas.js';
import { ATTRIBUTE_PACKAGES } from '../../sandbox/attributes.js';
import { describeScenario, resolveScenario } from '../../sandbox/scenarios.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { specAccounts, specAttributeTransactions, specInvestments } from '../helpers/spec-data.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await createSandbox({ port: 0 });
});
after(async () => sandbox.close());

let tenantCounter = 0;
function freshTenant(): string {
  tenantCounter += 1;
  return `data-${process.pid}-${tenantCounter}`;
}

/** Bound on polls so a broken pending loop fails instead of hanging. */
const MAX_POLLS = 50;

interface Saved {
  client: AggregatorClient;
  customerId: string;
  loginId: string;
  requestId: string;
}

/** A saved login through the sandbox admin API, then a cached Authorize through our client. */
async function cachedSession(username: string, pendingPolls?: number, customerId = freshTenant()): Promise<Saved> {
  const created = await fetch(`${sandbox.url}/sandbox/${customerId}/logins`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(pendingPolls === undefined ? { username } : { username, pendingPolls }),
  });
  assert.equal(created.status, 200, await created.clone().text());
  const { LoginId } = (await created.json()) as { LoginId: string };
  const client = createAggregatorClient({ baseUrl: sandbox.url, customerId, timeoutMs: 10_000 });
  const authorized = await client.authorizeCached(LoginId);
  assert.equal(authorized.kind, 'ready');
  assert.equal(authorized.kind === 'ready' ? authorized.data.Login?.Id : undefined, LoginId);
  return { client, customerId, loginId: LoginId, requestId: authorized.requestId };
}

/** GetAccountsDetail, then GetAccountsDetailAsync until ready; counts the pending answers. */
async function accountsUntilReady(
  saved: Saved,
  options: AccountsDetailOptions = {},
): Promise<{ pendingAnswers: number; codes: string[]; detail: AccountsDetail }> {
  let result: DataResult<AccountsDetail> = await saved.client.getAccountsDetail(saved.requestId, options);
  const codes: string[] = [];
  while (result.kind === 'pending') {
    assert.equal(result.requestId, saved.requestId);
    assert.ok(result.message.length > 0);
    codes.push(result.code);
    assert.ok(codes.length <= MAX_POLLS, 'still pending after too many polls');
    result = await saved.client.getAccountsDetailAsync(saved.requestId);
  }
  assert.equal(result.requestId, saved.requestId);
  return { pendingAnswers: codes.length, codes, detail: result.data };
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<AggregatorServiceError> {
  let caught: unknown;
  await assert.rejects(promise, (error: unknown) => ((caught = error), true));
  assert.ok(caught instanceof AggregatorServiceError, `expected AggregatorServiceError, got ${String(caught)}`);
  assert.equal(caught.serviceCode, code, caught.message);
  return caught;
}

const withinCent = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= 0.01 + 1e-9, `${what}: ${actual} vs ${expected}`);

describe('accounts detail', () => {
  it("answers pending for exactly the scenario's pending polls, then ready with the accounts", async () => {
    const scenario = describeScenario(resolveScenario('pending_polls_3') ?? assert.fail('no scenario'));
    assert.equal(scenario.pending.polls, 3);
    const saved = await cachedSession(scenario.username);
    const { pendingAnswers, codes, detail } = await accountsUntilReady(saved);
    assert.equal(pendingAnswers, scenario.pending.polls);
    assert.deepEqual(codes, ['OPERATION_PENDING', 'OPERATION_PENDING', 'OPERATION_PENDING']);
    assert.ok(detail.Accounts.length >= 2);
    assert.equal(detail.Login.Id, saved.loginId);
    // Once ready it stays ready.
    const again = await saved.client.getAccountsDetailAsync(saved.requestId);
    assert.equal(again.kind, 'ready');
  });

  it('honours WithTransactions false, DaysOfTransactions and AccountsFilter', async () => {
    const saved = await cachedSession('no_mfa', 0);
    const year = (await accountsUntilReady(saved, { DaysOfTransactions: 'Days365', WithTransactions: true })).detail;
    const quarter = (await accountsUntilReady(saved, { DaysOfTransactions: 'Days90' })).detail;
    const bare = (await accountsUntilReady(saved, { WithTransactions: false })).detail;
    const asOf = sandbox.options.asOf;
    const ninetyDaysAgo = new Date(Date.parse(`${asOf}T00:00:00Z`) - 89 * 86_400_000).toISOString().slice(0, 10);

    assert.deepEqual(
      quarter.Accounts.map((a) => a.Id),
      year.Accounts.map((a) => a.Id),
    );
    for (const [index, account] of year.Accounts.entries()) {
      const yearTx = account.Transactions ?? [];
      const quarterTx = quarter.Accounts[index]?.Transactions ?? [];
      assert.ok(yearTx.length > quarterTx.length, `${account.Type}: a year has more transactions than 90 days`);
      assert.ok(
        quarterTx.every((t) => t.Date >= ninetyDaysAgo && t.Date <= asOf),
        `${account.Type}: Days90 window`,
      );
      assert.deepEqual(
        quarterTx,
        yearTx.filter((t) => t.Date >= ninetyDaysAgo),
      );
    }
    assert.ok(bare.Accounts.length === year.Accounts.length && bare.Accounts.every((a) => a.Transactions === undefined));

    const card = year.Accounts.find((a) => a.Type === 'CreditCard') ?? assert.fail('no credit card');
    const filtered = (await accountsUntilReady(saved, { AccountsFilter: [card.Id] })).detail;
    assert.deepEqual(
      filtered.Accounts.map((a) => a.Id),
      [card.Id],
    );
  });

  it('reads OPERATION_DISPATCHED as pending with that code, then OPERATION_PENDING, then ready', async () => {
    const saved = await cachedSession('operation_dispatched');
    const { codes } = await accountsUntilReady(saved);
    assert.deepEqual(codes, ['OPERATION_DISPATCHED', 'OPERATION_PENDING']);
  });

  it('throws SESSION_LOADING with remedy poll while the session loads, then answers', async () => {
    const saved = await cachedSession('loading', 0);
    for (let i = 0; i < 2; i++) {
      const error = await rejectsWith(saved.client.getAccountsDetail(saved.requestId), 'SESSION_LOADING');
      assert.equal(error.remedy, 'poll');
      assert.equal(error.retryable, true);
      assert.equal(error.httpStatus, 400);
      assert.equal(error.requestId, saved.requestId);
    }
    assert.equal((await saved.client.getAccountsDetail(saved.requestId)).kind, 'ready');
  });

  it('throws SESSION_NONEXISTENT (remedy reauthorize) for an unknown RequestId', async () => {
    const saved = await cachedSession('no_mfa', 0);
    const error = await rejectsWith(saved.client.getAccountsDetailAsync('00000000-0000-4000-8000-000000000000'), 'SESSION_NONEXISTENT');
    assert.equal(error.remedy, SERVICE_CODES.SESSION_NONEXISTENT.remedy);
    assert.equal(error.retryable, false);
  });
});

describe('accounts summary and statements', () => {
  it('answers the summary pending, then ready through GetAccountsSummaryAsync, without transactions', async () => {
    const saved = await cachedSession('no_mfa');
    const first = await saved.client.getAccountsSummary(saved.requestId);
    assert.equal(first.kind, 'pending');
    const ready = await saved.client.getAccountsSummaryAsync(saved.requestId);
    assert.equal(ready.kind, 'ready');
    if (ready.kind !== 'ready') return;
    assert.ok(ready.data.Accounts.length >= 2);
    for (const account of specAccounts(ready.data.Accounts)) {
      assert.equal((account as Record<string, unknown>).Transactions, undefined);
      assert.equal(typeof account.Balance.Current, 'number');
    }
  });

  it('answers statements for every account, as many as asked', async () => {
    const saved = await cachedSession('no_mfa', 0);
    const { detail } = await accountsUntilReady(saved);
    for (const [which, months] of [
      ['MostRecent', 1],
      ['Months3', 3],
      ['Months12', 12],
    ] as const) {
      const result = await saved.client.getStatements(saved.requestId, which);
      assert.equal(result.kind, 'ready');
      if (result.kind !== 'ready') return;
      assert.deepEqual(
        result.data.StatementsByAccount.map((s) => s.AccountNumber),
        detail.Accounts.map((a) => a.AccountNumber),
      );
      for (const byAccount of result.data.StatementsByAccount) {
        assert.equal(byAccount.Statements.length, months, which);
        for (const statement of byAccount.Statements) {
          assert.equal(statement.FileType, 'PDF');
          assert.ok(Buffer.from(statement.Base64Bytes, 'base64').toString('latin1').startsWith('%PDF-'));
        }
      }
    }
    const defaulted = await saved.client.getStatements(saved.requestId);
    assert.equal(defaulted.kind === 'ready' ? defaulted.data.StatementsByAccount[0]?.Statements.length : -1, 1);
  });
});

describe('investments', () => {
  it('answers pending, then ready with market values equal to quantity times price and account values that add up', async () => {
    const saved = await cachedSession('no_mfa');
    let result = await saved.client.getInvestments(saved.loginId, saved.requestId);
    let polls = 0;
    while (result.kind === 'pending') {
      assert.ok(++polls <= MAX_POLLS);
      result = await saved.client.getInvestments(saved.loginId, saved.requestId);
    }
    assert.equal(polls, 1);
    const data = specInvestments(result.data);
    assert.deepEqual(typeof data.Institution === 'object' && data.Institution !== null ? Object.keys(data.Institution).sort() : [], ['Id', 'Name']);
    assert.equal(data.Login.Type, null);
    const prices = new Map(data.Securities.map((s) => [s.Id, s]));
    assert.ok(data.Accounts.length >= 3);
    for (const account of data.Accounts) {
      const positions = account.Positions ?? [];
      assert.ok(positions.length > 0, `${account.Name} holds something`);
      for (const position of positions) {
        const security = prices.get(position.SecurityId) ?? assert.fail(`unknown security ${position.SecurityId}`);
        withinCent(position.MarketValue, position.Quantity * security.Price, `${account.Name} ${security.Symbol} market value`);
        withinCent(position.GainAmount, position.MarketValue - position.BookValue, `${security.Symbol} gain`);
        assert.equal(position.Currency, security.Currency);
      }
      withinCent(account.AccountValue, account.Cash + positions.reduce((sum, p) => sum + p.MarketValue, 0), `${account.Name} account value`);
    }
    const currencyValues = data.Accounts.reduce((sum, a) => sum + a.CurrencyValue, 0);
    withinCent(data.Value, currencyValues, 'total Value');
  });

  it('refuses a LoginId that is not the session’s with INVALID_LOGIN', async () => {
    const saved = await cachedSession('no_mfa', 0);
    const other = await cachedSession('pending_polls_0', 0, saved.customerId);
    await rejectsWith(saved.client.getInvestments(other.loginId, saved.requestId), 'INVALID_LOGIN');
  });
});

describe('attributes', () => {
  /** A cached session whose accounts detail was retrieved (Days365), ready for attributes. */
  async function readyForAttributes(username = 'no_mfa') {
    const saved = await cachedSession(username, 0);
    const { detail } = await accountsUntilReady(saved, { DaysOfTransactions: 'Days365' });
    return { ...saved, detail };
  }

  for (const operation of AttributePackageOperation.options) {
    it(`answers ${operation} with its fixed group and attribute set`, async () => {
      const saved = await readyForAttributes();
      const result = await saved.client.getPackageAttributes(saved.loginId, saved.requestId, operation);
      assert.equal(result.kind, 'ready');
      if (result.kind !== 'ready') return;
      const { group, attributes } = ATTRIBUTE_PACKAGES[operation];
      assert.deepEqual(Object.keys(result.data.Groups), [group]);
      const members = result.data.Groups[group] ?? assert.fail('no group');
      assert.match(members.Id, /^[0-9a-f-]{36}$/);
      for (const name of attributes) {
        const value = members[name];
        assert.ok(typeof value === 'number' || value === 'NONE_DETECTED', `${operation}.${name} = ${JSON.stringify(value)}`);
      }
      assert.deepEqual(
        Object.keys(members)
          .filter((k) => k !== 'Id')
          .sort(),
        [...attributes].sort(),
      );
      assert.equal(result.data.Login.Id, saved.loginId);
    });
  }

  it('answers pending while accounts detail for the card still runs', async () => {
    const saved = await cachedSession('pending_polls_1');
    assert.equal((await saved.client.getAccountsDetail(saved.requestId)).kind, 'pending');
    const pending = await saved.client.getPackageAttributes(saved.loginId, saved.requestId, 'GetIncomeAttributes');
    assert.equal(pending.kind, 'pending');
    assert.equal(pending.kind === 'pending' ? pending.code : '', 'OPERATION_PENDING');
  });

  it('honours Filters.AccountCategory and AccountFilter in custom attributes', async () => {
    const saved = await readyForAttributes();
    const accounts = specAccounts(saved.detail.Accounts);
    const card = accounts.find((a) => a.Category === 'Credits') ?? assert.fail('no Credits account');
    const operations = accounts.filter((a) => a.Category === 'Operations');
    const sumCurrent = (list: typeof accounts) => Math.round(list.reduce((s, a) => s + (a.Balance.Current ?? 0), 0) * 100) / 100;

    const ask = async (extra: Record<string, unknown>) => {
      const result = await saved.client.getCustomAttributes(saved.loginId, saved.requestId, {
        MostRecentCached: true,
        Attributes: { Card: ['balance_current'] },
        ...extra,
      });
      assert.equal(result.kind, 'ready');
      return result.kind === 'ready' ? result.data.Groups.Card?.balance_current : undefined;
    };
    assert.equal(await ask({}), sumCurrent(accounts));
    assert.equal(await ask({ Filters: { AccountCategory: ['Operations'] } }), sumCurrent(operations));
    assert.equal(await ask({ Filters: { AccountCategory: ['Credits'] } }), card.Balance.Current);
    assert.equal(await ask({ AccountFilter: [card.Id] }), card.Balance.Current);
    assert.equal(await ask({ Options: { AccountFilter: [card.Id] } }), card.Balance.Current);
    assert.equal(await ask({ Filters: { AccountCategory: ['NoSuchCategory'] } }), 'NONE_DETECTED');
  });

  it('returns the contributing transactions for AttributesDetail, in the spec’s shape', async () => {
    const saved = await readyForAttributes();
    const result = await saved.client.getCustomAttributes(saved.loginId, saved.requestId, {
      MostRecentCached: true,
      Attributes: { Card: ['sum_employer_income', 'balance_min'] },
      Options: { AttributesDetail: ['sum_employer_income'] },
    });
    assert.equal(result.kind, 'ready');
    if (result.kind !== 'ready') return;
    const group = result.data.Groups.Card ?? assert.fail('no Card group');
    const detail = group.AttributesDetail ?? assert.fail('no AttributesDetail');
    assert.deepEqual(
      detail.map((d) => d.Attribute),
      ['sum_employer_income'],
    );
    const transactions = specAttributeTransactions(detail[0]?.Transactions ?? []);
    assert.ok(transactions.length > 0);
    const accountIds = new Set(saved.detail.Accounts.map((a) => a.Id));
    for (const t of transactions) {
      assert.match(t.Date, /^\d{4}\/\d{2}\/\d{2}$/);
      assert.ok(accountIds.has(t.AccountId));
      assert.ok(t.Description.startsWith('PAYROLL '));
    }
    const total = Math.round(transactions.reduce((s, t) => s + (t.Credit ?? 0), 0) * 100) / 100;
    assert.equal(group.sum_employer_income, total);
  });

  it('throws INVALID_REQUEST naming an unknown attribute', async () => {
    const saved = await readyForAttributes();
    const error = await rejectsWith(
      saved.client.getCustomAttributes(saved.loginId, saved.requestId, {
        MostRecentCached: true,
        Attributes: { Card: ['balance_current', 'favourite_colour'] },
      }),
      'INVALID_REQUEST',
    );
    assert.match(error.message, /favourite_colour/);
    assert.doesNotMatch(error.message, /balance_current/);
    assert.equal(error.retryable, false);
    assert.equal(error.remedy, 'fix-request');
  });
});

describe('DeleteCard', () => {
  it('deletes a saved login, after which a cached Authorize throws INVALID_LOGIN', async () => {
    const saved = await cachedSession('no_mfa', 0);
    const deleted = await saved.client.deleteCard(saved.loginId);
    assert.equal(deleted.HttpStatusCode, 200);
    assert.equal(deleted.LoginId, saved.loginId);
    const error = await rejectsWith(saved.client.authorizeCached(saved.loginId), 'INVALID_LOGIN');
    assert.equal(error.retryable, false);
    // The deleted login's sessions are gone too.
    await rejectsWith(saved.client.getAccountsDetail(saved.requestId), 'SESSION_NONEXISTENT');
  });

  it('throws retryable CARD_IN_USE while an operation is pending, and deletes once it is done', async () => {
    const saved = await cachedSession('pending_polls_3');
    assert.equal((await saved.client.getAccountsDetail(saved.requestId)).kind, 'pending');
    const error = await rejectsWith(saved.client.deleteCard(saved.loginId), 'CARD_IN_USE');
    assert.equal(error.retryable, true);
    assert.equal(error.httpStatus, 400);
    assert.equal(error.remedy, 'retry');
    let polls = 0;
    while ((await saved.client.getAccountsDetailAsync(saved.requestId)).kind === 'pending') assert.ok(++polls <= MAX_POLLS);
    assert.equal((await saved.client.deleteCard(saved.loginId)).HttpStatusCode, 200);
  });
});
