/**
 * The realistic variations (sandbox/variations.ts): each is served as documented, by scenario
 * and by header, and only the representation changes. Every varied answer is compared member by
 * member with the same data written plainly: the only differences allowed are the variation's own
 * (a member it adds, a descriptive field it nulls, a date it rewrites), so ids, amounts and balances
 * are unchanged and the balances still follow the transactions.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AccountsDetailResponse, AuthorizeResponse, InvestmentsResponse, PendingResponse } from '../../src/aggregator/schemas.js';
import { generateBankData, selectAccounts } from '../../sandbox/banking-data.js';
import { generateInvestmentData } from '../../sandbox/investments-data.js';
import { SCENARIOS, type ScenarioListing } from '../../sandbox/scenarios.js';
import { createSandbox, type Sandbox } from '../../sandbox/server.js';
import { VARIATIONS, VARIATION_HEADER } from '../../sandbox/variations.js';
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
const attributesPath = (tenant: string, loginId: string, requestId: string, operation?: string) =>
  `/v3/${tenant}/insight/login/${loginId}/attributes/${requestId}${operation ? `/${operation}` : ''}`;
const YEAR = { DaysOfTransactions: 'Days365' } as const;
const plainJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

// --- the comparison of a varied answer with the same data written plainly -----------------------

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

interface Difference {
  readonly path: string;
  readonly key: string;
  readonly kind: 'extra' | 'null' | 'date';
  readonly value: unknown;
}

/** What a date says, whichever way it is written (YYYY-MM-DD, YYYY/MM/DD, YYYY-MM-DDT00:00:00). */
const dateOf = (value: unknown) => (typeof value === 'string' ? value.replace(/^(\d{4})[-/](\d{2})[-/](\d{2})(T00:00:00)?$/, '$1-$2-$3') : value);

/**
 * Every difference between `varied` and `plain`; fails on any a variation cannot make (a missing
 * member, another number, another id, a date that says another day).
 */
function differences(varied: unknown, plain: unknown, path = '$'): Difference[] {
  if (Array.isArray(plain)) {
    assert.ok(Array.isArray(varied), `${path}: an array`);
    assert.equal(varied.length, plain.length, `${path}: as many items`);
    return plain.flatMap((item, index) => differences(varied[index], item, `${path}[${index}]`));
  }
  if (isObject(plain)) {
    assert.ok(isObject(varied), `${path}: an object`);
    const found: Difference[] = [];
    for (const [key, value] of Object.entries(varied)) {
      if (!Object.hasOwn(plain, key)) found.push({ path: `${path}.${key}`, key, kind: 'extra', value });
    }
    for (const [key, value] of Object.entries(plain)) {
      assert.ok(Object.hasOwn(varied, key), `${path}.${key}: still there`);
      const other: unknown = varied[key];
      if (other === null && value !== null && (typeof value === 'string' || Array.isArray(value)))
        found.push({ path: `${path}.${key}`, key, kind: 'null', value: other });
      else if (key === 'Date' && other !== value) {
        assert.equal(dateOf(other), dateOf(value), `${path}.${key}: the same day`);
        found.push({ path: `${path}.${key}`, key, kind: 'date', value: other });
      } else found.push(...differences(other, value, `${path}.${key}`));
    }
    return found;
  }
  assert.deepEqual(varied, plain, path);
  return [];
}

const kinds = (found: readonly Difference[]) => [...new Set(found.map((d) => d.kind))].sort();
const keysOf = (found: readonly Difference[], kind: Difference['kind']) => [...new Set(found.filter((d) => d.kind === kind).map((d) => d.key))].sort();

/** In date order, Balance_i = Balance_{i-1} + Credit - Debit, whatever way the dates are written. */
function assertLedger(accounts: readonly Json[]): void {
  const cents = (n: number) => Math.round(n * 100) / 100;
  for (const account of accounts) {
    const transactions = (account.Transactions as Json[] | undefined) ?? [];
    assert.ok(transactions.length > 20);
    assert.equal((account.Balance as Json).Current, transactions[0]?.Balance);
    const chronological = [...transactions].reverse();
    for (let i = 1; i < chronological.length; i++) {
      const previous = chronological[i - 1] as Json;
      const current = chronological[i] as Json;
      assert.ok(String(dateOf(previous.Date)) <= String(dateOf(current.Date)));
      assert.equal(current.Balance, cents((previous.Balance as number) + ((current.Credit as number | null) ?? 0) - ((current.Debit as number | null) ?? 0)));
    }
  }
}

// --- sessions ----------------------------------------------------------------------------------

/** A saved login of `username` with data ready at once, its accounts retrieved for a year, as sent. */
async function yearOf(username: string, headers: Record<string, string> = {}) {
  const tenant = freshTenant();
  const session = await cachedSession(call, tenant, username, 0);
  const answer = await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: session.requestId, ...YEAR }, headers);
  assert.equal(answer.status, 200, answer.text.slice(0, 300));
  return { tenant, ...session, body: answer.body as Json };
}

/** The same login's accounts as the generator writes them plainly. */
const plainAccounts = (loginId: string) => plainJson(selectAccounts(generateBankData(loginId, asOf), asOf, YEAR));

async function investmentsOf(tenant: string, loginId: string, requestId: string, headers: Record<string, string> = {}) {
  const answer = await call('POST', `/v3/${tenant}/Investments`, { LoginId: loginId, RequestId: requestId, MostRecentCached: true }, headers);
  assert.equal(answer.status, 200, answer.text.slice(0, 300));
  return answer.body as Json;
}
const plainInvestments = (loginId: string) => {
  const data = generateInvestmentData(loginId, asOf);
  return plainJson({ Accounts: data.Accounts, Securities: data.Securities });
};

/** Custom attributes with their contributing transactions (both need the transactions' Description). */
async function attributesWithDetail(tenant: string, loginId: string, requestId: string, headers: Record<string, string> = {}) {
  const answer = await call(
    'POST',
    attributesPath(tenant, loginId, requestId),
    {
      MostRecentCached: true,
      Attributes: { Card: ['sum_employer_income', 'balance_min'] },
      Options: { AttributesDetail: ['sum_employer_income', 'balance_min'] },
    },
    headers,
  );
  assert.equal(answer.status, 200, answer.text.slice(0, 300));
  return answer.body as Json;
}
const detailTransactions = (body: Json) => ((body.Card as Json).AttributesDetail as Json[]).flatMap((detail) => detail.Transactions as Json[]);

const byName = (scenarios: readonly ScenarioListing[], username: string) =>
  scenarios.find((s) => s.username === username) ?? assert.fail(`${username} is listed`);

describe('realistic variations chosen by the username', () => {
  it('lists each variation scenario with its variations and slow replies, and the header with what each variation changes and why', async () => {
    const body = (await call('GET', '/sandbox/scenarios')).body as {
      scenarios: ScenarioListing[];
      variations: { header: string; names: Record<string, { changes: string; why: string }> };
    };
    const expected: Record<string, readonly string[]> = {
      variant_nulls: ['nulls'],
      variant_extra_members: ['extra-members'],
      variant_slash_dates: ['slash-dates'],
      variant_iso_datetimes: ['iso-datetimes'],
      variant_brand_code: ['brand-code'],
      variant_all: ['nulls', 'extra-members', 'slash-dates', 'brand-code'],
    };
    for (const [username, variations] of Object.entries(expected)) {
      const entry = byName(body.scenarios, username);
      assert.deepEqual(entry.variations, variations, username);
      assert.equal(entry.kind, 'variation');
      assert.equal(entry.institution, 'SandboxBank');
      assert.deepEqual(entry.challengeSequence, []);
    }
    assert.deepEqual(byName(body.scenarios, 'slow_answer').slowReply, { on: 'answer', times: null });
    assert.deepEqual(byName(body.scenarios, 'slow_authorize').slowReply, { on: 'authorize', times: null });
    assert.equal(byName(body.scenarios, 'no_mfa').slowReply, null);
    assert.deepEqual(byName(body.scenarios, 'no_mfa').variations, []);
    assert.equal(body.variations.header, VARIATION_HEADER);
    assert.deepEqual(Object.keys(body.variations.names).sort(), Object.keys(VARIATIONS).sort());
    for (const [name, doc] of Object.entries(body.variations.names)) assert.ok(doc.changes.length > 20 && doc.why.length > 20, name);
    // Kept out of the kinds other tests run through every flow.
    assert.ok(SCENARIOS.filter((s) => s.variations || s.slowReply).every((s) => s.kind === 'variation'));
  });

  it('writes nulls into the descriptive fields of variant_nulls, the same transactions in every answer, and changes nothing else', async () => {
    const { tenant, loginId, requestId, body } = await yearOf('variant_nulls');
    parsesWith(AccountsDetailResponse, body);
    const found = differences(body.Accounts, plainAccounts(loginId));
    assert.deepEqual(kinds(found), ['null']);
    assert.deepEqual(keysOf(found, 'null'), ['Category', 'Code', 'Description', 'Email', 'PhoneNumber']);
    const accounts = body.Accounts as Json[];
    assert.equal(accounts.find((a) => a.Type === 'Chequing')?.Category, null);
    assert.ok(accounts.filter((a) => a.Type !== 'Chequing').every((a) => typeof a.Category === 'string'));
    const transactions = accounts.flatMap((a) => a.Transactions as Json[]);
    const nulled = transactions.filter((t) => t.Description === null);
    assert.ok(nulled.length > 10 && nulled.length < transactions.length / 2, `${nulled.length} of ${transactions.length}`);
    assert.ok(nulled.every((t) => /[0-3]$/.test(String(t.Id)) && t.Code === null));
    assert.equal((body.Login as Json).Type, null);
    assertLedger(accounts);

    const invested = await investmentsOf(tenant, loginId, requestId);
    parsesWith(InvestmentsResponse, invested);
    const investedFound = differences({ Accounts: invested.Accounts, Securities: invested.Securities }, plainInvestments(loginId));
    assert.deepEqual(kinds(investedFound), ['null']);
    assert.deepEqual(keysOf(investedFound, 'null'), ['Aliases', 'Category', 'Description', 'ISIN', 'Name']);

    // The attributes' contributing transactions: null exactly where the accounts answer has it.
    const nullIds = new Set(nulled.map((t) => t.Id));
    const detail = detailTransactions(await attributesWithDetail(tenant, loginId, requestId));
    assert.ok(detail.length > 5);
    for (const transaction of detail) assert.equal(transaction.Description === null, nullIds.has(transaction.TransactionId), String(transaction.TransactionId));
  });

  it('adds members the spec does not list to variant_extra_members answers, and a string Tag beside the attributes group', async () => {
    const { tenant, loginId, requestId, body } = await yearOf('variant_extra_members');
    parsesWith(AccountsDetailResponse, body);
    assert.equal(body.Tag, 'abc');
    const found = differences(body.Accounts, plainAccounts(loginId));
    assert.deepEqual(kinds(found), ['extra']);
    assert.deepEqual(keysOf(found, 'extra'), ['Extra', 'Nickname', 'Reference', 'SubCode', 'Type', 'Unit']);
    const account = (body.Accounts as Json[])[0] as Json;
    assert.deepEqual(account.Extra, { Source: 'sandbox' });
    assert.equal((account.Holder as Json).Type, 'Individual');
    assert.ok(((account.Transactions as Json[])[0] as Json).Reference);
    assert.equal((body.Login as Json).IsGoodLogin, true);
    assertLedger(body.Accounts as Json[]);

    const invested = await investmentsOf(tenant, loginId, requestId);
    assert.equal(invested.Tag, 'abc');
    assert.deepEqual(kinds(differences({ Accounts: invested.Accounts, Securities: invested.Securities }, plainInvestments(loginId))), ['extra']);

    const attributes = await call('GET', attributesPath(tenant, loginId, requestId, 'GetLendingAttributes'));
    assert.equal(attributes.status, 200, attributes.text.slice(0, 300));
    const members = attributes.body as Json;
    // Beside the one group object: a top-level string member that is no attribute group.
    assert.deepEqual(Object.keys(members).sort(), ['HttpStatusCode', 'LendingAttributes', 'Login', 'RequestId', 'Tag']);
    assert.equal(members.Tag, 'abc');
    assert.ok(isObject(members.LendingAttributes) && typeof members.LendingAttributes.Id === 'string');
  });

  it('writes variant_slash_dates transaction dates YYYY/MM/DD, the balances still following the transactions', async () => {
    const { tenant, loginId, requestId, body } = await yearOf('variant_slash_dates');
    parsesWith(AccountsDetailResponse, body);
    const found = differences(body.Accounts, plainAccounts(loginId));
    assert.deepEqual(kinds(found), ['date']);
    const transactions = (body.Accounts as Json[]).flatMap((a) => a.Transactions as Json[]);
    assert.ok(transactions.every((t) => /^\d{4}\/\d{2}\/\d{2}$/.test(String(t.Date))));
    assertLedger(body.Accounts as Json[]);
    const invested = await investmentsOf(tenant, loginId, requestId);
    const investmentDates = (invested.Accounts as Json[]).flatMap((a) => (a.Transactions as Json[]).map((t) => t.Date));
    assert.ok(investmentDates.length > 0 && investmentDates.every((date) => /^\d{4}\/\d{2}\/\d{2}$/.test(String(date))));
    assert.deepEqual(kinds(differences({ Accounts: invested.Accounts, Securities: invested.Securities }, plainInvestments(loginId))), ['date']);
  });

  it('writes variant_iso_datetimes dates as timestamps with a time in accounts, investments and attributes detail', async () => {
    const { tenant, loginId, requestId, body } = await yearOf('variant_iso_datetimes');
    parsesWith(AccountsDetailResponse, body);
    const timestamp = /^\d{4}-\d{2}-\d{2}T00:00:00$/;
    assert.deepEqual(kinds(differences(body.Accounts, plainAccounts(loginId))), ['date']);
    const transactions = (body.Accounts as Json[]).flatMap((a) => a.Transactions as Json[]);
    assert.ok(transactions.every((t) => timestamp.test(String(t.Date))));
    assert.ok(transactions.some((t) => t.Date === `${asOf}T00:00:00`));
    assertLedger(body.Accounts as Json[]);
    const invested = await investmentsOf(tenant, loginId, requestId);
    assert.ok((invested.Accounts as Json[]).flatMap((a) => a.Transactions as Json[]).every((t) => timestamp.test(String(t.Date))));
    // Securities' Date is a timestamp already (the spec's format): left as it was.
    assert.ok((invested.Securities as Json[]).every((s) => String(s.Date).endsWith('Z')));
    const detail = detailTransactions(await attributesWithDetail(tenant, loginId, requestId));
    assert.ok(detail.length > 0 && detail.every((t) => timestamp.test(String(t.Date))));
  });

  it('writes the code of variant_brand_code pending bodies as FlinksCode, which the contract still reads', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'variant_brand_code');
    const statuses: number[] = [];
    let answer = await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId });
    while (answer.status === 202) {
      statuses.push(answer.status);
      const body = answer.body as Json;
      assert.equal(body.FlinksCode, 'OPERATION_PENDING');
      assert.equal('ServiceCode' in body, false);
      assert.equal(parsesWith(PendingResponse, body).ServiceCode, 'OPERATION_PENDING');
      answer = await call('GET', bank(tenant, `GetAccountsDetailAsync/${requestId}`));
    }
    assert.deepEqual(statuses, [202, 202]);
    parsesWith(AccountsDetailResponse, answer.body);
  });

  it('combines nulls, extra members, slash dates and FlinksCode for variant_all, the data unchanged', async () => {
    const tenant = freshTenant();
    const { loginId, requestId } = await cachedSession(call, tenant, 'variant_all', 1);
    const pending = await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId, ...YEAR });
    assert.equal((pending.body as Json).FlinksCode, 'OPERATION_PENDING');
    assert.equal((pending.body as Json).Tag, 'abc');
    const { body } = await fetchAccounts(call, tenant, requestId, YEAR);
    const found = differences((body as Json).Accounts, plainAccounts(loginId));
    assert.deepEqual(kinds(found), ['date', 'extra', 'null']);
    assertLedger((body as Json).Accounts as Json[]);
  });

  it('varies the Authorize answers of a variation scenario too', async () => {
    const tenant = freshTenant();
    const answer = await call('POST', bank(tenant, 'Authorize'), {
      Institution: 'SandboxBank',
      Username: 'variant_all',
      Password: 'Everyday',
      MostRecentCached: false,
      Save: true,
    });
    assert.equal(answer.status, 200);
    const body = parsesWith(AuthorizeResponse, answer.body);
    assert.equal(body.Login?.Type, null);
    assert.equal((answer.body as Json).Tag, 'abc');
  });
});

describe('realistic variations by header', () => {
  it('varies the answer of every endpoint on any scenario, changing only the representation', async () => {
    const tenant = freshTenant();
    const { loginId, requestId } = await cachedSession(call, tenant, 'no_mfa', 0);
    const endpoints: [string, (headers: Record<string, string>) => ReturnType<Call>][] = [
      ['accounts detail', (headers) => call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId, ...YEAR }, headers)],
      ['accounts detail poll', (headers) => call('GET', bank(tenant, `GetAccountsDetailAsync/${requestId}`), undefined, headers)],
      ['accounts summary', (headers) => call('POST', bank(tenant, 'GetAccountsSummary'), { RequestId: requestId }, headers)],
      ['statements', (headers) => call('POST', bank(tenant, 'GetStatements'), { RequestId: requestId }, headers)],
      ['investments', (headers) => call('POST', `/v3/${tenant}/Investments`, { LoginId: loginId, RequestId: requestId, MostRecentCached: true }, headers)],
      ['attributes package', (headers) => call('GET', attributesPath(tenant, loginId, requestId, 'GetAllAttributes'), undefined, headers)],
      [
        'custom attributes',
        (headers) =>
          call(
            'POST',
            attributesPath(tenant, loginId, requestId),
            { MostRecentCached: true, Attributes: { Card: ['count_nsf', 'sum_employer_income'] }, Options: { AttributesDetail: ['sum_employer_income'] } },
            headers,
          ),
      ],
      ['cached Authorize', (headers) => call('POST', bank(tenant, 'Authorize'), { LoginId: loginId, MostRecentCached: true }, headers)],
    ];
    // Each cached Authorize opens its own session: only its RequestId differs.
    const comparable = (body: unknown) => ({ ...(body as Json), RequestId: null });
    for (const [what, ask] of endpoints) {
      const plain = await ask({});
      const varied = await ask({ [VARIATION_HEADER]: 'nulls, extra-members,slash-dates' });
      assert.equal(plain.status, 200, `${what}: ${plain.text.slice(0, 200)}`);
      assert.equal(varied.status, 200, `${what}: ${varied.text.slice(0, 200)}`);
      assert.equal((varied.body as Json).Tag, 'abc', `${what}: the envelope's extra member`);
      const found = differences(comparable(varied.body), comparable(plain.body));
      assert.ok(
        found.some((d) => d.kind === 'null'),
        `${what}: Login.Type at least`,
      );
      if (what === 'accounts detail') {
        assert.deepEqual(kinds(found), ['date', 'extra', 'null']);
        const accounts = (varied.body as Json).Accounts as Json[];
        assert.ok(accounts.flatMap((a) => a.Transactions as Json[]).every((t) => /^\d{4}\/\d{2}\/\d{2}$/.test(String(t.Date))));
        assertLedger(accounts);
      }
    }
  });

  it('writes FlinksCode in a 202 under brand-code and leaves the same request without the header as the spec writes it', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'pending_polls_3');
    const branded = await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId }, { [VARIATION_HEADER]: 'brand-code' });
    assert.equal(branded.status, 202);
    assert.deepEqual(Object.keys(branded.body as Json), ['FlinksCode', 'Links', 'HttpStatusCode', 'Message', 'RequestId']);
    const plain = await call('GET', bank(tenant, `GetAccountsDetailAsync/${requestId}`));
    assert.equal((plain.body as Json).ServiceCode, 'OPERATION_PENDING');
  });

  it('refuses an unknown variation, and slash-dates with iso-datetimes, with INVALID_REQUEST before the request is processed', async () => {
    const tenant = freshTenant();
    const { requestId } = await cachedSession(call, tenant, 'pending_polls_1');
    assertError(await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId }, { [VARIATION_HEADER]: 'sideways' }), 400, 'INVALID_REQUEST');
    assertError(
      await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId }, { [VARIATION_HEADER]: 'slash-dates,iso-datetimes' }),
      400,
      'INVALID_REQUEST',
    );
    // Neither counted as a poll: the operation still starts with its one 202.
    assert.equal((await call('POST', bank(tenant, 'GetAccountsDetail'), { RequestId: requestId })).status, 202);
  });

  it('never varies an error body', async () => {
    const answer = await call(
      'POST',
      bank(freshTenant(), 'GetAccountsDetail'),
      { RequestId: '00000000-0000-4000-8000-000000000000' },
      { [VARIATION_HEADER]: 'extra-members,brand-code' },
    );
    assertError(answer, 400, 'SESSION_NONEXISTENT');
    assert.equal((answer.body as Json).ServiceCode, 'SESSION_NONEXISTENT');
    assert.equal('Tag' in (answer.body as Json), false);
  });
});
