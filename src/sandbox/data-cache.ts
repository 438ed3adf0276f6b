/**
 * Generated data and its serialized JSON, cached per login (and per GetAccountsDetail options), so a
 * full one-year retrieval costs a string concatenation rather than generation + JSON.stringify.
 * Bounded: least recently used logins are evicted past `maxLogins`.
 */
import type { AccountsDetailOptions } from '../aggregator/schemas.js';
import { generateBankData, selectAccounts, type BankData } from './banking-data.js';
import { generateInvestmentData, type InvestmentData } from './investments-data.js';

interface Entry {
  bank?: BankData;
  investments?: InvestmentData;
  investmentsJson?: string;
  readonly accountsJson: Map<string, string>;
}

const MAX_OPTION_VARIANTS = 32;

export class DataCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    readonly asOf: string,
    private readonly maxLogins = 2_000,
  ) {}

  private entry(loginId: string): Entry {
    let entry = this.entries.get(loginId);
    if (entry) {
      this.entries.delete(loginId); // re-insert: Map order is the recency order
    } else {
      entry = { accountsJson: new Map() };
      if (this.entries.size >= this.maxLogins) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined) this.entries.delete(oldest);
      }
    }
    this.entries.set(loginId, entry);
    return entry;
  }

  bank(loginId: string): BankData {
    const entry = this.entry(loginId);
    return (entry.bank ??= generateBankData(loginId, this.asOf));
  }

  investments(loginId: string): InvestmentData {
    const entry = this.entry(loginId);
    return (entry.investments ??= generateInvestmentData(loginId, this.asOf));
  }

  /** JSON text of the Accounts array GetAccountsDetail answers for these options. */
  accountsJson(loginId: string, options: AccountsDetailOptions): string {
    const entry = this.entry(loginId);
    const key = optionsKey(options);
    let json = entry.accountsJson.get(key);
    if (json === undefined) {
      json = JSON.stringify(selectAccounts(this.bank(loginId), this.asOf, options));
      if (entry.accountsJson.size >= MAX_OPTION_VARIANTS) entry.accountsJson.clear();
      entry.accountsJson.set(key, json);
    }
    return json;
  }

  /** JSON text of `"Accounts":[...],"Securities":[...],"Value":n,"Cash":n` (no braces). */
  investmentsJson(loginId: string): string {
    const entry = this.entry(loginId);
    if (entry.investmentsJson === undefined) {
      const data = this.investments(loginId);
      entry.investmentsJson = JSON.stringify({ Accounts: data.Accounts, Securities: data.Securities, Value: data.Value, Cash: data.Cash }).slice(1, -1);
    }
    return entry.investmentsJson;
  }

  drop(loginId: string): void {
    this.entries.delete(loginId);
  }
}

/** Options that change the answer, in a fixed order (MostRecentCached and WithKYC do not). */
function optionsKey(options: AccountsDetailOptions): string {
  return [
    options.AccountsFilter ? [...options.AccountsFilter].sort().join(',') : '*',
    options.WithTransactions === false ? 'no-tx' : 'tx',
    options.DaysOfTransactions ?? 'Days90',
    options.DateFrom ?? '',
    options.DateTo ?? '',
    options.WithBalance === false ? 'no-bal' : 'bal',
    options.WithAccountIdentity === false ? 'no-id' : 'id',
  ].join('|');
}
