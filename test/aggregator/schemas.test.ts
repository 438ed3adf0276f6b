/**
 * Unit tests of the wire contract's parsing: liberal where the spec or FACTS.md says the service
 * varies (extra fields, nulls, spellings, brand-prefixed codes), strict where the spec forbids, and
 * every refusal names the field.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { z } from 'zod';
import {
  AccountsDetailResponse,
  AttributesRequest,
  AttributesResponse,
  AuthorizeRequest,
  AuthorizeResponse,
  ErrorResponse,
  InvestmentsResponse,
  PendingResponse,
  SecurityResponses,
  authorizeModeOf,
  readServiceCode,
} from '../../src/aggregator/schemas.js';
import { describeIssues } from '../../src/validation/parse-or-refuse.js';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';
const ID2 = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

const login = { Username: 'no_mfa', IsScheduledRefresh: false, LastRefresh: '2026-10-31T12:00:00.123', Type: 'Personal', Id: ID };
const transaction = { Id: ID2, Date: '2026-10-30', Code: null, Description: 'PAYROLL ACME', Debit: null, Credit: 1200.5, Balance: 1500.25 };
const account = {
  Id: ID,
  Transactions: [transaction],
  TransitNumber: '12345',
  InstitutionNumber: '001',
  OverdraftLimit: 500,
  Title: 'Chequing Account',
  AccountNumber: '1234567',
  Balance: { Available: 1500.25, Current: 1500.25, Limit: null },
  Category: 'Operations',
  Type: 'Chequing',
  Currency: 'CAD',
  Holder: {
    Name: 'Sam Roy',
    Address: { CivicAddress: '1 Main', City: 'Montreal', Province: 'QC', PostalCode: 'H2X 1Y4', POBox: null, Country: 'CA' },
    Email: 's@example.com',
    PhoneNumber: '(514) 555-0000',
  },
};
const detail = { HttpStatusCode: 200, Accounts: [account], Login: login, Institution: 'SandboxBank', RequestId: ID };

/** Parses and returns the data, failing with the described issues otherwise. */
function ok<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) assert.fail(describeIssues(result.error));
  return result.data;
}
/** Asserts the refusal and returns its description. */
function refused(schema: z.ZodType, value: unknown): string {
  const result = schema.safeParse(value);
  assert.equal(result.success, false, 'expected a refusal');
  return result.success ? '' : describeIssues(result.error);
}

describe('tolerance of answers', () => {
  it('keeps fields the spec does not list, at every level', () => {
    const parsed = ok(AccountsDetailResponse, {
      ...detail,
      Links: [{ rel: 'AccountsDetail', href: '/GetAccountsDetail', example: null }],
      Accounts: [{ ...account, NickName: 'Daily', Transactions: [{ ...transaction, Category: 'Income' }] }],
      Login: { ...login, Culture: 'fr-CA' },
    }) as Record<string, unknown> & z.output<typeof AccountsDetailResponse>;
    assert.ok(Array.isArray(parsed.Links));
    assert.equal((parsed.Accounts[0] as Record<string, unknown>).NickName, 'Daily');
    assert.equal((parsed.Accounts[0]?.Transactions?.[0] as Record<string, unknown>).Category, 'Income');
    assert.equal((parsed.Login as Record<string, unknown>).Culture, 'fr-CA');
  });

  it('accepts nulls where the spec allows them', () => {
    ok(AccountsDetailResponse, {
      ...detail,
      Institution: null,
      Login: { ...login, Type: null },
      Accounts: [
        { ...account, Balance: { Available: null, Current: null, Limit: null }, Holder: null, TransitNumber: null, OverdraftLimit: null, Transactions: null },
      ],
    });
    ok(AccountsDetailResponse, { ...detail, Accounts: [{ ...account, Transactions: [{ ...transaction, Code: 'DEP', Debit: 10, Credit: null }] }] });
  });

  it('takes the nulls a real service sends in passed-through fields, and refuses them where the product acts, naming the field', () => {
    const nulls = ok(AccountsDetailResponse, {
      ...detail,
      Accounts: [{ ...account, Title: null, Category: null, Balance: null, Transactions: [{ ...transaction, Description: null, Balance: null }] }],
    });
    assert.equal(nulls.Accounts[0]?.Category, null);
    assert.equal(nulls.Accounts[0]?.Transactions?.[0]?.Description, null);
    assert.match(refused(AccountsDetailResponse, { ...detail, Login: { ...login, Id: null } }), /^Login\.Id: /);
    assert.match(refused(AccountsDetailResponse, { ...detail, Accounts: [{ ...account, Id: null }] }), /^Accounts\[0\]\.Id: /);
    assert.match(refused(AccountsDetailResponse, { ...detail, Accounts: [{ ...account, Title: 12 }] }), /^Accounts\[0\]\.Title: /);
  });

  it('reads a transaction date written YYYY-MM-DD, YYYY/MM/DD or as an ISO timestamp, and keeps it as written', () => {
    for (const date of ['2026-10-30', '2026/10/30', '2026-10-30T00:00:00', '2026-10-30T13:45:10.123Z', '2026-10-30T13:45:10-05:00']) {
      const parsed = ok(AccountsDetailResponse, { ...detail, Accounts: [{ ...account, Transactions: [{ ...transaction, Date: date }] }] });
      assert.equal(parsed.Accounts[0]?.Transactions?.[0]?.Date, date);
    }
    for (const date of ['30/10/2026', '2026-10/30', 'yesterday', '']) {
      assert.match(
        refused(AccountsDetailResponse, { ...detail, Accounts: [{ ...account, Transactions: [{ ...transaction, Date: date }] }] }),
        /^Accounts\[0\]\.Transactions\[0\]\.Date: must be a date/,
        date,
      );
    }
  });

  it('reads Institution as a string (banking) or an { Id, Name } object (investments)', () => {
    assert.equal(ok(AuthorizeResponse, { HttpStatusCode: 200, Login: login, Institution: 'SandboxBank', RequestId: ID }).Institution, 'SandboxBank');
    assert.deepEqual(ok(AuthorizeResponse, { HttpStatusCode: 200, Login: login, Institution: { Id: 1001, Name: 'SandboxBank' }, RequestId: ID }).Institution, {
      Id: 1001,
      Name: 'SandboxBank',
    });
    // On an Authorize, Institution only labels the session: one the view cannot read is dropped, not fatal.
    assert.equal(ok(AuthorizeResponse, { HttpStatusCode: 200, Login: login, Institution: 1001, RequestId: ID }).Institution, null);
    assert.equal(ok(AuthorizeResponse, { HttpStatusCode: 200, Login: login, Institution: { Id: 'x', Name: 'SandboxBank' }, RequestId: ID }).Institution, null);
    // In passed-through data it is the lender's: a wrong type is refused by the view (data-reader.ts then keeps it as sent, with a warning).
    assert.match(refused(AccountsDetailResponse, { ...detail, Institution: 1001 }), /^Institution: /);
  });

  it('reads investments with null Positions, Transactions and ISIN', () => {
    const investmentAccount = {
      Id: ID,
      FullAccountId: 'CASH-CAD-1',
      AccountId: '1',
      Name: 'Cash',
      Type: 'cash',
      Registered: false,
      Currency: 'CAD',
      Cash: 10,
      AccountValue: 10,
      CurrencyValue: 10,
      Positions: null,
      Transactions: null,
    };
    const security = {
      Id: ID2,
      Name: 'X',
      Symbol: 'X',
      Type: 'equity',
      Price: 1,
      Date: '2026-10-31T20:00:00.000Z',
      Aliases: [],
      Currency: 'CAD',
      CUSIP: '1',
      ISIN: null,
    };
    const parsed = ok(InvestmentsResponse, {
      Accounts: [investmentAccount],
      Securities: [security],
      Value: 10,
      Cash: 10,
      HttpStatusCode: 200,
      Login: { ...login, Type: null },
      Institution: { Id: 1001, Name: 'SandboxBank' },
      RequestId: ID,
    });
    assert.equal(parsed.Accounts[0]?.Positions, null);
    assert.match(refused(InvestmentsResponse, { ...parsed, Accounts: [{ ...investmentAccount, Registered: 'no' }] }), /^Accounts\[0\]\.Registered: /);
  });
});

describe('Authorize answers', () => {
  it('requires SecurityChallenges with 203 and Login with 200', () => {
    assert.match(refused(AuthorizeResponse, { HttpStatusCode: 203, RequestId: ID }), /SecurityChallenges: is required when HttpStatusCode is 203/);
    assert.match(refused(AuthorizeResponse, { HttpStatusCode: 203, RequestId: ID, SecurityChallenges: [] }), /SecurityChallenges/);
    assert.match(refused(AuthorizeResponse, { HttpStatusCode: 200, RequestId: ID }), /Login: is required when HttpStatusCode is 200/);
    assert.match(refused(AuthorizeResponse, { HttpStatusCode: 201, Login: login, RequestId: ID }), /^HttpStatusCode: /);
  });

  it('accepts every challenge type of the spec and one the spec does not name, and refuses a challenge without a type or prompt', () => {
    const types = ['QuestionAndAnswer', 'ImageSelection', 'MultipleChoice', 'MultipleChoiceMultipleAnswers', 'TextOrCall', 'WaitUntilEUAccept', 'SmsCode'];
    const challenge = ok(AuthorizeResponse, {
      HttpStatusCode: 203,
      RequestId: ID,
      SecurityChallenges: types.map((Type) => ({ Type, Prompt: `${Type}?`, Iterables: null })),
    });
    assert.deepEqual(
      challenge.SecurityChallenges?.map((c) => c.Type),
      types,
    );
    assert.match(
      refused(AuthorizeResponse, {
        HttpStatusCode: 203,
        RequestId: ID,
        SecurityChallenges: [
          { Type: 'QuestionAndAnswer', Prompt: 'a' },
          { Type: '', Prompt: 'b' },
        ],
      }),
      /^SecurityChallenges\[1\]\.Type: /,
    );
    assert.match(
      refused(AuthorizeResponse, { HttpStatusCode: 203, RequestId: ID, SecurityChallenges: [{ Type: 'QuestionAndAnswer', Prompt: '' }] }),
      /^SecurityChallenges\[0\]\.Prompt: must not be empty/,
    );
    assert.match(refused(AuthorizeResponse, { HttpStatusCode: 203, RequestId: ID, SecurityChallenges: [{ Prompt: 'c' }] }), /^SecurityChallenges\[0\]\.Type: /);
  });
});

describe('Authorize requests', () => {
  const live = { Institution: 'SandboxBank', Username: 'u', Password: 'p', MostRecentCached: false };

  it('reads username and save as Username and Save, and keeps the canonical spelling when both occur', () => {
    const lower = ok(AuthorizeRequest, { Institution: 'SandboxBank', username: 'u', Password: 'p', MostRecentCached: false, save: true });
    assert.deepEqual(lower, { Institution: 'SandboxBank', Username: 'u', Password: 'p', MostRecentCached: false, Save: true });
    const both = ok(AuthorizeRequest, { ...live, username: 'other', Save: false, save: true });
    assert.deepEqual(both, { ...live, Save: false });
  });

  it('refuses unknown fields by name', () => {
    assert.match(refused(AuthorizeRequest, { ...live, Usrname: 'u' }), /Usrname/);
  });

  it('tells the four modes apart and names what each mode requires', () => {
    assert.equal(authorizeModeOf(ok(AuthorizeRequest, live)), 'live');
    assert.equal(authorizeModeOf(ok(AuthorizeRequest, { LoginId: ID, MostRecentCached: true })), 'cached');
    assert.equal(authorizeModeOf(ok(AuthorizeRequest, { LoginId: ID, MostRecentCached: false, Save: true })), 'refresh');
    assert.equal(authorizeModeOf(ok(AuthorizeRequest, { RequestId: ID, SecurityResponses: { 'Q?': ['A'] } })), 'answer');
    assert.match(refused(AuthorizeRequest, { MostRecentCached: true }), /^LoginId: is required in cached mode/);
    assert.match(refused(AuthorizeRequest, { RequestId: ID }), /^SecurityResponses: is required when answering a challenge/);
    assert.match(refused(AuthorizeRequest, { SecurityResponses: { 'Q?': ['A'] } }), /^RequestId: is required when answering a challenge/);
    assert.match(refused(AuthorizeRequest, { RequestId: ID, SecurityResponses: {} }), /^SecurityResponses: must answer at least one prompt/);
    const missing = refused(AuthorizeRequest, { Username: 'u' });
    for (const field of ['Institution', 'Password', 'MostRecentCached']) assert.match(missing, new RegExp(`${field}: is required`));
    assert.match(refused(AuthorizeRequest, { LoginId: 'abc', MostRecentCached: true }), /^LoginId: must be a UUID/);
  });

  it('keeps SecurityResponses keys exactly as given', () => {
    const keys = { 'What city were you born in?': ['Montreal'], '***-***-4821': ['Text'], 'WHAT CITY WERE YOU BORN IN?': ['x'] };
    assert.deepEqual(ok(SecurityResponses, keys), keys);
    assert.match(refused(SecurityResponses, { 'Q?': [] }), /^Q\?: needs at least one answer/);
  });
});

describe('pending and error answers', () => {
  it('reads ServiceCode or any brand-prefixed ...Code key as the service code', () => {
    assert.equal(ok(PendingResponse, { HttpStatusCode: 202, ServiceCode: 'OPERATION_PENDING', Message: 'm', RequestId: ID }).ServiceCode, 'OPERATION_PENDING');
    assert.equal(
      ok(PendingResponse, { HttpStatusCode: 202, FlinksCode: 'OPERATION_DISPATCHED', Message: 'm', RequestId: ID, Links: null }).ServiceCode,
      'OPERATION_DISPATCHED',
    );
    assert.equal(ok(ErrorResponse, { HttpStatusCode: 400, FlinksCode: 'SESSION_NONEXISTENT', Message: null }).ServiceCode, 'SESSION_NONEXISTENT');
    assert.equal(readServiceCode({ HttpStatusCode: 401, AcmeCode: 'RETRY_LATER' }), 'RETRY_LATER');
    assert.equal(readServiceCode({ ServiceCode: 'ACCESS_DENIED', FlinksCode: 'RETRY_LATER' }), 'ACCESS_DENIED');
    assert.equal(readServiceCode({ HttpStatusCode: 401, PostalCode: 'H2X 1Y4' }), undefined);
    assert.equal(readServiceCode({ HttpStatusCode: 401 }), undefined);
    assert.equal(readServiceCode('OPERATION_PENDING'), undefined);
  });

  it('refuses a pending answer with another code or without its RequestId, naming them, and takes one without a Message', () => {
    assert.match(refused(PendingResponse, { HttpStatusCode: 202, ServiceCode: 'SESSION_LOADING', Message: 'm', RequestId: ID }), /^ServiceCode: /);
    assert.match(refused(PendingResponse, { HttpStatusCode: 202, ServiceCode: 'OPERATION_PENDING' }), /RequestId: /);
    assert.equal(ok(PendingResponse, { HttpStatusCode: 202, FlinksCode: 'OPERATION_PENDING', RequestId: ID }).Message, undefined);
  });
});

describe('attributes', () => {
  it('reads AttributeDetails and AttributesDetails as AttributesDetail, at the top and inside Options', () => {
    for (const spelling of ['AttributesDetail', 'AttributeDetails', 'AttributesDetails']) {
      const top = ok(AttributesRequest, { MostRecentCached: true, Attributes: { Card: ['count_nsf'] }, [spelling]: ['count_nsf'] });
      assert.deepEqual(top.AttributesDetail, ['count_nsf'], spelling);
      const inOptions = ok(AttributesRequest, {
        MostRecentCached: true,
        Attributes: { Card: ['count_nsf'] },
        Options: { [spelling]: ['count_nsf'], AccountFilter: [ID] },
      });
      assert.deepEqual(inOptions.Options, { AttributesDetail: ['count_nsf'], AccountFilter: [ID] }, spelling);
    }
  });

  it('names what is wrong in an attributes request', () => {
    assert.match(refused(AttributesRequest, { MostRecentCached: true }), /^Attributes: /);
    assert.match(refused(AttributesRequest, { MostRecentCached: true, Attributes: {} }), /^Attributes: must contain at least one group/);
    assert.match(refused(AttributesRequest, { MostRecentCached: true, Attributes: { Card: [] } }), /^Attributes\.Card: must name at least one attribute/);
    assert.match(
      refused(AttributesRequest, { MostRecentCached: true, Attributes: { Card: ['x'] }, AccountFilter: ['nope'] }),
      /^AccountFilter\[0\]: must be a UUID/,
    );
    assert.match(refused(AttributesRequest, { MostRecentCached: true, Attributes: { Card: ['x'] }, Options: { Unknown: true } }), /Options/);
  });

  it('reads groups, NONE_DETECTED and the detail spellings of an answer', () => {
    const detailTransaction = { TransactionId: ID2, AccountId: ID, Date: '2026/10/30', Description: 'NSF FEE', Debit: 48, Credit: 0 };
    for (const spelling of ['AttributesDetail', 'AttributeDetails', 'AttributesDetails']) {
      const parsed = ok(AttributesResponse, {
        Card: {
          Id: ID,
          count_nsf: 2,
          sum_employer_income: 'NONE_DETECTED',
          balance_min: null,
          [spelling]: [{ Attribute: 'count_nsf', Transactions: [detailTransaction] }],
        },
        Login: login,
        RequestId: ID,
        HttpStatusCode: 200,
        Links: [],
      });
      assert.deepEqual(Object.keys(parsed.Groups), ['Card']);
      const card = parsed.Groups.Card;
      assert.equal(card?.count_nsf, 2);
      assert.equal(card?.sum_employer_income, 'NONE_DETECTED');
      assert.equal(card?.balance_min, null);
      assert.equal(card?.AttributesDetail?.[0]?.Transactions[0]?.Date, '2026/10/30', spelling);
    }
  });

  it('names the attribute or detail field that breaks the answer', () => {
    assert.match(refused(AttributesResponse, { Card: { Id: ID, count_nsf: 'many' }, Login: login, RequestId: ID }), /^Card\.count_nsf: /);
    assert.match(
      refused(AttributesResponse, {
        Card: {
          Id: ID,
          AttributesDetail: [
            { Attribute: 'count_nsf', Transactions: [{ TransactionId: ID2, AccountId: ID, Date: '30.10.2026', Description: 'x', Debit: 1, Credit: 0 }] },
          ],
        },
        Login: login,
        RequestId: ID,
      }),
      /^Card\.AttributesDetail\[0\]\.Transactions\[0\]\.Date: must be a date/,
    );
    assert.match(refused(AttributesResponse, { Login: login, RequestId: ID }), /carries no attribute group/);
  });

  it('keeps a top-level member that is not a group (a request tag) apart, as sent, beside the groups', () => {
    const parsed = ok(AttributesResponse, { Card: { Id: ID, count_nsf: 1 }, Tag: 'req-42', Flags: ['x'], Login: login, RequestId: ID });
    assert.deepEqual(Object.keys(parsed.Groups), ['Card']);
    assert.deepEqual(parsed.Other, { Tag: 'req-42', Flags: ['x'] });
    assert.equal(ok(AttributesResponse, { Card: { Id: ID, count_nsf: 1 }, Login: login, RequestId: ID }).Other, undefined);
  });
});

describe('describeIssues', () => {
  it('writes paths with dots and brackets, and joins several issues', () => {
    const text = refused(AccountsDetailResponse, {
      ...detail,
      RequestId: 'x',
      Accounts: [account, { ...account, Balance: { Available: '1', Current: 1, Limit: null } }],
    });
    assert.match(text, /Accounts\[1\]\.Balance\.Available: /);
    assert.match(text, /RequestId: must be a UUID/);
    assert.match(text, /; /);
  });
});
