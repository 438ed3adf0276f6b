"""The worker's payload store in Python: large payloads kept outside Temporal history (the local
directory or S3, PAYLOAD_STORE), read and written as src/payload-store/ reads and writes them."""

from .errors import (
    PayloadClaimRejectedError,
    PayloadStoreError,
    PayloadStoreOperationError,
    StoredPayloadIntegrityError,
    StoredPayloadNotFoundError,
)
from .external_storage import external_storage_for, external_storage_from_env, payload_store_driver_for
from .keys import check_claim, claim_data_for, encode_key_segment, payload_key
from .local_directory import LOCAL_DIRECTORY_DRIVER_NAME, LocalDirectoryStorageDriver
from .s3 import S3_DRIVER_NAME, S3StorageDriver
from .settings import (
    DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES,
    HISTORY_PAYLOAD_LIMIT_BYTES,
    LocalPayloadStore,
    PayloadStoreOff,
    PayloadStoreSettings,
    S3PayloadStore,
    payload_store_from_env,
)

__all__ = [
    "DEFAULT_PAYLOAD_SIZE_THRESHOLD_BYTES",
    "HISTORY_PAYLOAD_LIMIT_BYTES",
    "LOCAL_DIRECTORY_DRIVER_NAME",
    "S3_DRIVER_NAME",
    "LocalDirectoryStorageDriver",
    "LocalPayloadStore",
    "PayloadClaimRejectedError",
    "PayloadStoreError",
    "PayloadStoreOff",
    "PayloadStoreOperationError",
    "PayloadStoreSettings",
    "S3PayloadStore",
    "S3StorageDriver",
    "StoredPayloadIntegrityError",
    "StoredPayloadNotFoundError",
    "check_claim",
    "claim_data_for",
    "encode_key_segment",
    "external_storage_for",
    "external_storage_from_env",
    "payload_key",
    "payload_store_driver_for",
    "payload_store_from_env",
]
