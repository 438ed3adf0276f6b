"""temporal.toml profiles and Temporal's own variables, read as the TypeScript side reads them
(test/settings/config.test.ts checks the same there): the profile TEMPORAL_CONFIG_FILE and TEMPORAL_PROFILE
name, its TLS, our variables winning setting by setting, the local key decided by the profile's address,
the default file, and every problem named with the same words."""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from aggregation_connections.client import ConnectionsClient, TemporalUnavailableError
from aggregation_connections.settings import ConfigError, client_settings_from_env, encryption_from_env

CLOUD = '[profile.cloud]\naddress = "ns.acct.tmprl.cloud:7233"\nnamespace = "ns.acct"\napi_key = "profile-key"\n[profile.cloud.grpc_meta]\nx-team = "lending"\n'
# Encryption decides by where Temporal is; these tests are about the connection.
OFF = {"PAYLOAD_ENCRYPTION": "off", "HOME": "/nonexistent-home"}


def pem(label: str) -> str:
    return f"-----BEGIN {label}-----\n{secrets.token_hex(12)}\n-----END {label}-----\n"


def config_file(tmp_path: Path, toml: str) -> Path:
    file = tmp_path / "temporal.toml"
    file.write_text(toml)
    return file


def problems_of(env: dict[str, str]) -> str:
    with pytest.raises(ConfigError) as caught:
        client_settings_from_env(env)
    return str(caught.value)


def test_uses_the_profile_temporal_config_file_and_temporal_profile_name(tmp_path: Path) -> None:
    file = config_file(tmp_path, f'[profile.default]\naddress = "elsewhere:7233"\n\n{CLOUD}')
    settings = client_settings_from_env({**OFF, "TEMPORAL_CONFIG_FILE": str(file), "TEMPORAL_PROFILE": "cloud"})
    assert (settings.address, settings.namespace, settings.api_key) == ("ns.acct.tmprl.cloud:7233", "ns.acct", "profile-key")
    assert settings.task_queue == "aggregation-connections", "Temporal has no task queue setting: ours, defaulted"
    assert settings.rpc_metadata == {"x-team": "lending"}
    assert settings.tls is not None, "an API key implies TLS"
    where = f'profile "cloud" of {file}'
    assert settings.from_env_config == {"address": where, "namespace": where, "API key": where, "gRPC metadata": where}
    # Without TEMPORAL_PROFILE: the "default" profile.
    assert client_settings_from_env({**OFF, "TEMPORAL_CONFIG_FILE": str(file)}).address == "elsewhere:7233"
    # Nothing from a profile: our variables and defaults, as before.
    nothing = client_settings_from_env(OFF)
    assert (nothing.address, nothing.from_env_config, nothing.tls) == ("localhost:7233", {}, None)


def test_reads_the_profiles_tls_paths_or_inline_pem_and_temporals_own_tls_variables(tmp_path: Path) -> None:
    ca, crt, key = pem("CERTIFICATE"), pem("CERTIFICATE"), pem("PRIVATE KEY")
    (tmp_path / "ca.pem").write_text(ca)
    (tmp_path / "client-key.pem").write_text(key)
    file = config_file(
        tmp_path,
        f'[profile.mtls]\naddress = "temporal.internal:7233"\n[profile.mtls.tls]\nserver_ca_cert_path = "{tmp_path / "ca.pem"}"\n'
        f'server_name = "temporal.internal"\nclient_cert_data = """{crt}"""\nclient_key_path = "{tmp_path / "client-key.pem"}"\n',
    )
    settings = client_settings_from_env({**OFF, "TEMPORAL_CONFIG_FILE": str(file), "TEMPORAL_PROFILE": "mtls"})
    assert settings.tls is not None
    assert settings.tls.server_name == "temporal.internal"
    assert settings.tls.server_root_ca_cert() == ca.encode()
    assert settings.tls.client_cert_pair() == (crt.encode(), key.encode())
    assert list(settings.from_env_config) == ["address", "TLS", "TLS server name", "server CA certificate", "client certificate"]

    from_vars = client_settings_from_env({**OFF, "TEMPORAL_TLS_SERVER_CA_CERT_PATH": str(tmp_path / "ca.pem"), "TEMPORAL_GRPC_META_X_TEAM": "risk"})
    assert from_vars.tls is not None and from_vars.tls.server_root_ca_cert() == ca.encode()
    assert from_vars.from_env_config["server CA certificate"] == "TEMPORAL_TLS_SERVER_CA_CERT_PATH"
    assert from_vars.rpc_metadata == {"x-team": "risk"}


def test_each_of_our_variables_wins_over_the_profile_where_both_are_set(tmp_path: Path) -> None:
    ours_ca = pem("CERTIFICATE")
    (tmp_path / "ours-ca.pem").write_text(ours_ca)
    file = config_file(tmp_path, f'{CLOUD}[profile.cloud.tls]\nserver_name = "profile.name"\nserver_ca_cert_data = """{pem("CERTIFICATE")}"""\n')
    base = {**OFF, "TEMPORAL_CONFIG_FILE": str(file), "TEMPORAL_PROFILE": "cloud"}
    ours = client_settings_from_env(
        {
            **base,
            "TEMPORAL_ADDRESS": "ours.example:7233",
            "TEMPORAL_NAMESPACE": "ours",
            "TEMPORAL_API_KEY": "our-key",
            "TEMPORAL_TLS_SERVER_NAME": "ours.name",
            "TEMPORAL_TLS_CA_PATH": str(tmp_path / "ours-ca.pem"),
        }
    )
    assert (ours.address, ours.namespace, ours.api_key) == ("ours.example:7233", "ours", "our-key")
    assert ours.tls is not None and ours.tls.server_name == "ours.name" and ours.tls.server_root_ca_cert() == ours_ca.encode()
    assert list(ours.from_env_config) == ["TLS", "gRPC metadata"], "only what ours left unset"
    mixed = client_settings_from_env({**base, "TEMPORAL_NAMESPACE": "ours"})
    assert (mixed.address, mixed.namespace, mixed.api_key) == ("ns.acct.tmprl.cloud:7233", "ours", "profile-key")
    # Our TEMPORAL_TLS=false turns the profile's TLS off, its CA and server name with it.
    off = client_settings_from_env({**base, "TEMPORAL_API_KEY": "k", "TEMPORAL_TLS": "false"})
    assert off.tls is None and off.rpc_metadata == {"x-team": "lending"}
    # A profile's value that ours replaces is not checked: a bad profile address is no problem when ours is set.
    bad = tmp_path / "bad.toml"
    bad.write_text('[profile.default]\naddress = "no port"\n')
    assert client_settings_from_env({**OFF, "TEMPORAL_CONFIG_FILE": str(bad), "TEMPORAL_ADDRESS": "h:7233"}).address == "h:7233"


def test_decides_whether_the_local_key_may_stand_in_by_the_profiles_address(tmp_path: Path) -> None:
    file = config_file(tmp_path, CLOUD)
    with pytest.raises(ConfigError, match=r"PAYLOAD_ENCRYPTION_KEY: is required with Temporal at ns\.acct\.tmprl\.cloud:7233"):
        encryption_from_env({"HOME": "/nonexistent-home", "TEMPORAL_CONFIG_FILE": str(file), "TEMPORAL_PROFILE": "cloud"})
    local = config_file(tmp_path, '[profile.default]\naddress = "127.0.0.1:7233"\n')
    key_file = tmp_path / "payload-encryption.key"
    assert encryption_from_env({"TEMPORAL_CONFIG_FILE": str(local), "PAYLOAD_ENCRYPTION_KEY_FILE": str(key_file)}) is not None
    assert key_file.exists(), "Temporal on this machine: the generated local key stands in"


def test_reads_the_default_file_where_the_temporal_cli_keeps_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "temporalio").mkdir(parents=True)
    (home / ".config" / "temporalio" / "temporal.toml").write_text('[profile.default]\naddress = "from-home:7233"\n')
    assert client_settings_from_env({**OFF, "HOME": str(home)}).address == "from-home:7233"
    xdg = tmp_path / "xdg"
    (xdg / "temporalio").mkdir(parents=True)
    (xdg / "temporalio" / "temporal.toml").write_text('[profile.default]\naddress = "from-xdg:7233"\n')
    assert client_settings_from_env({**OFF, "HOME": str(home), "XDG_CONFIG_HOME": str(xdg)}).address == "from-xdg:7233"
    assert client_settings_from_env({**OFF, "HOME": str(tmp_path / "nobody")}).address == "localhost:7233", "no file there: no profile, no problem"
    empty = config_file(tmp_path, "# nothing yet\n")
    assert client_settings_from_env({**OFF, "TEMPORAL_CONFIG_FILE": str(empty)}).from_env_config == {}


def test_refuses_a_missing_or_malformed_file_an_unknown_profile_and_a_bad_value_naming_each(tmp_path: Path) -> None:
    file = config_file(tmp_path, CLOUD)
    assert problems_of({**OFF, "TEMPORAL_CONFIG_FILE": str(file), "TEMPORAL_PROFILE": "prod"}) == (
        f'invalid configuration:\n  TEMPORAL_PROFILE: no profile "prod" in {file} (its profiles: cloud)'
    )
    assert f"TEMPORAL_CONFIG_FILE: cannot read {tmp_path}/missing.toml (no such file)" in problems_of(
        {**OFF, "TEMPORAL_CONFIG_FILE": str(tmp_path / "missing.toml")}
    )
    assert f"TEMPORAL_CONFIG_FILE: cannot read {tmp_path} (a directory)" in problems_of({**OFF, "TEMPORAL_CONFIG_FILE": str(tmp_path)})
    assert 'TEMPORAL_PROFILE: no profile "cloud": there is no Temporal config file' in problems_of(
        {**OFF, "HOME": str(tmp_path / "nobody"), "TEMPORAL_PROFILE": "cloud"}
    )

    malformed = tmp_path / "malformed.toml"
    malformed.write_text('[profile.cloud\naddress = "x:1"\n')
    assert f"TEMPORAL_CONFIG_FILE: {malformed} is not valid TOML: " in problems_of({**OFF, "TEMPORAL_CONFIG_FILE": str(malformed)})
    assert "(line 1, column" in problems_of({**OFF, "TEMPORAL_CONFIG_FILE": str(malformed)})

    bad = tmp_path / "bad.toml"
    bad.write_text('[profile.default]\naddress = 7233\nnamespace = "x"\n[profile.default.tls]\nserver_name = 3\n')
    message = problems_of({**OFF, "TEMPORAL_CONFIG_FILE": str(bad), "TENANT_WEIGHTS": "x"})
    where = f'profile "default" of {bad}'
    assert f"{where}: address: Invalid input: expected string, received number" in message
    assert f"{where}: tls.server_name: Invalid input: expected string, received number" in message
    assert "TENANT_WEIGHTS: 'x'" in message, "reported with every other problem"

    values = tmp_path / "values.toml"
    values.write_text(
        f'[profile.default]\naddress = "no port"\nnamespace = ""\n[profile.default.tls]\nclient_cert_path = "{tmp_path / "none.pem"}"\n'
        'client_key_data = "not a key"\nserver_name = "not a name"\n'
    )
    message = problems_of({**OFF, "TEMPORAL_CONFIG_FILE": str(values)})
    where = f'profile "default" of {values}'
    for expected in (
        f"{where}: address: must be host:port",
        f"{where}: namespace: must not be empty",
        f"{where}: tls.server_name: must be a host name",
        f"{where}: tls.client_cert_path: cannot read {tmp_path / 'none.pem'} (no such file)",
        f"{where}: tls.client_key_data: is not PEM (no -----BEGIN line)",
    ):
        assert expected in message, f"expected {expected!r} in:\n{message}"


async def test_a_client_that_cannot_reach_the_profiles_address_says_where_it_came_from(tmp_path: Path) -> None:
    file = config_file(tmp_path, '[profile.default]\naddress = "127.0.0.1:1"\n')
    settings = client_settings_from_env({**OFF, "TEMPORAL_CONFIG_FILE": str(file)})
    with pytest.raises(TemporalUnavailableError, match=rf'cannot reach Temporal at 127\.0\.0\.1:1: .*\(address from profile "default" of {file}\)'):
        await ConnectionsClient.connect(settings, codec=None)
