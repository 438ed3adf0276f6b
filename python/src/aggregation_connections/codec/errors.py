"""Why a payload cannot be encrypted or decrypted, as types a caller can tell apart (src/codec/payload-errors.ts).

A payload that can never be read here is a PayloadDecryptionError (or one of its kinds); a key provider
that cannot answer now (KeyProviderUnavailableError: retry) or refuses this process
(KeyProviderRefusedError: the operator's to fix) is not a payload error.
"""

from __future__ import annotations

from collections.abc import Sequence


class PayloadDecryptionError(Exception):
    """An encrypted payload that cannot be decrypted here; ``key_id`` is the id it was encrypted under."""

    def __init__(self, key_id: str | None, message: str) -> None:
        super().__init__(message)
        self.key_id = key_id


class PayloadNotSealedError(PayloadDecryptionError):
    """The payload is not sealed at all: with encryption on only binary/encrypted payloads are read (never quoted)."""

    def __init__(self, encoding: str) -> None:
        super().__init__(
            None,
            f'payload not sealed: its encoding is "{encoding}", not binary/encrypted, and with encryption on only sealed '
            "payloads are read; send it through the codec (a client with the key, or temporal --codec-endpoint <console>/codec)",
        )
        self.encoding = encoding


class PayloadMisboundError(PayloadDecryptionError):
    """The payload was sealed for another workflow: copied out of one connection's history into another's (never quoted)."""

    def __init__(self, key_id: str | None, bound_to: str, workflow_id: str) -> None:
        super().__init__(
            key_id,
            f'payload sealed for workflow "{bound_to[:256]}" sent to workflow "{workflow_id[:256]}": a sealed payload is read '
            "only in the workflow it was sealed for, so it is refused",
        )
        self.bound_to = bound_to
        self.workflow_id = workflow_id


class UnknownEncryptionKeyError(PayloadDecryptionError):
    """The payload was encrypted with a key this process does not have (add it to PAYLOAD_DECRYPTION_KEYS)."""

    def __init__(self, key_id: str, known_key_ids: Sequence[str]) -> None:
        known = ", ".join(f'"{known_id}"' for known_id in known_key_ids) or "none"
        super().__init__(
            key_id,
            f'payload encrypted with key id "{key_id}", which is not configured here (known: {known}); '
            f"add it to PAYLOAD_DECRYPTION_KEYS as {key_id}:<base64 key>",
        )
        self.known_key_ids = tuple(known_key_ids)


class KeyVersionRevokedError(PayloadDecryptionError):
    """The KMS refused to unwrap the data key: its key version is below the key's min_decryption_version."""

    def __init__(self, key_id: str, key_name: str, version: int, kms_message: str) -> None:
        super().__init__(
            key_id,
            f'key version revoked: the payload\'s data key was wrapped with version {version} of key "{key_name}", '
            f"which the KMS no longer decrypts (below its min_decryption_version; the KMS said: {kms_message}). "
            f"Payloads of version {version} stay unreadable unless the minimum is lowered again",
        )
        self.key_name = key_name
        self.version = version


class KeyDestroyedError(PayloadDecryptionError):
    """The KMS no longer has the key that wrapped the data key: a tenant's key destroyed when its lender was forgotten."""

    def __init__(self, key_id: str, key_name: str, tenant: str | None, kms_message: str, *, how_gone: str | None = None) -> None:
        """``how_gone``: the whole message instead of the KMS's wording, for a key of another kind (a tenant's key file)."""
        whose = "" if tenant is None else f' (tenant "{tenant}")'
        super().__init__(
            key_id,
            how_gone
            or f'key destroyed: the payload\'s data key was wrapped by key "{key_name}"{whose}, which the KMS no longer has '
            f"(the KMS said: {kms_message}); its payloads stay unreadable for good, as forgetting a lender intends",
        )
        self.key_name = key_name
        self.tenant = tenant

    @classmethod
    def tenant_key_file_gone(cls, key_id: str, path: str, tenant: str) -> KeyDestroyedError:
        """A tenant's key file (static mode, static_tenant_keys.py) is gone: its lender was forgotten; ``key_name`` is the file."""
        return cls(
            key_id,
            path,
            tenant,
            "key file gone",
            how_gone=f'key destroyed: the payload was sealed with key "{key_id}" of tenant "{tenant}", whose key file {path} is gone; '
            "its payloads stay unreadable for good, as forgetting a lender intends",
        )


class TenantKeyFileError(Exception):
    """A tenant's key file (static mode, PAYLOAD_TENANT_KEYS_DIR) that cannot be used as it is: the operator's to fix.
    The message names the file (and the line) and never holds a key's bytes."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"tenant key file {path}: {problem}")
        self.path = path


class TenantKeyMissingError(Exception):
    """A tenant's payloads cannot be sealed: in static mode with keys per tenant, it has no key file and this
    process may not make one (Temporal is not on this machine)."""

    def __init__(self, tenant: str, path: str) -> None:
        super().__init__(f'tenant "{tenant}" has no payload key: no file {path}; onboard the tenant first (docs/operations.md, "Tenant onboarding")')
        self.tenant = tenant
        self.path = path


class KeyProviderUnavailableError(Exception):
    """The key provider could not be reached or said it cannot serve now (down, sealed, overloaded): retry."""

    retryable = True

    def __init__(self, provider: str, operation: str, detail: str) -> None:
        super().__init__(f"{provider} is unavailable ({operation}): {detail}; no cached key could stand in, so the call fails and is retried")
        self.provider = provider
        self.operation = operation


class KeyProviderRefusedError(Exception):
    """The key provider answered but refused this process (no permission, no such key, bad credentials)."""

    def __init__(self, provider: str, operation: str, status: int, kms_message: str) -> None:
        super().__init__(f"{provider} refused {operation} (HTTP {status}): {kms_message}")
        self.provider = provider
        self.operation = operation
        self.status = status


class KeyDisabledError(KeyProviderRefusedError):
    """The KMS key exists but may not be used now (AWS KMS: disabled, or pending deletion): the operator's to enable again."""

    def __init__(self, provider: str, operation: str, key_name: str, kms_message: str) -> None:
        super().__init__(
            provider,
            operation,
            400,
            f'key "{key_name}" is disabled or pending deletion, so no data key is made or unwrapped with it until it is enabled again ({kms_message})',
        )
        self.key_name = key_name
