/**
 * Shared section `encryption`: the payload codec's keys (PAYLOAD_ENCRYPTION*), or none when
 * encryption is off; with Temporal on this machine, the generated local key (src/codec/local-key.ts);
 * with PAYLOAD_KEY_PROVIDER=vault-transit or aws-kms, the KMS's settings (key-provider.ts) with those keys kept
 * to read what they wrote.
 */
import { statSync } from 'node:fs';
import { z } from 'zod';
import type { EncryptionKeys } from '../codec/encryption-codec.js';
import type { EncryptionSettings } from '../codec/key-provider.js';
import { LocalKeyFileError, readOrCreateLocalKey } from '../codec/local-key.js';

/** Where a stack on this machine keeps its generated local key unless PAYLOAD_ENCRYPTION_KEY_FILE says otherwise (relative to the project). */
export const DEFAULT_LOCAL_KEY_FILE = '.temporal/payload-encryption.key';
import { doc, group } from './document.js';
import { awsKmsEncryption, checkKeyProvider, isLoopbackHost, transitEncryption, type KeyProviderVars } from './kms.js';

/** AES-256: a key is exactly this many bytes. */
export const PAYLOAD_KEY_BYTES = 32;
const KEY_HINT = 'generate one with `openssl rand -base64 32`';
const KEY_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
const KEY_ID_RULE = 'must be 1 to 64 letters, digits, ".", "_" or "-"';

/** Standard or URL-safe base64 of exactly 32 bytes → the key, or a message saying what is wrong. */
function decodeKey(text: string): Buffer | string {
  if (!/^(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}$/.test(text)) return `must be base64 (${KEY_HINT})`;
  const key = Buffer.from(text, 'base64');
  if (key.length !== PAYLOAD_KEY_BYTES) return `must be base64 of exactly ${PAYLOAD_KEY_BYTES} bytes, got ${key.length} bytes (${KEY_HINT})`;
  return key;
}

const EncryptionKey = z
  .string()
  .trim()
  .transform((text, ctx) => {
    const key = decodeKey(text);
    if (typeof key === 'string') {
      ctx.addIssue({ code: 'custom', message: key });
      return z.NEVER;
    }
    return key;
  });

/** `id:base64,id:base64`: earlier keys, kept to decrypt what they encrypted. */
const DecryptionKeys = z.string().transform((text, ctx) => {
  const keys = new Map<string, Buffer>();
  for (const [index, raw] of text.split(',').entries()) {
    const entry = raw.trim();
    if (entry === '') continue;
    const colon = entry.indexOf(':');
    const id = colon < 0 ? '' : entry.slice(0, colon).trim();
    const where = `entry ${index + 1}${id ? ` (key id ${id})` : ''}`;
    if (colon < 0) {
      ctx.addIssue({ code: 'custom', message: `${where} must be <key id>:<base64 key>` });
      continue;
    }
    if (!KEY_ID_PATTERN.test(id)) {
      ctx.addIssue({ code: 'custom', message: `${where}: the key id ${KEY_ID_RULE}` });
      continue;
    }
    if (keys.has(id)) {
      ctx.addIssue({ code: 'custom', message: `key id ${id} appears twice` });
      continue;
    }
    const key = decodeKey(entry.slice(colon + 1).trim());
    if (typeof key === 'string') ctx.addIssue({ code: 'custom', message: `${where}: the key ${key}` });
    else keys.set(id, key);
  }
  return keys;
});

/** The encryption variables, part of each process's schema. */
export const EncryptionVars = group(
  z.object({
    PAYLOAD_ENCRYPTION: doc(
      z.enum(['auto', 'off']).default('auto'),
      '"auto": encrypt with PAYLOAD_ENCRYPTION_KEY if set; else, with Temporal on this machine, with a key generated once into PAYLOAD_ENCRYPTION_KEY_FILE; else the process refuses to start. "off" stores payloads in clear (anyone who can read Temporal reads them).',
    ),
    PAYLOAD_ENCRYPTION_KEY_FILE: doc(
      z.string().trim().min(1).default(DEFAULT_LOCAL_KEY_FILE),
      'Where the generated local key of a stack on this machine is kept (created once, mode 0600).',
    ),
    PAYLOAD_ENCRYPTION_KEY: doc(
      EncryptionKey.optional(),
      `Base64 of exactly ${PAYLOAD_KEY_BYTES} bytes: \`openssl rand -base64 32\`. The worker, the clients, the CLI and the console need the same keys.`,
      { secret: true },
    ),
    PAYLOAD_ENCRYPTION_KEY_ID: doc(
      z.string().trim().regex(KEY_ID_PATTERN, { message: KEY_ID_RULE }).default('default'),
      'Written next to each encrypted payload (1-64 of A-Z a-z 0-9 . _ -), so a later key can get another id: give every new key a new id.',
    ),
    PAYLOAD_TENANT_KEYS_DIR: doc(
      z.string().trim().min(1).optional(),
      "A key per tenant with PAYLOAD_KEY_PROVIDER=static: a directory of key files, `<customerId>.key`, each one line `<key id>:<base64 of 32 bytes>` per key (the first seals the tenant's new payloads, the others only open; mode 0600). A tenant's payloads are then sealed with its own key and name it (`encryption-tenant`); payloads of no tenant keep PAYLOAD_ENCRYPTION_KEY. With Temporal on this machine a missing file is made on the tenant's first payload; elsewhere sealing for a tenant without a file fails (TenantKeyMissingError). Deleting a file forgets that lender (`tenant forget`).",
      { defaultText: 'unset: one key for every tenant' },
    ),
    PAYLOAD_DECRYPTION_KEYS: doc(
      DecryptionKeys.optional(),
      'Earlier keys, for rotation: comma-separated <key id>:<base64 key>, used to decrypt only (never to encrypt). With a KMS, the only way static payloads written before the switch are read: the generated local key is then neither made nor read unless listed here.',
      { secret: true },
    ),
  }),
  'Payload encryption',
  'On by default: every payload Temporal stores (workflow input with the bank password, MFA answers, activity inputs and results, the result with holder PII and transactions, failure messages) is AES-256-GCM encrypted.',
);
/** Encryption and the payload store decide by where Temporal is, so they read its address too. */
export type EncryptionVars = z.output<typeof EncryptionVars> & KeyProviderVars & { readonly TEMPORAL_ADDRESS: string };

/** Whether Temporal runs on this machine: only then may a generated local key stand in for a real one. */
export function isLoopback(address: string): boolean {
  return isLoopbackHost(address.replace(/:\d+$/, ''));
}

export function checkEncryption(env: EncryptionVars, ctx: z.RefinementCtx): void {
  if (env.PAYLOAD_ENCRYPTION === 'off' && env.PAYLOAD_ENCRYPTION_KEY) {
    ctx.addIssue({ code: 'custom', path: ['PAYLOAD_ENCRYPTION'], message: 'is off but PAYLOAD_ENCRYPTION_KEY is set: unset one of them' });
  }
  checkKeyProvider(env, ctx);
  // A KMS's keys need no configured key: configured keys are then only for reading older payloads.
  if (env.PAYLOAD_KEY_PROVIDER === 'static' && env.PAYLOAD_ENCRYPTION === 'auto' && !env.PAYLOAD_ENCRYPTION_KEY && !isLoopback(env.TEMPORAL_ADDRESS)) {
    ctx.addIssue({
      code: 'custom',
      path: ['PAYLOAD_ENCRYPTION_KEY'],
      message:
        `is required with Temporal at ${env.TEMPORAL_ADDRESS}, not on this machine: without it bank passwords, MFA answers and holder data ` +
        `would be stored there in clear (${KEY_HINT}; the same key for the worker, clients and console). PAYLOAD_ENCRYPTION=off stores them in clear on purpose`,
    });
  }
  // With a KMS, listed keys alone read the static payloads written before the switch (the local key among them, if listed).
  if (env.PAYLOAD_DECRYPTION_KEYS && env.PAYLOAD_DECRYPTION_KEYS.size > 0 && !env.PAYLOAD_ENCRYPTION_KEY && env.PAYLOAD_KEY_PROVIDER === 'static') {
    ctx.addIssue({ code: 'custom', path: ['PAYLOAD_DECRYPTION_KEYS'], message: 'needs PAYLOAD_ENCRYPTION_KEY (the current key) as well' });
  }
  if (env.PAYLOAD_TENANT_KEYS_DIR !== undefined) {
    const problem =
      env.PAYLOAD_KEY_PROVIDER !== 'static'
        ? `is set but PAYLOAD_KEY_PROVIDER is ${env.PAYLOAD_KEY_PROVIDER}: a KMS keeps a key per tenant itself (PAYLOAD_TENANT_KEYS)`
        : env.PAYLOAD_ENCRYPTION === 'off'
          ? 'is set but PAYLOAD_ENCRYPTION is off: unset one of them'
          : !env.PAYLOAD_TENANT_KEYS
            ? 'is set but PAYLOAD_TENANT_KEYS is false: unset one of them'
            : undefined;
    if (problem) ctx.addIssue({ code: 'custom', path: ['PAYLOAD_TENANT_KEYS_DIR'], message: problem });
  }
  if (env.PAYLOAD_DECRYPTION_KEYS?.has(env.PAYLOAD_ENCRYPTION_KEY_ID)) {
    ctx.addIssue({
      code: 'custom',
      path: ['PAYLOAD_DECRYPTION_KEYS'],
      message: `key id ${env.PAYLOAD_ENCRYPTION_KEY_ID} is the current PAYLOAD_ENCRYPTION_KEY_ID; give each key its own id`,
    });
  }
}

/**
 * The `encryption` section: the codec's keys, or no section when encryption is off. "auto" without a
 * key (which checkEncryption let through only with Temporal on this machine) reads the local key
 * file, creating it if missing: a side effect of parsing, so a damaged file is one more problem
 * naming its variable, and a refused configuration never creates one. With vault-transit or aws-kms, the KMS's
 * section, holding the configured or listed keys (when there are any) to read the static payloads
 * written before; the local key file is never touched then (a key the KMS cannot revoke).
 */
export function encryptionSection(env: EncryptionVars, ctx: z.RefinementCtx): { encryption?: EncryptionSettings } {
  if (env.PAYLOAD_ENCRYPTION === 'off') return {};
  const configured = configuredKeys(env, ctx);
  if (env.PAYLOAD_KEY_PROVIDER === 'static') {
    if (!configured.ok || !configured.keys) return {};
    if (env.PAYLOAD_TENANT_KEYS_DIR === undefined) return { encryption: configured.keys };
    // Made on a tenant's first payload only where a generated key may stand in for a provisioned one.
    const tenantKeyFiles = Object.freeze({ dir: env.PAYLOAD_TENANT_KEYS_DIR, createMissing: isLoopback(env.TEMPORAL_ADDRESS) });
    if (!tenantKeyFiles.createMissing && !isDirectory(tenantKeyFiles.dir)) {
      ctx.addIssue({
        code: 'custom',
        path: ['PAYLOAD_TENANT_KEYS_DIR'],
        message: `${tenantKeyFiles.dir} is not a directory: provision the tenants' key files there (docs/operations.md, "Tenant onboarding")`,
      });
      return {};
    }
    return { encryption: Object.freeze({ ...configured.keys, tenantKeyFiles }) };
  }
  if (!configured.ok) return {};
  const encryption = env.PAYLOAD_KEY_PROVIDER === 'aws-kms' ? awsKmsEncryption(env, configured.keys) : transitEncryption(env, configured.keys, ctx);
  return encryption ? { encryption } : {};
}

type ConfiguredKeys = { readonly ok: true; readonly keys: EncryptionKeys | undefined } | { readonly ok: false };

/** PAYLOAD_ENCRYPTION_KEY and the earlier keys; else, with Temporal on this machine, the local key file. */
function configuredKeys(env: EncryptionVars, ctx: z.RefinementCtx): ConfiguredKeys {
  const decryptionKeys = env.PAYLOAD_DECRYPTION_KEYS ?? new Map<string, Buffer>();
  if (env.PAYLOAD_ENCRYPTION_KEY)
    return { ok: true, keys: Object.freeze({ keyId: env.PAYLOAD_ENCRYPTION_KEY_ID, key: env.PAYLOAD_ENCRYPTION_KEY, decryptionKeys }) };
  // A KMS never makes nor reads the local key (the KMS could not revoke it): earlier static payloads
  // read only through keys listed for decryption, the first of them standing as the configured one.
  if (env.PAYLOAD_KEY_PROVIDER !== 'static') return { ok: true, keys: listedForDecryption(decryptionKeys) };
  // Static with Temporal elsewhere was refused in checkEncryption.
  if (!isLoopback(env.TEMPORAL_ADDRESS)) return { ok: true, keys: undefined };
  try {
    const local = readOrCreateLocalKey(env.PAYLOAD_ENCRYPTION_KEY_FILE);
    return { ok: true, keys: Object.freeze({ keyId: local.keyId, key: local.key, decryptionKeys }) };
  } catch (error) {
    if (!(error instanceof LocalKeyFileError)) throw error;
    ctx.addIssue({ code: 'custom', path: ['PAYLOAD_ENCRYPTION_KEY_FILE'], message: error.message });
    return { ok: false };
  }
}

/** With a KMS and no PAYLOAD_ENCRYPTION_KEY: the keys listed in PAYLOAD_DECRYPTION_KEYS (decrypt-only), or none. */
function listedForDecryption(decryptionKeys: ReadonlyMap<string, Buffer>): EncryptionKeys | undefined {
  const [first] = decryptionKeys;
  if (!first) return undefined;
  const [keyId, key] = first;
  return Object.freeze({ keyId, key, decryptionKeys });
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
