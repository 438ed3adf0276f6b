import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  AccountsDetailResponse,
  AccountsSummaryResponse,
  DeleteCardResponse,
  InvestmentsResponse,
  PendingResponse,
  StatementsResponse,
} from '../../src/aggregator/schemas.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import type { Transaction } from '../../sandbox/spec-shapes.js';
import { specAccounts, specInvestments } from '../helpers/spec-data.js';
import { assertError, cachedSession, clientFor, fetchAccounts, freshTenant, parsesWith, waitUntil, type Call } from './helpers.js';

let sandbox: Sandbox;
let call: Call;
before(async () => {
  sandbox = await createSandbox();
  call = clientFor(sandbox);
});
after(async () => sandbox.close());

const bank = (tenant: string, op: string) => `/v3/${tenant}/BankingServices/${op}`;
const cents = (n: number) => Math.round(n * 100) / 100;

describe('accounts detail', () => {
  it('answers 202 OPERATION_PENDING for exactly the configured number of polls, then 200', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'pending_polls_4');
    let answer = await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId });
    const statuses = [answer.status];
    parsesWith(PendingResponse, answer.body);
    assert.equal((answer.body as { ServiceCode: string }).ServiceCode, 'OPERATION_PENDING');
    while (answer.status === 202) {
      answer = await call('GET', bank(tenant, `GetAccountsDetailAsync/${requestId}`));
      statuses.push(answer.status);
    }
    assert.deepEqual(statuses, [202, 202, 202, 202, 200]);
    parsesWith(AccountsDetailResponse, answer.body);
    // Once delivered, the answer stays available (GET and POST both work).
    assert.equal((await call('POST', bank(tenant, `GetAccountsDetailAsync/${requestId}`))).status, 200);
  });

  it('honours pendingPolls given to the admin login endpoint', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'no_mfa', 0);
    const answer = await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId });
    assert.equal(answer.status, 200);
  });

  it('keeps running balances consistent and Balance.Current equal to the newest transaction', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'no_mfa', 0);
    const { body } = await fetchAccounts(call, tenant, requestId, { DaysOfTransactions: 'Days365' });
    const accounts = specAccounts(parsesWith(AccountsDetailResponse, body).Accounts);
    assert.ok(accounts.length >= 2 && accounts.length <= 3);
    for (const account of accounts) {
      const transactions = account.Transactions ?? [];
      assert.ok(transactions.length > 20);
      assert.equal(account.Balance.Current, transactions[0]?.Balance);
      const chronological = [...transactions].reverse();
      for (let i = 1; i < chronological.length; i++) {
        const previous = chronological[i - 1] as Transaction;
        const current = chronological[i] as Transaction;
        assert.ok(previous.Date <= current.Date);
        assert.equal(current.Balance, cents(previous.Balance + (current.Credit ?? 0) - (current.Debit ?? 0)), `${account.Type} ${current.Id}`);
      }
    }
    const chequing = accounts.find((a) => a.Type === 'Chequing');
    assert.ok(chequing?.Transactions?.some((t) => t.Description.startsWith('PAYROLL ')));
    assert.ok(chequing?.Holder?.Name);
  });

  it('honours DaysOfTransactions, WithTransactions, AccountsFilter and DateFrom/DateTo', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'no_mfa', 0);
    const year = parsesWith(AccountsDetailResponse, (await fetchAccounts(call, tenant, requestId, { DaysOfTransactions: 'Days365' })).body);
    const quarter = parsesWith(AccountsDetailResponse, (await fetchAccounts(call, tenant, requestId)).body);
    const firstYear = year.Accounts[0]?.Transactions ?? [];
    const firstQuarter = quarter.Accounts[0]?.Transactions ?? [];
    assert.ok(firstQuarter.length < firstYear.length);
    assert.ok(firstQuarter.every((t) => t.Date >= '2026-08-03'));
    assert.ok(firstYear.some((t) => t.Date < '2026-01-01'));
    const bare = parsesWith(AccountsDetailResponse, (await fetchAccounts(call, tenant, requestId, { WithTransactions: false })).body);
    assert.ok(bare.Accounts.every((a) => a.Transactions === undefined));
    const only = year.Accounts[1]?.Id ?? '';
    const filtered = parsesWith(AccountsDetailResponse, (await fetchAccounts(call, tenant, requestId, { AccountsFilter: [only] })).body);
    assert.deepEqual(
      filtered.Accounts.map((a) => a.Id),
      [only],
    );
    const ranged = parsesWith(AccountsDetailResponse, (await fetchAccounts(call, tenant, requestId, { DateFrom: '2026-03-01', DateTo: '2026-03-31' })).body);
    assert.ok(ranged.Accounts.every((a) => (a.Transactions ?? []).every((t) => t.Date.startsWith('2026-03'))));
  });

  it('generates the same data for the same login and different data for another', async () => {
    const tenant = freshTenant();
    const one = await cachedSession(call, tenant, 'no_mfa', 0);
    const two = await cachedSession(call, tenant, 'no_mfa', 0);
    const other = await cachedSession(call, tenant, 'security_question', 0);
    const a = parsesWith(AccountsDetailResponse, (await fetchAccounts(call, tenant, one.requestId)).body);
    const b = parsesWith(AccountsDetailResponse, (await fetchAccounts(call, tenant, two.requestId)).body);
    const c = parsesWith(AccountsDetailResponse, (await fetchAccounts(call, tenant, other.requestId)).body);
    assert.deepEqual(a.Accounts, b.Accounts);
    assert.notDeepEqual(a.Accounts, c.Accounts);
  });

  it('refuses GetAccountsDetailAsync before GetAccountsDetail and an unknown RequestId', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'no_mfa');
    assertError(await call('GET', bank(tenant, `GetAccountsDetailAsync/${requestId}`)), 400, 'INVALID_REQUEST');
    assertError(await call('GET', bank(tenant, 'GetAccountsDetailAsync/00000000-0000-4000-8000-000000000000')), 400, 'SESSION_NONEXISTENT');
    assertError(await call('GET', bank(freshTenant(), `GetAccountsDetailAsync/${requestId}`)), 400, 'SESSION_NONEXISTENT');
  });

  it('answers OPERATION_DISPATCHED first for the operation_dispatched user', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'operation_dispatched');
    const first = await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId });
    assert.equal(first.status, 202);
    assert.equal(parsesWith(PendingResponse, first.body).ServiceCode, 'OPERATION_DISPATCHED');
    const second = await call('GET', bank(tenant, `GetAccountsDetailAsync/${requestId}`));
    assert.equal(parsesWith(PendingResponse, second.body).ServiceCode, 'OPERATION_PENDING');
    assert.equal((await call('GET', bank(tenant, `GetAccountsDetailAsync/${requestId}`))).status, 200);
  });

  it('answers SESSION_LOADING for the first data requests of the loading user', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'loading_2');
    assertError(await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId }), 400, 'SESSION_LOADING');
    assertError(await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId }), 400, 'SESSION_LOADING');
    assert.equal((await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId })).status, 202);
  });

  it('answers SESSION_LOADING during loadingMs after Authorize, on the sandbox clock', async () => {
    let clock = 9_000_000;
    const local = await createSandbox({ now: () => clock, loadingMs: 5_000 });
    try {
      const localCall = clientFor(local);
      const tenant = freshTenant();
      const { requestId } = await cachedSession(localCall, tenant, 'pending_polls_0');
      assertError(await localCall('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId }), 400, 'SESSION_LOADING');
      clock += 5_000;
      assert.equal((await localCall('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId })).status, 200);
    } finally {
      await local.close();
    }
  });

  it('forgets a tenant reset through the admin API', async () => {
    const tenant = freshTenant();
    const { loginId } = await cachedSession(call, tenant, 'no_mfa');
    assert.equal((await call('DELETE', `/sandbox/${tenant}`)).status, 200);
    assertError(await call('POST', bank(tenant, 'Authorize'), { LoginId: loginId, MostRecentCached: true }), 401, 'INVALID_LOGIN');
  });

  it('becomes ready after pendingMs on the sandbox clock, and expires after the processing limit', async () => {
    let clock = 5_000_000;
    const local = await createSandbox({ now: () => clock, processingLimitMs: 60_000 });
    try {
      const localCall = clientFor(local);
      const tenant = freshTenant();
      const { requestId } = await cachedSession(localCall, tenant, 'pending_ms_2000');
      assert.equal((await localCall('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId })).status, 202);
      clock += 1999;
      assert.equal((await localCall('GET', bank(tenant, `GetAccountsDetailAsync/${requestId}`))).status, 202);
      clock += 1;
      assert.equal((await localCall('GET', bank(tenant, `GetAccountsDetailAsync/${requestId}`))).status, 200);
      clock += 60_000;
      assertError(await localCall('GET', bank(tenant, `GetAccountsDetailAsync/${requestId}`)), 400, 'SESSION_EXPIRED');
    } finally {
      await local.close();
    }
  });
});

describe('bad input', () => {
  it('answers INVALID_REQUEST to malformed JSON', async () => {
    const tenant = freshTenant();
    assertError(await call('POST', bank(tenant, 'Authorize'), '{"Username": '), 400, 'INVALID_REQUEST');
  });

  it('names the offending field and leaves the session untouched', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'pending_polls_1');
    const wrongType = await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId, DaysOfTransactions: 'Days30' });
    assertError(wrongType, 400, 'INVALID_REQUEST');
    assert.match((wrongType.body as { Message: string }).Message, /DaysOfTransactions/);
    const missing = await call('POST', bank(tenant, 'Authorize'), { Institution: 'SandboxBank', Password: 'Everyday', MostRecentCached: false });
    assert.match((missing.body as { Message: string }).Message, /Username/);
    // The rejected request did not count as a poll: the first valid one is still pending.
    assert.equal((await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId })).status, 202);
    assert.equal((await call('GET', bank(tenant, `GetAccountsDetailAsync/${requestId}`))).status, 200);
  });
});

describe('summary and statements', () => {
  it('answers GetAccountsSummary (pending then ready) without transactions', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'no_mfa');
    assert.equal((await call('POST', bank(tenant, 'GetAccountsSummary'), { RequestId: requestId })).status, 202);
    const ready = await call('GET', bank(tenant, `GetAccountsSummaryAsync/${requestId}`));
    assert.equal(ready.status, 200);
    const summary = parsesWith(AccountsSummaryResponse, ready.body);
    assert.ok(summary.Accounts.every((a) => !('Transactions' in a)));
  });

  it('answers GetStatements with one PDF per month asked', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'no_mfa');
    const answer = await call('POST', bank(tenant, 'GetStatements'), { RequestId: requestId, NumberOfStatements: 'Months3' });
    const statements = parsesWith(StatementsResponse, answer.body);
    for (const account of statements.StatementsByAccount) {
      assert.equal(account.Statements.length, 3);
      assert.ok(
        Buffer.from(account.Statements[0]?.Base64Bytes ?? '', 'base64')
          .toString('latin1')
          .startsWith('%PDF-'),
      );
    }
  });
});

describe('investments', () => {
  it('keeps market value = quantity x price and the account and total sums', async () => {
    const tenant = freshTenant();
    const { loginId, requestId } = await cachedSession(call, tenant, 'pending_polls_2');
    const request = { LoginId: loginId, RequestId: requestId, MostRecentCached: true };
    let answer = await call('POST', `/v3/${tenant}/Investments`, request);
    let polls = 0;
    while (answer.status === 202) {
      parsesWith(PendingResponse, answer.body);
      polls += 1;
      answer = await call('POST', `/v3/${tenant}/Investments`, request);
    }
    assert.equal(polls, 2);
    const data = specInvestments(parsesWith(InvestmentsResponse, answer.body));
    assert.equal(data.Login.Type, null);
    assert.equal(typeof data.Institution, 'object');
    const prices = new Map(data.Securities.map((s) => [s.Id, s.Price]));
    const rate = (currency: string) => (currency === 'USD' ? 1.385 : 1);
    let value = 0;
    let cash = 0;
    for (const account of data.Accounts) {
      let marketValue = 0;
      for (const position of account.Positions ?? []) {
        const price = prices.get(position.SecurityId);
        assert.ok(price !== undefined, 'position refers to a listed security');
        assert.equal(position.MarketValue, cents(position.Quantity * price));
        assert.equal(position.GainAmount, cents(position.MarketValue - position.BookValue));
        assert.ok(Math.abs(position.GainPercent - position.GainAmount / position.BookValue) < 1e-12);
        marketValue += position.MarketValue;
        const quantity = (account.Transactions ?? []).filter((t) => t.SecurityId === position.SecurityId).reduce((sum, t) => sum + t.Quantity, 0);
        assert.equal(quantity, position.Quantity);
      }
      for (const transaction of account.Transactions ?? []) {
        if (transaction.Type === 'buy') assert.ok(transaction.Amount < 0 && transaction.Quantity > 0);
        else assert.ok(transaction.Amount > 0 && transaction.Quantity < 0);
      }
      assert.equal(account.AccountValue, cents(account.Cash + marketValue));
      value += account.CurrencyValue;
      cash += cents(account.Cash * rate(account.Currency));
      assert.equal(account.CurrencyValue, cents(account.AccountValue * rate(account.Currency)));
    }
    assert.equal(data.Value, cents(value));
    assert.equal(data.Cash, cents(cash));
  });

  it('refuses a LoginId that is not the session login', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'no_mfa');
    const other = await cachedSession(call, tenant, 'security_question');
    assertError(
      await call('POST', `/v3/${tenant}/Investments`, { LoginId: other.loginId, RequestId: requestId, MostRecentCached: true }),
      401,
      'INVALID_LOGIN',
    );
  });
});

describe('DeleteCard', () => {
  it('answers CARD_IN_USE while an operation is pending, then deletes the saved login', async () => {
    const tenant = freshTenant();
    const { loginId, requestId } = await cachedSession(call, tenant, 'pending_polls_1');
    assert.equal((await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId })).status, 202);
    assertError(await call('DELETE', bank(tenant, `DeleteCard/${loginId}`)), 400, 'CARD_IN_USE');
    assert.equal((await call('GET', bank(tenant, `GetAccountsDetailAsync/${requestId}`))).status, 200);
    assertError(await call('DELETE', bank(freshTenant(), `DeleteCard/${loginId}`)), 401, 'INVALID_LOGIN');
    const deleted = await call('DELETE', bank(tenant, `DeleteCard/${loginId}`));
    assert.equal(deleted.status, 200);
    parsesWith(DeleteCardResponse, deleted.body);
    assertError(await call('POST', bank(tenant, 'Authorize'), { LoginId: loginId, MostRecentCached: true }), 401, 'INVALID_LOGIN');
    assertError(await call('GET', bank(tenant, `GetAccountsDetailAsync/${requestId}`)), 400, 'SESSION_NONEXISTENT');
  });
});

describe('which operations hold the card (abandoned, superseded, still processing)', () => {
  const attributes = (tenant: string, loginId: string, requestId: string) =>
    `/v3/${tenant}/insight/login/${loginId}/attributes/${requestId}/GetLendingAttributes`;
  const deleteCard = (tenant: string, loginId: string) => bank(tenant, `DeleteCard/${loginId}`);

  /** A sandbox whose clock only moves when the test moves it, and a client for it. */
  async function frozenClock(run: (call: Call, clock: { advance: (ms: number) => void }) => Promise<void>): Promise<void> {
    let now = 7_000_000;
    const local = await createSandbox({ now: () => now, pendingPollMs: 1_000 });
    try {
      await run(clientFor(local), { advance: (ms) => (now += ms) });
    } finally {
      await local.close();
    }
  }

  /** Opens another cached session on the login; its RequestId. */
  async function laterSession(localCall: Call, tenant: string, loginId: string): Promise<string> {
    const later = await localCall('POST', bank(tenant, 'Authorize'), { LoginId: loginId, MostRecentCached: true });
    assert.equal(later.status, 200, later.text);
    return (later.body as { RequestId: string }).RequestId;
  }

  /** Asks for attributes until they stop answering 202 (bounded); the statuses seen. */
  async function attributeStatuses(localCall: Call, tenant: string, loginId: string, requestId: string): Promise<number[]> {
    const statuses: number[] = [];
    let answer;
    do {
      answer = await localCall('GET', attributes(tenant, loginId, requestId));
      statuses.push(answer.status);
    } while (answer.status === 202 && statuses.length < 10);
    return statuses;
  }

  it("no longer holds the card once a later session's accounts detail was delivered", async () => {
    await frozenClock(async (localCall) => {
      const tenant = freshTenant();
      const abandoned = await cachedSession(localCall, tenant, 'pending_polls_3');
      assert.equal((await localCall('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: abandoned.requestId })).status, 202);
      assertError(await localCall('DELETE', deleteCard(tenant, abandoned.loginId)), 400, 'CARD_IN_USE');

      // A later cached session retrieves its own accounts detail (by polls; the clock does not move,
      // so the abandoned operation is far from the end of its own 3 × 1 000 ms).
      const requestId = await laterSession(localCall, tenant, abandoned.loginId);
      await fetchAccounts(localCall, tenant, requestId);
      assert.deepEqual(
        await attributeStatuses(localCall, tenant, abandoned.loginId, requestId),
        [202, 202, 202, 200],
        "only the attributes operation's own 3 pending answers",
      );
      const deleted = await localCall('DELETE', deleteCard(tenant, abandoned.loginId));
      assert.equal(deleted.status, 200, deleted.text);
      assertError(await localCall('GET', bank(tenant, `GetAccountsDetailAsync/${abandoned.requestId}`)), 400, 'SESSION_NONEXISTENT');
    });
  });

  it('holds the card while an operation is still processing in another session', async () => {
    await frozenClock(async (localCall, clock) => {
      // An earlier delivered operation does not supersede a later one still pending.
      const tenant = freshTenant();
      const first = await cachedSession(localCall, tenant, 'pending_polls_3');
      await fetchAccounts(localCall, tenant, first.requestId);
      const second = await laterSession(localCall, tenant, first.loginId);
      assert.equal((await localCall('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: second })).status, 202);
      assertError(await localCall('DELETE', deleteCard(tenant, first.loginId)), 400, 'CARD_IN_USE');
      assert.equal((await localCall('GET', attributes(tenant, first.loginId, first.requestId))).status, 202);

      // An operation still polled after a later one was delivered is not abandoned: it holds the card until done.
      const other = freshTenant();
      const polled = await cachedSession(localCall, other, 'pending_polls_3');
      assert.equal((await localCall('POST', bank(other, 'GetAccountsDetail'), { RequestId: polled.requestId })).status, 202);
      const faster = await laterSession(localCall, other, polled.loginId);
      await fetchAccounts(localCall, other, faster);
      clock.advance(1);
      assert.equal((await localCall('GET', bank(other, `GetAccountsDetailAsync/${polled.requestId}`))).status, 202);
      assertError(await localCall('DELETE', deleteCard(other, polled.loginId)), 400, 'CARD_IN_USE');
      assert.equal((await localCall('GET', attributes(other, polled.loginId, faster))).status, 202);
      assert.equal((await localCall('GET', bank(other, `GetAccountsDetailAsync/${polled.requestId}`))).status, 202);
      assert.equal((await localCall('GET', bank(other, `GetAccountsDetailAsync/${polled.requestId}`))).status, 200);
      assert.equal((await localCall('DELETE', deleteCard(other, polled.loginId))).status, 200);

      // Only an operation of the same kind supersedes: a later delivered summary does not free accounts detail.
      const third = freshTenant();
      const accounts = await cachedSession(localCall, third, 'pending_polls_3');
      assert.equal((await localCall('POST', bank(third, 'GetAccountsDetail'), { RequestId: accounts.requestId })).status, 202);
      const summary = await laterSession(localCall, third, accounts.loginId);
      let answer = await localCall('POST', bank(third, 'GetAccountsSummary'), { RequestId: summary });
      while (answer.status === 202) answer = await localCall('GET', bank(third, `GetAccountsSummaryAsync/${summary}`));
      assert.equal(answer.status, 200, answer.text);
      assertError(await localCall('DELETE', deleteCard(third, accounts.loginId)), 400, 'CARD_IN_USE');
    });
  });

  it('holds the card until its own processing time has passed when nothing later supersedes it', async () => {
    await frozenClock(async (localCall, clock) => {
      const tenant = freshTenant();
      // The later session's accounts detail started first, so its delivery does not supersede the
      // abandoned one, which was asked for after it.
      const { loginId, requestId } = await cachedSession(localCall, tenant, 'pending_polls_3');
      assert.equal((await localCall('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId })).status, 202);
      const abandoned = await laterSession(localCall, tenant, loginId);
      assert.equal((await localCall('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: abandoned })).status, 202);
      await fetchAccounts(localCall, tenant, requestId);
      clock.advance(2_999);
      assert.equal((await localCall('GET', attributes(tenant, loginId, requestId))).status, 202);
      assertError(await localCall('DELETE', deleteCard(tenant, loginId)), 400, 'CARD_IN_USE');

      clock.advance(1); // 3 polls × 1 000 ms since the abandoned operation started
      assert.deepEqual(
        await attributeStatuses(localCall, tenant, loginId, requestId),
        [202, 202, 202, 200],
        "only the attributes operation's own 3 pending answers are left",
      );
      // The abandoned session sees the same clock: its first poll in a while is ready.
      assert.equal((await localCall('GET', bank(tenant, `GetAccountsDetailAsync/${abandoned}`))).status, 200);
      assert.equal((await localCall('DELETE', deleteCard(tenant, loginId))).status, 200);
    });
  });

  it('stops blocking the card in real time once its own processing time has passed', async () => {
    const local = await createSandbox({ pendingPollMs: 25 });
    try {
      const localCall = clientFor(local);
      const tenant = freshTenant();
      const abandoned = await cachedSession(localCall, tenant, 'pending_polls_2');
      assert.equal((await localCall('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: abandoned.requestId })).status, 202);
      // Nothing supersedes it (no other session): before the fix it stayed blocked until the session idled out (8 minutes).
      await waitUntil(async () => (await localCall('DELETE', deleteCard(tenant, abandoned.loginId))).status === 200, 'DeleteCard to answer 200');
    } finally {
      await local.close();
    }
  });
});
