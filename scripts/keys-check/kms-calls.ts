/**
 * The key provider's calls to the KMS, counted from OpenBao's file audit log (one JSON object per
 * request and per response, kept across restarts): every request to the transit key's, or one of its
 * tenants' keys' (`<key>-tenant-<customerId>`), `datakey/plaintext` (a data key made) and `decrypt`
 * (a data key unwrapped), whoever made it.
 */
import { readFile } from 'node:fs/promises';

export interface KmsCalls {
  readonly datakey: number;
  readonly decrypt: number;
  /** Of those, the ones OpenBao refused or failed (an error on the request's response). */
  readonly refused: number;
}

export async function countKmsCalls(auditLog: string, mount: string, key: string): Promise<KmsCalls> {
  const ofKey = (path: string, operation: string) => path === `${mount}/${operation}/${key}` || path.startsWith(`${mount}/${operation}/${key}-tenant-`);
  let datakey = 0;
  let decrypt = 0;
  let refused = 0;
  for (const line of (await readFile(auditLog, 'utf8')).split('\n')) {
    if (line.trim() === '') continue;
    const entry = JSON.parse(line) as { type?: string; request?: { path?: string }; error?: string };
    const path = entry.request?.path ?? '';
    const isDatakey = ofKey(path, 'datakey/plaintext');
    if (!isDatakey && !ofKey(path, 'decrypt')) continue;
    if (entry.type === 'request') {
      if (isDatakey) datakey += 1;
      else decrypt += 1;
    } else if (entry.type === 'response' && entry.error) refused += 1;
  }
  return { datakey, decrypt, refused };
}
