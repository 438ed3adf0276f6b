/**
 * The payload key of a chaos run, kept beside its logs: every run encrypts its payloads with a key of
 * its own (fleet.ts), so without that key a kept run's histories and stored payloads are ciphertext
 * nobody can replay or read. Written in the local key file's format (src/codec/local-key.ts: one line
 * `<key id>:<base64>`, mode 0600), so the project's tools take it as PAYLOAD_ENCRYPTION_KEY_FILE.
 */
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EncryptionKeys } from '../../src/codec/encryption-codec.js';
import { PAYLOAD_KEY_BYTES } from '../../src/settings/encryption-keys.js';

export const RUN_KEY_FILE = 'payload-encryption.key';
export const REPLAY_ENTRY = 'scripts/chaos/replay-kept.ts';

export class RunKeyError extends Error {
  override readonly name = 'RunKeyError';
}

/** Writes the key into the run directory, readable by its owner only; returns the file's path. */
export async function writeRunKey(runDir: string, encryption: Pick<EncryptionKeys, 'keyId' | 'key'>): Promise<string> {
  const path = join(runDir, RUN_KEY_FILE);
  await writeFile(path, `${encryption.keyId}:${Buffer.from(encryption.key).toString('base64')}\n`, { mode: 0o600 });
  // The mode given to writeFile is masked by the umask and ignored for an existing file.
  await chmod(path, 0o600);
  return path;
}

/** The key writeRunKey wrote (never creates one: a missing key must not silently become a new one). */
export async function readRunKey(runDir: string): Promise<EncryptionKeys> {
  const path = join(runDir, RUN_KEY_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new RunKeyError(`${path}: cannot be read (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  const match = /^([A-Za-z0-9._-]{1,64}):([A-Za-z0-9+/]+={0,2})\s*$/.exec(text);
  const key = match ? Buffer.from(match[2] ?? '', 'base64') : undefined;
  if (!match || !key || key.length !== PAYLOAD_KEY_BYTES)
    throw new RunKeyError(`${path}: must hold one line "<key id>:<base64 of ${PAYLOAD_KEY_BYTES} bytes>"`);
  return { keyId: match[1] ?? '', key, decryptionKeys: new Map() };
}

/** What a kept run's last lines say about replaying it. */
export function replayHint(runDir: string): string {
  return (
    `payload key in ${join(runDir, RUN_KEY_FILE)} (mode 0600), histories in ${join(runDir, 'histories')}; ` +
    `replay them against today's code: bash scripts/with-pinned-node.sh tsx ${REPLAY_ENTRY} ${runDir}`
  );
}
