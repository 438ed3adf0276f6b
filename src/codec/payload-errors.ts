/**
 * Why a payload cannot be encrypted or decrypted, as types a caller can tell apart: a payload that
 * can never be read here (PayloadDecryptionError and its kinds: a worker marks such a workflow
 * message, the console answers 422) against a key provider that cannot answer now or refuses this
 * process (KeyProviderUnavailableError, KeyProviderRefusedError: not payload errors, so the task
 * fails and Temporal retries it until the provider is back or fixed).
 */

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

/**
 * The payload is not sealed at all: with encryption on, only `binary/encrypted` payloads are read, so a
 * payload written without the codec (a client without the key, `temporal` without --codec-endpoint,
 * anyone who can call Temporal) is refused instead of trusted. Its content is never quoted.
 */
export class PayloadNotSealedError extends PayloadDecryptionError {
  override name = 'PayloadNotSealedError';
  constructor(
    /** The payload's own encoding metadata ("json/plain", ...), or "(none)". */
    readonly encoding: string,
  ) {
    super(
      undefined,
      `payload not sealed: its encoding is "${encoding}", not binary/encrypted, and with encryption on only sealed payloads are read; ` +
        'send it through the codec (a client with the key, or temporal --codec-endpoint <console>/codec)',
    );
  }
}

/**
 * The payload was sealed for another workflow (its `encryption-workflow-id`): copied out of one
 * connection's history into another's, it is refused before it is opened. Its content is never quoted.
 */
export class PayloadMisboundError extends PayloadDecryptionError {
  override name = 'PayloadMisboundError';
  constructor(
    keyId: string | undefined,
    /** The workflow id it was sealed for. */
    readonly boundTo: string,
    /** The workflow it was sent to. */
    readonly workflowId: string,
  ) {
    super(
      keyId,
      `payload sealed for workflow "${boundTo.slice(0, 256)}" sent to workflow "${workflowId.slice(0, 256)}": a sealed payload is read only in the workflow it was sealed for, so it is refused`,
    );
  }
}

/**
 * A sealed payload bound to no workflow, read where the codec refuses those (PAYLOAD_UNBOUND=refuse):
 * sealed before bindings, or by a codec with no workflow to bind to (the codec endpoint's encode),
 * it could have been copied from anywhere.
 */
export class PayloadUnboundError extends PayloadDecryptionError {
  override name = 'PayloadUnboundError';
  constructor(keyId: string | undefined, workflowId: string) {
    super(
      keyId,
      `payload sealed for no workflow sent to workflow "${workflowId.slice(0, 256)}": with PAYLOAD_UNBOUND=refuse only payloads sealed for their own workflow are read (a client of this release seals them so)`,
    );
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
      `payload encrypted with key id "${keyId}", which is not configured here (known: ${knownKeyIds.map((id) => `"${id}"`).join(', ') || 'none'}); ` +
        `add it to PAYLOAD_DECRYPTION_KEYS as ${keyId}:<base64 key>`,
    );
  }
}

/**
 * The KMS refused to unwrap the payload's data key because its key version is below the key's
 * min_decryption_version: payloads of that version were made unreadable on purpose (revocation).
 */
export class KeyVersionRevokedError extends PayloadDecryptionError {
  override name = 'KeyVersionRevokedError';
  constructor(
    override readonly keyId: string,
    /** The KMS key, e.g. the transit key's name. */
    readonly keyName: string,
    /** The key version the payload's data key was wrapped with. */
    readonly version: number,
    kmsMessage: string,
  ) {
    super(
      keyId,
      `key version revoked: the payload's data key was wrapped with version ${version} of key "${keyName}", which the KMS no longer decrypts ` +
        `(below its min_decryption_version; the KMS said: ${kmsMessage}). Payloads of version ${version} stay unreadable unless the minimum is lowered again`,
    );
  }
}

/**
 * The KMS no longer has the key that wrapped the payload's data key: a tenant's key destroyed when
 * its lender was forgotten. Unlike a revocation nothing can undo it; its payloads are gone for good.
 */
export class KeyDestroyedError extends PayloadDecryptionError {
  override name = 'KeyDestroyedError';
  /** Where the key was: a KMS, or a tenant's key file (`keyName` is then its path). */
  keptIn: 'kms' | 'key-file' = 'kms';
  constructor(
    override readonly keyId: string,
    /** The KMS key, e.g. the transit key's name. */
    readonly keyName: string,
    /** The tenant whose key it was, when the payload names one. */
    readonly tenant: string | undefined,
    kmsMessage: string,
    /** Instead of the KMS's wording: how a key of another kind is gone (a tenant's key file, static-tenant-keys.ts). */
    howGone?: string,
  ) {
    super(
      keyId,
      howGone ??
        `key destroyed: the payload's data key was wrapped by key "${keyName}"${tenant === undefined ? '' : ` (tenant "${tenant}")`}, which the KMS no longer has ` +
          `(the KMS said: ${kmsMessage}); its payloads stay unreadable for good, as forgetting a lender intends`,
    );
  }

  /** A tenant's static key file is gone: its lender was forgotten (`tenant forget` deletes it). */
  static tenantKeyFileGone(keyId: string, path: string, tenant: string): KeyDestroyedError {
    const error = new KeyDestroyedError(
      keyId,
      path,
      tenant,
      'key file gone',
      `key destroyed: the payload was sealed with key "${keyId}" of tenant "${tenant}", whose key file ${path} is gone; its payloads stay unreadable for good, as forgetting a lender intends`,
    );
    error.keptIn = 'key-file';
    return error;
  }
}

/** A tenant's payloads cannot be sealed: in static mode with keys per tenant, it has no key file and this process may not make one. */
export class TenantKeyMissingError extends Error {
  override readonly name = 'TenantKeyMissingError';
  constructor(
    readonly tenant: string,
    readonly path: string,
  ) {
    super(`tenant "${tenant}" has no payload key: no file ${path}; onboard the tenant first (docs/operations.md, "Tenant onboarding")`);
  }
}

/** What was asked of the provider: 'login', 'datakey', 'decrypt' (or a test's own administration). */
export type KeyProviderOperation = string;

/** The key provider could not be reached or said it cannot serve now (down, sealed, overloaded): retry. */
export class KeyProviderUnavailableError extends Error {
  override name = 'KeyProviderUnavailableError';
  /** A retry may succeed once the provider is back: the worker's task fails and Temporal retries it. */
  readonly retryable = true;
  constructor(
    readonly provider: string,
    readonly operation: KeyProviderOperation,
    detail: string,
    options?: ErrorOptions,
  ) {
    super(`${provider} is unavailable (${operation}): ${detail}; no cached key could stand in, so the call fails and is retried`, options);
  }
}

/**
 * The KMS has made no data key for so long, or the last one has sealed so many payloads past its own
 * bound, that it may seal no more (PAYLOAD_DATA_KEY_OUTAGE_MAX_S, PAYLOAD_DATA_KEY_OUTAGE_MAX_USES):
 * sealing stops until the KMS answers. Still retryable: the task retries and succeeds once it does.
 */
export class SealingStoppedError extends KeyProviderUnavailableError {
  override name = 'SealingStoppedError';
  constructor(
    provider: string,
    /** Which bound was reached. */
    readonly bound: 'time' | 'uses',
    detail: string,
    options?: ErrorOptions,
  ) {
    super(provider, 'datakey', detail, options);
  }
}

/** The key provider answered but refused this process (no permission, no such key, bad credentials): the operator's to fix. */
export class KeyProviderRefusedError extends Error {
  override name = 'KeyProviderRefusedError';
  constructor(
    readonly provider: string,
    readonly operation: KeyProviderOperation,
    readonly status: number,
    kmsMessage: string,
  ) {
    super(`${provider} refused ${operation} (HTTP ${status}): ${kmsMessage}`);
  }
}

/**
 * The KMS key exists but may not be used now (AWS KMS: disabled, or pending deletion): no payload of
 * it is made or read until an operator enables it again, so, like any refusal, the task retries.
 */
export class KeyDisabledError extends KeyProviderRefusedError {
  override name = 'KeyDisabledError';
  constructor(
    provider: string,
    operation: KeyProviderOperation,
    /** The KMS key, as configured or as the payload names it. */
    readonly keyName: string,
    kmsMessage: string,
  ) {
    super(
      provider,
      operation,
      400,
      `key "${keyName}" is disabled or pending deletion, so no data key is made or unwrapped with it until it is enabled again (${kmsMessage})`,
    );
  }
}
