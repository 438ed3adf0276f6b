"""The payload codec's settings, read from the variables the worker reads and parsed as
src/settings/encryption-keys.ts and key-provider.ts parse them: PAYLOAD_ENCRYPTION (auto|off),
PAYLOAD_ENCRYPTION_KEY (+ _KEY_ID), PAYLOAD_DECRYPTION_KEYS, the generated local key file
(PAYLOAD_ENCRYPTION_KEY_FILE, only with Temporal on this machine), PAYLOAD_KEY_PROVIDER=vault-transit
with PAYLOAD_VAULT_* or aws-kms with PAYLOAD_AWS_* (aws_kms.py), PAYLOAD_DATA_KEY_* and PAYLOAD_UNWRAPPED_KEY_*,
and PAYLOAD_TENANT_KEYS_DIR (static mode's key file per tenant; static_tenant_keys.py). Empty values count as unset; every
bad value is one line of a ConfigError naming its variable, as on the TypeScript side.

Where Temporal is decides whether the local key may stand in: TEMPORAL_ADDRESS, else the address of the
temporal.toml profile (temporal_env_config.py), else localhost:7233, as the TypeScript side settles it.
The variables' choices and defaults are the TypeScript side's, generated into contract/names.py.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from ..codec.encryption_codec import EncryptionCodec
from ..codec.envelope_keys import DataKeyCacheSettings
from ..codec.key_provider import AwsKmsEncryption, EncryptionSettings, StaticTenantEncryption, TransitEncryption, key_source_for
from ..codec.key_source import EncryptionKeys
from ..codec.local_key import LocalKeyFileError, read_or_create_local_key
from ..codec.vault_client import AppRoleAuth, TokenAuth, VaultAuth, VaultSettings
from ..codec.vault_transit import VAULT_TRANSIT, TransitKey

# The worker's choices and defaults (src/settings/encryption-keys.ts, kms.ts, temporal.ts), generated into contract/names.py.
from ..contract.names import (
    PAYLOAD_DATA_KEY_LIFETIME_S_DEFAULT,
    PAYLOAD_DATA_KEY_MAX_USES_DEFAULT,
    PAYLOAD_ENCRYPTION_CHOICES,
    PAYLOAD_ENCRYPTION_DEFAULT,
    PAYLOAD_ENCRYPTION_KEY_FILE_DEFAULT,
    PAYLOAD_ENCRYPTION_KEY_ID_DEFAULT,
    PAYLOAD_KEY_BYTES as PAYLOAD_KEY_BYTES,
    PAYLOAD_KEY_PROVIDER_CHOICES,
    PAYLOAD_KEY_PROVIDER_DEFAULT,
    PAYLOAD_KMS_ALLOW_INSECURE_DEFAULT,
    PAYLOAD_TENANT_KEYS_DEFAULT,
    PAYLOAD_UNWRAPPED_KEY_CACHE_SIZE_DEFAULT,
    PAYLOAD_UNWRAPPED_KEY_LIFETIME_S_DEFAULT,
    PAYLOAD_VAULT_APPROLE_MOUNT_DEFAULT,
    PAYLOAD_VAULT_TIMEOUT_MS_DEFAULT,
    PAYLOAD_VAULT_TRANSIT_KEY_DEFAULT,
    PAYLOAD_VAULT_TRANSIT_MOUNT_DEFAULT,
    TEMPORAL_ADDRESS_DEFAULT,
)
from .aws_kms import aws_kms_vars
from .env_reader import EnvReader
from .temporal_env_config import temporal_env_config

_KEY_HINT = "generate one with `openssl rand -base64 32`"
_KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
_KEY_ID_RULE = 'must be 1 to 64 letters, digits, ".", "_" or "-"'
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]+|[A-Za-z0-9_-]+)={0,2}")
_MOUNT = re.compile(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*")
_MOUNT_RULE = 'must be a mount path: letters, digits, ".", "_", "-", segments separated by "/"'
_TRANSIT_KEY = re.compile(r"[A-Za-z0-9._-]{1,128}")
_URL = re.compile(r"https?://[^\s/]+(/\S*)?")
# Not yet in contract/names.py's CLIENT_VARIABLES until it is generated again from the TypeScript client.
_TENANT_KEYS_DIR = "PAYLOAD_TENANT_KEYS_DIR"


class ConfigError(Exception):
    """A bad configuration: one line per problem, each naming its variable."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("invalid configuration:\n  " + "\n  ".join(problems))
        self.problems = tuple(problems)


def is_loopback(address: str) -> bool:
    """Whether Temporal runs on this machine: only then may a generated local key stand in for a real one."""
    host = re.sub(r"^\[(.*)\]$", r"\1", re.sub(r":\d+$", "", address)).lower()
    return host in ("localhost", "::1") or re.fullmatch(r"127\.\d{1,3}\.\d{1,3}\.\d{1,3}", host) is not None


def cleartext_kms_problem(address: str | None) -> str | None:
    """Why a KMS address may not be used in clear (src/settings/kms.ts): http:// only to this machine."""
    if address is None:
        return None
    parsed = urlsplit(address)
    host = parsed.hostname or ""
    if parsed.scheme != "http" or host in ("localhost", "::1") or re.fullmatch(r"127\.\d{1,3}\.\d{1,3}\.\d{1,3}", host):
        return None
    return (
        f"is http:// to {host}, not on this machine: the KMS token and the plaintext data keys would cross the network in clear; "
        "use https:// (PAYLOAD_VAULT_CA_FILE for a private CA), or set PAYLOAD_KMS_ALLOW_INSECURE=true for a lab"
    )


def _decode_key(text: str) -> bytes | str:
    """Standard or URL-safe base64 of exactly 32 bytes → the key, or a message saying what is wrong."""
    if not _BASE64.fullmatch(text):
        return f"must be base64 ({_KEY_HINT})"
    # Node's Buffer.from(text, "base64") reads both alphabets, padded or not.
    unpadded = text.rstrip("=").replace("-", "+").replace("_", "/")
    try:
        key = base64.b64decode(unpadded + "=" * (-len(unpadded) % 4), validate=True)
    except binascii.Error:
        return f"must be base64 ({_KEY_HINT})"
    if len(key) != PAYLOAD_KEY_BYTES:
        return f"must be base64 of exactly {PAYLOAD_KEY_BYTES} bytes, got {len(key)} bytes ({_KEY_HINT})"
    return key


def _decryption_keys(reader: EnvReader, text: str) -> dict[str, bytes]:
    """``id:base64,id:base64``: earlier keys, kept to decrypt what they encrypted."""
    name = "PAYLOAD_DECRYPTION_KEYS"
    keys: dict[str, bytes] = {}
    for index, raw in enumerate(text.split(",")):
        entry = raw.strip()
        if entry == "":
            continue
        key_id, colon, encoded = entry.partition(":")
        key_id = key_id.strip() if colon else ""
        where = f"entry {index + 1}" + (f" (key id {key_id})" if key_id else "")
        if not colon:
            reader.problem(name, f"{where} must be <key id>:<base64 key>")
        elif not _KEY_ID.fullmatch(key_id):
            reader.problem(name, f"{where}: the key id {_KEY_ID_RULE}")
        elif key_id in keys:
            reader.problem(name, f"key id {key_id} appears twice")
        else:
            key = _decode_key(encoded.strip())
            if isinstance(key, str):
                reader.problem(name, f"{where}: the key {key}")
            else:
                keys[key_id] = key
    return keys


def encryption_from_env(env: Mapping[str, str] | None = None) -> EncryptionSettings | None:
    """The codec's settings as the worker reads them, or None when PAYLOAD_ENCRYPTION=off; ConfigError lists every bad variable."""
    reader = EnvReader(os.environ if env is None else env)
    mode = reader.choice("PAYLOAD_ENCRYPTION", PAYLOAD_ENCRYPTION_CHOICES, PAYLOAD_ENCRYPTION_DEFAULT)
    provider = reader.choice("PAYLOAD_KEY_PROVIDER", PAYLOAD_KEY_PROVIDER_CHOICES, PAYLOAD_KEY_PROVIDER_DEFAULT)
    key_file = reader.text("PAYLOAD_ENCRYPTION_KEY_FILE", PAYLOAD_ENCRYPTION_KEY_FILE_DEFAULT) or PAYLOAD_ENCRYPTION_KEY_FILE_DEFAULT
    key_text = reader.text("PAYLOAD_ENCRYPTION_KEY")
    key: bytes | None = None
    if key_text is not None:
        decoded = _decode_key(key_text)
        if isinstance(decoded, str):
            reader.problem("PAYLOAD_ENCRYPTION_KEY", decoded)
        else:
            key = decoded
    key_id = reader.matching("PAYLOAD_ENCRYPTION_KEY_ID", _KEY_ID, _KEY_ID_RULE, PAYLOAD_ENCRYPTION_KEY_ID_DEFAULT) or PAYLOAD_ENCRYPTION_KEY_ID_DEFAULT
    decryption_text = reader.text("PAYLOAD_DECRYPTION_KEYS")
    decryption_keys = _decryption_keys(reader, decryption_text) if decryption_text is not None else {}
    address = reader.text("TEMPORAL_ADDRESS") or _profile_address(reader) or TEMPORAL_ADDRESS_DEFAULT
    transit = _transit_vars(reader, provider, mode)
    aws = aws_kms_vars(reader, provider, mode)
    cache = _cache_vars(reader)
    allow_insecure = reader.flag("PAYLOAD_KMS_ALLOW_INSECURE", PAYLOAD_KMS_ALLOW_INSECURE_DEFAULT)
    tenant_keys = reader.flag("PAYLOAD_TENANT_KEYS", PAYLOAD_TENANT_KEYS_DEFAULT)
    tenant_keys_dir = reader.text(_TENANT_KEYS_DIR)
    if provider != "static" and not allow_insecure:
        for name in ("PAYLOAD_VAULT_ADDR", "PAYLOAD_AWS_KMS_ENDPOINT"):
            problem = cleartext_kms_problem(reader.text(name))
            if problem is not None:
                reader.problem(name, problem)

    if mode == "off" and key_text is not None:
        reader.problem("PAYLOAD_ENCRYPTION", "is off but PAYLOAD_ENCRYPTION_KEY is set: unset one of them")
    if provider == "static" and mode == "auto" and key_text is None and not is_loopback(address):
        reader.problem(
            "PAYLOAD_ENCRYPTION_KEY",
            f"is required with Temporal at {address}, not on this machine: without it bank passwords, MFA answers and holder data "
            f"would be stored there in clear ({_KEY_HINT}; the same key for the worker, clients and console). "
            "PAYLOAD_ENCRYPTION=off stores them in clear on purpose",
        )
    if decryption_keys and key_text is None and provider == "static":
        reader.problem("PAYLOAD_DECRYPTION_KEYS", "needs PAYLOAD_ENCRYPTION_KEY (the current key) as well")
    if key_id in decryption_keys:
        reader.problem("PAYLOAD_DECRYPTION_KEYS", f"key id {key_id} is the current PAYLOAD_ENCRYPTION_KEY_ID; give each key its own id")
    if tenant_keys_dir is not None:
        # A key file per tenant is static mode's keys per tenant: with encryption on and no KMS, and keys per tenant not turned off.
        if provider != "static":
            reader.problem(_TENANT_KEYS_DIR, f"is set but PAYLOAD_KEY_PROVIDER is {provider}: a KMS keeps a key per tenant itself (PAYLOAD_TENANT_KEYS)")
        if mode == "off":
            reader.problem(_TENANT_KEYS_DIR, "is set but PAYLOAD_ENCRYPTION is off: unset one of them")
        if reader.text("PAYLOAD_TENANT_KEYS") is not None and not tenant_keys:
            reader.problem(_TENANT_KEYS_DIR, "is set but PAYLOAD_TENANT_KEYS is false: unset one of them")
    if reader.problems:
        raise ConfigError(reader.problems)
    if mode == "off":
        return None

    configured: EncryptionKeys | None = None
    if key is not None:
        configured = EncryptionKeys(key_id, key, decryption_keys)
    elif provider != "static":
        # A KMS never makes nor reads the local key (the KMS could not revoke it): earlier static
        # payloads read only through keys listed in PAYLOAD_DECRYPTION_KEYS, as the TypeScript settings.
        if decryption_keys:
            first_id, first_key = next(iter(decryption_keys.items()))
            configured = EncryptionKeys(first_id, first_key, decryption_keys)
    elif is_loopback(address):
        try:
            local = read_or_create_local_key(key_file)
        except LocalKeyFileError as error:
            raise ConfigError([f"PAYLOAD_ENCRYPTION_KEY_FILE: {error}"]) from error
        configured = EncryptionKeys(local.key_id, local.key, decryption_keys)
    if transit is not None:
        return TransitEncryption(vault=transit[0], transit=transit[1], cache=cache, static_keys=configured, tenant_keys=tenant_keys)
    if aws is not None:
        return AwsKmsEncryption(aws=aws, cache=cache, static_keys=configured, tenant_keys=tenant_keys)
    assert configured is not None  # static without a key was refused above unless Temporal is local
    if tenant_keys_dir is not None:
        # A tenant's missing key file is made under the same condition as the local key: Temporal on this machine.
        return StaticTenantEncryption(configured, tenant_keys_dir, create_missing_tenant_keys=is_loopback(address))
    return configured


def _profile_address(reader: EnvReader) -> str | None:
    """The temporal.toml profile's address (its problems are the reader's)."""
    env_config = temporal_env_config(reader.env, reader.problems)
    return env_config.address.value if env_config is not None and env_config.address is not None else None


def _cache_vars(reader: EnvReader) -> DataKeyCacheSettings:
    return DataKeyCacheSettings(
        data_key_lifetime_s=reader.count("PAYLOAD_DATA_KEY_LIFETIME_S", 1, PAYLOAD_DATA_KEY_LIFETIME_S_DEFAULT),
        data_key_max_uses=reader.count("PAYLOAD_DATA_KEY_MAX_USES", 1, PAYLOAD_DATA_KEY_MAX_USES_DEFAULT),
        unwrapped_key_lifetime_s=reader.count("PAYLOAD_UNWRAPPED_KEY_LIFETIME_S", 1, PAYLOAD_UNWRAPPED_KEY_LIFETIME_S_DEFAULT),
        unwrapped_key_cache_size=reader.count("PAYLOAD_UNWRAPPED_KEY_CACHE_SIZE", 1, PAYLOAD_UNWRAPPED_KEY_CACHE_SIZE_DEFAULT),
    )


def _transit_vars(reader: EnvReader, provider: str, mode: str) -> tuple[VaultSettings, TransitKey] | None:
    address = reader.matching("PAYLOAD_VAULT_ADDR", _URL, "must be an http(s) URL")
    token = reader.text("PAYLOAD_VAULT_TOKEN")
    role_id = reader.text("PAYLOAD_VAULT_ROLE_ID")
    secret_id = reader.text("PAYLOAD_VAULT_SECRET_ID")
    approle_mount = (
        reader.matching("PAYLOAD_VAULT_APPROLE_MOUNT", _MOUNT, _MOUNT_RULE, PAYLOAD_VAULT_APPROLE_MOUNT_DEFAULT) or PAYLOAD_VAULT_APPROLE_MOUNT_DEFAULT
    )
    namespace = reader.text("PAYLOAD_VAULT_NAMESPACE")
    ca_file = reader.text("PAYLOAD_VAULT_CA_FILE")
    timeout_ms = reader.count("PAYLOAD_VAULT_TIMEOUT_MS", 100, PAYLOAD_VAULT_TIMEOUT_MS_DEFAULT)
    mount = reader.matching("PAYLOAD_VAULT_TRANSIT_MOUNT", _MOUNT, _MOUNT_RULE, PAYLOAD_VAULT_TRANSIT_MOUNT_DEFAULT) or PAYLOAD_VAULT_TRANSIT_MOUNT_DEFAULT
    transit_key = (
        reader.matching(
            "PAYLOAD_VAULT_TRANSIT_KEY",
            _TRANSIT_KEY,
            'must be a transit key name: 1 to 128 letters, digits, ".", "_" or "-"',
            PAYLOAD_VAULT_TRANSIT_KEY_DEFAULT,
        )
        or PAYLOAD_VAULT_TRANSIT_KEY_DEFAULT
    )
    if provider != VAULT_TRANSIT:
        if address:
            reader.problem(
                "PAYLOAD_VAULT_ADDR", f"is set but PAYLOAD_KEY_PROVIDER is {provider}: set PAYLOAD_KEY_PROVIDER={VAULT_TRANSIT} to use it, or unset it"
            )
        return None
    if mode == "off":
        reader.problem("PAYLOAD_ENCRYPTION", f"is off but PAYLOAD_KEY_PROVIDER is {provider}: unset one of them")
    if not address:
        reader.problem("PAYLOAD_VAULT_ADDR", f"is required with PAYLOAD_KEY_PROVIDER={provider}")
    app_role = role_id is not None or secret_id is not None
    auth: VaultAuth | None = None
    if token and app_role:
        reader.problem("PAYLOAD_VAULT_TOKEN", "and AppRole (PAYLOAD_VAULT_ROLE_ID, PAYLOAD_VAULT_SECRET_ID) are both set: choose one auth")
    elif not token and not app_role:
        reader.problem(
            "PAYLOAD_VAULT_TOKEN", f"or AppRole (PAYLOAD_VAULT_ROLE_ID and PAYLOAD_VAULT_SECRET_ID) is required with PAYLOAD_KEY_PROVIDER={provider}"
        )
    elif app_role and not (role_id and secret_id):
        missing = "PAYLOAD_VAULT_SECRET_ID" if role_id else "PAYLOAD_VAULT_ROLE_ID"
        reader.problem(missing, "is required with AppRole auth (both PAYLOAD_VAULT_ROLE_ID and PAYLOAD_VAULT_SECRET_ID)")
    else:
        auth = TokenAuth(token) if token else AppRoleAuth(role_id or "", secret_id or "", approle_mount)
    ca_certificate: str | None = None
    if ca_file is not None:
        try:
            ca_certificate = Path(ca_file).read_text("utf-8")
        except OSError as error:
            reader.problem("PAYLOAD_VAULT_CA_FILE", f"cannot be read: {error}")
        else:
            if "-----BEGIN CERTIFICATE-----" not in ca_certificate:
                reader.problem("PAYLOAD_VAULT_CA_FILE", f"{ca_file} holds no PEM certificate")
    if auth is None or address is None:
        return None
    vault = VaultSettings(address=address, auth=auth, namespace=namespace, ca_certificate=ca_certificate, timeout_s=timeout_ms / 1000)
    return vault, TransitKey(mount=mount, key=transit_key)


def codec_from_env(env: Mapping[str, str] | None = None) -> EncryptionCodec | None:
    """The codec the worker's settings describe (None when PAYLOAD_ENCRYPTION=off): pass it as the client's payload_codec."""
    encryption = encryption_from_env(env)
    return None if encryption is None else EncryptionCodec(key_source_for(encryption))
