/**
 * TEMPORAL_API_KEY_FILE read: its token, or why it holds none (missing, unreadable, empty, not one
 * printable token); the message names the path, never the content. The settings read it at start;
 * src/temporal/api-key-file.ts reads it again as connections open and while it watches for renewals.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { cannotRead } from './temporal-env-config.js';

/** What a token may hold: printable ASCII without spaces (an HTTP header's `Bearer <token>`); a JWT or an API key is. */
const TOKEN = /^[\x21-\x7e]+$/;

/** The token file could not give a token when a connection was opened; the message names the path, never the content. */
export class TemporalApiKeyFileError extends Error {
  override readonly name = 'TemporalApiKeyFileError';
  constructor(
    readonly path: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`TEMPORAL_API_KEY_FILE: ${reason}`, options);
  }
}

export type ApiKeyFileRead = { readonly token: string } | { readonly problem: string };

/** The token of the file's content (surrounding whitespace and a final newline dropped), or why it holds none. */
function tokenOf(path: string, content: string): ApiKeyFileRead {
  const token = content.trim();
  if (token === '') return { problem: `${path} is empty` };
  if (!TOKEN.test(token)) return { problem: `${path} does not hold one token (it has spaces, line breaks or characters outside printable ASCII inside)` };
  return { token };
}

/** The file's token, or why it has none: at start (config), where a problem stops the process. */
export function readApiKeyFileSync(path: string): ApiKeyFileRead {
  try {
    return tokenOf(path, readFileSync(path, 'utf8'));
  } catch (error) {
    return { problem: cannotRead(path, error) };
  }
}

/** The file's token now, or why it has none (the watcher's reads). */
export async function readApiKeyFileNow(path: string): Promise<ApiKeyFileRead> {
  try {
    return tokenOf(path, await readFile(path, 'utf8'));
  } catch (error) {
    return { problem: cannotRead(path, error) };
  }
}

/** The file's token as a connection opens; TemporalApiKeyFileError naming the path when it has none. */
export async function readApiKeyFile(path: string): Promise<string> {
  const read = await readApiKeyFileNow(path);
  if ('problem' in read) throw new TemporalApiKeyFileError(path, read.problem);
  return read.token;
}
