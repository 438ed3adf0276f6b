/**
 * Part of the shared section `encryption`: which key provider encrypts payloads (PAYLOAD_KEY_PROVIDER);
 * for `vault-transit`, how to reach Vault's or OpenBao's transit engine (PAYLOAD_VAULT_*); for
 * `aws-kms`, which AWS KMS key and where (PAYLOAD_AWS_*); and, for both, how long their data keys are
 * used (PAYLOAD_DATA_KEY_*, PAYLOAD_UNWRAPPED_KEY_*).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { EncryptionKeys } from '../codec/key-source.js';
import { AWS_KMS, awsKmsKeyId } from '../codec/aws-kms.js';
import type { AwsKmsEncryption, TransitEncryption } from '../codec/key-provider.js';
import type { DataKeyCacheSettings } from '../codec/envelope-keys.js';
import { transitKeyId, VAULT_TRANSIT } from '../codec/vault-transit.js';
import { Bool, CountAtLeast, doc, group, NonEmpty } from './document.js';

const MOUNT_RULE = 'must be a mount path: letters, digits, ".", "_", "-", segments separated by "/"';
const MountPath = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/, { message: MOUNT_RULE });
const KEY_NAME_RULE = 'must be a transit key name: 1 to 128 letters, digits, ".", "_" or "-"';
/** AWS KMS's four ways to name a key; anything else KMS would refuse on the first call. */
const AWS_KMS_KEY =
  /^(?:arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(?:key|alias)\/[A-Za-z0-9/_+=,.@-]{1,256}|alias\/[A-Za-z0-9/_-]{1,250}|(?:mrk-[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}))$/;
const AWS_KMS_KEY_RULE =
  'must name an AWS KMS key: a key id (1234abcd-12ab-34cd-56ef-1234567890ab, or mrk-... for a multi-Region key), a key ARN (arn:aws:kms:<region>:<account>:key/<key id>), an alias (alias/<name>) or an alias ARN';
const AWS_REGION = /^[a-z]{2}(?:-[a-z]+)+-\d{1,2}$/;

export const KeyProviderVars = group(
  z.object({
    PAYLOAD_KEY_PROVIDER: doc(
      z.enum(['static', VAULT_TRANSIT, AWS_KMS]).default('static'),
      '"static": the keys of PAYLOAD_ENCRYPTION_KEY (or the generated local key), as every history so far was written. "vault-transit": envelope encryption, data keys made and unwrapped by Vault\'s or OpenBao\'s transit engine (docs/payload-format.md). "aws-kms": the same with AWS KMS (GenerateDataKey, Decrypt). With either KMS, configured keys, when set, still read the payloads written before the switch.',
    ),
    PAYLOAD_VAULT_ADDR: doc(
      z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
      'Vault or OpenBao, e.g. https://vault.internal:8200; required with PAYLOAD_KEY_PROVIDER=vault-transit.',
    ),
    PAYLOAD_VAULT_TOKEN: doc(
      NonEmpty.optional(),
      "Token auth: a token whose policy allows the transit key's datakey and decrypt (docs/operations.md). Or AppRole instead.",
      { secret: true },
    ),
    PAYLOAD_VAULT_ROLE_ID: doc(
      NonEmpty.optional(),
      'AppRole auth: the role id (with PAYLOAD_VAULT_SECRET_ID); the token is fetched and renewed by logging in.',
    ),
    PAYLOAD_VAULT_SECRET_ID: doc(NonEmpty.optional(), 'AppRole auth: the secret id.', { secret: true }),
    PAYLOAD_VAULT_APPROLE_MOUNT: doc(MountPath.default('approle'), 'Where the AppRole auth method is mounted.'),
    PAYLOAD_VAULT_NAMESPACE: doc(NonEmpty.optional(), 'Sent as X-Vault-Namespace (Vault Enterprise or OpenBao namespaces).', {
      defaultText: 'none (the root namespace)',
    }),
    PAYLOAD_VAULT_CA_FILE: doc(NonEmpty.optional(), "A PEM file of the CA that signed Vault's certificate, instead of the system's CAs.", {
      defaultText: "the system's CAs",
    }),
    PAYLOAD_VAULT_TIMEOUT_MS: doc(CountAtLeast(100).default(5_000), 'How long one call to Vault may take before the KMS counts as unavailable.'),
    PAYLOAD_VAULT_TRANSIT_MOUNT: doc(MountPath.default('transit'), 'Where the transit engine is mounted.'),
    PAYLOAD_VAULT_TRANSIT_KEY: doc(
      z
        .string()
        .trim()
        .regex(/^[A-Za-z0-9._-]{1,128}$/, { message: KEY_NAME_RULE })
        .default('aggregation-payloads'),
      'The transit key that wraps new data keys (payloads name the key that wrapped theirs).',
    ),
    PAYLOAD_AWS_KMS_KEY_ID: doc(
      z.string().trim().regex(AWS_KMS_KEY, { message: AWS_KMS_KEY_RULE }).optional(),
      "The AWS KMS key (symmetric) that wraps new data keys: key id, key ARN, alias or alias ARN; required with PAYLOAD_KEY_PROVIDER=aws-kms. Payloads name the key ARN that wrapped theirs, so moving an alias keeps old payloads readable. Credentials come from the AWS SDK's default chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, or an instance or task role); the policy each process needs is in docs/operations.md.",
    ),
    PAYLOAD_AWS_REGION: doc(z.string().trim().regex(AWS_REGION, { message: 'must be an AWS region, e.g. eu-west-1' }).optional(), "The KMS key's region.", {
      defaultText: "the key ARN's region, else the AWS SDK's (AWS_REGION, the profile)",
    }),
    PAYLOAD_AWS_KMS_ENDPOINT: doc(
      z.url({ protocol: /^https?$/, message: 'must be an http(s) URL' }).optional(),
      "A KMS endpoint other than the region's public one: a VPC endpoint, or a stand-in such as the tests' moto server.",
      {
        defaultText: "the region's public endpoint",
      },
    ),
    PAYLOAD_KMS_ALLOW_INSECURE: doc(
      Bool.default(false),
      'Allow PAYLOAD_VAULT_ADDR or PAYLOAD_AWS_KMS_ENDPOINT to be http:// to another machine, for a lab only: the KMS token or credentials and the plaintext data keys then cross the network in clear. http:// to this machine (127.0.0.1, ::1, localhost) is always allowed.',
    ),
    PAYLOAD_TENANT_KEYS: doc(
      Bool.default(true),
      "With a KMS, seal each tenant's payloads (its connections, books, reports, forget and retention records) under a key of its own: a transit key `<PAYLOAD_VAULT_TRANSIT_KEY>-tenant-<customerId>`, made on first use, or the tenant bound in AWS KMS's encryption context; the tenant is read from the workflow id. false: every payload under the one key. Payloads written either way keep reading.",
    ),
    PAYLOAD_AWS_KMS_TIMEOUT_MS: doc(
      CountAtLeast(100).default(5_000),
      'How long one call to AWS KMS may take to connect, and to answer, before the KMS counts as unavailable (the SDK retries throttling and 5xx twice first).',
    ),
    PAYLOAD_DATA_KEY_LIFETIME_S: doc(
      CountAtLeast(1).default(900),
      'A data key seals new payloads for at most this long; after a rotation of the transit key, new payloads use the new version within this time.',
    ),
    PAYLOAD_DATA_KEY_MAX_USES: doc(CountAtLeast(1).default(100_000), 'A data key seals at most this many payloads.'),
    PAYLOAD_DATA_KEY_OUTAGE_MAX_S: doc(
      CountAtLeast(1).default(14_400),
      'While the KMS cannot make a new data key, the last one keeps sealing past its lifetime for at most this long (a worker that cannot seal cannot complete a task); then sealing stops with SealingStoppedError, shown in the health, and tasks retry until the KMS answers.',
    ),
    PAYLOAD_DATA_KEY_OUTAGE_MAX_USES: doc(
      CountAtLeast(1).default(1_000_000),
      "The same bound in payloads: at most this many sealed with the last data key past PAYLOAD_DATA_KEY_MAX_USES (and never more than 2^31 with one key, far below AES-GCM's bound for random nonces).",
    ),
    PAYLOAD_UNWRAPPED_KEY_LIFETIME_S: doc(
      CountAtLeast(1).default(3_600),
      'An unwrapped data key is kept this long to read more payloads: with the KMS down, payloads of cached keys still read.',
    ),
    PAYLOAD_UNWRAPPED_KEY_CACHE_SIZE: doc(CountAtLeast(1).default(1_000), 'At most this many unwrapped data keys are kept (the least recently used go first).'),
  }),
  'Payload keys from a KMS',
  "PAYLOAD_KEY_PROVIDER=vault-transit or aws-kms: a data key per process for a bounded time and number of payloads, made by Vault's or OpenBao's transit engine or by AWS KMS and carried wrapped in each payload's metadata; never a KMS call per payload. The worker, the clients, the CLI and the console need the same provider.",
);
export type KeyProviderVars = z.output<typeof KeyProviderVars>;

export function checkKeyProvider(env: KeyProviderVars & { readonly PAYLOAD_ENCRYPTION: 'auto' | 'off' }, ctx: z.RefinementCtx): void {
  // A KMS's address or key without that provider chosen is a half-made switch: say so rather than ignore it.
  const unused = (name: 'PAYLOAD_VAULT_ADDR' | 'PAYLOAD_AWS_KMS_KEY_ID', provider: string) =>
    ctx.addIssue({
      code: 'custom',
      path: [name],
      message: `is set but PAYLOAD_KEY_PROVIDER is ${env.PAYLOAD_KEY_PROVIDER}: set PAYLOAD_KEY_PROVIDER=${provider} to use it, or unset it`,
    });
  if (env.PAYLOAD_KEY_PROVIDER !== VAULT_TRANSIT && env.PAYLOAD_VAULT_ADDR) unused('PAYLOAD_VAULT_ADDR', VAULT_TRANSIT);
  if (env.PAYLOAD_KEY_PROVIDER !== AWS_KMS && env.PAYLOAD_AWS_KMS_KEY_ID) unused('PAYLOAD_AWS_KMS_KEY_ID', AWS_KMS);
  if (env.PAYLOAD_KEY_PROVIDER === 'static') return;
  for (const name of ['PAYLOAD_VAULT_ADDR', 'PAYLOAD_AWS_KMS_ENDPOINT'] as const) {
    const problem = env.PAYLOAD_KMS_ALLOW_INSECURE ? undefined : cleartextKmsProblem(env[name]);
    if (problem) ctx.addIssue({ code: 'custom', path: [name], message: problem });
  }
  if (env.PAYLOAD_ENCRYPTION === 'off')
    ctx.addIssue({
      code: 'custom',
      path: ['PAYLOAD_ENCRYPTION'],
      message: `is off but PAYLOAD_KEY_PROVIDER is ${env.PAYLOAD_KEY_PROVIDER}: unset one of them`,
    });
  if (env.PAYLOAD_KEY_PROVIDER === AWS_KMS) {
    if (!env.PAYLOAD_AWS_KMS_KEY_ID)
      ctx.addIssue({
        code: 'custom',
        path: ['PAYLOAD_AWS_KMS_KEY_ID'],
        message: `is required with PAYLOAD_KEY_PROVIDER=${AWS_KMS}: the id, ARN or alias of the KMS key that wraps data keys`,
      });
    const arnRegion = arnRegionOf(env.PAYLOAD_AWS_KMS_KEY_ID);
    if (arnRegion && env.PAYLOAD_AWS_REGION && arnRegion !== env.PAYLOAD_AWS_REGION) {
      ctx.addIssue({
        code: 'custom',
        path: ['PAYLOAD_AWS_REGION'],
        message: `is ${env.PAYLOAD_AWS_REGION}, but PAYLOAD_AWS_KMS_KEY_ID is an ARN in ${arnRegion}: unset one, or make them agree`,
      });
    }
    return;
  }
  if (!env.PAYLOAD_VAULT_ADDR)
    ctx.addIssue({ code: 'custom', path: ['PAYLOAD_VAULT_ADDR'], message: `is required with PAYLOAD_KEY_PROVIDER=${env.PAYLOAD_KEY_PROVIDER}` });
  const appRole = env.PAYLOAD_VAULT_ROLE_ID !== undefined || env.PAYLOAD_VAULT_SECRET_ID !== undefined;
  if (env.PAYLOAD_VAULT_TOKEN && appRole) {
    ctx.addIssue({
      code: 'custom',
      path: ['PAYLOAD_VAULT_TOKEN'],
      message: 'and AppRole (PAYLOAD_VAULT_ROLE_ID, PAYLOAD_VAULT_SECRET_ID) are both set: choose one auth',
    });
  } else if (!env.PAYLOAD_VAULT_TOKEN && !appRole) {
    ctx.addIssue({
      code: 'custom',
      path: ['PAYLOAD_VAULT_TOKEN'],
      message: `or AppRole (PAYLOAD_VAULT_ROLE_ID and PAYLOAD_VAULT_SECRET_ID) is required with PAYLOAD_KEY_PROVIDER=${env.PAYLOAD_KEY_PROVIDER}`,
    });
  } else if (appRole && !(env.PAYLOAD_VAULT_ROLE_ID && env.PAYLOAD_VAULT_SECRET_ID)) {
    ctx.addIssue({
      code: 'custom',
      path: [env.PAYLOAD_VAULT_ROLE_ID ? 'PAYLOAD_VAULT_SECRET_ID' : 'PAYLOAD_VAULT_ROLE_ID'],
      message: 'is required with AppRole auth (both PAYLOAD_VAULT_ROLE_ID and PAYLOAD_VAULT_SECRET_ID)',
    });
  }
}

/**
 * Why a KMS address may not be used in clear, or undefined: http:// is allowed to this machine only,
 * since the token (or request signatures) and the unwrapped data keys travel in every answer.
 */
export function cleartextKmsProblem(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  const url = new URL(address);
  if (url.protocol !== 'http:' || isLoopbackHost(url.hostname)) return undefined;
  return (
    `is http:// to ${url.hostname}, not on this machine: the KMS token and the plaintext data keys would cross the network in clear; ` +
    'use https:// (PAYLOAD_VAULT_CA_FILE for a private CA), or set PAYLOAD_KMS_ALLOW_INSECURE=true for a lab'
  );
}

/** 127.0.0.0/8, ::1 or localhost (a URL's hostname: IPv6 in brackets). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
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
      : ({
          kind: 'approle',
          mount: env.PAYLOAD_VAULT_APPROLE_MOUNT,
          roleId: env.PAYLOAD_VAULT_ROLE_ID ?? '',
          secretId: env.PAYLOAD_VAULT_SECRET_ID ?? '',
        } as const);
  const section: TransitEncryption = {
    provider: VAULT_TRANSIT,
    keyId: transitKeyId(env.PAYLOAD_VAULT_TRANSIT_KEY),
    vault: Object.freeze({
      address: env.PAYLOAD_VAULT_ADDR ?? '',
      auth,
      namespace: env.PAYLOAD_VAULT_NAMESPACE,
      caCertificate,
      timeoutMs: env.PAYLOAD_VAULT_TIMEOUT_MS,
    }),
    transit: Object.freeze({ mount: env.PAYLOAD_VAULT_TRANSIT_MOUNT, key: env.PAYLOAD_VAULT_TRANSIT_KEY }),
    cache: cacheSettings(env),
    tenantKeys: env.PAYLOAD_TENANT_KEYS,
    staticKeys,
  };
  return Object.freeze(section);
}

/** The aws-kms `encryption` section (checkKeyProvider let it through). */
export function awsKmsEncryption(env: KeyProviderVars, staticKeys: EncryptionKeys | undefined): AwsKmsEncryption {
  const key = env.PAYLOAD_AWS_KMS_KEY_ID ?? '';
  return Object.freeze({
    provider: AWS_KMS,
    keyId: awsKmsKeyId(key),
    aws: Object.freeze({
      key,
      region: env.PAYLOAD_AWS_REGION ?? arnRegionOf(key),
      endpoint: env.PAYLOAD_AWS_KMS_ENDPOINT,
      timeoutMs: env.PAYLOAD_AWS_KMS_TIMEOUT_MS,
    }),
    cache: cacheSettings(env),
    tenantKeys: env.PAYLOAD_TENANT_KEYS,
    staticKeys,
  });
}

function cacheSettings(env: KeyProviderVars): DataKeyCacheSettings {
  return Object.freeze({
    dataKeyLifetimeMs: env.PAYLOAD_DATA_KEY_LIFETIME_S * 1000,
    dataKeyMaxUses: env.PAYLOAD_DATA_KEY_MAX_USES,
    unwrappedKeyLifetimeMs: env.PAYLOAD_UNWRAPPED_KEY_LIFETIME_S * 1000,
    unwrappedKeyCacheSize: env.PAYLOAD_UNWRAPPED_KEY_CACHE_SIZE,
    outageSealingMs: env.PAYLOAD_DATA_KEY_OUTAGE_MAX_S * 1000,
    outageSealingMaxUses: env.PAYLOAD_DATA_KEY_OUTAGE_MAX_USES,
  });
}

/** The region of a key or alias ARN. */
function arnRegionOf(key: string | undefined): string | undefined {
  return key?.startsWith('arn:') ? key.split(':')[3] : undefined;
}
