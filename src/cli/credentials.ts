/**
 * The CLI's signed-in identity, kept between commands as `gh` and `gcloud` keep theirs: one JSON file,
 * mode 0600 in a 0700 directory, written whole (a temporary file renamed over it), holding who signed
 * in, at which provider, their groups and the access token until it expires. A file of another
 * provider, an expired one, or one that is not what `login` writes reads as not signed in, with why.
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';

export const Credentials = z.strictObject({
  issuer: z.url(),
  clientId: z.string().min(1),
  subject: z.string().min(1).max(255),
  name: z.string().min(1).max(255),
  groups: z.array(z.string().max(255)).max(1_000),
  accessToken: z.string().min(1),
  signedInAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
});
export type Credentials = z.output<typeof Credentials>;

/** What the file says now: signed in, or not and why (never a token in the why). */
export type CredentialsState = { readonly signedIn: true; readonly credentials: Credentials } | { readonly signedIn: false; readonly why: string };

export async function writeCredentials(path: string, credentials: Credentials): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const draft = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(draft, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    await rename(draft, path);
  } finally {
    await rm(draft, { force: true });
  }
  await chmod(path, 0o600);
}

export async function readCredentials(path: string, expected: { issuer: string; clientId: string }, now = Date.now()): Promise<CredentialsState> {
  let text: string;
  try {
    const { mode } = await stat(path);
    // A file others may read is not trusted to be ours alone.
    if ((mode & 0o077) !== 0)
      return {
        signedIn: false,
        why: `${path} may be read or written by others (mode ${(mode & 0o777).toString(8)}): sign in again (login), which writes it 0600`,
      };
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { signedIn: false, why: 'not signed in (login)' };
    return { signedIn: false, why: `${path} cannot be read: ${(error as Error).message}` };
  }
  let credentials: Credentials;
  try {
    credentials = Credentials.parse(JSON.parse(text));
  } catch {
    return { signedIn: false, why: `${path} is not what login writes: sign in again (login)` };
  }
  if (credentials.issuer !== expected.issuer || credentials.clientId !== expected.clientId) {
    return {
      signedIn: false,
      why: `signed in at ${credentials.issuer} as client ${credentials.clientId}, not at CLI_OIDC_ISSUER ${expected.issuer} as ${expected.clientId}: sign in again (login)`,
    };
  }
  if (Date.parse(credentials.expiresAt) <= now)
    return { signedIn: false, why: `the sign-in of ${credentials.name} expired at ${credentials.expiresAt}: sign in again (login)` };
  return { signedIn: true, credentials };
}

export async function removeCredentials(path: string): Promise<boolean> {
  try {
    await rm(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
