/**
 * The key provider chosen by configuration (PAYLOAD_KEY_PROVIDER): `static`, today's configured keys
 * (the static format, every history written so far), or `vault-transit`, data keys from Vault's or
 * OpenBao's transit engine (envelope-v1; configured keys, when given, still read the static
 * payloads written before the switch). One key source per settings object, so every data converter
 * a process builds from its config shares one data key and one cache of unwrapped keys.
 */
import { EnvelopeKeySource, type DataKeyCacheSettings } from './envelope-keys.js';
import { KeyProviderHealth, ObservedKeyWrapper } from './key-provider-health.js';
import { StaticKeySource, type EncryptionKeys, type KeySource } from './key-source.js';
import { VaultClient, type VaultSettings } from './vault-client.js';
import { VAULT_TRANSIT, VaultTransit, type TransitKey } from './vault-transit.js';

export interface TransitEncryption {
  readonly provider: typeof VAULT_TRANSIT;
  /** "vault-transit:<key>", written beside each payload. */
  readonly keyId: string;
  readonly vault: VaultSettings;
  readonly transit: TransitKey;
  readonly cache: DataKeyCacheSettings;
  /** Configured keys kept to read static-format payloads (decrypt only). */
  readonly staticKeys?: EncryptionKeys | undefined;
}

/** A process's `encryption` section: configured keys, or a KMS's. */
export type EncryptionSettings = EncryptionKeys | TransitEncryption;

const sources = new WeakMap<EncryptionSettings, KeySource>();
const healths = new WeakMap<EncryptionSettings, KeyProviderHealth>();

export function keySourceFor(encryption: EncryptionSettings): KeySource {
  let source = sources.get(encryption);
  if (!source) {
    if (encryption.provider === VAULT_TRANSIT) {
      const health = new KeyProviderHealth(encryption.keyId);
      healths.set(encryption, health);
      const kms = new ObservedKeyWrapper(new VaultTransit(new VaultClient(encryption.vault, VAULT_TRANSIT), encryption.transit), health);
      source = new EnvelopeKeySource(kms, encryption.cache, encryption.staticKeys && new StaticKeySource(encryption.staticKeys));
    } else {
      source = new StaticKeySource(encryption);
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

/** The configured keys of a section (a KMS's section's decrypt-only ones), for tools that record keys. */
export function configuredKeysOf(encryption: EncryptionSettings | undefined): EncryptionKeys | undefined {
  return encryption?.provider === VAULT_TRANSIT ? encryption.staticKeys : encryption;
}
