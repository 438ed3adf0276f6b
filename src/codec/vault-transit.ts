/**
 * The vault-transit key provider: Vault's (or OpenBao's) transit engine makes and unwraps the data
 * keys of envelope-v1 payloads. A data key comes from `datakey/plaintext/<key>` (in clear and
 * wrapped, "vault:v<version>:..."); a payload's is unwrapped through `decrypt/<key>`. The key id
 * written beside a payload is "vault-transit:<key>", so a process configured with another transit
 * key still asks for the one that wrapped it (its policy permitting).
 *
 * A tenant's data keys are made under its own transit key, `<key>-tenant-<customerId>`
 * (tenantTransitKey), which the first data key asked for creates when the process's policy allows
 * (`update` on `transit/keys/+` with only `type` allowed: docs/operations.md; onboarding a lender needs nothing else), so a policy per
 * tenant decides who opens whose payloads, and destroying that one key forgets the lender.
 *
 * Vault's refusals become types: a version below the key's min_decryption_version is
 * KeyVersionRevokedError; a key the engine no longer has is KeyDestroyedError; any other 400 on
 * decrypt is a payload this KMS cannot unwrap; 401, 403 and 404 are KeyProviderRefusedError (the
 * policy or the mount: the operator's to fix).
 */
import type { DataKey, KeyWrapper } from './envelope-keys.js';
import { KeyDestroyedError, KeyProviderRefusedError, KeyVersionRevokedError, PayloadDecryptionError } from './payload-errors.js';
import type { EnvelopeMetadata } from './payload-format.js';
import { errorsOf, type VaultClient } from './vault-client.js';

export const VAULT_TRANSIT = 'vault-transit';
const KEY_ID_PREFIX = `${VAULT_TRANSIT}:`;
/** Vault's words when a ciphertext's version is below min_decryption_version. */
const REVOKED = /disallowed by policy|too old/i;
/** Vault's words for a transit key it does not have. */
const NO_SUCH_KEY = /encryption key not found|key not found|no existing key named/i;
const WRAPPED = /^vault:v([1-9]\d{0,9}):[A-Za-z0-9+/]+={0,2}$/;

/** The key id written beside payloads whose data keys transit key `key` wrapped. */
export function transitKeyId(key: string): string {
  return `${KEY_ID_PREFIX}${key}`;
}

/** The transit key of one tenant's data keys: the product's key name, `-tenant-`, the customer id. */
export function tenantTransitKey(key: string, tenant: string): string {
  return `${key}-tenant-${tenant}`;
}

export interface TransitKey {
  /** The transit engine's mount path, e.g. "transit". */
  readonly mount: string;
  /** The transit key new data keys are made under. */
  readonly key: string;
}

export class VaultTransit implements KeyWrapper {
  readonly keyId: string;

  constructor(
    private readonly client: VaultClient,
    private readonly transit: TransitKey,
    /** Whose transit key this is (tenantTransitKey); undefined: the product's. */
    readonly tenant?: string | undefined,
  ) {
    this.keyId = transitKeyId(transit.key);
  }

  forTenant(tenant: string): VaultTransit {
    return new VaultTransit(this.client, { mount: this.transit.mount, key: tenantTransitKey(this.transit.key, tenant) }, tenant);
  }

  async newDataKey(): Promise<DataKey> {
    const path = `${this.transit.mount}/datakey/plaintext/${encodeURIComponent(this.transit.key)}`;
    let answer = await this.client.post(path, { bits: 256 }, 'datakey');
    // A tenant's first data key: its transit key is made now (the lender's onboarding), then asked again.
    if (this.tenant !== undefined && answer.status === 400 && NO_SUCH_KEY.test(errorsOf(answer, ''))) {
      const refusal = await this.createTenantKey();
      answer = await this.client.post(path, { bits: 256 }, 'datakey');
      // Made meanwhile by another process, the key serves whatever this one's create got; else the create's refusal is the reason.
      if (answer.status === 400 && refusal) throw refusal;
    }
    if (answer.status === 403 && this.tenant !== undefined) {
      const message = `${errorsOf(answer, 'permission denied')}: tenant "${this.tenant}"'s data keys come from transit key "${this.transit.key}", and this process's policy does not allow ${this.transit.mount}/datakey/plaintext/<key>-tenant-* (docs/operations.md, "Keys per tenant")`;
      throw new KeyProviderRefusedError(VAULT_TRANSIT, 'datakey', answer.status, message);
    }
    if (answer.status !== 200)
      throw new KeyProviderRefusedError(VAULT_TRANSIT, 'datakey', answer.status, errorsOf(answer, `no data key from transit key "${this.transit.key}"`));
    const data: Record<string, unknown> = answer.body.data ?? {};
    const { plaintext, ciphertext, key_version: keyVersion } = data;
    const version = typeof ciphertext === 'string' ? WRAPPED.exec(ciphertext)?.[1] : undefined;
    if (typeof plaintext !== 'string' || version === undefined) {
      throw new KeyProviderRefusedError(
        VAULT_TRANSIT,
        'datakey',
        answer.status,
        'an answer without data.plaintext and a data.ciphertext of the form vault:v<version>:<base64>',
      );
    }
    return {
      plaintext: Buffer.from(plaintext, 'base64'),
      wrappedKey: ciphertext as string,
      keyVersion: typeof keyVersion === 'number' ? keyVersion : Number(version),
    };
  }

  async unwrap(envelope: EnvelopeMetadata): Promise<Uint8Array> {
    const keyName = this.keyNameOf(envelope);
    const answer = await this.client.post(`${this.transit.mount}/decrypt/${encodeURIComponent(keyName)}`, { ciphertext: envelope.wrappedKey }, 'decrypt');
    const plaintext = answer.body.data?.plaintext;
    if (answer.status === 200 && typeof plaintext === 'string') return Buffer.from(plaintext, 'base64');
    const message = errorsOf(answer, `HTTP ${answer.status} without a plaintext`);
    if (answer.status === 400 && REVOKED.test(message)) throw new KeyVersionRevokedError(envelope.keyId, keyName, envelope.keyVersion, message);
    if (answer.status === 400 && NO_SUCH_KEY.test(message)) throw new KeyDestroyedError(envelope.keyId, keyName, envelope.tenant, message);
    if (answer.status === 400 || answer.status === 200) {
      throw new PayloadDecryptionError(
        envelope.keyId,
        `${VAULT_TRANSIT} cannot unwrap the payload's data key (transit key "${keyName}", version ${envelope.keyVersion}): ${message}`,
      );
    }
    throw new KeyProviderRefusedError(VAULT_TRANSIT, 'decrypt', answer.status, message);
  }

  /** Creates this tenant's transit key (AES-256-GCM, as the product's); the refusal, if Vault refused. */
  private async createTenantKey(): Promise<KeyProviderRefusedError | undefined> {
    const answer = await this.client.post(`${this.transit.mount}/keys/${encodeURIComponent(this.transit.key)}`, { type: 'aes256-gcm96' }, 'datakey');
    if (answer.status === 200 || answer.status === 204) return undefined;
    return new KeyProviderRefusedError(
      VAULT_TRANSIT,
      'datakey',
      answer.status,
      `${errorsOf(answer, 'no reason given')}: tenant "${this.tenant}" has no transit key "${this.transit.key}" yet, and this process may not create it (grant "update" on ${this.transit.mount}/keys/+ with allowed_parameters type, or create it when onboarding the lender)`,
    );
  }

  /** The transit key of a payload's envelope; its metadata must agree with itself. */
  private keyNameOf({ keyId, keyVersion, wrappedKey }: EnvelopeMetadata): string {
    if (!keyId.startsWith(KEY_ID_PREFIX) || keyId.length === KEY_ID_PREFIX.length) {
      throw new PayloadDecryptionError(
        keyId,
        `payload's data key is wrapped by key id "${keyId}", not by a ${VAULT_TRANSIT} key ("${KEY_ID_PREFIX}<key>"), which this process's provider is`,
      );
    }
    const wrappedVersion = WRAPPED.exec(wrappedKey)?.[1];
    if (wrappedVersion === undefined) throw new PayloadDecryptionError(keyId, `payload's wrapped data key is not of the form vault:v<version>:<base64>`);
    if (Number(wrappedVersion) !== keyVersion) {
      throw new PayloadDecryptionError(
        keyId,
        `payload's metadata disagrees with itself: encryption-key-version ${keyVersion}, but its wrapped key is of version ${wrappedVersion}`,
      );
    }
    return keyId.slice(KEY_ID_PREFIX.length);
  }
}

/** What destroying a tenant's key found: destroyed now, or gone already (a forget run again). */
export type TenantKeyDestruction = 'destroyed' | 'already-gone';

/**
 * Whether this process's token may destroy `tenant`'s transit key (its `config` and the key itself),
 * asked of Vault before anything is changed; the refusal names what the policy lacks.
 */
export async function checkMayDestroyTenantKey(client: VaultClient, transit: TransitKey, tenant: string): Promise<void> {
  const key = tenantTransitKey(transit.key, tenant);
  const paths = [`${transit.mount}/keys/${key}/config`, `${transit.mount}/keys/${key}`];
  const answer = await client.post('sys/capabilities-self', { paths }, 'forget');
  const granted = (path: string): string[] => {
    const found: unknown = answer.body.data?.[path] ?? (answer.body as Record<string, unknown>)[path];
    return Array.isArray(found) ? found.filter((capability): capability is string => typeof capability === 'string') : [];
  };
  const has = (path: string, capability: string) => granted(path).includes(capability) || granted(path).includes('root') || granted(path).includes('sudo');
  const [configPath = '', keyPath = ''] = paths;
  if (answer.status !== 200 || !has(configPath, 'update') || !has(keyPath, 'delete')) {
    throw new KeyProviderRefusedError(
      VAULT_TRANSIT,
      'forget',
      answer.status === 200 ? 403 : answer.status,
      `this token may not destroy tenant "${tenant}"'s transit key "${key}": it needs "update" on ${configPath} and "delete" on ${keyPath} (an administrator's token, not the worker's); nothing was changed`,
    );
  }
}

/** Destroys `tenant`'s transit key for good: deletion allowed on its config, then the key deleted. */
export async function destroyTenantKey(client: VaultClient, transit: TransitKey, tenant: string): Promise<TenantKeyDestruction> {
  const key = tenantTransitKey(transit.key, tenant);
  const config = await client.post(`${transit.mount}/keys/${encodeURIComponent(key)}/config`, { deletion_allowed: true }, 'forget');
  if ((config.status === 400 || config.status === 404) && NO_SUCH_KEY.test(errorsOf(config, ''))) return 'already-gone';
  if (config.status !== 200 && config.status !== 204)
    throw new KeyProviderRefusedError(VAULT_TRANSIT, 'forget', config.status, errorsOf(config, `deletion of "${key}" not allowed`));
  const deleted = await client.request('DELETE', `${transit.mount}/keys/${encodeURIComponent(key)}`, undefined, 'forget');
  if (deleted.status !== 200 && deleted.status !== 204)
    throw new KeyProviderRefusedError(VAULT_TRANSIT, 'forget', deleted.status, errorsOf(deleted, `"${key}" not deleted`));
  return 'destroyed';
}
