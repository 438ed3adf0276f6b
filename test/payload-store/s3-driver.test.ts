/**
 * The S3 driver against a real MinIO server: the shared driver contract (with and without a key
 * prefix), plus what only S3 has (the claim's bucket, Temporal-compatible claim fields, a missing
 * bucket reported as such).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { defaultPayloadConverter, StorageDriverClaim } from '@temporalio/common';
import {
  PayloadClaimRejectedError,
  PayloadStoreOperationError,
  PayloadStoreSettingsError,
  S3StorageDriver,
  type S3DriverOptions,
} from '../../src/payload-store/index.js';
import { startMinio, type MinioServer } from '../helpers/minio.js';
import { uniqueId } from '../helpers/temporal.js';
import { describeDriverContract, workflowContext, type DriverUnderTest } from './driver-contract.js';

let minio: MinioServer;
before(async () => {
  minio = await startMinio();
});
after(async () => {
  await minio?.stop();
});

function optionsFor(server: MinioServer, extra: Partial<S3DriverOptions> = {}): S3DriverOptions {
  return { bucket: server.bucket, endpoint: server.endpoint, region: server.region, forcePathStyle: true, credentials: server.credentials, ...extra };
}

async function listKeys(server: MinioServer, bucket: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await server.client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

async function underTest(prefix: string | undefined): Promise<DriverUnderTest> {
  const bucket = uniqueId('bucket').toLowerCase();
  await minio.createBucket(bucket);
  const driver = new S3StorageDriver(optionsFor(minio, { bucket, prefix }));
  return {
    driver,
    root: prefix ? `${prefix}/` : '',
    listKeys: () => listKeys(minio, bucket),
    readStored: async (key) => {
      const response = await minio.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return response.Body?.transformToByteArray() ?? assert.fail('an object has a body');
    },
    writeStored: async (key, bytes) => {
      await minio.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes }));
    },
    stop: () => Promise.resolve(driver.close()),
  };
}

describeDriverContract('the S3 driver on MinIO', () => underTest(undefined));
describeDriverContract('the S3 driver on MinIO with a key prefix', () => underTest('temporal-payloads/test'));

void describe('the S3 driver', () => {
  void it("writes the claim fields of Temporal's own S3 drivers: bucket, key, hash_algorithm, hash_value", async () => {
    const driver = new S3StorageDriver(optionsFor(minio, { prefix: '/payloads/' }));
    try {
      const workflowId = uniqueId('claim-fields');
      const [claim] = await driver.store(workflowContext(workflowId), [defaultPayloadConverter.toPayload('hello')]);
      assert.deepEqual(Object.keys(claim?.claimData ?? {}).sort(), ['bucket', 'hash_algorithm', 'hash_value', 'key']);
      assert.equal(claim?.claimData.bucket, minio.bucket);
      assert.match(claim?.claimData.key ?? '', new RegExp(`^payloads/default/workflows/${workflowId}/[0-9a-f]{64}$`));
      assert.equal(driver.name, 'aws.s3driver');
    } finally {
      driver.close();
    }
  });

  void it('refuses a claim naming another bucket, even one its credentials can read', async () => {
    const otherBucket = uniqueId('other').toLowerCase();
    await minio.createBucket(otherBucket);
    const other = new S3StorageDriver(optionsFor(minio, { bucket: otherBucket }));
    const driver = new S3StorageDriver(optionsFor(minio));
    try {
      const [claim] = await other.store(workflowContext(uniqueId('foreign')), [defaultPayloadConverter.toPayload('in the other bucket')]);
      await assert.rejects(driver.retrieve({}, [new StorageDriverClaim({ ...claim?.claimData })]), (error: unknown) => {
        assert.ok(error instanceof PayloadClaimRejectedError, String(error));
        assert.match(error.message, new RegExp(`names bucket "${otherBucket}"`));
        return true;
      });
    } finally {
      other.close();
      driver.close();
    }
  });

  void it('reports a bucket that does not exist as an operation error naming the bucket, not as a missing payload', async () => {
    const driver = new S3StorageDriver(optionsFor(minio, { bucket: 'no-such-bucket-here' }));
    try {
      await assert.rejects(driver.store(workflowContext(uniqueId('nobucket')), [defaultPayloadConverter.toPayload('x')]), (error: unknown) => {
        assert.ok(error instanceof PayloadStoreOperationError, String(error));
        assert.equal(error.operation, 'store');
        assert.match(error.message, /s3:\/\/no-such-bucket-here\//);
        return true;
      });
    } finally {
      driver.close();
    }
  });

  void it('refuses a bucket name or key prefix that S3 keys cannot hold', () => {
    assert.throws(() => new S3StorageDriver({ bucket: 'Not_A_Bucket' }), PayloadStoreSettingsError);
    assert.throws(() => new S3StorageDriver({ bucket: 'payloads', prefix: 'a/../b' }), PayloadStoreSettingsError);
    assert.throws(() => new S3StorageDriver({ bucket: 'payloads', prefix: 'a//b' }), PayloadStoreSettingsError);
  });
});
