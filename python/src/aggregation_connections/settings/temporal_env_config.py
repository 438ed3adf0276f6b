"""Temporal's own environment configuration (a temporal.toml profile and Temporal's TEMPORAL_* variables,
read through temporalio.envconfig), as src/settings/temporal-env-config.ts reads it: what the client's
settings take where our variables are unset.

The file is TEMPORAL_CONFIG_FILE, else the user's config directory (~/.config/temporalio/temporal.toml on
Linux, $XDG_CONFIG_HOME/temporalio/ when set); the profile TEMPORAL_PROFILE, else "default". The five names
both read (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_SERVER_NAME)
are ours: checked by client.py and kept from envconfig (and our TEMPORAL_API_KEY_FILE, when set, keeps the
profile's api_key out as TEMPORAL_API_KEY does), so what it gives comes from the file or from
Temporal's other variables (TEMPORAL_TLS_SERVER_CA_CERT_PATH/_DATA, TEMPORAL_TLS_CLIENT_CERT_PATH/_DATA,
TEMPORAL_TLS_CLIENT_KEY_PATH/_DATA, TEMPORAL_GRPC_META_*). Unlike the SDK, a TEMPORAL_CONFIG_FILE that does
not exist is refused (a mistyped path would quietly connect elsewhere), and every problem of the file or
profile is one line naming it, with the TypeScript side's words."""

from __future__ import annotations

import errno
import os
import re
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from temporalio.envconfig import ClientConfigProfile

T = TypeVar("T")

#: Read by both, with the same meaning: ours (client.py checks them), kept from envconfig.
SHARED_TEMPORAL_VARS = frozenset({"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "TEMPORAL_API_KEY", "TEMPORAL_TLS", "TEMPORAL_TLS_SERVER_NAME"})
_TLS_VARS = tuple(f"TEMPORAL_TLS_{name}_{kind}" for name in ("SERVER_CA_CERT", "CLIENT_CERT", "CLIENT_KEY") for kind in ("PATH", "DATA"))
_GRPC_META_PREFIX = "TEMPORAL_GRPC_META_"
_HOST_PORT = re.compile(r"[^\s:]+:\d+")
_HOST_NAME = re.compile(r"[A-Za-z0-9.-]+")
_FALSE = ("false", "0", "no", "off")


@dataclass(frozen=True)
class FromEnvConfig(Generic[T]):
    """A setting Temporal's environment configuration gave, and where: `profile "x" of <file>` or a variable."""

    value: T
    source: str


@dataclass(frozen=True)
class TemporalEnvConfig:
    """The settings of Temporal's environment configuration that apply: each None when it has none or ours is set."""

    address: FromEnvConfig[str] | None = None
    namespace: FromEnvConfig[str] | None = None
    api_key: FromEnvConfig[str] | None = None
    #: False: the profile's `tls.disabled = true`; True: it has TLS settings.
    tls: FromEnvConfig[bool] | None = None
    server_name: FromEnvConfig[str] | None = None
    server_ca: FromEnvConfig[bytes] | None = None
    client_cert: FromEnvConfig[bytes] | None = None
    client_key: FromEnvConfig[bytes] | None = None
    metadata: FromEnvConfig[Mapping[str, str]] | None = None

    def sources(self) -> dict[str, str]:
        """Which settings came from it and where from, named as the worker's start-up line names them."""
        named = {
            "address": self.address,
            "namespace": self.namespace,
            "API key": self.api_key,
            "TLS": self.tls,
            "TLS server name": self.server_name,
            "server CA certificate": self.server_ca,
            "client certificate": self.client_cert,
            "gRPC metadata": self.metadata,
        }
        return {setting: given.source for setting, given in named.items() if given is not None}


def cannot_read(path: str, error: OSError) -> str:
    """Why a file could not be read, in words."""
    reason = {errno.ENOENT: "no such file", errno.EACCES: "permission denied", errno.EISDIR: "a directory"}.get(error.errno or 0)
    return f"cannot read {path} ({reason or error.strerror or error})"


def default_config_file(env: Mapping[str, str]) -> str | None:
    """Where the temporal CLI keeps temporal.toml when TEMPORAL_CONFIG_FILE is unset (envconfig's rule)."""
    if sys.platform == "win32":
        directory = env.get("APPDATA")
    elif sys.platform == "darwin":
        directory = str(Path(env["HOME"]) / "Library" / "Application Support") if env.get("HOME") else None
    elif env.get("XDG_CONFIG_HOME"):
        directory = env["XDG_CONFIG_HOME"] if os.path.isabs(env["XDG_CONFIG_HOME"]) else None
    else:
        directory = str(Path(env["HOME"]) / ".config") if env.get("HOME") else None
    return str(Path(directory) / "temporalio" / "temporal.toml") if directory else None


def _received(value: object) -> str:
    """A TOML value's kind, in the words zod uses on the TypeScript side."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


class _Problems:
    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        self.ok = True

    def add(self, label: str, message: str) -> None:
        self.ok = False
        self.problems.append(f"{label}: {message}")


def _check_types(profile: Mapping[str, Any], where: str, problems: _Problems) -> None:
    """What envconfig's loader would refuse with a TOML error, named by profile and key instead."""
    expected_string = [("address", profile.get("address")), ("namespace", profile.get("namespace")), ("api_key", profile.get("api_key"))]
    tls = profile.get("tls")
    if tls is not None and not isinstance(tls, dict):
        problems.add(f"{where}: tls", f"Invalid input: expected object, received {_received(tls)}")
    elif isinstance(tls, dict):
        if "disabled" in tls and not isinstance(tls["disabled"], bool):
            problems.add(f"{where}: tls.disabled", "must be true or false")
        for key in ("server_name", *(f"{name}_{kind}" for name in ("server_ca_cert", "client_cert", "client_key") for kind in ("path", "data"))):
            expected_string.append((f"tls.{key}", tls.get(key)))
    meta = profile.get("grpc_meta")
    if meta is not None and not isinstance(meta, dict):
        problems.add(f"{where}: grpc_meta", f"Invalid input: expected record, received {_received(meta)}")
    elif isinstance(meta, dict):
        expected_string += [(f"grpc_meta.{name}", value) for name, value in meta.items()]
    for key, value in expected_string:
        if value is not None and not isinstance(value, str):
            problems.add(f"{where}: {key}", f"Invalid input: expected string, received {_received(value)}")


def temporal_env_config(env: Mapping[str, str], problem_list: list[str]) -> TemporalEnvConfig | None:
    """Reads Temporal's environment configuration from ``env`` for the settings whose variable of ours is
    unset; None after adding a line to ``problem_list`` for each thing wrong with it."""
    problems = _Problems(problem_list)
    ours = {name: value.strip() for name, value in env.items() if name in SHARED_TEMPORAL_VARS and value.strip() != ""}
    variables = {name: value for name, value in env.items() if name not in SHARED_TEMPORAL_VARS and value != ""}

    named = variables.get("TEMPORAL_CONFIG_FILE", "").strip() or None
    file = named or default_config_file(variables)
    file_label = "TEMPORAL_CONFIG_FILE" if named else f"Temporal config file {file} (TEMPORAL_CONFIG_FILE unset)"
    data: bytes | None = None
    if file is not None:
        try:
            data = Path(file).read_bytes()
        except OSError as error:
            # No file where the CLI would look is the usual case; one named on purpose must exist.
            if named or error.errno != errno.ENOENT:
                problems.add(file_label, cannot_read(file, error))
            if named:
                return None
    profile_name = variables.get("TEMPORAL_PROFILE", "").strip() or None
    if profile_name and data is None:
        if problems.ok:
            unset = f"TEMPORAL_CONFIG_FILE is unset{f' and {file} does not exist' if file else ''}"
            problems.add("TEMPORAL_PROFILE", f'no profile "{profile_name}": there is no Temporal config file ({unset})')
        return None
    if not problems.ok:
        return None

    where = "Temporal's variables" if data is None else f'profile "{profile_name or "default"}" of {file}'
    raw_profile: Mapping[str, Any] = {}
    if data is not None:
        try:
            document = tomllib.loads(data.decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            message = str(error)
            position = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
            what = message[: position.start()] if position else message
            at = f" (line {position.group(1)}, column {position.group(2)})" if position else ""
            problems.add(file_label, f"{file} is not valid TOML: {what}{at}")
            return None
        profiles = document.get("profile")
        profiles = profiles if isinstance(profiles, dict) else {}
        if profile_name and profile_name not in profiles:
            names = f"its profiles: {', '.join(profiles)}" if profiles else "it has no profiles"
            problems.add("TEMPORAL_PROFILE", f'no profile "{profile_name}" in {file} ({names})')
            return None
        chosen = profiles.get(profile_name or "default")
        raw_profile = chosen if isinstance(chosen, dict) else {}
        _check_types(raw_profile, where, problems)
        if not problems.ok:
            return None

    # The file only when its profile has something (envconfig refuses what was checked above otherwise).
    from_file = data is not None and bool(raw_profile)
    try:
        loaded = ClientConfigProfile.load(
            profile=profile_name if from_file else None,
            config_source=data if from_file else None,
            disable_file=not from_file,
            override_env_vars={name: value for name, value in variables.items() if name not in ("TEMPORAL_CONFIG_FILE", "TEMPORAL_PROFILE")},
        )
    except Exception as error:  # envconfig's own refusals (a Temporal variable it cannot read), named
        problems.add(where, str(error).splitlines()[0])
        return None

    def take(value: str | None, key: str, pattern: re.Pattern[str] | None, rule: str) -> FromEnvConfig[str] | None:
        if value is None:
            return None
        text = value.strip()
        if text == "" or (pattern is not None and not pattern.fullmatch(text)):
            problems.add(f"{where}: {key}", rule)
            return None
        return FromEnvConfig(text, where)

    def pem(source: Path | str | bytes | None, key: str, env_var: str) -> FromEnvConfig[bytes] | None:
        """A PEM the profile names (a path or inline data), read now so a bad one stops start-up like ours."""
        if source is None:
            return None
        via_path = isinstance(source, Path)
        from_var = f"{env_var}_{'PATH' if via_path else 'DATA'}"
        label = from_var if from_var in variables else f"{where}: {key}_{'path' if via_path else 'data'}"
        subject = "is"
        if isinstance(source, Path):
            subject = f"{source} is"
            try:
                content = source.read_bytes()
            except OSError as error:
                problems.add(label, cannot_read(str(source), error))
                return None
        else:
            content = source.encode() if isinstance(source, str) else source
        if b"-----BEGIN " not in content:
            problems.add(label, f"{subject} not PEM (no -----BEGIN line)")
            return None
        return FromEnvConfig(content, from_var if label == from_var else where)

    tls = loaded.tls
    our_tls_off = ours.get("TEMPORAL_TLS", "").lower() in _FALSE
    # Our TEMPORAL_TLS=false turns the profile's TLS off, its CA, name and certificate with it.
    tls_applies = tls is not None and tls.disabled is not True and not our_tls_off
    tls_vars = [name for name in _TLS_VARS if name in variables]
    tls_from = ", ".join([*([] if data is None else [where]), *tls_vars]) or where
    cert_applies = tls is not None and tls_applies and not env.get("TEMPORAL_TLS_CERT_PATH", "").strip()
    client_cert = pem(tls.client_cert, "tls.client_cert", "TEMPORAL_TLS_CLIENT_CERT") if cert_applies and tls else None
    client_key = pem(tls.client_private_key, "tls.client_key", "TEMPORAL_TLS_CLIENT_KEY") if cert_applies and tls else None
    if cert_applies and tls and (tls.client_cert is None) != (tls.client_private_key is None):
        problems.add(
            f"{where}: tls",
            "a client certificate and its key go together (client_cert_* and client_key_*; TEMPORAL_TLS_CLIENT_CERT_* and TEMPORAL_TLS_CLIENT_KEY_*)",
        )
    meta_from = (
        ", ".join([*([] if data is None else [where]), *([f"{_GRPC_META_PREFIX}*"] if any(name.startswith(_GRPC_META_PREFIX) for name in variables) else [])])
        or where
    )
    config = TemporalEnvConfig(
        address=take(loaded.address, "address", _HOST_PORT, "must be host:port") if "TEMPORAL_ADDRESS" not in ours else None,
        namespace=take(loaded.namespace, "namespace", None, "must not be empty") if "TEMPORAL_NAMESPACE" not in ours else None,
        # Our TEMPORAL_API_KEY_FILE wins over the profile's api_key as TEMPORAL_API_KEY does.
        api_key=take(loaded.api_key, "api_key", None, "must not be empty")
        if "TEMPORAL_API_KEY" not in ours and not env.get("TEMPORAL_API_KEY_FILE", "").strip()
        else None,
        tls=FromEnvConfig(tls.disabled is not True, where if tls.disabled is True else tls_from) if tls is not None and "TEMPORAL_TLS" not in ours else None,
        server_name=take(tls.server_name, "tls.server_name", _HOST_NAME, "must be a host name")
        if tls and tls_applies and "TEMPORAL_TLS_SERVER_NAME" not in ours
        else None,
        server_ca=pem(tls.server_root_ca_cert, "tls.server_ca_cert", "TEMPORAL_TLS_SERVER_CA_CERT")
        if tls and tls_applies and not env.get("TEMPORAL_TLS_CA_PATH", "").strip()
        else None,
        client_cert=client_cert if client_cert and client_key else None,
        client_key=client_key if client_cert and client_key else None,
        metadata=FromEnvConfig(dict(loaded.grpc_meta), meta_from) if loaded.grpc_meta else None,
    )
    return config if problems.ok else None
