/**
 * The Accounts JSON of a large login written byte by byte from its columns (large-bank-data.ts)
 * into Buffers: no Transaction objects, no intermediate strings, so 500,000 transactions (about
 * 80 MB) serialize in a fraction of a second and the result lives outside the JS heap. The text is
 * what JSON.stringify of the materialized accounts gives (same keys in the same order, numbers in
 * JavaScript's shortest form), so both paths agree; the tests check it.
 */
import type { AccountsDetailOptions } from '../src/aggregator/schemas.js';
import { transactionWindow } from './banking-data.js';
import { LARGE_ENTRIES, transactionSuffix, type LargeAccount, type LargeBankData } from './large-bank-data.js';

const ascii = (text: string): Uint8Array => Buffer.from(text, 'utf8');
const HEX = ascii('0123456789abcdef');
/** Stands in for an index out of range, which the loops below never produce. */
const NONE = new Uint8Array(0);

/** Per entry: the bytes from `","Code"` up to the amount, and from after the amount up to the balance. */
const ENTRY_HEADS = LARGE_ENTRIES.map((e) =>
  ascii(`","Code":${JSON.stringify(e.code)},"Description":${JSON.stringify(e.description)},${e.credit ? '"Debit":null,"Credit":' : '"Debit":'}`),
);
const ENTRY_TAILS = LARGE_ENTRIES.map((e) => ascii(e.credit ? ',"Balance":' : ',"Credit":null,"Balance":'));
const LONGEST_ENTRY = Math.max(...ENTRY_HEADS.map((b) => b.length), ...ENTRY_TAILS.map((b) => b.length));
/** Upper bound of one transaction's bytes: fixed parts, two numbers of at most 22 characters, slack. */
const MAX_TRANSACTION_BYTES = 64 + 36 + 2 * LONGEST_ENTRY + 2 * 22;
const CHUNK_BYTES = 4 << 20;

/**
 * Appends bytes to 4 MB chunks; `finish` answers the chunks, which are sent one after the other
 * (joining them would cost a copy of the whole answer and twice its memory for a moment).
 */
class ByteWriter {
  private readonly chunks: Buffer[] = [];
  private buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private position = 0;
  private readonly digits = new Uint8Array(24);

  /** Makes room for `bytes` more bytes (the unchecked writes below rely on it). */
  reserve(bytes: number): void {
    if (this.position + bytes <= this.buffer.length) return;
    this.chunks.push(this.buffer.subarray(0, this.position));
    this.buffer = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes));
    this.position = 0;
  }

  text(text: string): void {
    this.reserve(Buffer.byteLength(text));
    this.position += this.buffer.write(text, this.position);
  }

  bytes(bytes: Uint8Array): void {
    this.buffer.set(bytes, this.position);
    this.position += bytes.length;
  }

  byte(code: number): void {
    this.buffer[this.position++] = code;
  }

  /** 32-bit unsigned as 8 lowercase hex digits. */
  hex8(value: number): void {
    for (let shift = 28; shift >= 0; shift -= 4) this.buffer[this.position++] = HEX[(value >>> shift) & 15] ?? 48;
  }

  /** Whole cents as a JSON number in dollars, as JavaScript prints cents / 100 (1.5, -0.05, 12). */
  cents(value: number): void {
    let rest = value;
    if (rest < 0) {
      this.byte(45); // '-'
      rest = -rest;
    }
    const whole = Math.floor(rest / 100);
    const fraction = rest - whole * 100;
    let length = 0;
    let n = whole;
    do {
      this.digits[length++] = 48 + (n % 10);
      n = Math.floor(n / 10);
    } while (n > 0);
    while (length > 0) this.buffer[this.position++] = this.digits[--length] ?? 48;
    if (fraction !== 0) {
      this.byte(46); // '.'
      this.byte(48 + Math.floor(fraction / 10));
      if (fraction % 10 !== 0) this.byte(48 + (fraction % 10));
    }
  }

  finish(): Buffer[] {
    // A mostly empty last chunk is copied to its exact size, so a small answer does not pin 4 MB.
    const last = this.buffer.subarray(0, this.position);
    this.chunks.push(this.position < this.buffer.length / 2 ? Buffer.from(last) : last);
    return this.chunks;
  }
}

/** JSON text of the Accounts array GetAccountsDetail answers for these options (see selectAccounts), in chunks. */
export function largeAccountsJson(data: LargeBankData, asOf: string, options: AccountsDetailOptions): Buffer[] {
  const { from, to } = transactionWindow(asOf, options);
  // Compared as strings, as selectAccounts does, so both paths pick the same transactions.
  const inWindow = Uint8Array.from(data.dates, (date) => (date >= from && date <= to ? 1 : 0));
  const dateBytes = data.dates.map((date) => ascii(`","Date":"${date}`));
  const wanted = options.AccountsFilter ? new Set(options.AccountsFilter) : undefined;
  const holder = options.WithAccountIdentity === false ? '' : `,"Holder":${JSON.stringify(data.holder)}`;
  const out = new ByteWriter();
  out.text('[');
  let first = true;
  for (const account of data.accounts) {
    if (wanted && !wanted.has(account.fields.Id)) continue;
    if (!first) out.text(',');
    first = false;
    const fields = options.WithBalance === false ? { ...account.fields, Balance: { Available: null, Current: null, Limit: null } } : account.fields;
    out.text(JSON.stringify(fields).slice(0, -1));
    if (options.WithTransactions !== false) {
      out.text(',"Transactions":[');
      writeTransactions(out, account, inWindow, dateBytes);
      out.text(']');
    }
    out.text(`${holder}}`);
  }
  out.text(']');
  return out.finish();
}

/** The account's transactions inside the window, newest first. */
function writeTransactions(out: ByteWriter, account: LargeAccount, inWindow: Uint8Array, dateBytes: readonly Uint8Array[]): void {
  const { day, amount, balance, entry } = account.columns;
  const idHead = ascii(`{"Id":"${account.idPrefix}`);
  let first = true;
  for (let k = day.length - 1; k >= 0; k--) {
    const d = day[k] ?? 0;
    if (inWindow[d] !== 1) continue;
    out.reserve(MAX_TRANSACTION_BYTES);
    if (!first) out.byte(44); // ','
    first = false;
    const e = entry[k] ?? 0;
    const value = amount[k] ?? 0;
    out.bytes(idHead);
    out.hex8(transactionSuffix(account, k));
    out.bytes(dateBytes[d] ?? NONE);
    out.bytes(ENTRY_HEADS[e] ?? NONE);
    out.cents(value < 0 ? -value : value);
    out.bytes(ENTRY_TAILS[e] ?? NONE);
    out.cents(balance[k] ?? 0);
    out.byte(125); // '}'
  }
}
