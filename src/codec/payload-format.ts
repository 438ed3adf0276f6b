/**
 * The encrypted payload's wire format, written down in docs/payload-format.md (with test vectors that
 * test/codec/payload-format.test.ts checks), so another language can read and write it.
 *
 * Both formats: metadata `encoding` = "binary/encrypted"; data = nonce (12 bytes) ‖ AES-256-GCM
 * ciphertext ‖ tag (16 bytes); the plaintext is the whole original Payload (its metadata too),
 * proto-encoded; associated data: the payload's workflow binding when it has one
 * (payload-binding.ts), none otherwise.
 * - static (format 0, no `encryption-format`): `encryption-key-id` names a configured key;
 *   `encryption-tenant` = the customer id whose key file holds it, when a tenant's key sealed it
 *   (static-tenant-keys.ts; absent: the product's configured keys).
 * - envelope-v1: `encryption-format` = "envelope-v1"; `encryption-key-id` = "<provider>:<KMS key>";
 *   `encryption-key-version` = the KMS key's version (decimal); `encryption-wrapped-key` = the data
 *   key as the KMS wrapped it (for Vault transit "vault:v<version>:<base64>"); `encryption-tenant` =
 *   the customer id whose key sealed it, when a tenant's key did (absent: the product's key).
 */
import { createCipheriv, createDecipheriv, randomFillSync, type KeyObject } from 'node:crypto';
import type { Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import { isTenantId } from '../contract/workflow-tenant.js';
import { PayloadDecryptionError } from './payload-errors.js';

const { Payload: PayloadMessage } = proto.temporal.api.common.v1;

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const ENCODING_METADATA_KEY = 'encoding';
export const KEY_ID_METADATA_KEY = 'encryption-key-id';
export const FORMAT_METADATA_KEY = 'encryption-format';
export const KEY_VERSION_METADATA_KEY = 'encryption-key-version';
export const WRAPPED_KEY_METADATA_KEY = 'encryption-wrapped-key';
export const TENANT_METADATA_KEY = 'encryption-tenant';
export const ENVELOPE_FORMAT = 'envelope-v1';
export const DATA_KEY_BYTES = 32;
export const NONCE_BYTES = 12;
export const TAG_BYTES = 16;
const ALGORITHM = 'aes-256-gcm';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
export const ENCRYPTED_ENCODING_BYTES = encoder.encode(ENCRYPTED_ENCODING);

export type PayloadMetadata = Payload['metadata'];

/** A metadata value as text, or undefined when absent or empty. */
export function metadataText(metadata: PayloadMetadata, key: string): string | undefined {
  const raw = metadata?.[key];
  return raw && raw.length > 0 ? decoder.decode(raw) : undefined;
}

/** True when the payload's metadata says `encoding: binary/encrypted`. */
export function isEncrypted(payload: Payload): boolean {
  return metadataText(payload.metadata, ENCODING_METADATA_KEY) === ENCRYPTED_ENCODING;
}

/** What an envelope-v1 payload says of its data key. */
export interface EnvelopeMetadata {
  readonly keyId: string;
  readonly keyVersion: number;
  readonly wrappedKey: string;
  /** The tenant whose key sealed it; undefined: the product's key. */
  readonly tenant?: string | undefined;
}

/** The metadata an envelope-v1 payload carries besides its encoding (bytes, made once per data key). */
export function envelopeMetadata({ keyId, keyVersion, wrappedKey, tenant }: EnvelopeMetadata): Readonly<Record<string, Uint8Array>> {
  return Object.freeze({
    [ENCODING_METADATA_KEY]: ENCRYPTED_ENCODING_BYTES,
    [FORMAT_METADATA_KEY]: encoder.encode(ENVELOPE_FORMAT),
    [KEY_ID_METADATA_KEY]: encoder.encode(keyId),
    [KEY_VERSION_METADATA_KEY]: encoder.encode(String(keyVersion)),
    [WRAPPED_KEY_METADATA_KEY]: encoder.encode(wrappedKey),
    ...(tenant === undefined ? {} : { [TENANT_METADATA_KEY]: encoder.encode(tenant) }),
  });
}

/** The metadata a static-format payload carries besides its encoding (a tenant's key: its customer id too). */
export function staticMetadata(keyId: string, tenant?: string): Readonly<Record<string, Uint8Array>> {
  return Object.freeze({
    [ENCODING_METADATA_KEY]: ENCRYPTED_ENCODING_BYTES,
    [KEY_ID_METADATA_KEY]: encoder.encode(keyId),
    ...(tenant === undefined ? {} : { [TENANT_METADATA_KEY]: encoder.encode(tenant) }),
  });
}

/** The tenant a payload says sealed it (`encryption-tenant`), or undefined; a label that is no customer id is refused by name. */
export function sealingTenant(metadata: PayloadMetadata, keyId: string | undefined): string | undefined {
  const tenant = metadataText(metadata, TENANT_METADATA_KEY);
  if (tenant !== undefined && !isTenantId(tenant)) {
    throw new PayloadDecryptionError(
      keyId,
      `encrypted payload (key id "${keyId ?? ''}") has ${TENANT_METADATA_KEY} ${JSON.stringify(tenant.slice(0, 32))}: must be a customer id (letters, digits, ".", "_", "-")`,
    );
  }
  return tenant;
}

/** An encrypted payload's envelope metadata, or undefined for the static format; bad metadata is refused by name. */
export function readEnvelope(metadata: PayloadMetadata): EnvelopeMetadata | undefined {
  const format = metadataText(metadata, FORMAT_METADATA_KEY);
  if (format === undefined) return undefined;
  const keyId = metadataText(metadata, KEY_ID_METADATA_KEY);
  if (format !== ENVELOPE_FORMAT)
    throw new PayloadDecryptionError(
      keyId,
      `encrypted payload of ${FORMAT_METADATA_KEY} "${format.slice(0, 64)}", which this process does not read (it reads "${ENVELOPE_FORMAT}")`,
    );
  if (keyId === undefined) throw new PayloadDecryptionError(undefined, `${ENVELOPE_FORMAT} payload without ${KEY_ID_METADATA_KEY} metadata`);
  const version = metadataText(metadata, KEY_VERSION_METADATA_KEY);
  if (version === undefined || !/^[1-9]\d{0,9}$/.test(version)) {
    throw new PayloadDecryptionError(
      keyId,
      `${ENVELOPE_FORMAT} payload (key id "${keyId}") has ${KEY_VERSION_METADATA_KEY} ${JSON.stringify(version?.slice(0, 32) ?? null)}: must be a key version, a whole number from 1`,
    );
  }
  const wrappedKey = metadataText(metadata, WRAPPED_KEY_METADATA_KEY);
  if (wrappedKey === undefined)
    throw new PayloadDecryptionError(keyId, `${ENVELOPE_FORMAT} payload (key id "${keyId}") without ${WRAPPED_KEY_METADATA_KEY} metadata`);
  const tenant = sealingTenant(metadata, keyId);
  return { keyId, keyVersion: Number(version), wrappedKey, ...(tenant === undefined ? {} : { tenant }) };
}

/**
 * Random nonces drawn from a buffer refilled by the CSPRNG 1,024 at a time: one call into OpenSSL
 * per 1,024 payloads instead of one each (the nonces are as random; each is used once).
 */
export class NoncePool {
  private readonly pool = Buffer.alloc(NONCE_BYTES * 1024);
  private next = this.pool.length;

  take(): Buffer {
    if (this.next === this.pool.length) {
      randomFillSync(this.pool);
      this.next = 0;
    }
    const nonce = Buffer.from(this.pool.subarray(this.next, this.next + NONCE_BYTES));
    this.next += NONCE_BYTES;
    return nonce;
  }
}

/** nonce ‖ ciphertext ‖ tag of the proto-encoded payload; `associatedData`: its workflow binding (payload-binding.ts). */
export function sealPayload(key: KeyObject, nonce: Uint8Array, payload: Payload, associatedData?: Uint8Array): Buffer {
  const cipher = createCipheriv(ALGORITHM, key, nonce);
  if (associatedData) cipher.setAAD(associatedData);
  const plaintext = PayloadMessage.encode(payload).finish();
  return Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

/** The payload sealed in `data`; a wrong key or altered bytes are a PayloadDecryptionError naming the key id. */
export function openPayload(key: KeyObject, keyId: string, data: Uint8Array, associatedData?: Uint8Array): Payload {
  if (data.length < NONCE_BYTES + TAG_BYTES)
    throw new PayloadDecryptionError(keyId, `encrypted payload (key id "${keyId}") is too short: ${data.length} bytes`);
  const nonce = data.subarray(0, NONCE_BYTES);
  const tag = data.subarray(data.length - TAG_BYTES);
  const ciphertext = data.subarray(NONCE_BYTES, data.length - TAG_BYTES);
  let plaintext: Buffer;
  try {
    const decipher = createDecipheriv(ALGORITHM, key, nonce);
    decipher.setAuthTag(tag);
    if (associatedData) decipher.setAAD(associatedData);
    plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch (error) {
    throw new PayloadDecryptionError(
      keyId,
      `cannot decrypt a payload with key id "${keyId}": it was altered, or encrypted with another key under the same id`,
      { cause: error },
    );
  }
  const decoded = PayloadMessage.decode(plaintext);
  return { metadata: decoded.metadata, data: decoded.data };
}
