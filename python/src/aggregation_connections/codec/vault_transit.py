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
from .errors import KeyProviderRefusedError, KeyVersionRevokedError, PayloadDecryptionError
from .payload_format import EnvelopeMetadata
from .vault_client import VaultClient, errors_of

VAULT_TRANSIT = "vault-transit"
_KEY_ID_PREFIX = f"{VAULT_TRANSIT}:"
# Vault's words when a ciphertext's version is below min_decryption_version.
_REVOKED = re.compile(r"disallowed by policy|too old", re.IGNORECASE)
_WRAPPED = re.compile(r"vault:v([1-9][0-9]{0,9}):[A-Za-z0-9+/]+={0,2}")


def transit_key_id(key: str) -> str:
    """The key id written beside payloads whose data keys transit key ``key`` wrapped."""
    return f"{_KEY_ID_PREFIX}{key}"


@dataclass(frozen=True)
class TransitKey:
    mount: str = "transit"
    key: str = "aggregation-payloads"


class VaultTransit:
    def __init__(self, client: VaultClient, transit: TransitKey) -> None:
        self._client = client
        self._transit = transit
        self._key_id = transit_key_id(transit.key)

    @property
    def key_id(self) -> str:
        return self._key_id

    async def new_data_key(self) -> DataKey:
        key = self._transit.key
        answer = await self._client.post(f"{self._transit.mount}/datakey/plaintext/{quote(key, safe='')}", {"bits": 256}, "datakey")
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
        if answer.status in (400, 200):
            raise PayloadDecryptionError(
                envelope.key_id,
                f"{VAULT_TRANSIT} cannot unwrap the payload's data key (transit key \"{key_name}\", version {envelope.key_version}): {message}",
            )
        raise KeyProviderRefusedError(VAULT_TRANSIT, "decrypt", answer.status, message)

    def _key_name_of(self, envelope: EnvelopeMetadata) -> str:
        """The transit key of a payload's envelope; its metadata must agree with itself."""
        key_id = envelope.key_id
        if not key_id.startswith(_KEY_ID_PREFIX) or key_id == _KEY_ID_PREFIX:
            raise PayloadDecryptionError(
                key_id,
                f'payload\'s data key is wrapped by key id "{key_id}", not by a {VAULT_TRANSIT} key ("{_KEY_ID_PREFIX}<key>"), which this process\'s provider is',
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
