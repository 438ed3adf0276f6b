"""The pipeline client's settings, read from the variables the TypeScript client reads
(src/settings/temporal.ts and src/settings/fleet-sharing.ts): TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
TEMPORAL_TASK_QUEUE, TEMPORAL_API_KEY or TEMPORAL_API_KEY_FILE (+ TEMPORAL_API_KEY_FILE_RECHECK_MS), TEMPORAL_TLS, TEMPORAL_TLS_CA_PATH,
TEMPORAL_TLS_SERVER_NAME, TEMPORAL_TLS_CERT_PATH + TEMPORAL_TLS_KEY_PATH, AGGREGATOR_CUSTOMER_ID, PRIORITY_LIVE, PRIORITY_PIPELINE, PRIORITY_SCHEDULED,
PRIORITY_MAINTENANCE, TENANT_WEIGHTS and TEMPORAL_CLIENT_IDENTITY. Empty values count as unset; every bad value is one line of a ConfigError.

Setting by setting, ours where set, else Temporal's environment configuration (a temporal.toml profile,
TEMPORAL_CONFIG_FILE and TEMPORAL_PROFILE, and Temporal's TEMPORAL_TLS_*_PATH/_DATA and
TEMPORAL_GRPC_META_* variables; temporal_env_config.py), else the TypeScript side's defaults. The task
queue is always ours.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

# The TypeScript side's names and defaults (src/contract/priority.ts, src/settings/), generated into
# contract/names.py; the priority's re-exported (`X as X`): who waits decides the order (a key per
# class, 1 first), and the bounds of a tenant's fairness weight.
from ..contract.names import (
    AGGREGATOR_CUSTOMER_ID_DEFAULT,
    DEFAULT_PRIORITY_KEYS as DEFAULT_PRIORITY_KEYS,
    FAIRNESS_WEIGHT_MAX as FAIRNESS_WEIGHT_MAX,
    FAIRNESS_WEIGHT_MIN as FAIRNESS_WEIGHT_MIN,
    PRIORITY_KEY_MAX,
    PRIORITY_KEY_MIN,
    TEMPORAL_ADDRESS_DEFAULT,
    TEMPORAL_API_KEY_FILE_RECHECK_MS_DEFAULT,
    TEMPORAL_NAMESPACE_DEFAULT,
    TEMPORAL_TASK_QUEUE_DEFAULT,
)
from .api_key_file import RECHECK_MS_MIN, ApiKeyFileSettings, TemporalApiKeyFileError, read_api_key_file
from .encryption import ConfigError
from .temporal_env_config import TemporalEnvConfig, temporal_env_config

# The defaults by the names this module has always offered.
DEFAULT_ADDRESS = TEMPORAL_ADDRESS_DEFAULT
DEFAULT_NAMESPACE = TEMPORAL_NAMESPACE_DEFAULT
DEFAULT_TASK_QUEUE = TEMPORAL_TASK_QUEUE_DEFAULT
DEFAULT_CUSTOMER_ID = AGGREGATOR_CUSTOMER_ID_DEFAULT
_PRIORITY_KEY_RULE = f"must be an integer from {PRIORITY_KEY_MIN} (first) to {PRIORITY_KEY_MAX} (last)"
_HOST_PORT = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}")
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


@dataclass(frozen=True)
class TlsSettings:
    """TLS to Temporal: the server's CA and name, a client certificate pair (paths of PEM files, ours;
    or the PEM itself, a temporal.toml profile's, read at start)."""

    ca_path: Path | None = None
    server_name: str | None = None
    cert_path: Path | None = None
    key_path: Path | None = None
    ca_pem: bytes | None = field(default=None, repr=False)
    cert_pem: bytes | None = field(default=None, repr=False)
    key_pem: bytes | None = field(default=None, repr=False)

    def server_root_ca_cert(self) -> bytes | None:
        return self.ca_path.read_bytes() if self.ca_path else self.ca_pem

    def client_cert_pair(self) -> tuple[bytes, bytes] | None:
        if self.cert_path and self.key_path:
            return self.cert_path.read_bytes(), self.key_path.read_bytes()
        return (self.cert_pem, self.key_pem) if self.cert_pem and self.key_pem else None


@dataclass(frozen=True)
class PriorityPolicy:
    """Priority keys by who waits (live, pipeline, scheduled) and the tenants' fairness weights."""

    keys: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_PRIORITY_KEYS))
    tenant_weights: Mapping[str, float] = field(default_factory=dict)

    def weight_of(self, customer_id: str) -> float:
        return self.tenant_weights.get(customer_id, self.tenant_weights.get("*", 1.0))


@dataclass(frozen=True)
class ClientSettings:
    address: str = DEFAULT_ADDRESS
    namespace: str = DEFAULT_NAMESPACE
    task_queue: str = DEFAULT_TASK_QUEUE
    #: The tenant new connections belong to unless told otherwise (AGGREGATOR_CUSTOMER_ID).
    customer_id: str = DEFAULT_CUSTOMER_ID
    #: The token (TEMPORAL_API_KEY, else TEMPORAL_API_KEY_FILE's at start, else a profile's api_key); never in the repr.
    api_key: str | None = field(default=None, repr=False)
    #: TEMPORAL_API_KEY_FILE: read again as the client connects and every ``recheck_ms`` while it is open (None: no file).
    api_key_file: ApiKeyFileSettings | None = None
    #: None: plain TCP; a TlsSettings (maybe empty: the system's CAs) for TLS.
    tls: TlsSettings | None = None
    priority: PriorityPolicy = field(default_factory=PriorityPolicy)
    #: gRPC metadata sent with every call (a profile's [grpc_meta], TEMPORAL_GRPC_META_*).
    rpc_metadata: Mapping[str, str] = field(default_factory=dict)
    #: Which settings Temporal's environment configuration gave, and where from (empty: none).
    from_env_config: Mapping[str, str] = field(default_factory=dict)
    #: The identity this client's requests carry into Temporal's histories (TEMPORAL_CLIENT_IDENTITY); None: the SDK's.
    identity: str | None = None


def client_settings_from_env(env: Mapping[str, str] | None = None) -> ClientSettings:
    """The client's settings from the environment (or `env`); a ConfigError names every bad variable."""
    source = os.environ if env is None else env
    problems: list[str] = []

    def get(name: str) -> str | None:
        value = source.get(name, "").strip()
        return value or None

    if (ours := get("TEMPORAL_ADDRESS")) is not None and not _HOST_PORT.fullmatch(ours):
        problems.append(f"TEMPORAL_ADDRESS: must be host:port, got {ours!r}")
    # None after its problems were added: they are reported with the others below.
    env_config = temporal_env_config(source, problems) or TemporalEnvConfig()
    tls_flag: bool | None = None
    if (text := get("TEMPORAL_TLS")) is not None:
        if text.lower() in _TRUE:
            tls_flag = True
        elif text.lower() in _FALSE:
            tls_flag = False
        else:
            problems.append(f"TEMPORAL_TLS: must be true or false, got {text!r}")
    paths: dict[str, Path | None] = {}
    for name in ("TEMPORAL_TLS_CA_PATH", "TEMPORAL_TLS_CERT_PATH", "TEMPORAL_TLS_KEY_PATH"):
        value = get(name)
        paths[name] = Path(value) if value else None
        if value is not None:
            try:
                if "-----BEGIN " not in Path(value).read_text("utf-8"):
                    problems.append(f"{name}: {value} is not a PEM file (no -----BEGIN line)")
            except OSError as error:
                problems.append(f"{name}: cannot read {value}: {error.strerror}")
    if (paths["TEMPORAL_TLS_CERT_PATH"] is None) != (paths["TEMPORAL_TLS_KEY_PATH"] is None):
        problems.append("TEMPORAL_TLS_CERT_PATH: TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH go together")
    server_name = get("TEMPORAL_TLS_SERVER_NAME") or (env_config.server_name.value if env_config.server_name else None)
    tls_settings = TlsSettings(
        paths["TEMPORAL_TLS_CA_PATH"],
        server_name,
        paths["TEMPORAL_TLS_CERT_PATH"],
        paths["TEMPORAL_TLS_KEY_PATH"],
        ca_pem=env_config.server_ca.value if env_config.server_ca else None,
        cert_pem=env_config.client_cert.value if env_config.client_cert else None,
        key_pem=env_config.client_key.value if env_config.client_key else None,
    )
    implied = any(value is not None for value in (*paths.values(), server_name, tls_settings.ca_pem, tls_settings.cert_pem))
    api_key_file = _api_key_file(get, problems)
    if api_key_file is not None:
        # The file wins over a profile's api_key, as TEMPORAL_API_KEY does (temporal_env_config.py leaves it out).
        api_key: str | None = api_key_file[1]
    else:
        api_key = get("TEMPORAL_API_KEY") or (env_config.api_key.value if env_config.api_key else None)
    if tls_flag is None and env_config.tls is not None:
        tls_flag = env_config.tls.value
    # As the SDKs do: an API key implies TLS unless TLS is turned off explicitly (ours, or a profile's tls.disabled).
    use_tls = implied or (tls_flag if tls_flag is not None else api_key is not None)

    keys = dict(DEFAULT_PRIORITY_KEYS)
    for priority_class in keys:
        name = f"PRIORITY_{priority_class.upper()}"
        if (text := get(name)) is not None:
            if re.fullmatch(r"[0-9]+", text) and PRIORITY_KEY_MIN <= int(text) <= PRIORITY_KEY_MAX:
                keys[priority_class] = int(text)
            else:
                problems.append(f"{name}: {_PRIORITY_KEY_RULE}, got {text!r}")
    weights: dict[str, float] = {}
    if (text := get("TENANT_WEIGHTS")) is not None:
        for entry in (part.strip() for part in text.split(",")):
            match = re.fullmatch(r"([^:\s]+):([0-9]+(?:\.[0-9]+)?)", entry)
            weight = float(match.group(2)) if match else 0.0
            if match is None or not FAIRNESS_WEIGHT_MIN <= weight <= FAIRNESS_WEIGHT_MAX:
                problems.append(
                    f"TENANT_WEIGHTS: {entry!r}: must be a comma-separated list of <customerId>:<weight> (or *:<weight> for every other tenant), "
                    f"weights from {FAIRNESS_WEIGHT_MIN} to {FAIRNESS_WEIGHT_MAX:g}"
                )
            else:
                weights[match.group(1)] = weight
    identity = get("TEMPORAL_CLIENT_IDENTITY")
    if identity is not None and len(identity) > 255:
        problems.append(f"TEMPORAL_CLIENT_IDENTITY: must be at most 255 characters, got {len(identity)}")
    if problems:
        raise ConfigError(problems)
    return ClientSettings(
        address=get("TEMPORAL_ADDRESS") or (env_config.address.value if env_config.address else DEFAULT_ADDRESS),
        namespace=get("TEMPORAL_NAMESPACE") or (env_config.namespace.value if env_config.namespace else DEFAULT_NAMESPACE),
        task_queue=get("TEMPORAL_TASK_QUEUE") or DEFAULT_TASK_QUEUE,
        customer_id=get("AGGREGATOR_CUSTOMER_ID") or DEFAULT_CUSTOMER_ID,
        api_key=api_key,
        api_key_file=api_key_file[0] if api_key_file else None,
        tls=tls_settings if use_tls else None,
        priority=PriorityPolicy(keys, weights),
        rpc_metadata=dict(env_config.metadata.value) if env_config.metadata else {},
        from_env_config=env_config.sources(),
        identity=identity,
    )


def _api_key_file(get: Callable[[str], str | None], problems: list[str]) -> tuple[ApiKeyFileSettings, str | None] | None:
    """TEMPORAL_API_KEY_FILE with its recheck and the token it holds now (None after its problem was added);
    None when it is unset. Not with TEMPORAL_API_KEY, and a file with no token at start is refused, naming it
    (src/settings/temporal.ts's checkApiKey, in its words)."""
    recheck_ms = TEMPORAL_API_KEY_FILE_RECHECK_MS_DEFAULT
    if (text := get("TEMPORAL_API_KEY_FILE_RECHECK_MS")) is not None:
        if re.fullmatch(r"[0-9]+", text) and int(text) >= RECHECK_MS_MIN:
            recheck_ms = int(text)
        else:
            problems.append(f"TEMPORAL_API_KEY_FILE_RECHECK_MS: must be a whole number, at least {RECHECK_MS_MIN}")
    path = get("TEMPORAL_API_KEY_FILE")
    if path is None:
        return None
    if get("TEMPORAL_API_KEY") is not None:
        problems.append(
            "TEMPORAL_API_KEY_FILE: TEMPORAL_API_KEY and TEMPORAL_API_KEY_FILE are both set: give the token one way (the file when a sidecar renews it)"
        )
        return None
    try:
        token: str | None = read_api_key_file(path)
    except TemporalApiKeyFileError as error:
        problems.append(f"TEMPORAL_API_KEY_FILE: {error.reason}")
        token = None
    return ApiKeyFileSettings(Path(path), recheck_ms), token
