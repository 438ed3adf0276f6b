/**
 * The key provider's calls to the KMS, counted from OpenBao's file audit log (one JSON object per
 * request and per response, kept across restarts): every request to the transit key's
 * `datakey/plaintext` (a data key made) and `decrypt` (a data key unwrapped), whoever made it.
 */
import { readFile } from 'node:fs/promises';

export interface KmsCalls {
  readonly datakey: number;
  readonly decrypt: number;
  /** Of those, the ones OpenBao refused or failed (an error on the request's response). */
  readonly refused: number;
}

export async function countKmsCalls(auditLog: string, mount: string, key: string): Promise<KmsCalls> {
  const datakeyPath = `${mount}/datakey/plaintext/${key}`;
  const decryptPath = `${mount}/decrypt/${key}`;
  let datakey = 0;
  let decrypt = 0;
  let refused = 0;
  for (const line of (await readFile(auditLog, 'utf8')).split('\n')) {
    if (line.trim() === '') continue;
    const entry = JSON.parse(line) as { type?: string; request?: { path?: string }; error?: string };
    const path = entry.request?.path;
    if (path !== datakeyPath && path !== decryptPath) continue;
    if (entry.type === 'request') {
      if (path === datakeyPath) datakey += 1;
      else decrypt += 1;
    } else if (entry.type === 'response' && entry.error) refused += 1;
  }
  return { datakey, decrypt, refused };
}
