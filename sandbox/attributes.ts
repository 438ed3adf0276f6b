/**
 * Every attribute the sandbox serves, defined once. Attributes are computed from the same
 * transactions GetAccountsDetail returns with DaysOfTransactions Days365 (the whole generated year),
 * over the accounts left after Filters.AccountCategory and AccountFilter. "Last N days" means
 * transactions dated from asOf - N + 1 to asOf inclusive. Count and sum attributes answer
 * 'NONE_DETECTED' when no transaction qualifies; so do the others when there is nothing to measure.
 */
import type { AttributePackageOperation, AttributeTransaction, AttributeValue } from '../src/aggregator/schemas.js';
import type { Account, Transaction } from './spec-shapes.js';
import { dayOf, isoOf, slashOf } from './dates.js';
import { PAYROLL_PREFIX } from './banking-data.js';
import { cents } from './random.js';

export const NONE_DETECTED = 'NONE_DETECTED';

/** An account with its transactions newest first, as the accounts endpoint returns them. */
export interface AttributeAccount {
  readonly Id: string;
  readonly Category: string;
  readonly Balance: Account['Balance'];
  readonly Transactions: readonly Transaction[];
}

export interface AttributeResult {
  readonly value: AttributeValue;
  /** The transactions that contributed (returned when AttributesDetail names the attribute). */
  readonly contributing: readonly { readonly accountId: string; readonly transaction: Transaction }[];
}

interface Context {
  readonly accounts: readonly AttributeAccount[];
  readonly asOf: string;
  /** Rows per window, built once per computation: packages ask for the same window several times. */
  readonly windows: Map<number | undefined, readonly Row[]>;
}

type Row = { readonly accountId: string; readonly transaction: Transaction };

/** The transactions of the last `days` days (all up to asOf when undefined); callers must not mutate it. */
const rows = (context: Context, days?: number): readonly Row[] => {
  let found = context.windows.get(days);
  if (found === undefined) {
    const from = days === undefined ? '' : isoOf(dayOf(context.asOf) - days + 1);
    const out: Row[] = [];
    for (const account of context.accounts) {
      for (const transaction of account.Transactions)
        if (transaction.Date >= from && transaction.Date <= context.asOf) out.push({ accountId: account.Id, transaction });
    }
    context.windows.set(days, (found = out));
  }
  return found;
};
const isNsf = (t: Transaction) => t.Debit !== null && /\bNSF\b/i.test(t.Description);
const count = (found: readonly Row[]): AttributeResult => ({ value: found.length === 0 ? NONE_DETECTED : found.length, contributing: found });
const sum = (found: readonly Row[], pick: (t: Transaction) => number, divisor = 1): AttributeResult => ({
  value: found.length === 0 ? NONE_DETECTED : cents(found.reduce((total, row) => total + pick(row.transaction), 0) / divisor),
  contributing: found,
});
const extreme = (found: readonly Row[], better: (a: number, b: number) => boolean): AttributeResult => {
  let best: Row | undefined;
  for (const row of found) if (best === undefined || better(row.transaction.Balance, best.transaction.Balance)) best = row;
  return best === undefined ? { value: NONE_DETECTED, contributing: [] } : { value: best.transaction.Balance, contributing: [best] };
};

/** The definitions. Each doc line is the exact rule the compute function implements. */
export const ATTRIBUTE_DEFINITIONS = {
  account_age_days: {
    doc: 'Days from the date of the oldest transaction over the selected accounts to asOf.',
    compute: (c: Context): AttributeResult => {
      let oldest: Row | undefined;
      for (const row of rows(c)) if (oldest === undefined || row.transaction.Date < oldest.transaction.Date) oldest = row;
      return oldest ? { value: dayOf(c.asOf) - dayOf(oldest.transaction.Date), contributing: [oldest] } : { value: NONE_DETECTED, contributing: [] };
    },
  },
  balance_current: {
    doc: "Sum of Balance.Current over the selected accounts (each equals the Balance after the account's newest transaction).",
    compute: (c: Context): AttributeResult => {
      if (c.accounts.length === 0) return { value: NONE_DETECTED, contributing: [] };
      const newest = c.accounts.flatMap((a) => (a.Transactions[0] ? [{ accountId: a.Id, transaction: a.Transactions[0] }] : []));
      return { value: cents(c.accounts.reduce((total, a) => total + (a.Balance.Current ?? 0), 0)), contributing: newest };
    },
  },
  balance_max: {
    doc: 'Highest running Balance after any transaction of the last 90 days, over the selected accounts.',
    compute: (c: Context): AttributeResult => extreme(rows(c, 90), (a, b) => a > b),
  },
  balance_min: {
    doc: 'Lowest running Balance after any transaction of the last 90 days, over the selected accounts.',
    compute: (c: Context): AttributeResult => extreme(rows(c, 90), (a, b) => a < b),
  },
  count_nsf: {
    doc: 'Number of debit transactions of the last 365 days whose Description contains the word NSF.',
    compute: (c: Context): AttributeResult => count(rows(c, 365).filter((r) => isNsf(r.transaction))),
  },
  count_nsf_30_days: {
    doc: 'Number of debit transactions of the last 30 days whose Description contains the word NSF.',
    compute: (c: Context): AttributeResult => count(rows(c, 30).filter((r) => isNsf(r.transaction))),
  },
  count_nsf_90_days: {
    doc: 'Number of debit transactions of the last 90 days whose Description contains the word NSF.',
    compute: (c: Context): AttributeResult => count(rows(c, 90).filter((r) => isNsf(r.transaction))),
  },
  avg_monthly_deposit: {
    doc: 'Sum of Credit over all credit transactions of the last 365 days, divided by 12, in cents.',
    compute: (c: Context): AttributeResult =>
      sum(
        rows(c, 365).filter((r) => r.transaction.Credit !== null),
        (t) => t.Credit ?? 0,
        12,
      ),
  },
  sum_employer_income: {
    doc: `Sum of Credit over the last 365 days of credits whose Description starts with "${PAYROLL_PREFIX}" (employer payroll).`,
    compute: (c: Context): AttributeResult =>
      sum(
        rows(c, 365).filter((r) => r.transaction.Credit !== null && r.transaction.Description.startsWith(PAYROLL_PREFIX)),
        (t) => t.Credit ?? 0,
      ),
  },
  average_monthly_free_cash_flow: {
    doc: 'Total Credit minus total Debit over the transactions of the last 90 days, divided by 3, in cents.',
    compute: (c: Context): AttributeResult => sum(rows(c, 90), (t) => (t.Credit ?? 0) - (t.Debit ?? 0), 3),
  },
  count_days_negative_balance_90_days: {
    doc: 'Number of days of the last 90 on which the end-of-day Balance of at least one selected Operations account was below zero (a day without transactions keeps the previous balance).',
    compute: (c: Context): AttributeResult => {
      const end = dayOf(c.asOf);
      const start = end - 89;
      const negativeDays = new Set<number>();
      const contributing: Row[] = [];
      // Dates repeat (a year has 365), so each is parsed once rather than once per transaction.
      const days = new Map<string, number>();
      const dayOfCached = (date: string) => {
        let day = days.get(date);
        if (day === undefined) days.set(date, (day = dayOf(date)));
        return day;
      };
      for (const account of c.accounts.filter((a) => a.Category === 'Operations')) {
        const chronological = [...account.Transactions].reverse().filter((t) => t.Date <= c.asOf);
        const first = chronological[0];
        if (!first) continue;
        let balance = cents(first.Balance - (first.Credit ?? 0) + (first.Debit ?? 0)); // opening balance
        let index = 0;
        for (let day = dayOfCached(first.Date) < start ? dayOfCached(first.Date) : start; day <= end; day++) {
          const today: Transaction[] = [];
          while (index < chronological.length && dayOfCached(chronological[index]?.Date ?? '') === day) today.push(chronological[index++] as Transaction);
          const last = today.at(-1);
          if (last) balance = last.Balance;
          if (day >= start && balance < 0) {
            negativeDays.add(day);
            for (const transaction of today) contributing.push({ accountId: account.Id, transaction });
          }
        }
      }
      return { value: negativeDays.size === 0 ? NONE_DETECTED : negativeDays.size, contributing };
    },
  },
} as const satisfies Record<string, { readonly doc: string; readonly compute: (context: Context) => AttributeResult }>;

export type AttributeName = keyof typeof ATTRIBUTE_DEFINITIONS;
export const ATTRIBUTE_NAMES = Object.keys(ATTRIBUTE_DEFINITIONS) as AttributeName[];

export function isAttributeName(name: string): name is AttributeName {
  return Object.hasOwn(ATTRIBUTE_DEFINITIONS, name);
}

/** The fixed set and group name of each package operation (the spec: fixed, not customizable). */
export const ATTRIBUTE_PACKAGES: Record<AttributePackageOperation, { readonly group: string; readonly attributes: readonly AttributeName[] }> = {
  GetIncomeAttributes: { group: 'IncomeAttributes', attributes: ['sum_employer_income', 'avg_monthly_deposit', 'account_age_days'] },
  GetCreditRiskAttributes: {
    group: 'CreditRiskAttributes',
    attributes: ['count_nsf', 'count_nsf_30_days', 'count_nsf_90_days', 'count_days_negative_balance_90_days', 'balance_min'],
  },
  GetUserAnalysisAttributes: {
    group: 'UserAnalysisAttributes',
    attributes: ['account_age_days', 'balance_current', 'balance_max', 'balance_min', 'average_monthly_free_cash_flow'],
  },
  GetLendingAttributes: {
    group: 'LendingAttributes',
    attributes: ['balance_current', 'avg_monthly_deposit', 'sum_employer_income', 'count_nsf_90_days', 'average_monthly_free_cash_flow'],
  },
  GetAllAttributes: { group: 'AllAttributes', attributes: ATTRIBUTE_NAMES },
};

export interface AccountSelection {
  /** Filters.AccountCategory: keep accounts whose Category is listed. */
  readonly categories?: readonly string[] | undefined;
  /** AccountFilter / Options.AccountFilter: keep accounts whose Id is listed. */
  readonly accountIds?: readonly string[] | undefined;
}

export function selectAttributeAccounts<T extends AttributeAccount>(accounts: readonly T[], selection: AccountSelection): T[] {
  return accounts.filter(
    (account) =>
      (selection.categories === undefined || selection.categories.includes(account.Category)) &&
      (selection.accountIds === undefined || selection.accountIds.includes(account.Id)),
  );
}

/** Computes the named attributes over already selected accounts (tests recompute them independently). */
export function computeAttributes(accounts: readonly AttributeAccount[], asOf: string, names: readonly AttributeName[]): Record<string, AttributeResult> {
  const context: Context = { accounts, asOf, windows: new Map() };
  const out: Record<string, AttributeResult> = {};
  for (const name of names) out[name] = ATTRIBUTE_DEFINITIONS[name].compute(context);
  return out;
}

/** A contributing transaction in the answer's shape (Date YYYY/MM/DD; absent Debit/Credit as 0, the spec's numbers). */
export function detailTransaction(row: { readonly accountId: string; readonly transaction: Transaction }): AttributeTransaction {
  return {
    TransactionId: row.transaction.Id,
    AccountId: row.accountId,
    Date: slashOf(row.transaction.Date),
    Description: row.transaction.Description,
    Debit: row.transaction.Debit ?? 0,
    Credit: row.transaction.Credit ?? 0,
  };
}
