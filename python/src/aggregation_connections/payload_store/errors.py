"""What can go wrong between Temporal and the payload store, named as src/payload-store/errors.ts names it.
Every error names the driver, where the payloads live (a directory, or s3://bucket/prefix) and, when
there is one, the key: an operator must be able to find the object without reading code."""

from __future__ import annotations

from collections.abc import Mapping


class PayloadStoreError(Exception):
    """A payload store failure: ``driver`` is the driver's name, ``location`` its directory or bucket."""

    def __init__(self, message: str, driver: str, location: str) -> None:
        super().__init__(message)
        self.driver = driver
        self.location = location


class StoredPayloadNotFoundError(PayloadStoreError):
    """A claim points at a payload that is not (or no longer) stored: deleted, or another store's claim."""

    def __init__(self, driver: str, location: str, key: str) -> None:
        super().__init__(
            f"stored payload {key} not found in {location} (driver {driver}): it was deleted, or the claim belongs to another store", driver, location
        )
        self.key = key


class PayloadClaimRejectedError(PayloadStoreError):
    """A claim this driver refuses to follow: claims come from history, which any client can write to."""

    def __init__(self, driver: str, location: str, reason: str, claim_data: Mapping[str, str]) -> None:
        super().__init__(f"refused a payload claim for {location} (driver {driver}): {reason}", driver, location)
        self.reason = reason
        self.claim_data = dict(claim_data)


class StoredPayloadIntegrityError(PayloadStoreError):
    """The stored bytes no longer hash to the value in the claim and key: altered or truncated."""

    def __init__(self, driver: str, location: str, key: str, expected_sha256: str, actual_sha256: str) -> None:
        super().__init__(
            f"stored payload {key} in {location} (driver {driver}) is corrupt: sha256 {actual_sha256}, expected {expected_sha256}", driver, location
        )
        self.key = key
        self.expected_sha256 = expected_sha256
        self.actual_sha256 = actual_sha256


class PayloadStoreOperationError(PayloadStoreError):
    """Writing or reading failed for another reason (I/O, permissions, network); ``operation`` is store or retrieve."""

    def __init__(self, driver: str, location: str, operation: str, key: str, cause: BaseException) -> None:
        super().__init__(f"cannot {operation} {key} in {location} (driver {driver}): {cause}", driver, location)
        self.operation = operation
        self.key = key
