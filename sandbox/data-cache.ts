/**
 * Generated data and its serialized JSON, cached per login (and per GetAccountsDetail options), so a
 * full one-year retrieval costs a socket write rather than generation + serialization. Accounts JSON
 * is kept as Buffers (outside the JS heap, sent as they are, in one or more chunks). Bounded twice: least recently used
 * logins are evicted past `maxLogins` or past `maxBytes` of estimated memory (a large login's
 * one-year answer alone can be 80 MB or more).
 */
import type { AccountsDetailOptions } from '../src/aggregator/schemas.js';
import { generateBankData, selectAccounts, type BankData } from './banking-data.js';
import { generateInvestmentData, type InvestmentData } from './investments-data.js';
import { largeAccountsJson } from './large-bank-json.js';
import { generateLargeBankData, largeTransactionCount, materializeLargeBankData, type LargeBankData, type LargeLoginSize } from './large-bank-data.js';

/** What the cache needs of a login: its id (the seed of its data) and, for a large login, its size. */
export interface DataLogin {
  readonly id: string;
  readonly scenario: { readonly large?: LargeLoginSize | undefined };
}

/** The Accounts array's JSON bytes, in chunks to be sent one after the other. */
export type AccountsJson = readonly Buffer[];

const byteLengthOf = (json: AccountsJson) => json.reduce((total, chunk) => total + chunk.byteLength, 0);

interface Entry {
  /** A large login's columns (the source of its JSON; Transaction objects only when `bank` is asked). */
  large?: LargeBankData;
  bank?: BankData;
  investments?: InvestmentData;
  investmentsJson?: string;
  /** By options key, least recently used first. */
  readonly accountsJson: Map<string, AccountsJson>;
  /** Estimated memory held, in bytes. */
  bytes: number;
}

export interface DataCacheStats {
  readonly logins: number;
  /** Estimated memory held by every entry, in bytes. */
  readonly bytes: number;
  /** Bank data generations (a login's data is generated again only after eviction). */
  readonly generated: number;
  /** Accounts JSON serializations, and answers served from an already serialized one. */
  readonly serialized: number;
  readonly hits: number;
}

const MAX_OPTION_VARIANTS = 32;
/** Rough heap cost of one Transaction object with its strings, and of one transaction in columns. */
const TRANSACTION_OBJECT_BYTES = 300;
const TRANSACTION_COLUMN_BYTES = 15;

export class DataCache {
  private readonly entries = new Map<string, Entry>();
  private totalBytes = 0;
  private generated = 0;
  private serialized = 0;
  private hits = 0;

  constructor(
    readonly asOf: string,
    private readonly maxLogins = 2_000,
    private readonly maxBytes = 1024 * 1024 * 1024,
  ) {}

  private entry(loginId: string): Entry {
    let entry = this.entries.get(loginId);
    if (entry) {
      this.entries.delete(loginId); // re-insert: Map order is the recency order
    } else {
      entry = { accountsJson: new Map(), bytes: 0 };
      if (this.entries.size >= this.maxLogins) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined) this.drop(oldest);
      }
    }
    this.entries.set(loginId, entry);
    return entry;
  }

  /** Accounts `bytes` to the entry, then evicts least recently used logins (never `entry`) past the budget. */
  private charge(entry: Entry, bytes: number): void {
    entry.bytes += bytes;
    this.totalBytes += bytes;
    for (const [loginId, other] of this.entries) {
      if (this.totalBytes <= this.maxBytes) return;
      if (other !== entry) this.drop(loginId);
    }
    // Still over with only this login left: drop its least recently used answers but the newest.
    for (const [key, json] of entry.accountsJson) {
      if (this.totalBytes <= this.maxBytes || entry.accountsJson.size <= 1) return;
      entry.accountsJson.delete(key);
      this.release(entry, byteLengthOf(json));
    }
  }

  private release(entry: Entry, bytes: number): void {
    entry.bytes -= bytes;
    this.totalBytes -= bytes;
  }

  private largeData(login: DataLogin, entry: Entry, size: LargeLoginSize): LargeBankData {
    if (entry.large === undefined) {
      const large = generateLargeBankData(login.id, this.asOf, size);
      this.generated += 1;
      entry.large = large;
      this.charge(entry, largeTransactionCount(large) * TRANSACTION_COLUMN_BYTES);
    }
    return entry.large;
  }

  /** The login's accounts with Transaction objects (statements, attributes). */
  bank(login: DataLogin): BankData {
    const entry = this.entry(login.id);
    if (entry.bank === undefined) {
      const size = login.scenario.large;
      const bank = size ? materializeLargeBankData(this.largeData(login, entry, size)) : generateBankData(login.id, this.asOf);
      if (!size) this.generated += 1;
      entry.bank = bank;
      this.charge(entry, bank.accounts.reduce((total, account) => total + account.Transactions.length, 0) * TRANSACTION_OBJECT_BYTES);
    }
    return entry.bank;
  }

  investments(login: DataLogin): InvestmentData {
    const entry = this.entry(login.id);
    return (entry.investments ??= generateInvestmentData(login.id, this.asOf));
  }

  /** JSON bytes of the Accounts array GetAccountsDetail answers for these options. */
  accountsJson(login: DataLogin, options: AccountsDetailOptions): AccountsJson {
    const entry = this.entry(login.id);
    const key = optionsKey(options);
    let json = entry.accountsJson.get(key);
    if (json !== undefined) {
      this.hits += 1;
      entry.accountsJson.delete(key); // re-insert: most recently used last
      entry.accountsJson.set(key, json);
      return json;
    }
    const size = login.scenario.large;
    // A large login writes its JSON from its columns; others stringify their (small) objects.
    json = size
      ? largeAccountsJson(this.largeData(login, entry, size), this.asOf, options)
      : [Buffer.from(JSON.stringify(selectAccounts(this.bank(login), this.asOf, options)))];
    this.serialized += 1;
    if (entry.accountsJson.size >= MAX_OPTION_VARIANTS) {
      for (const cached of entry.accountsJson.values()) this.release(entry, byteLengthOf(cached));
      entry.accountsJson.clear();
    }
    entry.accountsJson.set(key, json);
    this.charge(entry, byteLengthOf(json));
    return json;
  }

  /** JSON text of `"Accounts":[...],"Securities":[...],"Value":n,"Cash":n` (no braces). */
  investmentsJson(login: DataLogin): string {
    const entry = this.entry(login.id);
    if (entry.investmentsJson === undefined) {
      const data = this.investments(login);
      entry.investmentsJson = JSON.stringify({ Accounts: data.Accounts, Securities: data.Securities, Value: data.Value, Cash: data.Cash }).slice(1, -1);
      this.charge(entry, entry.investmentsJson.length);
    }
    return entry.investmentsJson;
  }

  drop(loginId: string): void {
    const entry = this.entries.get(loginId);
    if (!entry) return;
    this.entries.delete(loginId);
    this.totalBytes -= entry.bytes;
  }

  stats(): DataCacheStats {
    return { logins: this.entries.size, bytes: this.totalBytes, generated: this.generated, serialized: this.serialized, hits: this.hits };
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
