/**
 * The sandbox's data read through the spec's strict shapes (sandbox/spec-shapes.ts).
 *
 * The client and the contract type data as tolerant *views* (descriptions and amounts may be null or
 * missing, dates in three formats) because a real service sends that. The sandbox generates the
 * spec's exact records, and the tests that check its arithmetic (running balances, market value =
 * quantity × price, attributes recomputed from the transactions) compute with those: each function
 * here asserts at runtime that the data has the spec's shape, field by field, and returns the same
 * value typed as the spec's. A null where the spec has a number fails the test naming its path
 * (`Accounts[0].Transactions[3].Balance: Invalid input: expected number, received null`), instead of
 * arithmetic on null.
 *
 * The schemas below are checked at compile time to be exactly the spec-shapes types (see `exact`),
 * so a change there breaks the typecheck here until the runtime check follows it.
 */
import assert from 'node:assert/strict';
import { z } from 'zod';
import { issuePath } from '../../src/validation/parse-or-refuse.js';
import type * as Wire from '../../src/aggregator/schemas.js';
import type * as Spec from '../../sandbox/spec-shapes.js';

/** A transaction's date in the spec: YYYY-MM-DD (the tests compare these as strings). */
const SpecDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'must be a date YYYY-MM-DD' });

const Address = z.object({
  CivicAddress: z.string(),
  City: z.string(),
  Province: z.string(),
  PostalCode: z.string(),
  POBox: z.string().nullable(),
  Country: z.string(),
});

const Holder = z.object({ Name: z.string(), Address, Email: z.string(), PhoneNumber: z.string() });

const Balance = z.object({ Available: z.number().nullable(), Current: z.number().nullable(), Limit: z.number().nullable() });

const Transaction = z.object({
  Id: z.string(),
  Date: SpecDate,
  Code: z.string().nullable(),
  Description: z.string(),
  Debit: z.number().nullable(),
  Credit: z.number().nullable(),
  Balance: z.number(),
});

const Account = z.object({
  Id: z.string(),
  Transactions: z.array(Transaction).optional(),
  TransitNumber: z.string(),
  InstitutionNumber: z.string(),
  OverdraftLimit: z.number(),
  Title: z.string(),
  AccountNumber: z.string(),
  Balance,
  Category: z.string(),
  Type: z.string(),
  Currency: z.string(),
  Holder: Holder.optional(),
});

const Position = z.object({
  Id: z.string(),
  Category: z.string(),
  Class: z.string(),
  BookValue: z.number(),
  Quantity: z.number(),
  MarketValue: z.number(),
  GainAmount: z.number(),
  GainCurrencyAmount: z.number(),
  GainPercent: z.number(),
  Currency: z.string(),
  SecurityId: z.string(),
});

const InvestmentTransaction = z.object({
  Id: z.string(),
  Date: z.string(),
  Type: z.string(),
  Description: z.string(),
  Quantity: z.number(),
  Fee: z.number(),
  Amount: z.number(),
  SecurityId: z.string(),
});

const InvestmentAccount = z.object({
  Id: z.string(),
  FullAccountId: z.string(),
  AccountId: z.string(),
  Name: z.string(),
  Type: z.string(),
  Registered: z.boolean(),
  Currency: z.string(),
  Cash: z.number(),
  AccountValue: z.number(),
  CurrencyValue: z.number(),
  Positions: z.array(Position),
  Transactions: z.array(InvestmentTransaction),
});

const Security = z.object({
  Id: z.string(),
  Name: z.string(),
  Symbol: z.string(),
  Type: z.string(),
  Price: z.number(),
  Date: z.string(),
  Aliases: z.array(z.string()),
  Currency: z.string(),
  CUSIP: z.string(),
  ISIN: z.string().nullable(),
});

/** The members of an investments answer the sandbox always sends (sandbox/investments-data.ts). */
const InvestmentsData = z.object({ Accounts: z.array(InvestmentAccount), Securities: z.array(Security), Value: z.number(), Cash: z.number() });

/**
 * A transaction of an attribute's AttributesDetail as the sandbox writes it (detailTransaction in
 * sandbox/attributes.ts): spec-shapes.ts has no such type, so it is stated here. The date is
 * the answer's YYYY/MM/DD, which the tests assert themselves.
 */
export type AttributeTransaction = {
  TransactionId: string;
  AccountId: string;
  Date: string;
  Description: string;
  Debit: number;
  Credit: number;
};
const AttributeTransaction = z.object({
  TransactionId: z.string(),
  AccountId: z.string(),
  Date: z.string(),
  Description: z.string(),
  Debit: z.number(),
  Credit: z.number(),
});

/** An investments answer whose data members have the spec's shapes; the rest (Login, Institution, ...) as the view types it. */
export type Investments = Overridden<
  Wire.InvestmentsResponse,
  { Accounts: Spec.InvestmentAccount[]; Securities: Spec.Security[]; Value: number; Cash: number }
>;

/** `T` with the members `U` names replaced by `U`'s (a mapped type keeps T's other members and its index signature; Omit would drop them). */
type Overridden<T, U> = { [K in keyof T as K extends keyof U ? never : K]: T[K] } & U;

/** Compile time: each schema above reads exactly its spec-shapes type (neither looser nor stricter). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const exact: [
  Same<z.output<typeof Address>, Spec.Address>,
  Same<z.output<typeof Holder>, Spec.Holder>,
  Same<z.output<typeof Balance>, Spec.Balance>,
  Same<z.output<typeof Transaction>, Spec.Transaction>,
  Same<z.output<typeof Account>, Spec.Account>,
  Same<z.output<typeof Position>, Spec.Position>,
  Same<z.output<typeof InvestmentTransaction>, Spec.InvestmentTransaction>,
  Same<z.output<typeof InvestmentAccount>, Spec.InvestmentAccount>,
  Same<z.output<typeof Security>, Spec.Security>,
  Same<z.output<typeof AttributeTransaction>, AttributeTransaction>,
] = [true, true, true, true, true, true, true, true, true, true];
void exact;

/** Issues listed in a failure; the rest are counted (a large login can break thousands of fields at once). */
const MAX_LISTED = 10;

/**
 * Asserts `value` has the spec's shape and returns it, itself (not a copy: members beyond the spec's
 * stay, and so does identity), typed as the spec's.
 */
function conforming<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const { issues } = parsed.error;
    const listed = issues.slice(0, MAX_LISTED).map((issue) => `${issuePath([what, ...issue.path])}: ${issue.message}`);
    if (issues.length > MAX_LISTED) listed.push(`and ${issues.length - MAX_LISTED} more`);
    assert.fail(`the sandbox's ${what} are not in the spec's shape (sandbox/spec-shapes.ts): ${listed.join('; ')}`);
  }
  return value as T;
}

/** Accounts (detail or summary) as the spec writes them; fails naming each field that is not. */
export function specAccounts(accounts: readonly Wire.Account[], what = 'Accounts'): Spec.Account[] {
  return conforming(z.array(Account), accounts, what);
}

/** An investments answer whose Accounts, Securities, Value and Cash are as the spec writes them. */
export function specInvestments(investments: Wire.InvestmentsResponse, what = 'Investments'): Investments {
  conforming(InvestmentsData, investments, what);
  return investments as Investments;
}

/** The transactions of an attribute's AttributesDetail as the sandbox writes them. */
export function specAttributeTransactions(transactions: readonly Wire.AttributeTransaction[], what = 'AttributesDetail transactions'): AttributeTransaction[] {
  return conforming(z.array(AttributeTransaction), transactions, what);
}
