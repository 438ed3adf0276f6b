/**
 * The aws-kms key provider: AWS KMS makes and unwraps the data keys of envelope-v1 payloads through
 * @aws-sdk/client-kms. A data key comes from `GenerateDataKey` (AES_256) under the configured key; a
 * payload's is unwrapped through `Decrypt`, naming the key that wrapped it. The key id written
 * beside a payload is "aws-kms:<key ARN>" as KMS answered it, so a payload written through an alias
 * still names its key after the alias moves. Both calls carry the encryption context
 * {purpose: "temporal-payloads"}, and a tenant's data keys also {tenant: <customerId>} (the payload's
 * `encryption-tenant`): KMS binds it to the wrapped key, so a Decrypt that names another tenant fails,
 * and an IAM condition on kms:EncryptionContext:tenant scopes a reader to its tenants.
 *
 * `encryption-key-version` is always 1: AWS KMS rotates a key's backing material inside the key and
 * picks the right one from the ciphertext itself, never telling the caller which, so there is no
 * version to write; a reader refuses any other value (a later format may give it a meaning).
 *
 * The SDK's errors become types: no answer, 5xx, throttling are KeyProviderUnavailableError (retry);
 * a disabled key or one pending deletion is KeyDisabledError; access denied, no such key, bad
 * credentials are KeyProviderRefusedError naming the key; a wrapped key KMS will not open is a payload
 * this process can never read (PayloadDecryptionError).
 */
import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import type { DataKey, KeyWrapper } from './envelope-keys.js';
import { KeyDisabledError, KeyProviderRefusedError, KeyProviderUnavailableError, PayloadDecryptionError, type KeyProviderOperation } from './payload-errors.js';
import type { EnvelopeMetadata } from './payload-format.js';

export const AWS_KMS = 'aws-kms';
const KEY_ID_PREFIX = `${AWS_KMS}:`;
/** Bound to every data key AWS KMS wraps for payloads; Decrypt must present the same (docs/payload-format.md). */
export const AWS_KMS_ENCRYPTION_CONTEXT: Readonly<Record<string, string>> = Object.freeze({ purpose: 'temporal-payloads' });

/** The encryption context of a data key: the product's, and its tenant's when a tenant's. */
export function awsKmsEncryptionContext(tenant: string | undefined): Record<string, string> {
  return tenant === undefined ? { ...AWS_KMS_ENCRYPTION_CONTEXT } : { ...AWS_KMS_ENCRYPTION_CONTEXT, tenant };
}
/** AWS KMS names no backing-key version: every aws-kms envelope is version 1. */
export const AWS_KMS_KEY_VERSION = 1;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
/** What KMS answers for a key that exists but may not be used now: the operator's to re-enable. */
const DISABLED = new Set(['DisabledException', 'KMSInvalidStateException']);
/** What KMS answers for a wrapped key it will never open with this key. */
const UNOPENABLE = new Set(['InvalidCiphertextException', 'IncorrectKeyException']);
const UNAVAILABLE = new Set([
  'ThrottlingException',
  'ThrottledException',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'TimeoutError',
  'RequestTimeout',
]);

/** The key id written beside payloads whose data keys AWS KMS key `key` (id, ARN or alias) wrapped. */
export function awsKmsKeyId(key: string): string {
  return `${KEY_ID_PREFIX}${key}`;
}

/**
 * The KMS key of a payload's aws-kms envelope; PayloadDecryptionError when the metadata is not one
 * (another provider, a version other than 1, a wrapped key that is not base64).
 */
export function awsKmsKeyOf({ keyId, keyVersion, wrappedKey }: EnvelopeMetadata): string {
  if (!keyId.startsWith(KEY_ID_PREFIX) || keyId.length === KEY_ID_PREFIX.length) {
    throw new PayloadDecryptionError(
      keyId,
      `payload's data key is wrapped by key id "${keyId}", not by an ${AWS_KMS} key ("${KEY_ID_PREFIX}<key id or ARN>"), which this process's provider is`,
    );
  }
  if (keyVersion !== AWS_KMS_KEY_VERSION) {
    throw new PayloadDecryptionError(
      keyId,
      `payload's encryption-key-version is ${keyVersion}, but ${AWS_KMS} envelopes are always version ${AWS_KMS_KEY_VERSION} (AWS KMS names no key version)`,
    );
  }
  if (!BASE64.test(wrappedKey)) throw new PayloadDecryptionError(keyId, `payload's wrapped data key is not base64 (an AWS KMS CiphertextBlob)`);
  return keyId.slice(KEY_ID_PREFIX.length);
}

export class AwsKms implements KeyWrapper {
  readonly keyId: string;

  constructor(
    private readonly client: KMSClient,
    /** The KMS key new data keys are made under: key id, key ARN, alias name or alias ARN. */
    private readonly key: string,
    /** Whose data keys these are (bound in their encryption context); undefined: the product's. */
    readonly tenant?: string | undefined,
  ) {
    this.keyId = awsKmsKeyId(key);
  }

  forTenant(tenant: string): AwsKms {
    return new AwsKms(this.client, this.key, tenant);
  }

  async newDataKey(): Promise<DataKey> {
    let answer;
    try {
      answer = await this.client.send(
        new GenerateDataKeyCommand({ KeyId: this.key, KeySpec: 'AES_256', EncryptionContext: awsKmsEncryptionContext(this.tenant) }),
      );
    } catch (error) {
      throw typedError(error, 'GenerateDataKey', this.key);
    }
    const { Plaintext: plaintext, CiphertextBlob: wrapped, KeyId: keyArn } = answer;
    if (!plaintext || !wrapped)
      throw new KeyProviderRefusedError(AWS_KMS, 'GenerateDataKey', 200, `an answer without Plaintext and CiphertextBlob for key "${this.key}"`);
    return {
      plaintext,
      wrappedKey: Buffer.from(wrapped).toString('base64'),
      keyVersion: AWS_KMS_KEY_VERSION,
      ...(keyArn ? { keyId: awsKmsKeyId(keyArn) } : {}),
    };
  }

  async unwrap(envelope: EnvelopeMetadata): Promise<Uint8Array> {
    const key = awsKmsKeyOf(envelope);
    let answer;
    try {
      answer = await this.client.send(
        new DecryptCommand({
          KeyId: key,
          CiphertextBlob: Buffer.from(envelope.wrappedKey, 'base64'),
          EncryptionContext: awsKmsEncryptionContext(envelope.tenant),
        }),
      );
    } catch (error) {
      if (UNOPENABLE.has((error as Error).name)) {
        throw new PayloadDecryptionError(
          envelope.keyId,
          `${AWS_KMS} cannot unwrap the payload's data key with key "${key}": ${(error as Error).name}: ${(error as Error).message}`,
          { cause: error },
        );
      }
      throw typedError(error, 'Decrypt', key);
    }
    if (!answer.Plaintext) throw new KeyProviderRefusedError(AWS_KMS, 'Decrypt', 200, `an answer without Plaintext for key "${key}"`);
    return answer.Plaintext;
  }
}

/** An SDK error as this codebase's kind: retry (unavailable), the key disabled, or refused. */
function typedError(error: unknown, operation: KeyProviderOperation, key: string): Error {
  const name = error instanceof Error ? error.name : 'Error';
  const message = error instanceof Error ? error.message : String(error);
  const detail = `key "${key}": ${name}: ${message.slice(0, 400)}`;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  if (DISABLED.has(name)) return new KeyDisabledError(AWS_KMS, operation, key, `${name}: ${message.slice(0, 400)}`);
  const setup = setupHint(name, message);
  if (setup) return new KeyProviderRefusedError(AWS_KMS, operation, status ?? 0, `${detail}${setup}`);
  // No HTTP answer at all (refused, reset, timed out), a 5xx or throttling: KMS cannot serve now.
  if (status === undefined || status === 429 || status >= 500 || UNAVAILABLE.has(name)) {
    return new KeyProviderUnavailableError(AWS_KMS, operation, detail, { cause: error });
  }
  return new KeyProviderRefusedError(AWS_KMS, operation, status, detail);
}

/** What the SDK fails with before asking KMS when this process is not set up: the operator's to fix, not an outage. */
function setupHint(name: string, message: string): string | undefined {
  if (name === 'CredentialsProviderError') {
    return " (no AWS credentials: the SDK's default chain looks at AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, and an instance or task role)";
  }
  if (/region is missing/i.test(message)) return ' (no region: set PAYLOAD_AWS_REGION, or give PAYLOAD_AWS_KMS_KEY_ID as an ARN)';
  return undefined;
}
