/**
 * The shapes the sandbox generates: the spec's records exactly (strings where the spec says string,
 * null only where it says null occurs). The product's schemas are views that also take the nulls and
 * formats a real service sends, so they are too loose for a generator to compute with; a variation
 * (variations.ts) writes these records the other ways. Checked below to fit the product's schemas,
 * so what the sandbox generates always parses (type aliases, not interfaces: an interface does not
 * fit a schema's open record).
 */
import type * as Wire from '../src/aggregator/schemas.js';

export type Address = {
  CivicAddress: string;
  City: string;
  Province: string;
  PostalCode: string;
  POBox: string | null;
  Country: string;
};

export type Holder = {
  Name: string;
  Address: Address;
  Email: string;
  PhoneNumber: string;
};

export type Balance = {
  Available: number | null;
  Current: number | null;
  Limit: number | null;
};

export type Transaction = {
  Id: string;
  /** YYYY-MM-DD. */
  Date: string;
  Code: string | null;
  Description: string;
  Debit: number | null;
  Credit: number | null;
  /** The balance after the transaction. */
  Balance: number;
};

export type Account = {
  Id: string;
  Transactions?: Transaction[];
  TransitNumber: string;
  InstitutionNumber: string;
  OverdraftLimit: number;
  Title: string;
  AccountNumber: string;
  Balance: Balance;
  Category: string;
  Type: string;
  Currency: string;
  Holder?: Holder;
};

export type Position = {
  Id: string;
  Category: string;
  Class: string;
  BookValue: number;
  Quantity: number;
  MarketValue: number;
  GainAmount: number;
  GainCurrencyAmount: number;
  GainPercent: number;
  Currency: string;
  SecurityId: string;
};

export type InvestmentTransaction = {
  Id: string;
  Date: string;
  Type: string;
  Description: string;
  Quantity: number;
  Fee: number;
  Amount: number;
  SecurityId: string;
};

export type InvestmentAccount = {
  Id: string;
  FullAccountId: string;
  AccountId: string;
  Name: string;
  Type: string;
  Registered: boolean;
  Currency: string;
  Cash: number;
  AccountValue: number;
  CurrencyValue: number;
  Positions: Position[];
  Transactions: InvestmentTransaction[];
};

export type Security = {
  Id: string;
  Name: string;
  Symbol: string;
  Type: string;
  Price: number;
  Date: string;
  Aliases: string[];
  Currency: string;
  CUSIP: string;
  ISIN: string | null;
};

/** Compile-time only: each generated shape is one the product's schema accepts. */
type Fits<Generated extends Accepted, Accepted> = [Generated, Accepted];
export type SpecShapesFitTheContract = [
  Fits<Holder, Wire.Holder>,
  Fits<Transaction, Wire.Transaction>,
  Fits<Account, Wire.Account>,
  Fits<Position, Wire.Position>,
  Fits<InvestmentTransaction, Wire.InvestmentTransaction>,
  Fits<InvestmentAccount, Wire.InvestmentAccount>,
  Fits<Security, Wire.Security>,
];
