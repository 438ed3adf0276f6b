/**
 * The generated key of a stack on this machine (dev stack, demo, tests against a local server):
 * created once, kept in an ignored file beside the dev server's history, and found the same way by
 * the worker, the pipeline client, the CLI and the console, so their history is encrypted by
 * default and stays readable to the project's own tools across restarts.
 *
 * File format: one line `<key id>:<base64 of 32 bytes>`, mode 0600. The key id is random, so a key
 * file that was lost and made anew gives "unknown key id" errors, never silent garbage.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

const KEY_BYTES = 32;

export class LocalKeyFileError extends Error {
  override readonly name = 'LocalKeyFileError';
  constructor(
    readonly path: string,
    problem: string,
    options?: ErrorOptions,
  ) {
    super(`payload key file ${path}: ${problem}`, options);
  }
}

export interface LocalKey {
  readonly keyId: string;
  readonly key: Buffer;
}

/** Reads the key file, creating it first if it does not exist (the first process to write it wins). */
export function readOrCreateLocalKey(path: string): LocalKey {
  try {
    createKeyFileOnce(path, `local-${randomBytes(4).toString('hex')}:${randomBytes(KEY_BYTES).toString('base64')}\n`);
  } catch (error) {
    throw new LocalKeyFileError(path, `cannot be created: ${(error as Error).message}`, { cause: error });
  }
  return parseLocalKey(path, readFileSync(path, 'utf8'));
}

/**
 * Writes `text` to a new key file at `path` (mode 0600, its directory made with `dirMode`) unless
 * one exists, which is then left as it is. A hard link appears whole and fails if the file exists:
 * processes starting at once agree on the first one's key, and none reads a half-written file.
 */
export function createKeyFileOnce(path: string, text: string, dirMode?: number): void {
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true, ...(dirMode === undefined ? {} : { mode: dirMode }) });
    writeFileSync(draft, text, { mode: 0o600 });
    linkSync(draft, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(draft, { force: true });
  }
}

function parseLocalKey(path: string, text: string): LocalKey {
  const match = /^([A-Za-z0-9._-]{1,64}):([A-Za-z0-9+/]+={0,2})\s*$/.exec(text);
  const key = match ? Buffer.from(match[2] ?? '', 'base64') : undefined;
  if (!match || !key || key.length !== KEY_BYTES) {
    throw new LocalKeyFileError(
      path,
      `must hold one line "<key id>:<base64 of ${KEY_BYTES} bytes>"; delete it to have a new key made (payloads encrypted with the old one become unreadable)`,
    );
  }
  return { keyId: match[1] ?? '', key };
}
