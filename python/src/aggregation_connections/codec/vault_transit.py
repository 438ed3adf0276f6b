"""The vault-transit key provider (src/codec/vault-transit.ts): Vault's or OpenBao's transit engine makes
(``datakey/plaintext/<key>``) and unwraps (``decrypt/<key>``) the data keys of envelope-v1 payloads. The
key id beside a payload is "vault-transit:<key>". A version below the key's min_decryption_version is
KeyVersionRevokedError; any other 400 on decrypt is a payload this KMS cannot unwrap; 401, 403 and 404
are KeyProviderRefusedError."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from urllib.parse import quote

from .envelope_keys import DataKey
from .errors import KeyDestroyedError, KeyProviderRefusedError, KeyVersionRevokedError, PayloadDecryptionError
from .payload_format import EnvelopeMetadata
from .vault_client import VaultClient, errors_of

VAULT_TRANSIT = "vault-transit"
_KEY_ID_PREFIX = f"{VAULT_TRANSIT}:"
# Vault's words when a ciphertext's version is below min_decryption_version.
_REVOKED = re.compile(r"disallowed by policy|too old", re.IGNORECASE)
# Vault's words for a transit key it does not have (a forgotten lender's, destroyed).
_NO_SUCH_KEY = re.compile(r"encryption key not found|key not found|no existing key named", re.IGNORECASE)
_WRAPPED = re.compile(r"vault:v([1-9][0-9]{0,9}):[A-Za-z0-9+/]+={0,2}")


def transit_key_id(key: str) -> str:
    """The key id written beside payloads whose data keys transit key ``key`` wrapped."""
    return f"{_KEY_ID_PREFIX}{key}"


@dataclass(frozen=True)
class TransitKey:
    mount: str = "transit"
    key: str = "aggregation-payloads"


def tenant_transit_key(key: str, tenant: str) -> str:
    """The transit key of one tenant's data keys: the product's key name, ``-tenant-``, the customer id."""
    return f"{key}-tenant-{tenant}"


class VaultTransit:
    def __init__(self, client: VaultClient, transit: TransitKey, tenant: str | None = None) -> None:
        self._client = client
        self._transit = transit
        self._tenant = tenant
        self._key_id = transit_key_id(transit.key)

    @property
    def key_id(self) -> str:
        return self._key_id

    @property
    def tenant(self) -> str | None:
        return self._tenant

    def for_tenant(self, tenant: str) -> VaultTransit:
        return VaultTransit(self._client, TransitKey(self._transit.mount, tenant_transit_key(self._transit.key, tenant)), tenant)

    async def new_data_key(self) -> DataKey:
        key = self._transit.key
        path = f"{self._transit.mount}/datakey/plaintext/{quote(key, safe='')}"
        answer = await self._client.post(path, {"bits": 256}, "datakey")
        # A tenant's first data key: its transit key is made now (the lender's onboarding), then asked again.
        if self._tenant is not None and answer.status == 400 and _NO_SUCH_KEY.search(errors_of(answer, "")):
            refusal = await self._create_tenant_key()
            answer = await self._client.post(path, {"bits": 256}, "datakey")
            if answer.status == 400 and refusal is not None:
                raise refusal
        if answer.status == 403 and self._tenant is not None:
            raise KeyProviderRefusedError(
                VAULT_TRANSIT,
                "datakey",
                answer.status,
                f'{errors_of(answer, "permission denied")}: tenant "{self._tenant}"\'s data keys come from transit key "{key}", and this '
                f'process\'s policy does not allow {self._transit.mount}/datakey/plaintext/<key>-tenant-* (docs/operations.md, "Keys per tenant")',
            )
        if answer.status != 200:
            raise KeyProviderRefusedError(VAULT_TRANSIT, "datakey", answer.status, errors_of(answer, f'no data key from transit key "{key}"'))
        plaintext, ciphertext, key_version = answer.data.get("plaintext"), answer.data.get("ciphertext"), answer.data.get("key_version")
        match = _WRAPPED.fullmatch(ciphertext) if isinstance(ciphertext, str) else None
        if not isinstance(plaintext, str) or match is None or not isinstance(ciphertext, str):
            raise KeyProviderRefusedError(
                VAULT_TRANSIT, "datakey", answer.status, "an answer without data.plaintext and a data.ciphertext of the form vault:v<version>:<base64>"
            )
        version = key_version if isinstance(key_version, int) else int(match.group(1))
        return DataKey(base64.b64decode(plaintext), ciphertext, version)

    async def unwrap(self, envelope: EnvelopeMetadata) -> bytes:
        key_name = self._key_name_of(envelope)
        answer = await self._client.post(f"{self._transit.mount}/decrypt/{quote(key_name, safe='')}", {"ciphertext": envelope.wrapped_key}, "decrypt")
        plaintext = answer.data.get("plaintext")
        if answer.status == 200 and isinstance(plaintext, str):
            return base64.b64decode(plaintext)
        message = errors_of(answer, f"HTTP {answer.status} without a plaintext")
        if answer.status == 400 and _REVOKED.search(message):
            raise KeyVersionRevokedError(envelope.key_id, key_name, envelope.key_version, message)
        if answer.status == 400 and _NO_SUCH_KEY.search(message):
            raise KeyDestroyedError(envelope.key_id, key_name, envelope.tenant, message)
        if answer.status in (400, 200):
            raise PayloadDecryptionError(
                envelope.key_id,
                f'{VAULT_TRANSIT} cannot unwrap the payload\'s data key (transit key "{key_name}", version {envelope.key_version}): {message}',
            )
        raise KeyProviderRefusedError(VAULT_TRANSIT, "decrypt", answer.status, message)

    async def _create_tenant_key(self) -> KeyProviderRefusedError | None:
        """Creates this tenant's transit key (AES-256-GCM, as the product's); the refusal, if Vault refused."""
        key = self._transit.key
        answer = await self._client.post(f"{self._transit.mount}/keys/{quote(key, safe='')}", {"type": "aes256-gcm96"}, "datakey")
        if answer.status in (200, 204):
            return None
        return KeyProviderRefusedError(
            VAULT_TRANSIT,
            "datakey",
            answer.status,
            f'{errors_of(answer, "no reason given")}: tenant "{self._tenant}" has no transit key "{key}" yet, and this process may not create it '
            f'(grant "update" on {self._transit.mount}/keys/+ with allowed_parameters type, or create it when onboarding the lender)',
        )

    def _key_name_of(self, envelope: EnvelopeMetadata) -> str:
        """The transit key of a payload's envelope; its metadata must agree with itself."""
        key_id = envelope.key_id
        if not key_id.startswith(_KEY_ID_PREFIX) or key_id == _KEY_ID_PREFIX:
            raise PayloadDecryptionError(
                key_id,
                f'payload\'s data key is wrapped by key id "{key_id}", not by a {VAULT_TRANSIT} key ("{_KEY_ID_PREFIX}<key>"), '
                "which this process's provider is",
            )
        match = _WRAPPED.fullmatch(envelope.wrapped_key)
        if match is None:
            raise PayloadDecryptionError(key_id, "payload's wrapped data key is not of the form vault:v<version>:<base64>")
        if int(match.group(1)) != envelope.key_version:
            raise PayloadDecryptionError(
                key_id,
                f"payload's metadata disagrees with itself: encryption-key-version {envelope.key_version}, but its wrapped key is of version {match.group(1)}",
            )
        return key_id[len(_KEY_ID_PREFIX) :]
