/**
 * The pipeline entry's tenant credential: per-tenant API keys, of which the entry holds only the
 * SHA-256 hashes (PIPELINE_KEY_FILES: one file per tenant, one lower-case hex hash a line, two during
 * a rotation). A presented key is hashed and compared with every hash of every tenant in constant
 * time (no early exit, timingSafeEqual), so neither the answer's time nor its content says how close
 * a guess came, nor whose key it nearly was.
 *
 * Each file is read again when it changes (its mtime, size or inode, looked at no more than every
 * `recheckMs`): a key is added or revoked without a restart. A file that can no longer be read, or has
 * a line that is not a hash, accepts no key of its tenant until it is fixed (fail closed, said on
 * the log once per change): a revocation by deleting the file takes effect, and a half-written file
 * never lets a key in that should not be.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';

/** What every minted key begins with: lets a secret scanner (and a person) tell one from other tokens. */
export const PIPELINE_KEY_PREFIX = 'pk_';
/** 32 random bytes, base64url: 256 bits. */
const KEY_BYTES = 32;
const HASH_LINE = /^[0-9a-f]{64}$/;

/** The SHA-256 of a key as the files hold it: lower-case hex of the UTF-8 key. */
export function pipelineKeyHash(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** What the audit trail and the log say of a key: the first 12 hex digits of its hash (never the key). */
export function keyHashPrefix(hash: string): string {
  return hash.slice(0, 12);
}

/** A new key and the line its tenant's file takes: printed once, never stored by the product. */
export function mintPipelineKey(): { readonly key: string; readonly hash: string } {
  const key = `${PIPELINE_KEY_PREFIX}${randomBytes(KEY_BYTES).toString('base64url')}`;
  return { key, hash: pipelineKeyHash(key) };
}

/** The hashes in a key file's text, or the problem naming the line. */
export function parseKeyFile(text: string): { readonly hashes: readonly string[] } | { readonly problem: string } {
  const hashes: string[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (!HASH_LINE.test(line)) return { problem: `line ${index + 1} is not a SHA-256 in lower-case hex (64 characters 0-9a-f)` };
    hashes.push(line);
  }
  return { hashes };
}

/** Who presented a known key: its tenant, and its hash's prefix for the audit trail. */
export interface PipelineCaller {
  readonly customerId: string;
  readonly keyHashPrefix: string;
}

interface TenantKeys {
  readonly file: string;
  /** What the file was when read: its change reads it again. */
  stamp: string | undefined;
  hashes: readonly Buffer[];
  checkedAt: number;
}

export interface PipelineKeysOptions {
  /** A file is looked at again no sooner than this (default 1 s): each request would otherwise stat every file. */
  readonly recheckMs?: number;
  /** Where an unreadable or malformed file is reported (stderr by default). */
  readonly report?: (line: string) => void;
  /** The clock the recheck interval is read on (tests step it). */
  readonly now?: () => number;
}

/** A tenant's key file could not be used when the entry started. */
export class PipelineKeyFileError extends Error {
  override readonly name = 'PipelineKeyFileError';
}

export class PipelineKeys {
  private readonly tenants: Map<string, TenantKeys>;
  private readonly recheckMs: number;
  private readonly report: (line: string) => void;
  private readonly now: () => number;

  /** Reads every file at once: one that cannot be read or holds no valid hash list refuses the start (PipelineKeyFileError). */
  constructor(files: ReadonlyMap<string, string>, options: PipelineKeysOptions = {}) {
    this.recheckMs = options.recheckMs ?? 1_000;
    this.report = options.report ?? ((line) => process.stderr.write(`${line}\n`));
    this.now = options.now ?? Date.now;
    this.tenants = new Map();
    const problems: string[] = [];
    for (const [customerId, file] of files) {
      const keys: TenantKeys = { file, stamp: undefined, hashes: [], checkedAt: 0 };
      const problem = this.read(keys);
      if (problem) problems.push(`${customerId}: ${file} ${problem}`);
      this.tenants.set(customerId, keys);
    }
    if (problems.length > 0) throw new PipelineKeyFileError(`PIPELINE_KEY_FILES: ${problems.join('; ')}`);
  }

  /** How many hashes each tenant's file holds now (for the startup line). */
  counts(): ReadonlyMap<string, number> {
    return new Map([...this.tenants].map(([customerId, keys]) => [customerId, keys.hashes.length]));
  }

  /** The tenant whose key `key` is, or undefined for a key of no tenant. Every hash of every tenant is compared. */
  identify(key: string): PipelineCaller | undefined {
    const hash = pipelineKeyHash(key);
    const presented = Buffer.from(hash, 'hex');
    let found: string | undefined;
    for (const [customerId, keys] of this.tenants) {
      this.refresh(customerId, keys);
      for (const held of keys.hashes) {
        // No early exit: the time taken does not depend on where (or whether) the key matched.
        if (timingSafeEqual(presented, held) && found === undefined) found = customerId;
      }
    }
    return found === undefined ? undefined : { customerId: found, keyHashPrefix: keyHashPrefix(hash) };
  }

  private refresh(customerId: string, keys: TenantKeys): void {
    const now = this.now();
    if (now - keys.checkedAt < this.recheckMs) return;
    keys.checkedAt = now;
    const before = keys.stamp;
    const problem = this.read(keys);
    if (problem && keys.stamp !== before)
      this.report(`pipeline-entry: the key file of ${customerId} (${keys.file}) ${problem}: no key of ${customerId} is accepted until it is fixed`);
  }

  /** Reads the file if it changed since last read; returns its problem (and then holds no hash). */
  private read(keys: TenantKeys): string | undefined {
    let stamp: string;
    try {
      const stat = statSync(keys.file);
      stamp = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    } catch (error) {
      keys.stamp = `missing:${(error as NodeJS.ErrnoException).code ?? ''}`;
      keys.hashes = [];
      return `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
    }
    if (stamp === keys.stamp) return undefined;
    keys.stamp = stamp;
    let text: string;
    try {
      text = readFileSync(keys.file, 'utf8');
    } catch (error) {
      keys.hashes = [];
      return `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
    }
    const parsed = parseKeyFile(text);
    if ('problem' in parsed) {
      keys.hashes = [];
      return `is not a list of key hashes: ${parsed.problem}`;
    }
    keys.hashes = parsed.hashes.map((hash) => Buffer.from(hash, 'hex'));
    return undefined;
  }
}
