/**
 * Part of the shared section `encryption`: which key provider encrypts payloads (PAYLOAD_KEY_PROVIDER)
 * and, for `vault-transit`, how to reach Vault's or OpenBao's transit engine and how long its data
 * keys are used (PAYLOAD_VAULT_*, PAYLOAD_DATA_KEY_*, PAYLOAD_UNWRAPPED_KEY_*).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { EncryptionKeys } from '../codec/key-source.js';
import type { TransitEncryption } from '../codec/key-provider.js';
import { transitKeyId, VAULT_TRANSIT } from '../codec/vault-transit.js';
import { CountAtLeast, doc, group, NonEmpty } from './document.js';

const MOUNT_RULE = 'must be a mount path: letters, digits, ".", "_", "-", segments separated by "/"';
const MountPath = z.string().trim().regex(/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/, { message: MOUNT_RULE });
const KEY_NAME_RULE = 'must be a transit key name: 1 to 128 letters, digits, ".", "_" or "-"';

export const KeyProviderVars = group(
  z.object({
    PAYLOAD_KEY_PROVIDER: doc(
      z.enum(['static', VAULT_TRANSIT]).default('static'),
      '"static": the keys of PAYLOAD_ENCRYPTION_KEY (or the generated local key), as every history so far was written. "vault-transit": envelope encryption, data keys made and unwrapped by Vault\'s or OpenBao\'s transit engine (docs/payload-format.md); configured keys, when set, still read the payloads written before the switch.',
    ),
    PAYLOAD_VAULT_ADDR: doc(z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(), 'Vault or OpenBao, e.g. https://vault.internal:8200; required with PAYLOAD_KEY_PROVIDER=vault-transit.'),
    PAYLOAD_VAULT_TOKEN: doc(NonEmpty.optional(), 'Token auth: a token whose policy allows the transit key\'s datakey and decrypt (docs/operations.md). Or AppRole instead.', { secret: true }),
    PAYLOAD_VAULT_ROLE_ID: doc(NonEmpty.optional(), 'AppRole auth: the role id (with PAYLOAD_VAULT_SECRET_ID); the token is fetched and renewed by logging in.'),
    PAYLOAD_VAULT_SECRET_ID: doc(NonEmpty.optional(), 'AppRole auth: the secret id.', { secret: true }),
    PAYLOAD_VAULT_APPROLE_MOUNT: doc(MountPath.default('approle'), 'Where the AppRole auth method is mounted.'),
    PAYLOAD_VAULT_NAMESPACE: doc(NonEmpty.optional(), 'Sent as X-Vault-Namespace (Vault Enterprise or OpenBao namespaces).', { defaultText: 'none (the root namespace)' }),
    PAYLOAD_VAULT_CA_FILE: doc(NonEmpty.optional(), "A PEM file of the CA that signed Vault's certificate, instead of the system's CAs.", { defaultText: "the system's CAs" }),
    PAYLOAD_VAULT_TIMEOUT_MS: doc(CountAtLeast(100).default(5_000), 'How long one call to Vault may take before the KMS counts as unavailable.'),
    PAYLOAD_VAULT_TRANSIT_MOUNT: doc(MountPath.default('transit'), 'Where the transit engine is mounted.'),
    PAYLOAD_VAULT_TRANSIT_KEY: doc(
      z.string().trim().regex(/^[A-Za-z0-9._-]{1,128}$/, { message: KEY_NAME_RULE }).default('aggregation-payloads'),
      'The transit key that wraps new data keys (payloads name the key that wrapped theirs).',
    ),
    PAYLOAD_DATA_KEY_LIFETIME_S: doc(CountAtLeast(1).default(900), 'A data key seals new payloads for at most this long; after a rotation of the transit key, new payloads use the new version within this time.'),
    PAYLOAD_DATA_KEY_MAX_USES: doc(CountAtLeast(1).default(100_000), 'A data key seals at most this many payloads.'),
    PAYLOAD_UNWRAPPED_KEY_LIFETIME_S: doc(CountAtLeast(1).default(3_600), 'An unwrapped data key is kept this long to read more payloads: with the KMS down, payloads of cached keys still read.'),
    PAYLOAD_UNWRAPPED_KEY_CACHE_SIZE: doc(CountAtLeast(1).default(1_000), 'At most this many unwrapped data keys are kept (the least recently used go first).'),
  }),
  'Payload keys from a KMS',
  'PAYLOAD_KEY_PROVIDER=vault-transit: a data key per process for a bounded time and number of payloads, made by Vault\'s or OpenBao\'s transit engine and carried wrapped in each payload\'s metadata; never a KMS call per payload. The worker, the clients, the CLI and the console need the same provider.',
);
export type KeyProviderVars = z.output<typeof KeyProviderVars>;

export function checkKeyProvider(env: KeyProviderVars & { readonly PAYLOAD_ENCRYPTION: 'auto' | 'off' }, ctx: z.RefinementCtx): void {
  if (env.PAYLOAD_KEY_PROVIDER === 'static') {
    if (env.PAYLOAD_VAULT_ADDR) ctx.addIssue({ code: 'custom', path: ['PAYLOAD_VAULT_ADDR'], message: 'is set but PAYLOAD_KEY_PROVIDER is static: set PAYLOAD_KEY_PROVIDER=vault-transit to use it, or unset it' });
    return;
  }
  if (env.PAYLOAD_ENCRYPTION === 'off') ctx.addIssue({ code: 'custom', path: ['PAYLOAD_ENCRYPTION'], message: `is off but PAYLOAD_KEY_PROVIDER is ${env.PAYLOAD_KEY_PROVIDER}: unset one of them` });
  if (!env.PAYLOAD_VAULT_ADDR) ctx.addIssue({ code: 'custom', path: ['PAYLOAD_VAULT_ADDR'], message: `is required with PAYLOAD_KEY_PROVIDER=${env.PAYLOAD_KEY_PROVIDER}` });
  const appRole = env.PAYLOAD_VAULT_ROLE_ID !== undefined || env.PAYLOAD_VAULT_SECRET_ID !== undefined;
  if (env.PAYLOAD_VAULT_TOKEN && appRole) {
    ctx.addIssue({ code: 'custom', path: ['PAYLOAD_VAULT_TOKEN'], message: 'and AppRole (PAYLOAD_VAULT_ROLE_ID, PAYLOAD_VAULT_SECRET_ID) are both set: choose one auth' });
  } else if (!env.PAYLOAD_VAULT_TOKEN && !appRole) {
    ctx.addIssue({ code: 'custom', path: ['PAYLOAD_VAULT_TOKEN'], message: `or AppRole (PAYLOAD_VAULT_ROLE_ID and PAYLOAD_VAULT_SECRET_ID) is required with PAYLOAD_KEY_PROVIDER=${env.PAYLOAD_KEY_PROVIDER}` });
  } else if (appRole && !(env.PAYLOAD_VAULT_ROLE_ID && env.PAYLOAD_VAULT_SECRET_ID)) {
    ctx.addIssue({ code: 'custom', path: [env.PAYLOAD_VAULT_ROLE_ID ? 'PAYLOAD_VAULT_SECRET_ID' : 'PAYLOAD_VAULT_ROLE_ID'], message: 'is required with AppRole auth (both PAYLOAD_VAULT_ROLE_ID and PAYLOAD_VAULT_SECRET_ID)' });
  }
}

/** The vault-transit `encryption` section (checkKeyProvider let it through); the CA file is read here, a bad one named. */
export function transitEncryption(env: KeyProviderVars, staticKeys: EncryptionKeys | undefined, ctx: z.RefinementCtx): TransitEncryption | undefined {
  let caCertificate: string | undefined;
  if (env.PAYLOAD_VAULT_CA_FILE) {
    try {
      caCertificate = readFileSync(env.PAYLOAD_VAULT_CA_FILE, 'utf8');
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['PAYLOAD_VAULT_CA_FILE'], message: `cannot be read: ${(error as Error).message}` });
      return undefined;
    }
    if (!caCertificate.includes('-----BEGIN CERTIFICATE-----')) {
      ctx.addIssue({ code: 'custom', path: ['PAYLOAD_VAULT_CA_FILE'], message: `${env.PAYLOAD_VAULT_CA_FILE} holds no PEM certificate` });
      return undefined;
    }
  }
  const auth =
    env.PAYLOAD_VAULT_TOKEN !== undefined
      ? ({ kind: 'token', token: env.PAYLOAD_VAULT_TOKEN } as const)
      : ({ kind: 'approle', mount: env.PAYLOAD_VAULT_APPROLE_MOUNT, roleId: env.PAYLOAD_VAULT_ROLE_ID ?? '', secretId: env.PAYLOAD_VAULT_SECRET_ID ?? '' } as const);
  const section: TransitEncryption = {
    provider: VAULT_TRANSIT,
    keyId: transitKeyId(env.PAYLOAD_VAULT_TRANSIT_KEY),
    vault: Object.freeze({ address: env.PAYLOAD_VAULT_ADDR ?? '', auth, namespace: env.PAYLOAD_VAULT_NAMESPACE, caCertificate, timeoutMs: env.PAYLOAD_VAULT_TIMEOUT_MS }),
    transit: Object.freeze({ mount: env.PAYLOAD_VAULT_TRANSIT_MOUNT, key: env.PAYLOAD_VAULT_TRANSIT_KEY }),
    cache: Object.freeze({
      dataKeyLifetimeMs: env.PAYLOAD_DATA_KEY_LIFETIME_S * 1000,
      dataKeyMaxUses: env.PAYLOAD_DATA_KEY_MAX_USES,
      unwrappedKeyLifetimeMs: env.PAYLOAD_UNWRAPPED_KEY_LIFETIME_S * 1000,
      unwrappedKeyCacheSize: env.PAYLOAD_UNWRAPPED_KEY_CACHE_SIZE,
    }),
    staticKeys,
  };
  return Object.freeze(section);
}
