import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AccountsDetailResponse, AttributesResponse, PendingResponse } from '../../src/aggregator/schemas.js';
import { ATTRIBUTE_NAMES, ATTRIBUTE_PACKAGES } from '../../sandbox/attributes.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import type { Account } from '../../sandbox/spec-shapes.js';
import { specAccounts } from '../helpers/spec-data.js';
import { assertError, authorizeLive, cachedSession, clientFor, fetchAccounts, freshTenant, listing, parsesWith, type Call } from './helpers.js';

let sandbox: Sandbox;
let call: Call;
let asOf: string;
before(async () => {
  sandbox = await createSandbox();
  call = clientFor(sandbox);
  asOf = (await listing(call)).asOf;
});
after(async () => sandbox.close());

const attributesPath = (tenant: string, loginId: string, requestId: string, operation?: string) =>
  `/v3/${tenant}/insight/login/${loginId}/attributes/${requestId}${operation ? `/${operation}` : ''}`;

/** A cached session whose accounts detail was retrieved, plus the full year of accounts. */
async function ready(tenant: string, username = 'no_mfa') {
  const session = await cachedSession(call, tenant, username, 0);
  const { body } = await fetchAccounts(call, tenant, session.requestId, { DaysOfTransactions: 'Days365' });
  return { ...session, accounts: specAccounts(parsesWith(AccountsDetailResponse, body).Accounts) };
}

// --- an independent recomputation (not the sandbox's code): windows end at asOf, inclusive ---
function daysBefore(date: string, days: number): string {
  const at = new Date(`${date}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() - days);
  return at.toISOString().slice(0, 10);
}
function recompute(accounts: Account[], asOfDate: string) {
  const all = accounts.flatMap((a) => a.Transactions ?? []);
  const last90 = all.filter((t) => t.Date > daysBefore(asOfDate, 90));
  const last30 = all.filter((t) => t.Date > daysBefore(asOfDate, 30));
  const none = <T>(n: number, value: T) => (n === 0 ? 'NONE_DETECTED' : value);
  const nsf = (list: typeof all) => list.filter((t) => t.Debit !== null && /\bNSF\b/i.test(t.Description)).length;
  const payroll = all.filter((t) => t.Credit !== null && t.Description.startsWith('PAYROLL '));
  const balances = last90.map((t) => t.Balance);
  return {
    balance_current: Math.round(accounts.reduce((s, a) => s + (a.Balance.Current ?? 0), 0) * 100) / 100,
    balance_max: none(balances.length, Math.max(...balances)),
    balance_min: none(balances.length, Math.min(...balances)),
    count_nsf: none(nsf(all), nsf(all)),
    count_nsf_30_days: none(nsf(last30), nsf(last30)),
    count_nsf_90_days: none(nsf(last90), nsf(last90)),
    sum_employer_income: none(payroll.length, Math.round(payroll.reduce((s, t) => s + (t.Credit ?? 0), 0) * 100) / 100),
  };
}

describe('attributes preconditions', () => {
  it('refuses a RequestId from a live Authorize', async () => {
    const tenant = freshTenant();
    const { scenarios } = await listing(call);
    const done = await authorizeLive(call, tenant, scenarios.find((s) => s.username === 'no_mfa') ?? assert.fail());
    await fetchAccounts(call, tenant, done.RequestId);
    assertError(await call('GET', attributesPath(tenant, done.Login?.Id ?? '', done.RequestId, 'GetAllAttributes')), 400, 'INVALID_REQUEST');
  });

  it('refuses attributes before accounts detail was requested', async () => {
    const tenant = freshTenant();
    const { loginId, requestId } = await cachedSession(call, tenant, 'no_mfa');
    assertError(await call('GET', attributesPath(tenant, loginId, requestId, 'GetIncomeAttributes')), 400, 'INVALID_REQUEST');
  });

  it('answers 202 while accounts detail for the card is still running, then 200', async () => {
    const tenant = freshTenant();
    const { loginId, requestId } = await cachedSession(call, tenant, 'pending_polls_1');
    assert.equal((await call('POST', `/v3/${tenant}/BankingServices/GetAccountsDetail`, { RequestId: requestId })).status, 202);
    const pending = await call('GET', attributesPath(tenant, loginId, requestId, 'GetLendingAttributes'));
    assert.equal(pending.status, 202);
    parsesWith(PendingResponse, pending.body);
    assert.equal((await call('GET', `/v3/${tenant}/BankingServices/GetAccountsDetailAsync/${requestId}`)).status, 200);
    // The attributes operation has its own pending poll (pendingPolls 1), then answers.
    assert.equal((await call('GET', attributesPath(tenant, loginId, requestId, 'GetLendingAttributes'))).status, 202);
    const answer = await call('GET', attributesPath(tenant, loginId, requestId, 'GetLendingAttributes'));
    assert.equal(answer.status, 200);
    parsesWith(AttributesResponse, answer.body);
  });

  it('refuses a LoginId that is not the session login', async () => {
    const tenant = freshTenant();
    const { requestId } = await ready(tenant);
    const other = await cachedSession(call, tenant, 'security_question');
    assertError(await call('GET', attributesPath(tenant, other.loginId, requestId, 'GetAllAttributes')), 401, 'INVALID_LOGIN');
  });
});

describe('attribute values', () => {
  it('serves package operations with their fixed documented groups and sets', async () => {
    const tenant = freshTenant();
    const { loginId, requestId } = await ready(tenant);
    for (const [operation, { group, attributes }] of Object.entries(ATTRIBUTE_PACKAGES)) {
      const answer = await call('GET', attributesPath(tenant, loginId, requestId, operation));
      assert.equal(answer.status, 200, answer.text);
      const parsed = parsesWith(AttributesResponse, answer.body);
      assert.deepEqual(Object.keys(parsed.Groups), [group]);
      assert.deepEqual(
        Object.keys(parsed.Groups[group] ?? {})
          .filter((k) => k !== 'Id')
          .sort(),
        [...attributes].sort(),
      );
    }
    assert.equal((await call('GET', attributesPath(tenant, loginId, requestId, 'GetNothing'))).status, 404);
  });

  for (const username of ['no_mfa', 'security_question', 'triple_question', 'token_code', 'trusted_device', 'pending_polls_9', 'large_4x300']) {
    it(`serves attributes equal to a recomputation from the returned transactions (${username})`, async () => {
      const tenant = freshTenant();
      const { loginId, requestId, accounts } = await ready(tenant, username);
      const answer = await call('POST', attributesPath(tenant, loginId, requestId), { MostRecentCached: true, Attributes: { Card: ATTRIBUTE_NAMES } });
      assert.equal(answer.status, 200, answer.text);
      const card = parsesWith(AttributesResponse, answer.body).Groups.Card ?? assert.fail();
      for (const [name, expected] of Object.entries(recompute(accounts, asOf))) assert.deepEqual(card[name], expected, name);
      // Restricted to Operations accounts, the same recomputation holds on the filtered accounts.
      const operations = await call('POST', attributesPath(tenant, loginId, requestId), {
        MostRecentCached: true,
        Attributes: { Card: ATTRIBUTE_NAMES },
        Filters: { AccountCategory: ['Operations'] },
      });
      const filtered = parsesWith(AttributesResponse, operations.body).Groups.Card ?? assert.fail();
      for (const [name, expected] of Object.entries(
        recompute(
          accounts.filter((a) => a.Category === 'Operations'),
          asOf,
        ),
      ))
        assert.deepEqual(filtered[name], expected, name);
    });
  }

  it('answers NONE_DETECTED when no transaction qualifies', async () => {
    const tenant = freshTenant();
    const { loginId, requestId } = await ready(tenant);
    const answer = await call('POST', attributesPath(tenant, loginId, requestId), {
      MostRecentCached: true,
      Attributes: { Card: ['sum_employer_income', 'count_nsf'] },
      Filters: { AccountCategory: ['Credits'] },
    });
    const card = parsesWith(AttributesResponse, answer.body).Groups.Card ?? assert.fail();
    assert.equal(card.sum_employer_income, 'NONE_DETECTED');
    assert.equal(card.count_nsf, 'NONE_DETECTED');
  });

  it('returns the contributing transactions for AttributesDetail, dated YYYY/MM/DD, from the filtered accounts', async () => {
    const tenant = freshTenant();
    const { loginId, requestId, accounts } = await ready(tenant);
    const chequing = accounts.find((a) => a.Type === 'Chequing') ?? assert.fail();
    const answer = await call('POST', attributesPath(tenant, loginId, requestId), {
      MostRecentCached: true,
      Attributes: { Card: ['sum_employer_income', 'count_nsf'] },
      Options: { AttributesDetail: ['sum_employer_income'], AccountFilter: [chequing.Id] },
    });
    const card = parsesWith(AttributesResponse, answer.body).Groups.Card ?? assert.fail();
    const detail = card.AttributesDetail?.[0];
    assert.equal(detail?.Attribute, 'sum_employer_income');
    const payroll = (chequing.Transactions ?? []).filter((t) => t.Description.startsWith('PAYROLL '));
    assert.deepEqual(detail?.Transactions.map((t) => t.TransactionId).sort(), payroll.map((t) => t.Id).sort());
    assert.ok(detail?.Transactions.every((t) => /^\d{4}\/\d{2}\/\d{2}$/.test(t.Date) && t.AccountId === chequing.Id));
  });

  it('refuses unknown attribute names with INVALID_REQUEST naming them', async () => {
    const tenant = freshTenant();
    const { loginId, requestId } = await ready(tenant);
    const answer = await call('POST', attributesPath(tenant, loginId, requestId), {
      MostRecentCached: true,
      Attributes: { Card: ['balance_min', 'credit_score_magic'] },
    });
    assertError(answer, 400, 'INVALID_REQUEST');
    assert.match((answer.body as { Message: string }).Message, /credit_score_magic/);
  });
});
