/**
 * A StorageDriver over S3 (AWS, or any S3-compatible server such as MinIO) through the AWS SDK v3
 * client: production's store, shared by every worker and client. Keys follow object-keys.ts under an
 * optional prefix: `<prefix>/<namespace>/workflows/<workflow id>/<sha256>`.
 *
 * Claims carry `bucket`, `key`, `hash_algorithm` and `hash_value`, the fields and spelling of Temporal's
 * stock S3 drivers (Python's temporalio.contrib.aws.s3driver 1.35 reads exactly these), and the default
 * name is theirs ("aws.s3driver"), so a stock driver reads our references; claims written before with
 * `hashAlgorithm` and `hashValue` stay readable here. The stock drivers' key layout
 * (`v0/ns/<ns>/wt/<type>/wi/<id>/ri/<run>/d/sha256/<hash>`) is not ours: it has no prefix and files a
 * workflow's payloads under its type and run, which deleting by workflow id cannot find.
 * That package exists only for SDK 1.22 (it pins @temporalio/common 1.22.0 and would install a second
 * copy next to our 1.24), trusts the bucket and key a claim names, and has no prefix or delete.
 *
 * Claims are untrusted (they come from history): only this bucket, only keys of our layout under our
 * prefix, and the bytes must hash to the claimed value. Credentials come from the AWS default chain
 * (environment, profile, instance or task role) unless given explicitly.
 */
import { DeleteObjectsCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { StorageDriverClaim, type Payload, type StorageDriverRetrieveContext, type StorageDriverStoreContext } from '@temporalio/common';
import {
  PayloadClaimRejectedError,
  PayloadStoreOperationError,
  PayloadStoreSettingsError,
  StoredPayloadIntegrityError,
  StoredPayloadNotFoundError,
} from './errors.js';
import { checkClaim, claimDataFor, payloadKey, sha256Hex, workflowKeyPrefix, workflowKeySuffix } from './object-keys.js';
import type { DeleteWorkflowPayloadsOptions, PayloadStoreDriver } from './payload-store-driver.js';
import { deserializePayload, serializePayload } from './stored-payload.js';

export const S3_DRIVER_NAME = 'aws.s3driver';
export const S3_DRIVER_TYPE = 'aggregation-connections.s3';
/** S3-compatible servers (MinIO) accept any region; AWS itself needs the bucket's. */
const DEFAULT_REGION_WITH_ENDPOINT = 'us-east-1';
/** DeleteObjects takes at most this many keys. */
const DELETE_BATCH = 1000;
const PREFIX_SEGMENT = /^[A-Za-z0-9._=+-]+$/;

export interface S3Credentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string | undefined;
}

export interface S3DriverOptions {
  readonly bucket: string;
  /** Key prefix, e.g. "temporal-payloads/prod" (no leading or trailing "/" needed). */
  readonly prefix?: string | undefined;
  /** An S3-compatible server, e.g. http://127.0.0.1:9000; AWS when absent. */
  readonly endpoint?: string | undefined;
  /** The bucket's region; from the AWS default chain when absent (us-east-1 with an endpoint). */
  readonly region?: string | undefined;
  /** Path-style URLs (bucket in the path): most S3-compatible servers need it. */
  readonly forcePathStyle?: boolean | undefined;
  /** Explicit keys; the AWS default credential chain when absent. */
  readonly credentials?: S3Credentials | undefined;
  /** A client to use instead of one built from the fields above (the driver never destroys it). */
  readonly client?: S3Client | undefined;
  /** The routing name written into each reference (default "aws.s3driver"). */
  readonly name?: string | undefined;
}

export class S3StorageDriver implements PayloadStoreDriver {
  readonly name: string;
  readonly type = S3_DRIVER_TYPE;
  readonly bucket: string;
  /** Normalized: no leading or trailing "/"; "" when none. */
  readonly prefix: string;
  readonly location: string;
  private readonly client: S3Client;
  private readonly ownsClient: boolean;
  /** The prefix as keys start with it: "prefix/" or "". */
  private readonly root: string;

  constructor(options: S3DriverOptions) {
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(options.bucket)) {
      throw new PayloadStoreSettingsError('bucket', `${JSON.stringify(options.bucket)} is not an S3 bucket name (3-63 lower-case letters, digits, "." or "-")`);
    }
    this.bucket = options.bucket;
    this.prefix = normalizePrefix(options.prefix ?? '');
    this.root = this.prefix === '' ? '' : `${this.prefix}/`;
    this.name = options.name ?? S3_DRIVER_NAME;
    this.location = `s3://${this.bucket}/${this.root}${options.endpoint && !options.client ? ` at ${options.endpoint}` : ''}`;
    this.ownsClient = options.client === undefined;
    this.client = options.client ?? new S3Client(clientConfig(options));
  }

  async store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const uploads = new Map<string, Promise<void>>();
    return Promise.all(
      payloads.map(async (payload) => {
        const { bytes, sha256 } = serializePayload(payload);
        const key = this.root + payloadKey(context.target, sha256);
        // The same payload twice in one batch is uploaded once. A retry simply puts the same key again.
        let upload = uploads.get(key);
        if (!upload) {
          upload = this.put(key, bytes, context.abortSignal);
          uploads.set(key, upload);
        }
        await upload;
        return new StorageDriverClaim(claimDataFor(key, sha256, { bucket: this.bucket }));
      }),
    );
  }

  async retrieve(context: StorageDriverRetrieveContext, claims: StorageDriverClaim[]): Promise<Payload[]> {
    return Promise.all(claims.map((claim) => this.get(claim, context.abortSignal)));
  }

  async deleteWorkflowPayloads(workflowId: string, { namespace, abortSignal }: DeleteWorkflowPayloadsOptions = {}): Promise<number> {
    const prefixes =
      namespace === undefined
        ? (await this.namespaceSegments(abortSignal)).map((segment) => `${this.root}${segment}/${workflowKeySuffix(workflowId)}`)
        : [this.root + workflowKeyPrefix(namespace, workflowId)];
    let deleted = 0;
    for (const prefix of prefixes) {
      const keys = await this.list(prefix, abortSignal);
      for (let start = 0; start < keys.length; start += DELETE_BATCH) {
        const batch = keys.slice(start, start + DELETE_BATCH);
        let failed: { Key?: string | undefined; Message?: string | undefined } | undefined;
        try {
          const response = await this.client.send(
            new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
            { abortSignal },
          );
          failed = response.Errors?.[0];
        } catch (error) {
          throw new PayloadStoreOperationError(this.name, this.location, 'delete', prefix, { cause: error });
        }
        if (failed) {
          throw new PayloadStoreOperationError(this.name, this.location, 'delete', failed.Key ?? prefix, {
            cause: new Error(failed.Message ?? 'DeleteObjects reported an error'),
          });
        }
        deleted += batch.length;
      }
    }
    return deleted;
  }

  close(): void {
    if (this.ownsClient) this.client.destroy();
  }

  private async put(key: string, bytes: Uint8Array, abortSignal: AbortSignal | undefined): Promise<void> {
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentType: 'application/x-protobuf' }), { abortSignal });
    } catch (error) {
      throw new PayloadStoreOperationError(this.name, this.location, 'store', key, { cause: error });
    }
  }

  private async get(claim: StorageDriverClaim, abortSignal: AbortSignal | undefined): Promise<Payload> {
    const { bucket } = claim.claimData;
    if (bucket !== undefined && bucket !== this.bucket) {
      throw new PayloadClaimRejectedError(
        this.name,
        this.location,
        `the claim names bucket ${JSON.stringify(bucket.slice(0, 100))}, not ${this.bucket}`,
        claim.claimData,
      );
    }
    const checked = checkClaim(claim.claimData, this.root);
    if (typeof checked === 'string') throw new PayloadClaimRejectedError(this.name, this.location, checked, claim.claimData);
    let bytes: Uint8Array;
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: checked.key }), { abortSignal });
      if (!response.Body) throw new Error('GetObject returned no body');
      bytes = await response.Body.transformToByteArray();
    } catch (error) {
      if (isNotFound(error)) throw new StoredPayloadNotFoundError(this.name, this.location, checked.key, { cause: error });
      throw new PayloadStoreOperationError(this.name, this.location, 'retrieve', checked.key, { cause: error });
    }
    const actual = sha256Hex(bytes);
    if (actual !== checked.sha256) throw new StoredPayloadIntegrityError(this.name, this.location, checked.key, checked.sha256, actual);
    return deserializePayload(bytes);
  }

  /** Every key under `prefix`. */
  private async list(prefix: string, abortSignal: AbortSignal | undefined): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      try {
        const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }), { abortSignal });
        for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } catch (error) {
        throw new PayloadStoreOperationError(this.name, this.location, 'delete', prefix, { cause: error });
      }
    } while (token);
    return keys;
  }

  /** The namespace segments present under the prefix ("default", ...). */
  private async namespaceSegments(abortSignal: AbortSignal | undefined): Promise<string[]> {
    const segments: string[] = [];
    let token: string | undefined;
    do {
      try {
        const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.root, Delimiter: '/', ContinuationToken: token }), {
          abortSignal,
        });
        for (const common of page.CommonPrefixes ?? []) {
          const segment = common.Prefix?.slice(this.root.length, -1);
          if (segment) segments.push(segment);
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } catch (error) {
        throw new PayloadStoreOperationError(this.name, this.location, 'delete', this.root, { cause: error });
      }
    } while (token);
    return segments;
  }
}

function clientConfig({ endpoint, region, forcePathStyle, credentials }: S3DriverOptions): S3ClientConfig {
  const config: S3ClientConfig = {};
  const resolvedRegion = region ?? (endpoint ? DEFAULT_REGION_WITH_ENDPOINT : undefined);
  if (resolvedRegion) config.region = resolvedRegion;
  if (endpoint) config.endpoint = endpoint;
  if (forcePathStyle !== undefined) config.forcePathStyle = forcePathStyle;
  if (credentials) config.credentials = { ...credentials };
  return config;
}

function normalizePrefix(prefix: string): string {
  const trimmed = prefix.replace(/^\/+|\/+$/g, '');
  if (trimmed === '') return '';
  for (const segment of trimmed.split('/')) {
    if (!PREFIX_SEGMENT.test(segment) || segment === '.' || segment === '..') {
      throw new PayloadStoreSettingsError(
        'prefix',
        `${JSON.stringify(prefix)}: each "/"-separated part must be letters, digits, ".", "_", "=", "+" or "-" (not "." or "..")`,
      );
    }
  }
  return trimmed;
}

function isNotFound(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  // A missing bucket is also a 404, but a configuration problem, not a missing payload.
  return error.name === 'NoSuchKey' || (status === 404 && error.name !== 'NoSuchBucket');
}
