"""The SDK's ExternalStorage over the worker's store: set it as the DataConverter's external_storage
next to the codec. The SDK stores a payload once its encoded size (after the codec, so ciphertext) is
at least the threshold, and retrieves references before the codec decodes: stored objects are
ciphertext when encryption is on, exactly as the worker keeps them."""

from __future__ import annotations

from collections.abc import Mapping

from temporalio.converter import ExternalStorage

from .local_directory import LocalDirectoryStorageDriver
from .s3 import S3StorageDriver
from .settings import PayloadStoreSettings, payload_store_from_env


def payload_store_driver_for(settings: PayloadStoreSettings) -> LocalDirectoryStorageDriver | S3StorageDriver | None:
    """The driver the settings describe, or None when the store is off."""
    if settings.kind == "local":
        return LocalDirectoryStorageDriver(settings.directory)
    if settings.kind == "s3":
        return S3StorageDriver(settings)
    return None


def external_storage_for(settings: PayloadStoreSettings) -> ExternalStorage | None:
    """ExternalStorage with the settings' driver and threshold, or None when the store is off."""
    driver = payload_store_driver_for(settings)
    if driver is None or settings.kind == "off":
        return None
    return ExternalStorage(drivers=[driver], payload_size_threshold=settings.threshold_bytes)


def external_storage_from_env(env: Mapping[str, str] | None = None) -> ExternalStorage | None:
    """ExternalStorage as the worker's PAYLOAD_STORE variables describe it (ConfigError on a bad value)."""
    return external_storage_for(payload_store_from_env(env))
