/**
 * A Temporal PayloadCodec that encrypts every payload with AES-256-GCM before it leaves the process,
 * so Temporal's history holds ciphertext instead of bank passwords, MFA answers, holder PII and
 * transactions. It runs where payloads cross the wire (worker, client, codec endpoint), never inside
 * workflow code.
 *
 * Wire format of an encrypted payload:
 *   metadata: encoding = "binary/encrypted", encryption-key-id = <key id>
 *   data:     IV (12 random bytes) ‖ ciphertext ‖ GCM tag (16 bytes)
 * The plaintext is the whole original Payload (its metadata too, e.g. "json/plain"), proto-encoded.
 *
 * Decoding passes through payloads that are not encrypted (histories written before encryption was
 * turned on still read) and decrypts with the key named by the payload, so earlier keys kept as
 * decryption keys keep their histories readable after a rotation.
 *
 * A worker's codec marks, rather than refuses, a workflow's message it cannot decrypt (option
 * `markUndecodableMessages`): a signal encrypted under a key nobody has must not fail every workflow
 * task of its connection. Activity payloads are still refused, so a worker missing a key retries
 * until the key is configured.
 */
import { createCipheriv, createDecipheriv, createSecretKey, randomFillSync, type KeyObject } from 'node:crypto';
import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import { UNDECODABLE_ENCODING, UNDECODABLE_REASON_METADATA_KEY } from './undecodable.js';
import proto from '@temporalio/proto';

const { Payload: PayloadMessage } = proto.temporal.api.common.v1;

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA_KEY = 'encryption-key-id';
const ENCODING_METADATA_KEY = 'encoding';
const ALGORITHM = 'aes-256-gcm';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const ENCRYPTED_ENCODING_BYTES = encoder.encode(ENCRYPTED_ENCODING);

/**
 * Random IVs drawn from a buffer refilled by the CSPRNG 1,024 IVs at a time: one call into OpenSSL
 * per 1,024 payloads instead of one each (the IVs are as random; each is used once).
 */
class IvPool {
  private readonly pool = Buffer.alloc(IV_BYTES * 1024);
  private next = this.pool.length;

  take(): Buffer {
    if (this.next === this.pool.length) {
      randomFillSync(this.pool);
      this.next = 0;
    }
    const iv = Buffer.from(this.pool.subarray(this.next, this.next + IV_BYTES));
    this.next += IV_BYTES;
    return iv;
  }
}

/** An encrypted payload that cannot be decrypted here; `keyId` is the id it was encrypted under. */
export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';
  constructor(
    readonly keyId: string | undefined,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The payload was encrypted with a key this process does not have (add it to PAYLOAD_DECRYPTION_KEYS). */
export class UnknownEncryptionKeyError extends PayloadDecryptionError {
  override name = 'UnknownEncryptionKeyError';
  constructor(
    override readonly keyId: string,
    readonly knownKeyIds: readonly string[],
  ) {
    super(
      keyId,
      `payload encrypted with key id "${keyId}", which is not configured here (known: ${knownKeyIds.map((id) => `"${id}"`).join(', ')}); ` +
        `add it to PAYLOAD_DECRYPTION_KEYS as ${keyId}:<base64 key>`,
    );
  }
}

export interface EncryptionKeys {
  /** Id written next to each payload this codec encrypts. */
  readonly keyId: string;
  /** The 32-byte key new payloads are encrypted with. */
  readonly key: Uint8Array;
  /** Earlier keys by id, used only to decrypt. */
  readonly decryptionKeys?: ReadonlyMap<string, Uint8Array> | undefined;
}

export interface EncryptionCodecOptions {
  /** Workers: a workflow-owned payload (signal, update, start input) that cannot be decrypted becomes a marker. */
  readonly markUndecodableMessages?: boolean | undefined;
}

export class EncryptionCodec implements PayloadCodec {
  readonly keyId: string;
  // KeyObjects, made once: given raw bytes, every cipher would make its own (a third of its cost).
  private readonly key: KeyObject;
  private readonly keys: ReadonlyMap<string, KeyObject>;
  private readonly keyIdBytes: Uint8Array;
  private readonly ivs = new IvPool();
  private readonly markUndecodableMessages: boolean;

  constructor({ keyId, key, decryptionKeys = new Map() }: EncryptionKeys, { markUndecodableMessages = false }: EncryptionCodecOptions = {}) {
    if (keyId === '') throw new TypeError('EncryptionCodec: the key id must not be empty');
    const keys = new Map<string, KeyObject>();
    for (const [id, bytes] of decryptionKeys) keys.set(id, checkedKey(id, bytes));
    this.keyId = keyId;
    this.keyIdBytes = encoder.encode(keyId);
    this.key = checkedKey(keyId, key);
    keys.set(keyId, this.key);
    this.keys = keys;
    this.markUndecodableMessages = markUndecodableMessages;
  }

  /** The ids of every key this codec can decrypt with (the current one first). */
  get keyIds(): string[] {
    return [this.keyId, ...[...this.keys.keys()].filter((id) => id !== this.keyId)];
  }

  // Synchronous work in a promise executor: a failure rejects the promise instead of throwing.
  encode(payloads: Payload[]): Promise<Payload[]> {
    return new Promise((resolve) => resolve(payloads.map((payload) => this.encrypt(payload))));
  }

  /**
   * A payload it cannot decrypt rejects the whole batch (the worker's task fails and retries, a client
   * call fails), except a workflow's message on a worker that marks them.
   */
  decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const mark = this.markUndecodableMessages && context?.type === 'workflow';
    return new Promise((resolve) => resolve(payloads.map((payload) => (mark ? this.decryptOrMark(payload) : this.decrypt(payload)))));
  }

  private decryptOrMark(payload: Payload): Payload {
    try {
      return this.decrypt(payload);
    } catch (error) {
      if (!(error instanceof PayloadDecryptionError)) throw error;
      return {
        metadata: { [ENCODING_METADATA_KEY]: encoder.encode(UNDECODABLE_ENCODING), [UNDECODABLE_REASON_METADATA_KEY]: encoder.encode(error.message) },
        data: new Uint8Array(),
      };
    }
  }

  private encrypt(payload: Payload): Payload {
    const iv = this.ivs.take();
    const cipher = createCipheriv(ALGORITHM, this.key, iv);
    const plaintext = PayloadMessage.encode(payload).finish();
    const data = Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: { [ENCODING_METADATA_KEY]: ENCRYPTED_ENCODING_BYTES, [KEY_ID_METADATA_KEY]: this.keyIdBytes },
      data,
    };
  }

  private decrypt(payload: Payload): Payload {
    if (!isEncrypted(payload)) return payload;
    const rawKeyId = payload.metadata?.[KEY_ID_METADATA_KEY];
    if (!rawKeyId || rawKeyId.length === 0) throw new PayloadDecryptionError(undefined, `encrypted payload without ${KEY_ID_METADATA_KEY} metadata`);
    const keyId = decoder.decode(rawKeyId);
    const key = this.keys.get(keyId);
    if (!key) throw new UnknownEncryptionKeyError(keyId, this.keyIds);
    const data = payload.data ?? new Uint8Array();
    if (data.length < IV_BYTES + TAG_BYTES) throw new PayloadDecryptionError(keyId, `encrypted payload (key id "${keyId}") is too short: ${data.length} bytes`);
    const iv = data.subarray(0, IV_BYTES);
    const tag = data.subarray(data.length - TAG_BYTES);
    const ciphertext = data.subarray(IV_BYTES, data.length - TAG_BYTES);
    let plaintext: Buffer;
    try {
      const decipher = createDecipheriv(ALGORITHM, key, iv);
      decipher.setAuthTag(tag);
      plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    } catch (error) {
      throw new PayloadDecryptionError(keyId, `cannot decrypt a payload with key id "${keyId}": it was altered, or encrypted with another key under the same id`, { cause: error });
    }
    const decoded = PayloadMessage.decode(plaintext);
    return { metadata: decoded.metadata, data: decoded.data };
  }
}

/** True when the payload's metadata says `encoding: binary/encrypted`. */
export function isEncrypted(payload: Payload): boolean {
  const encoding = payload.metadata?.[ENCODING_METADATA_KEY];
  return encoding !== undefined && encoding !== null && decoder.decode(encoding) === ENCRYPTED_ENCODING;
}

function checkedKey(id: string, key: Uint8Array): KeyObject {
  if (key.length !== KEY_BYTES) throw new TypeError(`EncryptionCodec: key "${id}" must be ${KEY_BYTES} bytes, got ${key.length}`);
  return createSecretKey(key);
}
