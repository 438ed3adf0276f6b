/**
 * The key provider chosen by configuration (PAYLOAD_KEY_PROVIDER): `static`, today's configured keys
 * (the static format, every history written so far), `vault-transit`, data keys from Vault's or
 * OpenBao's transit engine, or `aws-kms`, data keys from AWS KMS (both envelope-v1; configured
 * keys, when given, still read the static payloads written before the switch). One key source per settings object, so every data converter
 * a process builds from its config shares one data key and one cache of unwrapped keys.
 */
import { KMSClient, type KMSClientConfig } from '@aws-sdk/client-kms';
import { AWS_KMS, AwsKms } from './aws-kms.js';
import { EnvelopeKeySource, type DataKeyCacheSettings, type KeyWrapper } from './envelope-keys.js';
import { KeyProviderHealth, ObservedKeyWrapper } from './key-provider-health.js';
import { StaticKeySource, type EncryptionKeys, type KeySource, type SealCounting } from './key-source.js';
import { StaticTenantKeySource } from './static-tenant-keys.js';
import { TenantKeySource } from './tenant-keys.js';
import { VaultClient, type VaultSettings } from './vault-client.js';
import { VAULT_TRANSIT, VaultTransit, type TransitKey } from './vault-transit.js';

export interface TransitEncryption {
  readonly provider: typeof VAULT_TRANSIT;
  /** "vault-transit:<key>", written beside each payload. */
  readonly keyId: string;
  readonly vault: VaultSettings;
  readonly transit: TransitKey;
  readonly cache: DataKeyCacheSettings;
  /** Each tenant's payloads sealed under its own key (tenant-keys.ts); false: all under `keyId`. */
  readonly tenantKeys?: boolean | undefined;
  /** Configured keys kept to read static-format payloads (decrypt only). */
  readonly staticKeys?: EncryptionKeys | undefined;
}

/** How to reach AWS KMS (PAYLOAD_AWS_*); credentials come from the AWS SDK's default chain unless given (the tests'). */
export interface AwsKmsSettings {
  /** Key id, key ARN, alias name or alias ARN that new data keys are made under. */
  readonly key: string;
  /** Unset: the SDK's (AWS_REGION, the profile). */
  readonly region?: string | undefined;
  /** A VPC endpoint or a stand-in (the tests' moto); unset: the region's public endpoint. */
  readonly endpoint?: string | undefined;
  readonly timeoutMs: number;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string } | undefined;
}

export interface AwsKmsEncryption {
  readonly provider: typeof AWS_KMS;
  /** "aws-kms:<key>", written beside each payload (as KMS answered it: the key ARN). */
  readonly keyId: string;
  readonly aws: AwsKmsSettings;
  readonly cache: DataKeyCacheSettings;
  /** Each tenant's payloads sealed under its own key (tenant-keys.ts); false: all under `keyId`. */
  readonly tenantKeys?: boolean | undefined;
  /** Configured keys kept to read static-format payloads (decrypt only). */
  readonly staticKeys?: EncryptionKeys | undefined;
}

/** A process's `encryption` section: configured keys, or a KMS's. */
export type EncryptionSettings = EncryptionKeys | TransitEncryption | AwsKmsEncryption;

const sources = new WeakMap<EncryptionSettings, KeySource>();
const healths = new WeakMap<EncryptionSettings, KeyProviderHealth>();

export function keySourceFor(encryption: EncryptionSettings): KeySource {
  let source = sources.get(encryption);
  if (!source) {
    if (isKmsEncryption(encryption)) {
      const health = new KeyProviderHealth(encryption.keyId);
      healths.set(encryption, health);
      const staticKeys = encryption.staticKeys && new StaticKeySource(encryption.staticKeys);
      const envelopeSource = (wrapper: KeyWrapper) =>
        new EnvelopeKeySource(wrapper, encryption.cache, staticKeys, Date.now, (stoppedBecause) => health.sealingChanged(stoppedBecause));
      const wrapper = new ObservedKeyWrapper(wrapperFor(encryption), health);
      const product = envelopeSource(wrapper);
      source = encryption.tenantKeys ? new TenantKeySource(product, (tenant) => envelopeSource(wrapper.forTenant(tenant))) : product;
    } else {
      const product = new StaticKeySource(encryption);
      source = encryption.tenantKeyFiles ? new StaticTenantKeySource(product, encryption.tenantKeyFiles) : product;
    }
    sources.set(encryption, source);
  }
  return source;
}

/** The KMS's calls and state for a section's key source (its health and metrics); undefined for configured keys, which call nothing. */
export function keyProviderHealthOf(encryption: EncryptionSettings | undefined): KeyProviderHealth | undefined {
  if (encryption === undefined) return undefined;
  keySourceFor(encryption);
  return healths.get(encryption);
}

/** The configured keys that seal a static section's payloads (the product's and each tenant's, their uses counted); undefined with a KMS, whose data keys are bounded. */
export function staticSealingSourceOf(encryption: EncryptionSettings | undefined): SealCounting | undefined {
  if (encryption === undefined || isKmsEncryption(encryption)) return undefined;
  const source = keySourceFor(encryption);
  return source instanceof StaticKeySource || source instanceof StaticTenantKeySource ? source : undefined;
}

/** The configured keys of a section (a KMS's section's decrypt-only ones), for tools that record keys. */
export function configuredKeysOf(encryption: EncryptionSettings | undefined): EncryptionKeys | undefined {
  return isKmsEncryption(encryption) ? encryption.staticKeys : encryption;
}

/** Whether a KMS makes this section's keys (its payloads need that KMS to be read, not a key file). */
export function isKmsEncryption(encryption: EncryptionSettings | undefined): encryption is TransitEncryption | AwsKmsEncryption {
  return encryption?.provider === VAULT_TRANSIT || encryption?.provider === AWS_KMS;
}

function wrapperFor(encryption: TransitEncryption | AwsKmsEncryption): KeyWrapper {
  return encryption.provider === VAULT_TRANSIT
    ? new VaultTransit(new VaultClient(encryption.vault, VAULT_TRANSIT), encryption.transit)
    : new AwsKms(awsKmsClient(encryption.aws), encryption.aws.key);
}

/** A KMS client on `settings`: one call may take timeoutMs to connect and as long to answer. */
export function awsKmsClient({ region, endpoint, timeoutMs, credentials }: AwsKmsSettings): KMSClient {
  const config: KMSClientConfig = { requestHandler: { connectionTimeout: timeoutMs, requestTimeout: timeoutMs, throwOnRequestTimeout: true } };
  if (region) config.region = region;
  if (endpoint) config.endpoint = endpoint;
  if (credentials) config.credentials = { ...credentials };
  return new KMSClient(config);
}
