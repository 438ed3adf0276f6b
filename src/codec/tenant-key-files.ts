/**
 * A tenant's key file in static mode (PAYLOAD_TENANT_KEYS_DIR): `<dir>/<customerId>.key`, one line
 * `<key id>:<base64 of 32 bytes>` per key, the first sealing the tenant's new payloads and the others
 * only opening (rotation per tenant: a new first line). Readable by its owner alone, as a secret
 * mount (`defaultMode: 0400`) or `chmod 600` gives it. Forgetting the lender deletes the file.
 *
 * Errors name the file and the line, never a key's bytes.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ID_SEGMENT_PATTERN, ID_SEGMENT_RULE } from '../contract/ids.js';
import { createKeyFileOnce } from './local-key.js';
import { DATA_KEY_BYTES } from './payload-format.js';

const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const LINE_PATTERN = /^([^:]*):([A-Za-z0-9+/]+={0,2})$/;
/** Group or others may read or write it: a key file is its owner's alone. */
const SHARED_MODE_BITS = 0o077;

export class TenantKeyFileError extends Error {
  override readonly name = 'TenantKeyFileError';
  constructor(
    readonly path: string,
    problem: string,
    options?: ErrorOptions,
  ) {
    super(`tenant key file ${path}: ${problem}`, options);
  }
}

/** Where the tenants' key files are, and whether a missing one may be made (Temporal on this machine). */
export interface TenantKeyFiles {
  readonly dir: string;
  readonly createMissing: boolean;
}

/** A tenant's keys as its file lists them: the first seals, every one opens. */
export interface TenantKeys {
  readonly keyId: string;
  readonly key: Buffer;
  readonly decryptionKeys: ReadonlyMap<string, Buffer>;
  /** SHA-256 of the file, to tell a changed file from the one already read (the text itself holds the keys). */
  readonly fingerprint: string;
}

/** Where a tenant's key file is; a customer id that is not an id segment (no file name can hold it safely) is refused. */
export function tenantKeyFilePath(dir: string, tenant: string): string {
  if (!ID_SEGMENT_PATTERN.test(tenant))
    throw new TenantKeyFileError(join(dir, '<customerId>.key'), `customer id ${JSON.stringify(tenant.slice(0, 32))} ${ID_SEGMENT_RULE}`);
  return join(dir, `${tenant}.key`);
}

/** The tenant's keys, or undefined when its file does not exist (never made, or its lender forgotten). */
export function readTenantKeyFile(path: string): TenantKeys | undefined {
  let text: string;
  try {
    const fd = openSync(path, 'r');
    try {
      const mode = fstatSync(fd).mode & 0o777;
      if ((mode & SHARED_MODE_BITS) !== 0)
        throw new TenantKeyFileError(path, `is readable or writable by group or others (mode 0${mode.toString(8)}): chmod 600 it`);
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (error instanceof TenantKeyFileError) throw error;
    throw new TenantKeyFileError(path, `cannot be read: ${(error as Error).message}`, { cause: error });
  }
  return parseTenantKeys(path, text);
}

function parseTenantKeys(path: string, text: string): TenantKeys {
  const keys = new Map<string, Buffer>();
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.trim();
    if (line === '') continue;
    const where = `line ${index + 1}`;
    const match = LINE_PATTERN.exec(line);
    if (!match) throw new TenantKeyFileError(path, `${where} must be <key id>:<base64 of ${DATA_KEY_BYTES} bytes>`);
    const [, keyId = '', base64 = ''] = match;
    if (!KEY_ID_PATTERN.test(keyId)) throw new TenantKeyFileError(path, `${where}: the key id must be 1 to 64 letters, digits, ".", "_" or "-"`);
    if (keys.has(keyId)) throw new TenantKeyFileError(path, `${where}: key id ${keyId} appears twice`);
    const key = Buffer.from(base64, 'base64');
    // Padded standard base64 only, as every reader (Python's too) takes it.
    if (key.length !== DATA_KEY_BYTES || base64.length % 4 !== 0)
      throw new TenantKeyFileError(path, `${where} (key id ${keyId}): the key must be base64 of exactly ${DATA_KEY_BYTES} bytes, got ${key.length}`);
    keys.set(keyId, key);
  }
  const [first] = keys;
  if (!first) throw new TenantKeyFileError(path, `holds no key: one line <key id>:<base64 of ${DATA_KEY_BYTES} bytes> per key, the first sealing`);
  return { keyId: first[0], key: first[1], decryptionKeys: keys, fingerprint: createHash('sha256').update(text).digest('hex') };
}

/**
 * Makes the tenant's key file with a new random key unless it exists, and reads it (the first process
 * to write it wins, as with the local key: a hard link appears whole and fails if the file exists).
 * Only where a generated key may stand in for a provisioned one: Temporal on this machine.
 */
export function readOrCreateTenantKeyFile(path: string): TenantKeys {
  try {
    createKeyFileOnce(path, `tenant-${randomBytes(8).toString('hex')}:${randomBytes(DATA_KEY_BYTES).toString('base64')}\n`, 0o700);
  } catch (error) {
    throw new TenantKeyFileError(path, `cannot be created: ${(error as Error).message}`, { cause: error });
  }
  const keys = readTenantKeyFile(path);
  if (!keys) throw new TenantKeyFileError(path, 'was removed while it was being made');
  return keys;
}

/**
 * Forgets a tenant's keys: the file is overwritten with zeros, flushed, and removed. The overwrite
 * defeats a plain undelete; a copy-on-write or journaling file system, a snapshot or a backup may
 * still hold the bytes (docs/operations.md says so). 'already-gone' when there was no file.
 */
export function destroyTenantKeyFile(path: string): 'destroyed' | 'already-gone' {
  let fd: number;
  try {
    fd = openSync(path, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'already-gone';
    throw new TenantKeyFileError(path, `cannot be opened to destroy it: ${(error as Error).message}`, { cause: error });
  }
  try {
    const size = fstatSync(fd).size;
    if (size > 0) writeSync(fd, Buffer.alloc(size), 0, size, 0);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  rmSync(path, { force: true });
  return 'destroyed';
}
