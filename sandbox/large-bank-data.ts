/**
 * Bank data of a large business login (`large_<accounts>x<transactions>`): exactly the requested
 * number of accounts, each with exactly the requested number of transactions, all dated within the
 * 365 days ending at asOf, with the invariants of the personal data (Balance after each
 * transaction, Balance.Current = newest transaction's Balance, listed newest first). Pure in
 * (seed, asOf, size).
 *
 * Kept in columns (typed arrays of day, amount and balance in cents, and an index into a fixed
 * table of descriptions) rather than one object per transaction: 500,000 transactions take about
 * 8 MB and no garbage collection work, and large-bank-json.ts writes the JSON straight from them.
 * Transaction objects are built only when something needs them (attributes, statements).
 */
import type { Account, Holder, Transaction } from './spec-shapes.js';
import { HISTORY_DAYS, NSF_DESCRIPTION, NSF_FEE, type BankData, type GeneratedAccount } from './banking-data.js';
import { dayOf, isoOf } from './dates.js';
import { Prng, uuidFrom } from './random.js';

export interface LargeLoginSize {
  readonly accounts: number;
  readonly transactionsPerAccount: number;
}

/** One description a large login's transactions can carry; its sign is fixed. */
export interface LargeEntry {
  readonly description: string;
  readonly code: string | null;
  readonly credit: boolean;
}

const CLIENTS = ['GAGNON CONSTRUCTION', 'ROY & FILS', 'PATEL IMPORTS', 'NGUYEN DESIGN', 'MARTIN AUTO', 'COTE PHARMACIE', 'SMITH DENTAL', 'BOUCHARD FERMES'];
const VENDORS = ['GRAND & TOY', 'ULINE CANADA', 'SYSCO CANADA', 'HYDRO-QUEBEC', 'BELL BUSINESS', 'PUROLATOR', 'CDN TIRE COMMERCIAL', 'STAPLES BUSINESS'];
const CARD_SHOPS = ['AMAZON.CA', 'SHELL FLEET', 'HOME DEPOT PRO', 'AIR CANADA', 'MICROSOFT 365', 'GOOGLE ADS', 'COSTCO BUSINESS', 'ESSO'];
const BUSINESSES = ['NORTHWIND FOODS INC.', 'BOREAL ENERGY LTD.', 'LAURENTIAN FREIGHT INC.', 'MAPLE LEAF HEALTH CORP.', 'ACME LOGISTICS LTD.'];

/** Every description of large logins (fewer than 256: a transaction stores its index in a byte). */
const table: LargeEntry[] = [];
export const LARGE_ENTRIES: readonly LargeEntry[] = table;
/** Adds entries to the table; answers their indexes. */
function entries(descriptions: readonly string[], code: string | null, credit: boolean): number[] {
  return descriptions.map((description) => table.push({ description, code, credit }) - 1);
}
const CUSTOMER_PAYMENT = entries(
  CLIENTS.map((c) => `CUSTOMER PAYMENT - ${c}`),
  null,
  true,
);
const E_TRANSFER_IN = entries(
  CLIENTS.map((c) => `INTERAC E-TRANSFER FROM ${c}`),
  null,
  true,
);
const [MERCHANT_SETTLEMENT = 0] = entries(['MERCHANT SETTLEMENT - VISA/MC'], 'DD', true);
const [CARD_PAYMENT = 0] = entries(['PAYMENT - THANK YOU'], null, true);
const SUPPLIER_PAYMENT = entries(
  VENDORS.map((v) => `SUPPLIER PAYMENT - ${v}`),
  'BP',
  false,
);
const PAD = entries(
  VENDORS.map((v) => `PAD ${v}`),
  'PAD',
  false,
);
const [PAYROLL_RUN = 0] = entries(['EMPLOYEE PAYROLL RUN'], 'DD', false);
const [SERVICE_CHARGE = 0] = entries(['SERVICE CHARGE'], 'SC', false);
const [NSF = 0] = entries([NSF_DESCRIPTION], 'NSF', false);
const CARD_PURCHASE = entries(CARD_SHOPS, 'POS', false);

/** One account's transactions in date order (index 0 is the oldest), amounts in cents. */
export interface LargeColumns {
  /** Day index in `LargeBankData.dates` (0 = asOf - 364). */
  readonly day: Uint16Array;
  /** Signed amount in cents: positive is a Credit, negative a Debit (never 0). */
  readonly amount: Int32Array;
  /** Balance after the transaction, in cents (whole numbers, exact in a double). */
  readonly balance: Float64Array;
  /** Index into LARGE_ENTRIES. */
  readonly entry: Uint8Array;
}

export interface LargeAccount {
  /** The account as GetAccountsDetail returns it, without Transactions and Holder (in this key order). */
  readonly fields: Pick<
    Account,
    'Id' | 'TransitNumber' | 'InstitutionNumber' | 'OverdraftLimit' | 'Title' | 'AccountNumber' | 'Balance' | 'Category' | 'Type' | 'Currency'
  >;
  readonly columns: LargeColumns;
  /** First 28 characters of every transaction Id of the account (8-4-4-4-4 with dashes). */
  readonly idPrefix: string;
  readonly idSalt: number;
}

export interface LargeBankData {
  readonly accounts: readonly LargeAccount[];
  readonly holder: Holder;
  readonly business: string;
  /** YYYY-MM-DD of each day of the year, oldest first (the Days365 window ending at asOf). */
  readonly dates: readonly string[];
}

type Kind = 'operating' | 'savings' | 'card';
interface Plan {
  readonly kind: Kind;
  readonly title: string;
  readonly category: 'Operations' | 'Credits';
  readonly type: 'Chequing' | 'Savings' | 'CreditCard';
  readonly overdraft: number;
  /** Credit limit in dollars (cards), null otherwise. */
  readonly limit: number | null;
}
const PLANS: Record<Kind, Plan> = {
  operating: { kind: 'operating', title: 'Business Operating Account', category: 'Operations', type: 'Chequing', overdraft: 5000, limit: null },
  savings: { kind: 'savings', title: 'Business Savings', category: 'Operations', type: 'Savings', overdraft: 0, limit: null },
  card: { kind: 'card', title: 'Sandbox Business Visa', category: 'Credits', type: 'CreditCard', overdraft: 0, limit: 25_000 },
};

export function generateLargeBankData(seed: string, asOf: string, size: LargeLoginSize): LargeBankData {
  const prng = new Prng(`large:${seed}`);
  const start = dayOf(asOf) - HISTORY_DAYS + 1;
  const dates = Array.from({ length: HISTORY_DAYS }, (_, i) => isoOf(start + i));
  const business = prng.pick(BUSINESSES);
  const holder: Holder = {
    Name: business,
    Address: { CivicAddress: `${prng.int(10, 9999)} Boulevard Industriel`, City: 'Laval', Province: 'QC', PostalCode: 'H7L 4S3', POBox: null, Country: 'CA' },
    Email: `finance@${(business.split(' ')[0] ?? 'business').toLowerCase()}.example.com`,
    PhoneNumber: `(450) 555-${prng.digits(4)}`,
  };
  const institutionNumber = prng.pick(['001', '002', '003', '006', '815']);
  const accounts: LargeAccount[] = [];
  for (let index = 0; index < size.accounts; index++) {
    // The first account is the operating account; the others mostly operating accounts too.
    const roll = prng.next();
    const plan = index === 0 || roll < 0.6 ? PLANS.operating : roll < 0.8 ? PLANS.savings : PLANS.card;
    const id = uuidFrom(`${seed}:large-account:${index}`);
    const columns = ledger(new Prng(`large:${seed}:${index}`), plan, size.transactionsPerAccount);
    const current = toDollars(columns.balance[columns.balance.length - 1] ?? 0);
    const hex = uuidFrom(`${id}:transactions`).replaceAll('-', '');
    accounts.push({
      fields: {
        Id: id,
        TransitNumber: prng.digits(5),
        InstitutionNumber: institutionNumber,
        OverdraftLimit: plan.overdraft,
        Title: `${plan.title} ${String(index + 1).padStart(3, '0')}`,
        AccountNumber: prng.digits(7),
        Balance: {
          Available: plan.limit === null ? current : toDollars(plan.limit * 100 + (columns.balance[columns.balance.length - 1] ?? 0)),
          Current: current,
          Limit: plan.limit,
        },
        Category: plan.category,
        Type: plan.type,
        Currency: 'CAD',
      },
      columns,
      idPrefix: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 24)}`,
      idSalt: parseInt(hex.slice(24, 32), 16),
    });
  }
  return { accounts, holder, business, dates };
}

/**
 * `count` transactions of one account. Transaction k falls on day floor((k + u) × 365 / count),
 * u in [0, 1): non-decreasing in k, spread over the whole year, never past asOf. Amounts lean
 * towards a target balance so balances wander rather than drift off; an operating account that
 * goes below zero pays an NSF fee as its next transaction (the count stays exact).
 */
function ledger(prng: Prng, plan: Plan, count: number): LargeColumns {
  const columns: LargeColumns = { day: new Uint16Array(count), amount: new Int32Array(count), balance: new Float64Array(count), entry: new Uint8Array(count) };
  // Typical amounts shrink as activity grows, so a busy account's yearly volume stays plausible.
  const scale = Math.max(0.05, Math.min(1, (8 * HISTORY_DAYS) / Math.max(HISTORY_DAYS, count)));
  let balance = plan.kind === 'card' ? -prng.int(50_000, 500_000) : prng.int(100_000, 5_000_000);
  // Some operating accounts run close to zero (and overdraw: NSF fees, negative days), others do not.
  const target = plan.kind === 'card' ? -800_000 : plan.kind === 'savings' ? 4_000_000 : prng.int(-100_000, 3_000_000);
  let nsfDue = false;
  for (let k = 0; k < count; k++) {
    let amount: number;
    let entry: number;
    if (nsfDue) {
      amount = -NSF_FEE * 100;
      entry = NSF;
    } else if (plan.kind === 'card') {
      if (balance < target && prng.chance(0.15)) {
        amount = Math.round(-balance * (0.3 + prng.next() * 0.5));
        entry = CARD_PAYMENT;
      } else {
        amount = -Math.round((1_000 + prng.next() * 80_000) * scale);
        entry = pick(prng, CARD_PURCHASE);
      }
    } else if (prng.chance(balance < target ? 0.62 : 0.38)) {
      amount = Math.round((5_000 + prng.next() * 400_000) * scale);
      const which = prng.int(0, 2);
      entry = which === 0 ? pick(prng, CUSTOMER_PAYMENT) : which === 1 ? MERCHANT_SETTLEMENT : pick(prng, E_TRANSFER_IN);
    } else {
      amount = -Math.round((2_000 + prng.next() * 380_000) * scale);
      const which = prng.int(0, 3);
      entry = which === 0 ? pick(prng, SUPPLIER_PAYMENT) : which === 1 ? PAYROLL_RUN : which === 2 ? pick(prng, PAD) : SERVICE_CHARGE;
    }
    const before = balance;
    balance += amount;
    nsfDue = plan.kind === 'operating' && !nsfDue && before >= 0 && balance < 0;
    columns.day[k] = Math.floor(((k + prng.next()) * HISTORY_DAYS) / count);
    columns.amount[k] = amount;
    columns.balance[k] = balance;
    columns.entry[k] = entry;
  }
  return columns;
}

function pick(prng: Prng, indexes: readonly number[]): number {
  return indexes[Math.floor(prng.next() * indexes.length)] ?? 0;
}

/** Integer cents to dollars: the same double `cents()` gives for that amount. */
export function toDollars(centsValue: number): number {
  return centsValue === 0 ? 0 : centsValue / 100;
}

/**
 * Transaction k's Id: the account's prefix and a bijection of k on 32 bits (multiply by an odd
 * constant, xor a salt), so ids are unique in the account, stable, and cost no hashing.
 */
export function transactionSuffix(account: LargeAccount, k: number): number {
  return (Math.imul(k, 0x9e3779b1) ^ account.idSalt) >>> 0;
}

/** The data as ordinary accounts with Transaction objects (newest first), for attributes and statements. */
export function materializeLargeBankData(data: LargeBankData): BankData {
  const accounts = data.accounts.map((account): GeneratedAccount => {
    const { day, amount, balance, entry } = account.columns;
    const transactions = new Array<Transaction>(day.length);
    for (let k = 0; k < day.length; k++) {
      const value = amount[k] ?? 0;
      const kind = LARGE_ENTRIES[entry[k] ?? 0];
      transactions[day.length - 1 - k] = {
        Id: `${account.idPrefix}${transactionSuffix(account, k).toString(16).padStart(8, '0')}`,
        Date: data.dates[day[k] ?? 0] ?? '',
        Code: kind?.code ?? null,
        Description: kind?.description ?? '',
        Debit: value < 0 ? toDollars(-value) : null,
        Credit: value > 0 ? toDollars(value) : null,
        Balance: toDollars(balance[k] ?? 0),
      };
    }
    return { ...account.fields, Transactions: transactions, Holder: data.holder };
  });
  return { accounts, holder: data.holder, employer: data.business };
}

/** Transactions held, for the cache's memory accounting. */
export function largeTransactionCount(data: LargeBankData): number {
  return data.accounts.reduce((total, account) => total + account.columns.day.length, 0);
}
