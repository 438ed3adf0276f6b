/**
 * What can go wrong between Temporal and the payload store. Every error names the driver, where the
 * payloads live (a directory, or s3://bucket/prefix) and, when there is one, the key: an operator
 * reading a failed workflow task must be able to find the object without reading code.
 */

/** A payload store failure: `driver` is the driver's name, `location` its directory or bucket. */
export class PayloadStoreError extends Error {
  override name = 'PayloadStoreError';
  constructor(
    message: string,
    readonly driver: string,
    readonly location: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A claim points at a payload that is not (or no longer) stored: deleted, or another store's claim. */
export class StoredPayloadNotFoundError extends PayloadStoreError {
  override name = 'StoredPayloadNotFoundError';
  constructor(
    driver: string,
    location: string,
    readonly key: string,
    options?: ErrorOptions,
  ) {
    super(
      `stored payload ${key} not found in ${location} (driver ${driver}): it was deleted, or the claim belongs to another store`,
      driver,
      location,
      options,
    );
  }
}

/**
 * A claim this driver refuses to follow. Claims come from workflow history, which any client can
 * write to, so they are untrusted input: only keys of this store's own layout are read.
 */
export class PayloadClaimRejectedError extends PayloadStoreError {
  override name = 'PayloadClaimRejectedError';
  constructor(
    driver: string,
    location: string,
    readonly reason: string,
    readonly claimData: Readonly<Record<string, string>>,
  ) {
    super(`refused a payload claim for ${location} (driver ${driver}): ${reason}`, driver, location);
  }
}

/** The stored bytes no longer hash to the value in the claim and key: altered or truncated. */
export class StoredPayloadIntegrityError extends PayloadStoreError {
  override name = 'StoredPayloadIntegrityError';
  constructor(
    driver: string,
    location: string,
    readonly key: string,
    readonly expectedSha256: string,
    readonly actualSha256: string,
  ) {
    super(`stored payload ${key} in ${location} (driver ${driver}) is corrupt: sha256 ${actualSha256}, expected ${expectedSha256}`, driver, location);
  }
}

/** Writing, reading, listing or deleting failed for another reason (I/O, permissions, network). */
export class PayloadStoreOperationError extends PayloadStoreError {
  override name = 'PayloadStoreOperationError';
  constructor(
    driver: string,
    location: string,
    readonly operation: 'store' | 'retrieve' | 'delete',
    readonly key: string,
    options?: ErrorOptions,
  ) {
    const cause = options?.cause instanceof Error ? `: ${options.cause.message}` : '';
    super(`cannot ${operation} ${key} in ${location} (driver ${driver})${cause}`, driver, location, options);
  }
}

/** Settings that cannot make a store; `setting` names the offending field. */
export class PayloadStoreSettingsError extends Error {
  override name = 'PayloadStoreSettingsError';
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`payload store setting ${setting}: ${message}`);
  }
}
