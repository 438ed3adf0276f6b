/**
 * Bank accounts generated from a seed (the LoginId): a chequing account, a credit card and usually a
 * savings account, each with a year of transactions up to `asOf` whose running Balance follows
 * Balance_i = Balance_{i-1} + Credit - Debit (in date order), and Account.Balance.Current equal to
 * the most recent transaction's Balance. Transactions are listed newest first, as the real service does.
 */
import type { AccountsDetailOptions } from '../src/aggregator/schemas.js';
import type { Account, Holder, Transaction } from './spec-shapes.js';
import { dayOf, isoOf, parts } from './dates.js';
import { Prng, cents, uuidFrom } from './random.js';

/** Days of history generated (the Days365 window). */
export const HISTORY_DAYS = 365;
export const NSF_FEE = 48;
export const NSF_DESCRIPTION = 'NSF FEE';
export const PAYROLL_PREFIX = 'PAYROLL ';

export interface GeneratedAccount extends Account {
  readonly Transactions: Transaction[];
}

export interface BankData {
  readonly accounts: readonly GeneratedAccount[];
  readonly holder: Holder;
  readonly employer: string;
}

const EMPLOYERS = ['ACME LOGISTICS', 'NORTHWIND FOODS', 'MAPLE LEAF HEALTH', 'BOREAL ENERGY', 'LAURENTIAN FREIGHT'];
const FIRST = ['Camille', 'Jordan', 'Alexis', 'Morgan', 'Sam', 'Taylor', 'Dominique', 'Charlie'];
const LAST = ['Gagnon', 'Roy', 'Cote', 'Bouchard', 'Smith', 'Nguyen', 'Patel', 'Martin'];
const CITIES = [
  { City: 'Montreal', Province: 'QC', PostalCode: 'H2X 1Y4', Area: '514', Street: 'Rue Sainte-Catherine' },
  { City: 'Toronto', Province: 'ON', PostalCode: 'M5V 2T6', Area: '416', Street: 'King Street West' },
  { City: 'Calgary', Province: 'AB', PostalCode: 'T2P 1J9', Area: '403', Street: '8 Avenue SW' },
  { City: 'Halifax', Province: 'NS', PostalCode: 'B3J 1S9', Area: '902', Street: 'Barrington Street' },
];
const GROCERS = ['METRO', 'IGA', 'LOBLAWS', 'COSTCO WHOLESALE', 'MAXI', 'SOBEYS'];
const DINING = ['TIM HORTONS', 'UBER EATS', 'STARBUCKS', 'A&W', 'SUBWAY'];
const CARD_SHOPS = ['AMAZON.CA', 'SHELL', 'CANADIAN TIRE', 'IKEA', 'WALMART', 'SAQ', 'PHARMAPRIX', 'CINEPLEX'];

/** A ledger that keeps the running balance while transactions are appended in date order. */
class Ledger {
  readonly transactions: Transaction[] = [];
  constructor(
    private readonly prng: Prng,
    public balance: number,
  ) {}

  post(day: number, description: string, amount: number, code: string | null = null): void {
    if (amount === 0) return;
    this.balance = cents(this.balance + amount);
    this.transactions.push({
      Id: this.prng.uuid(),
      Date: isoOf(day),
      Code: code,
      Description: description,
      Debit: amount < 0 ? cents(-amount) : null,
      Credit: amount > 0 ? cents(amount) : null,
      Balance: this.balance,
    });
  }
}

/** Generates the accounts of one login; pure in (seed, asOf). */
export function generateBankData(seed: string, asOf: string): BankData {
  const prng = new Prng(`bank:${seed}`);
  const end = dayOf(asOf);
  const start = end - HISTORY_DAYS + 1;
  const place = prng.pick(CITIES);
  const first = prng.pick(FIRST);
  const last = prng.pick(LAST);
  const holder: Holder = {
    Name: `${first} ${last}`,
    Address: {
      CivicAddress: `${prng.int(10, 9999)} ${place.Street}`,
      City: place.City,
      Province: place.Province,
      PostalCode: place.PostalCode,
      POBox: null,
      Country: 'CA',
    },
    Email: `${first.toLowerCase()}.${last.toLowerCase()}@example.com`,
    PhoneNumber: `(${place.Area}) 555-${prng.digits(4)}`,
  };
  const employer = prng.pick(EMPLOYERS);
  const pay = prng.amount(1650, 2450);
  const rent = prng.amount(1150, 1700);
  const hasSavings = prng.chance(0.75);
  const payOffset = prng.int(0, 13);
  const internet = prng.amount(70, 95);
  const phone = prng.amount(55, 85);
  const saveMonthly = hasSavings ? prng.amount(100, 350) : 0;
  // Discretionary spending is scaled so that a month's outflow is about `appetite` x income: near 1,
  // balances wander around zero and some logins overdraw (NSF fees), others never do.
  const appetite = 0.86 + prng.next() * 0.17;
  const monthlyIncome = (pay * 26) / 12;
  const fixedMonthly = rent + 100 + internet + phone + saveMonthly + 17 + 60;
  const baselineDiscretionary = 2090; // card + groceries + dining + gas at factor 1 (expected values)
  const spendFactor = Math.max(0.3, (monthlyIncome * appetite - fixedMonthly) / baselineDiscretionary);

  const chequing = new Ledger(prng, prng.amount(300, 1800));
  const savings = new Ledger(prng, prng.amount(500, 9000));
  const card = new Ledger(prng, -prng.amount(150, 900));

  for (let day = start; day <= end; day++) {
    const { date, weekday, lastOfMonth } = parts(day);
    // Credits first on a day, as banks post deposits before debits.
    if ((day - start + payOffset) % 14 === 0) chequing.post(day, `${PAYROLL_PREFIX}${employer}`, cents(pay * (prng.chance(0.1) ? 1.08 : 1)), 'DD');
    if (prng.chance(1 / 30)) chequing.post(day, `INTERAC E-TRANSFER FROM ${prng.pick(FIRST).toUpperCase()}`, prng.amount(20, 300));
    if ([1, 4, 7, 10].includes(parts(day).month) && date === 5) chequing.post(day, 'GST/HST CREDIT CANADA', prng.amount(110, 160), 'DD');
    if (hasSavings && prng.chance(0.2 / 30)) {
      const amount = prng.amount(200, 900);
      savings.post(day, 'TRANSFER TO CHEQUING', -amount);
      chequing.post(day, 'TRANSFER FROM SAVINGS', amount);
    }

    const debit = (description: string, amount: number, code: string | null = null) => {
      const before = chequing.balance;
      chequing.post(day, description, -amount, code);
      // An overdrawn account pays one NSF fee per day it goes below zero.
      if (chequing.balance < 0 && before >= 0) chequing.post(day, NSF_DESCRIPTION, -NSF_FEE, 'NSF');
    };
    if (date === 1) debit(`RENT PAYMENT - ${prng.pick(['MAPLE', 'CEDAR', 'BIRCH'])} PROPERTIES`, rent, 'PAD');
    if (date === 15) debit('HYDRO UTILITY BILL', prng.amount(55, 140), 'PAD');
    if (date === 20) debit('BELL CANADA INTERNET', internet, 'PAD');
    if (date === 22) debit('ROGERS WIRELESS', phone, 'PAD');
    if (hasSavings && date === 3) {
      debit('TRANSFER TO SAVINGS', saveMonthly);
      savings.post(day, 'TRANSFER FROM CHEQUING', saveMonthly);
    }
    if (prng.chance(1 / 4)) debit(`${prng.pick(GROCERS)} #${prng.int(100, 999)}`, cents(prng.amount(35, 185) * spendFactor), 'POS');
    if (prng.chance(1 / 4)) debit(prng.pick(DINING), cents(prng.amount(6, 55) * spendFactor), 'POS');
    if (weekday === 6 && prng.chance(0.7)) debit('PETRO-CANADA', cents(prng.amount(40, 85) * spendFactor), 'POS');
    if (prng.chance(1 / 45)) debit('ATM WITHDRAWAL', prng.pick([40, 60, 80, 100, 200]), 'ATM');

    if (prng.chance(1 / 3)) card.post(day, prng.pick(CARD_SHOPS), -cents(prng.amount(10, 160) * spendFactor));
    if (date === 12) card.post(day, 'NETFLIX.COM', -16.99);
    if (date === 25 && card.balance < 0) {
      const payment = cents(-card.balance * (prng.chance(0.7) ? 1 : 0.5));
      debit('PAYMENT - SANDBOX VISA', payment, 'BP');
      card.post(day, 'PAYMENT - THANK YOU', payment);
    }
    // Overdrawn with money in savings: the holder sometimes moves some back.
    if (hasSavings && chequing.balance < -300 && savings.balance > 1500 && prng.chance(0.3)) {
      const amount = cents(Math.min(savings.balance - 500, -chequing.balance + prng.amount(100, 600)));
      savings.post(day, 'TRANSFER TO CHEQUING', -amount);
      chequing.post(day, 'TRANSFER FROM SAVINGS', amount);
    }
    if (hasSavings && lastOfMonth) {
      savings.post(day, 'INTEREST', cents((Math.max(0, savings.balance) * 0.0125) / 12));
      // A careful saver sweeps a large chequing surplus to savings at month end.
      if (chequing.balance > 4000) {
        const sweep = cents(chequing.balance - 2000);
        debit('TRANSFER TO SAVINGS', sweep);
        savings.post(day, 'TRANSFER FROM CHEQUING', sweep);
      }
    }
  }

  const institutionNumber = prng.pick(['001', '002', '003', '006', '815']);
  const make = (
    kind: string,
    ledger: Ledger,
    fields: Pick<Account, 'Title' | 'Category' | 'Type' | 'OverdraftLimit'> & { limit: number | null },
  ): GeneratedAccount => {
    const current = ledger.balance;
    return {
      Id: uuidFrom(`${seed}:account:${kind}`),
      Transactions: ledger.transactions.slice().reverse(),
      TransitNumber: prng.digits(5),
      InstitutionNumber: institutionNumber,
      OverdraftLimit: fields.OverdraftLimit,
      Title: fields.Title,
      AccountNumber: prng.digits(7),
      Balance: { Available: fields.limit === null ? current : cents(fields.limit + current), Current: current, Limit: fields.limit },
      Category: fields.Category,
      Type: fields.Type,
      Currency: 'CAD',
      Holder: holder,
    };
  };
  const accounts = [make('chequing', chequing, { Title: 'Chequing Account', Category: 'Operations', Type: 'Chequing', OverdraftLimit: 500, limit: null })];
  if (hasSavings)
    accounts.push(make('savings', savings, { Title: 'High Interest Savings', Category: 'Operations', Type: 'Savings', OverdraftLimit: 0, limit: null }));
  accounts.push(make('card', card, { Title: 'Sandbox Visa', Category: 'Credits', Type: 'CreditCard', OverdraftLimit: 0, limit: 5000 }));
  return { accounts, holder, employer };
}

/**
 * The accounts as GetAccountsDetail returns them for the options: AccountsFilter (ids), WithTransactions
 * (false omits them), DaysOfTransactions (Days90 default: the 90 days ending at asOf; Days365: the whole
 * year), DateFrom/DateTo (inclusive, replace the DaysOfTransactions window), WithBalance false (nulls),
 * WithAccountIdentity false (no Holder).
 */
export function selectAccounts(data: BankData, asOf: string, options: AccountsDetailOptions): Account[] {
  const { from, to } = transactionWindow(asOf, options);
  const wanted = options.AccountsFilter ? new Set(options.AccountsFilter) : undefined;
  return data.accounts
    .filter((account) => !wanted || wanted.has(account.Id))
    .map((account) => {
      const { Transactions, Holder: holder, ...rest } = account;
      const out: Account = { ...rest };
      if (options.WithTransactions !== false) out.Transactions = Transactions.filter((t) => t.Date >= from && t.Date <= to);
      if (options.WithBalance === false) out.Balance = { Available: null, Current: null, Limit: null };
      if (options.WithAccountIdentity !== false) out.Holder = holder;
      return out;
    });
}

/** The inclusive date range (YYYY-MM-DD) of transactions GetAccountsDetail returns for the options. */
export function transactionWindow(
  asOf: string,
  options: Pick<AccountsDetailOptions, 'DaysOfTransactions' | 'DateFrom' | 'DateTo'>,
): { from: string; to: string } {
  const from = options.DateFrom ?? isoOf(dayOf(asOf) - (options.DaysOfTransactions === 'Days365' ? HISTORY_DAYS : 90) + 1);
  return { from, to: options.DateTo ?? asOf };
}
