/**
 * The aggregation service's wire contract: one zod schema per resource of the spec, with the
 * inferred type under the same PascalCase name. Shared by the HTTP client (to parse answers) and
 * the sandbox (to validate requests), so neither can drift from the other.
 *
 * Parsing is liberal where the spec or FACTS.md says the real service varies (extra fields, nulls,
 * `Username`/`username`, `Save`/`save`, brand-prefixed `...Code` keys, three spellings of
 * `AttributesDetail`) and strict where the spec forbids something.
 *
 * Two kinds of field (see data-reader.ts): what the product acts on (status codes, `RequestId`,
 * `LoginId`, a challenge's prompt, the pending code) is checked strictly; what it passes to the
 * lender (accounts, transactions, holders, investments, attributes) has a typed *view* here that
 * tolerates nulls, unknown members and the date formats the service uses, and a record that breaks
 * even the view is kept as sent and reported as a warning, never a failure.
 */
import { z } from 'zod';
import { KNOWN_CHALLENGE_TYPES } from './challenge-types.js';

/** Loose 8-4-4-4-12 hex identifier: the service issues UUIDs but we do not police their version bits. */
export const Uuid = z.guid({ message: 'must be a UUID' });
export type Uuid = z.infer<typeof Uuid>;

/** A date we send (DateFrom, DateTo): the spec's YYYY-MM-DD, exactly. */
const IsoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'must be a date YYYY-MM-DD' });
/**
 * A date the service sends: YYYY-MM-DD (transactions), YYYY/MM/DD (the same service's attributes),
 * or an ISO timestamp with a time (securities). Kept as written; the view only checks it is a date.
 */
// No backreference: the Python models' pydantic-core regex engine refuses them.
export const SERVICE_DATE_PATTERN = /^\d{4}(?:-\d{2}-\d{2}|\/\d{2}\/\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
const ServiceDate = z.string().regex(SERVICE_DATE_PATTERN, { message: 'must be a date (YYYY-MM-DD, YYYY/MM/DD or an ISO timestamp)' });
/** A descriptive string of passed-through data: the service sends null or leaves it out at times. */
const Text = z.string().nullish();
/** A number of passed-through data that may be null or missing. */
const Amount = z.number().nullish();

/** Copies `from` to `to` when only the alternative spelling is present (e.g. `username` → `Username`). */
function aliasKeys(aliases: Record<string, string[]>) {
  return (value: unknown): unknown => {
    if (!isPlainObject(value)) return value;
    const out: Record<string, unknown> = { ...value };
    for (const [canonical, alternatives] of Object.entries(aliases)) {
      if (canonical in out) {
        for (const alternative of alternatives) delete out[alternative];
        continue;
      }
      const found = alternatives.find((alternative) => alternative in out);
      if (found !== undefined) {
        out[canonical] = out[found];
        delete out[found];
      }
    }
    return out;
  };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The real interface prefixes the code field with the provider's brand (`FlinksCode`); the spec
 * writes `ServiceCode`. Any top-level string-valued key ending in `Code` (other than
 * `HttpStatusCode`) is read as the service code.
 */
export function readServiceCode(body: unknown): string | undefined {
  if (!isPlainObject(body)) return undefined;
  if (typeof body.ServiceCode === 'string') return body.ServiceCode;
  for (const [key, value] of Object.entries(body)) {
    if (key !== 'HttpStatusCode' && key.endsWith('Code') && typeof value === 'string' && /^[A-Z_]+$/.test(value)) return value;
  }
  return undefined;
}

function withServiceCode(value: unknown): unknown {
  if (!isPlainObject(value)) return value;
  const code = readServiceCode(value);
  return code === undefined ? value : { ...value, ServiceCode: code };
}

// ---------------------------------------------------------------------------------------------
// Shared pieces

export const Link = z.looseObject({
  rel: z.string(),
  href: z.string(),
  example: z.null().optional(),
});
export type Link = z.infer<typeof Link>;

/** `Id` is the LoginId the product acts on; the rest is passed to the lender as sent. */
export const Login = z.looseObject({
  Username: Text,
  IsScheduledRefresh: z.boolean().nullish(),
  LastRefresh: Text,
  Type: Text,
  Id: Uuid,
});
export type Login = z.infer<typeof Login>;

export const InstitutionObject = z.looseObject({ Id: z.number().int().nullish(), Name: Text });
export type InstitutionObject = z.infer<typeof InstitutionObject>;

/** A string in banking answers, an object in investment answers. */
export const Institution = z.union([z.string(), InstitutionObject]);
export type Institution = z.infer<typeof Institution>;

export { KNOWN_CHALLENGE_TYPES, isKnownChallengeType } from './challenge-types.js';
export const KnownChallengeType = z.enum(KNOWN_CHALLENGE_TYPES);
export type KnownChallengeType = z.infer<typeof KnownChallengeType>;

/**
 * Any non-empty type name: institutions add challenge types the spec does not list (an SMS code, a
 * plain question). One outside the six is shown to operators as it came and answered by its prompt
 * with free text, instead of failing the session (workflows/challenges.ts).
 */
export const SecurityChallengeType = z.string().min(1, { message: 'must name a challenge type' }).max(200);
export type SecurityChallengeType = z.infer<typeof SecurityChallengeType>;

export const SecurityChallenge = z.looseObject({
  Type: SecurityChallengeType,
  Prompt: z.string().min(1, { message: 'must not be empty' }),
  Iterables: z.array(z.string()).nullish(),
});
export type SecurityChallenge = z.infer<typeof SecurityChallenge>;

/** Prompt text (exactly as asked, never case-transformed) to the list of answers. */
export const SecurityResponses = z.record(z.string().min(1), z.array(z.string()).min(1, { message: 'needs at least one answer' }));
export type SecurityResponses = z.infer<typeof SecurityResponses>;

// ---------------------------------------------------------------------------------------------
// Authorize

const AuthorizeRequestFields = z.strictObject({
  Institution: z.string().min(1).optional(),
  Username: z.string().min(1).optional(),
  Password: z.string().min(1).optional(),
  MostRecentCached: z.boolean().optional(),
  Save: z.boolean().optional(),
  LoginId: Uuid.optional(),
  RequestId: Uuid.optional(),
  SecurityResponses: SecurityResponses.optional(),
  // Seen in public clients; harmless for the service.
  Language: z.string().optional(),
  Tag: z.string().optional(),
});

/**
 * One schema for the four ways to call Authorize: live first call (credentials), cached
 * (LoginId + MostRecentCached true), answering a challenge (RequestId + SecurityResponses),
 * and live refresh of a saved login (LoginId + MostRecentCached false + Save true).
 */
export const AuthorizeRequest = z.preprocess(
  aliasKeys({ Username: ['username'], Save: ['save'], Password: ['password'], Institution: ['institution'] }),
  AuthorizeRequestFields.superRefine((request, ctx) => {
    const mode = authorizeModeOf(request);
    const require = (field: keyof typeof request, why: string) => {
      if (request[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: `is required ${why}` });
    };
    switch (mode) {
      case 'answer':
        require('RequestId', 'when answering a challenge');
        require('SecurityResponses', 'when answering a challenge');
        if (request.SecurityResponses && Object.keys(request.SecurityResponses).length === 0) {
          ctx.addIssue({ code: 'custom', path: ['SecurityResponses'], message: 'must answer at least one prompt' });
        }
        break;
      case 'cached':
        require('LoginId', 'in cached mode');
        break;
      case 'refresh':
        break;
      case 'live':
        require('Institution', 'for a live Authorize');
        require('Username', 'for a live Authorize');
        require('Password', 'for a live Authorize');
        if (request.MostRecentCached === undefined) {
          ctx.addIssue({ code: 'custom', path: ['MostRecentCached'], message: 'is required (false in live mode)' });
        }
        break;
    }
  }),
);
export type AuthorizeRequest = z.infer<typeof AuthorizeRequestFields>;

export type AuthorizeMode = 'live' | 'cached' | 'refresh' | 'answer';

export function authorizeModeOf(request: AuthorizeRequest): AuthorizeMode {
  if (request.RequestId !== undefined || request.SecurityResponses !== undefined) return 'answer';
  if (request.MostRecentCached === true) return 'cached';
  if (request.LoginId !== undefined && request.Username === undefined) return 'refresh';
  return 'live';
}

/** Links and Institution only label an Authorize's answer: one the view cannot read is dropped, not fatal. */
const LabelLinks = z.array(Link).nullish().catch(null);
const LabelInstitution = Institution.nullish().catch(null);

export const AuthorizeResponse = z
  .looseObject({
    Links: LabelLinks,
    HttpStatusCode: z.union([z.literal(200), z.literal(203)]),
    Login: Login.optional(),
    Institution: LabelInstitution,
    RequestId: Uuid,
    SecurityChallenges: z.array(SecurityChallenge).nullish(),
  })
  .superRefine((response, ctx) => {
    if (response.HttpStatusCode === 203 && !response.SecurityChallenges?.length) {
      ctx.addIssue({ code: 'custom', path: ['SecurityChallenges'], message: 'is required when HttpStatusCode is 203' });
    }
    if (response.HttpStatusCode === 200 && response.Login === undefined) {
      ctx.addIssue({ code: 'custom', path: ['Login'], message: 'is required when HttpStatusCode is 200' });
    }
  });
export type AuthorizeResponse = z.infer<typeof AuthorizeResponse>;

// ---------------------------------------------------------------------------------------------
// Pending and error answers

export const PendingCode = z.enum(['OPERATION_PENDING', 'OPERATION_DISPATCHED']);
export type PendingCode = z.infer<typeof PendingCode>;

export const PendingResponse = z.preprocess(
  withServiceCode,
  z.looseObject({
    ServiceCode: PendingCode,
    Links: LabelLinks,
    HttpStatusCode: z.literal(202),
    Message: z.string().nullish(),
    RequestId: Uuid,
  }),
);
export type PendingResponse = z.infer<typeof PendingResponse>;

/** Error bodies per FACTS.md: status, message, code; often RequestId and Links. */
export const ErrorResponse = z.preprocess(
  withServiceCode,
  z.looseObject({
    HttpStatusCode: z.number().int(),
    Message: z.string().nullish(),
    ServiceCode: z.string().optional(),
    RequestId: z.string().nullish(),
    Links: z.array(Link).nullish(),
  }),
);
export type ErrorResponse = z.infer<typeof ErrorResponse>;

// ---------------------------------------------------------------------------------------------
// Accounts

export const Address = z.looseObject({
  CivicAddress: z.string().nullish(),
  City: z.string().nullish(),
  Province: z.string().nullish(),
  PostalCode: z.string().nullish(),
  POBox: z.string().nullish(),
  Country: z.string().nullish(),
});
export type Address = z.infer<typeof Address>;

export const Holder = z.looseObject({
  Name: z.string().nullish(),
  Address: Address.nullish(),
  Email: z.string().nullish(),
  PhoneNumber: z.string().nullish(),
});
export type Holder = z.infer<typeof Holder>;

export const Balance = z.looseObject({
  Available: Amount,
  Current: Amount,
  Limit: Amount,
});
export type Balance = z.infer<typeof Balance>;

export const Transaction = z.looseObject({
  Id: Uuid,
  Date: ServiceDate,
  Code: Text,
  Description: Text,
  Debit: Amount,
  Credit: Amount,
  Balance: Amount,
});
export type Transaction = z.infer<typeof Transaction>;

export const Account = z.looseObject({
  Id: Uuid,
  Transactions: z.array(Transaction).nullish(),
  TransitNumber: z.string().nullish(),
  InstitutionNumber: z.string().nullish(),
  OverdraftLimit: Amount,
  Title: Text,
  AccountNumber: Text,
  Balance: Balance.nullish(),
  Category: Text,
  Type: Text,
  Currency: Text,
  Holder: Holder.nullish(),
});
export type Account = z.infer<typeof Account>;

export const DaysOfTransactions = z.enum(['Days90', 'Days365']);
export type DaysOfTransactions = z.infer<typeof DaysOfTransactions>;

export const AccountsDetailOptions = z.strictObject({
  WithAccountIdentity: z.boolean().optional(),
  WithKYC: z.boolean().optional(),
  WithTransactions: z.boolean().optional(),
  WithBalance: z.boolean().optional(),
  AccountsFilter: z.array(Uuid).optional(),
  DaysOfTransactions: DaysOfTransactions.optional(),
  MostRecentCached: z.boolean().optional(),
  DateFrom: IsoDate.optional(),
  DateTo: IsoDate.optional(),
});
export type AccountsDetailOptions = z.infer<typeof AccountsDetailOptions>;

export const AccountsDetailRequest = AccountsDetailOptions.extend({ RequestId: Uuid });
export type AccountsDetailRequest = z.infer<typeof AccountsDetailRequest>;

export const AccountsDetailResponse = z.looseObject({
  HttpStatusCode: z.literal(200).optional(),
  Accounts: z.array(Account),
  Login: Login,
  Institution: Institution.nullish(),
  RequestId: Uuid,
});
export type AccountsDetailResponse = z.infer<typeof AccountsDetailResponse>;

export const AccountsSummaryRequest = z.strictObject({ RequestId: Uuid });
export type AccountsSummaryRequest = z.infer<typeof AccountsSummaryRequest>;

/** Not shown in the spec: the detail answer without transactions, as FACTS.md describes. */
export const AccountsSummaryResponse = z.looseObject({
  HttpStatusCode: z.literal(200).optional(),
  Accounts: z.array(Account.omit({ Transactions: true })),
  Login: Login,
  Institution: Institution.nullish(),
  RequestId: Uuid,
});
export type AccountsSummaryResponse = z.infer<typeof AccountsSummaryResponse>;

export const NumberOfStatements = z.enum(['MostRecent', 'Months3', 'Months12']);
export type NumberOfStatements = z.infer<typeof NumberOfStatements>;

export const StatementsRequest = z.strictObject({ RequestId: Uuid, NumberOfStatements: NumberOfStatements.optional() });
export type StatementsRequest = z.infer<typeof StatementsRequest>;

export const Statement = z.looseObject({ UniqueId: z.string(), FileType: z.string(), Base64Bytes: z.string() });
export type Statement = z.infer<typeof Statement>;

export const StatementsResponse = z.looseObject({
  HttpStatusCode: z.literal(200).optional(),
  StatementsByAccount: z.array(z.looseObject({ AccountNumber: z.string(), Statements: z.array(Statement) })),
  Login: Login.optional(),
  RequestId: Uuid,
});
export type StatementsResponse = z.infer<typeof StatementsResponse>;

// ---------------------------------------------------------------------------------------------
// Investments

export const InvestmentsRequest = z.strictObject({
  LoginId: Uuid,
  RequestId: Uuid,
  MostRecentCached: z.literal(true, { message: 'must be true' }),
});
export type InvestmentsRequest = z.infer<typeof InvestmentsRequest>;

export const Position = z.looseObject({
  Id: Uuid,
  Category: Text,
  Class: Text,
  BookValue: Amount,
  Quantity: Amount,
  MarketValue: Amount,
  GainAmount: Amount,
  GainCurrencyAmount: Amount,
  GainPercent: Amount,
  Currency: Text,
  SecurityId: Uuid.nullish(),
});
export type Position = z.infer<typeof Position>;

export const InvestmentTransaction = z.looseObject({
  Id: Uuid,
  Date: ServiceDate,
  Type: Text,
  Description: Text,
  Quantity: Amount,
  Fee: Amount,
  Amount: Amount,
  SecurityId: Uuid.nullish(),
});
export type InvestmentTransaction = z.infer<typeof InvestmentTransaction>;

export const InvestmentAccount = z.looseObject({
  Id: Uuid,
  FullAccountId: Text,
  AccountId: Text,
  Name: Text,
  Type: Text,
  Registered: z.boolean().nullish(),
  Currency: Text,
  Cash: Amount,
  AccountValue: Amount,
  CurrencyValue: Amount,
  Positions: z.array(Position).nullish(),
  Transactions: z.array(InvestmentTransaction).nullish(),
});
export type InvestmentAccount = z.infer<typeof InvestmentAccount>;

export const Security = z.looseObject({
  Id: Uuid,
  Name: Text,
  Symbol: Text,
  Type: Text,
  Price: Amount,
  Date: Text,
  Aliases: z.array(z.string()).nullish(),
  Currency: Text,
  CUSIP: Text,
  ISIN: Text,
});
export type Security = z.infer<typeof Security>;

export const InvestmentsResponse = z.looseObject({
  Accounts: z.array(InvestmentAccount),
  Securities: z.array(Security).nullish(),
  Value: Amount,
  Cash: Amount,
  HttpStatusCode: z.literal(200).optional(),
  Login: Login,
  Institution: Institution.nullish(),
  RequestId: Uuid,
});
export type InvestmentsResponse = z.infer<typeof InvestmentsResponse>;

// ---------------------------------------------------------------------------------------------
// Attributes

export const AttributePackageOperation = z.enum([
  'GetIncomeAttributes',
  'GetCreditRiskAttributes',
  'GetUserAnalysisAttributes',
  'GetLendingAttributes',
  'GetAllAttributes',
]);
export type AttributePackageOperation = z.infer<typeof AttributePackageOperation>;

const AttributeNames = z.array(z.string().min(1)).min(1, { message: 'must name at least one attribute' });

const AttributesRequestFields = z.strictObject({
  MostRecentCached: z.boolean(),
  Attributes: z.record(z.string().min(1), AttributeNames).refine((groups) => Object.keys(groups).length > 0, {
    message: 'must contain at least one group',
  }),
  Filters: z.looseObject({ AccountCategory: z.array(z.string()).optional() }).optional(),
  AccountFilter: z.array(Uuid).optional(),
  Options: z
    .preprocess(
      aliasKeys({ AttributesDetail: ['AttributeDetails', 'AttributesDetails'] }),
      z.strictObject({ AttributesDetail: z.array(z.string().min(1)).optional(), AccountFilter: z.array(Uuid).optional() }),
    )
    .optional(),
  AttributesDetail: z.array(z.string().min(1)).optional(),
});

/** The transactions-detail member is spelled three ways in public docs: all are read as AttributesDetail. */
export const AttributesRequest = z.preprocess(aliasKeys({ AttributesDetail: ['AttributeDetails', 'AttributesDetails'] }), AttributesRequestFields);
export type AttributesRequest = z.infer<typeof AttributesRequestFields>;

export const AttributeTransaction = z.looseObject({
  TransactionId: Uuid,
  AccountId: Uuid,
  Date: ServiceDate,
  Description: Text,
  Debit: Amount,
  Credit: Amount,
});
export type AttributeTransaction = z.infer<typeof AttributeTransaction>;

export const AttributeDetail = z.looseObject({ Attribute: z.string(), Transactions: z.array(AttributeTransaction) });
export type AttributeDetail = z.infer<typeof AttributeDetail>;

/** `NONE_DETECTED` stands for "no transaction qualifies" (FACTS.md). */
export const AttributeValue = z.union([z.number(), z.literal('NONE_DETECTED'), z.null()]);
export type AttributeValue = z.infer<typeof AttributeValue>;

/** One group of the answer: Id, one member per attribute, and AttributesDetail when requested. */
export const AttributeGroupFields = z.object({ Id: Uuid, AttributesDetail: z.array(AttributeDetail).optional() }).catchall(AttributeValue);
export const AttributeGroup = z.preprocess(aliasKeys({ AttributesDetail: ['AttributeDetails', 'AttributesDetails'] }), AttributeGroupFields);
/** `Id` is a string and `AttributesDetail` a list; every other member is one attribute's value. */
export type AttributeGroup = { Id: string; AttributesDetail?: AttributeDetail[] } & Record<string, number | string | null | AttributeDetail[] | undefined>;

const ATTRIBUTES_ENVELOPE_KEYS: ReadonlySet<string> = new Set(['Login', 'RequestId', 'HttpStatusCode', 'Links']);

/** A group as sent, with the transactions-detail member under the spec's spelling. */
const groupAsSent = aliasKeys({ AttributesDetail: ['AttributeDetails', 'AttributesDetails'] });

export interface AttributesReading {
  readonly groups: Record<string, AttributeGroup>;
  /** Top-level members that are not attribute groups (a request tag, a string): kept as sent. */
  readonly other: Record<string, unknown>;
  /** Why a group breaks its view (paths from the body's top); empty when every group reads. */
  readonly issues: { readonly path: (string | number)[]; readonly message: string }[];
}

/**
 * Splits an attributes answer into its groups (every object member beside the envelope) and the
 * members that are not groups. A group that breaks the view is still kept, as sent.
 */
export function readAttributeGroups(body: Record<string, unknown>): AttributesReading {
  const groups: Record<string, AttributeGroup> = {};
  const other: Record<string, unknown> = {};
  const issues: { path: (string | number)[]; message: string }[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (ATTRIBUTES_ENVELOPE_KEYS.has(key)) continue;
    if (!isPlainObject(value)) {
      other[key] = value;
      continue;
    }
    const parsed = AttributeGroup.safeParse(value);
    if (parsed.success) groups[key] = parsed.data;
    else {
      for (const issue of parsed.error.issues)
        issues.push({ path: [key, ...issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part))], message: issue.message });
      groups[key] = groupAsSent(value) as AttributeGroup;
    }
  }
  return { groups, other, issues };
}

/** The answer's members the product acts on, and that it carries at least one group. */
export const AttributesEnvelope = z
  .looseObject({ Login: z.looseObject({ Id: Uuid }), RequestId: Uuid, HttpStatusCode: z.number().int().optional() })
  .refine((body) => Object.entries(body).some(([key, value]) => !ATTRIBUTES_ENVELOPE_KEYS.has(key) && isPlainObject(value)), {
    message: 'carries no attribute group',
  });

export const AttributesResponse = z
  .object({ Login: Login, RequestId: Uuid, HttpStatusCode: z.number().int().optional() })
  .catchall(z.unknown())
  .transform((body, ctx) => {
    const { groups, other, issues } = readAttributeGroups(body);
    for (const issue of issues) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
    if (Object.keys(groups).length === 0) ctx.addIssue({ code: 'custom', path: [], message: 'carries no attribute group' });
    if (issues.length > 0 || Object.keys(groups).length === 0) return z.NEVER;
    return attributesResult(body.Login, body.RequestId, groups, other);
  });
export type AttributesResponse = z.infer<typeof AttributesResponse>;

/** The shape a connection's result carries: the groups apart, and `Other` only when there is any. */
export interface AttributesResult {
  Login: Login;
  RequestId: string;
  Groups: Record<string, AttributeGroup>;
  Other?: Record<string, unknown>;
}

export function attributesResult(login: Login, requestId: string, groups: Record<string, AttributeGroup>, other: Record<string, unknown>): AttributesResult {
  return { Login: login, RequestId: requestId, Groups: groups, ...(Object.keys(other).length > 0 ? { Other: other } : {}) };
}

/**
 * What AttributesResponse makes of the service's answer (the groups apart): the shape a connection's
 * result carries. Typed as AttributesResponse's output, since zod's type of a catchall is not usable.
 */
export const AttributesResult: z.ZodType<AttributesResponse> = z.object({
  Login: Login,
  RequestId: Uuid,
  Groups: z.record(z.string(), AttributeGroupFields),
  Other: z.record(z.string(), z.unknown()).optional(),
});

// ---------------------------------------------------------------------------------------------
// DeleteCard (not shown in the spec; FACTS.md gives the path)

export const DeleteCardResponse = z.looseObject({
  HttpStatusCode: z.literal(200).optional(),
  Message: z.string().nullish(),
  LoginId: Uuid.optional(),
});
export type DeleteCardResponse = z.infer<typeof DeleteCardResponse>;
