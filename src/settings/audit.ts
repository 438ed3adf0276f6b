/**
 * Where the audit trail is kept (src/audit): AUDIT_STORE, read by the console and the CLI.
 */
import { z } from 'zod';
import { doc, group } from './document.js';
import { isLoopbackHost } from './kms.js';
import { parseEnv } from './load.js';

export const DEFAULT_AUDIT_FILE = '.temporal/audit.jsonl';
const SECURE_SSL_MODES = new Set(['require', 'verify-ca', 'verify-full']);

/** `file:<path>`, or a PostgreSQL address that keeps its password and data off the network in clear. */
const AuditStoreLocation = z
  .string()
  .trim()
  .superRefine((text, ctx) => {
    if (text.startsWith('file:')) {
      if (text.length === 'file:'.length) ctx.addIssue({ code: 'custom', message: 'file: needs a path, e.g. file:/var/lib/aggregation/audit.jsonl' });
      return;
    }
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be file:<path> or a postgres:// address' });
      return;
    }
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
      ctx.addIssue({ code: 'custom', message: `must be file:<path> or a postgres:// address (got ${url.protocol}//)` });
      return;
    }
    // PostgreSQL's default is no TLS, silently: beyond this machine the choice must be written down.
    const sslmode = url.searchParams.get('sslmode');
    if (!isLoopbackHost(url.hostname) && !(sslmode !== null && (SECURE_SSL_MODES.has(sslmode) || sslmode === 'disable'))) {
      ctx.addIssue({
        code: 'custom',
        message: `reaches ${url.hostname} without saying how: add ?sslmode=verify-full (or require) so the trail and the password do not cross the network in clear, or ?sslmode=disable on a private network of one host (refused with CONSOLE_MODE=production)`,
      });
    }
  });

export const AuditVars = group(
  z.object({
    AUDIT_STORE: doc(
      AuditStoreLocation.optional(),
      `Where the audit trail is kept: a PostgreSQL address (postgres://user:password@host/db?sslmode=verify-full; required with CONSOLE_MODE=production, tables made on first use, append-only) or file:<path> (JSON lines, mode 0600, for one machine).`,
      { secret: true, defaultText: `file:${DEFAULT_AUDIT_FILE}` },
    ),
  }),
  'Audit trail',
  "Who answered, cancelled, decoded, changed or forgot what, and who signed in, with the outcome: written by the console and by the CLI's commands that act, read on the console's Audit page, with `GET /api/audit` and with `npm run cli -- audit`.",
);

/** A postgres:// address that sends the trail in clear to another host (sslmode=disable). */
export function clearTextBeyondLoopback(location: string): boolean {
  if (location.startsWith('file:')) return false;
  const url = new URL(location);
  return !isLoopbackHost(url.hostname) && url.searchParams.get('sslmode') === 'disable';
}

/** The store's location: the variable, or the development file. */
export function auditStoreLocation(env: z.output<typeof AuditVars>): string {
  return env.AUDIT_STORE ?? `file:${DEFAULT_AUDIT_FILE}`;
}

/** The audit trail's location for a process that reads only it (`npm run cli -- audit`). */
export function loadAuditStoreLocation(env?: NodeJS.ProcessEnv): string {
  return auditStoreLocation(parseEnv(AuditVars, env));
}
