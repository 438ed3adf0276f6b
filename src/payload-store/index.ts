/**
 * Large payloads out of Temporal history (the SDK's External Storage, experimental in 1.24): settings,
 * the factory, the two drivers and their errors. See external-storage.ts for how it meets the codecs.
 */
export { DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES, HISTORY_PAYLOAD_LIMIT_BYTES } from './settings.js';
export type { LocalPayloadStoreSettings, PayloadStoreOff, PayloadStoreSettings, S3PayloadStoreSettings } from './settings.js';
export { externalStorageFor, externalStorageWith, payloadStoreDriverFor, payloadStoreFor } from './external-storage.js';
export type { PayloadStore } from './external-storage.js';
export type { DeleteWorkflowPayloadsOptions, PayloadStoreDriver } from './payload-store-driver.js';
export { LOCAL_DIRECTORY_DRIVER_NAME, LocalDirectoryStorageDriver } from './local-directory-driver.js';
export type { LocalDirectoryDriverOptions } from './local-directory-driver.js';
export { S3_DRIVER_NAME, S3StorageDriver } from './s3-driver.js';
export type { S3Credentials, S3DriverOptions } from './s3-driver.js';
export {
  PayloadClaimRejectedError,
  PayloadStoreError,
  PayloadStoreOperationError,
  PayloadStoreSettingsError,
  StoredPayloadIntegrityError,
  StoredPayloadNotFoundError,
} from './errors.js';
