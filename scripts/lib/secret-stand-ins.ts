/**
 * Stand-ins for secrets, shaped as the real ones must be, for the checks that feed a deployment's
 * environment to the product's settings loaders without its secrets (compose:check, helm:check).
 */
import { randomBytes } from 'node:crypto';

const STAND_INS: Record<string, () => string> = {
  PAYLOAD_ENCRYPTION_KEY: () => randomBytes(32).toString('base64'),
  CONSOLE_TOKEN: () => randomBytes(24).toString('hex'),
  CONSOLE_SESSION_SECRET: () => randomBytes(32).toString('base64'),
  AUDIT_STORE: () => 'postgres://audit:stand-in@audit-db.databases.svc:5432/audit?sslmode=require',
};

/** A value the loader accepts in place of the secret `variable`. */
export function secretStandIn(variable: string): string {
  return STAND_INS[variable]?.() ?? 'stand-in';
}
