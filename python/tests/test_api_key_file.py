"""TEMPORAL_API_KEY_FILE, as the TypeScript side reads and renews it (test/temporal/api-key-file.test.ts there):
the settings' refusals in its words (both variables, a missing, empty or malformed file, a recheck under
100), the file winning over a profile's api_key; the renewal on its own with holders that record what
they are given, and on a real (lazily connected) temporalio Client: a renewed token reaches every holder
once, a file that turns empty, malformed or missing keeps the last token, said once, and its recovery is
said; nothing logged holds a token. The renewal on a client connected to the dev server:
tests/e2e/test_api_key_file_e2e.py."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from pathlib import Path

import pytest
import temporalio.client

from aggregation_connections.client import ConnectionsClient, TemporalUnavailableError
from aggregation_connections.client.api_key_file import ApiKeyFileWatch, watch_api_key_file
from aggregation_connections.contract.names import TEMPORAL_API_KEY_FILE_RECHECK_MS_DEFAULT
from aggregation_connections.settings import ApiKeyFileSettings, ConfigError, TemporalApiKeyFileError, client_settings_from_env
from aggregation_connections.settings.api_key_file import read_api_key_file

# Encryption decides by where Temporal is, and no temporal.toml of this machine's user: these tests are about the token.
BASE = {"PAYLOAD_ENCRYPTION": "off", "HOME": "/nonexistent-home"}
LOGGER = "aggregation_connections.client.api_key_file"


def token_file(tmp_path: Path, content: str) -> Path:
    path = tmp_path / "token"
    path.write_text(content)
    return path


def rewrite(path: Path, content: str) -> None:
    """As a sidecar writes it: a new file renamed over the old."""
    following = path.with_name(path.name + ".next")
    following.write_text(content)
    os.replace(following, path)


def problems_of(env: dict[str, str]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        client_settings_from_env({**BASE, **env})
    return list(caught.value.problems)


class Holder:
    """What the renewal sets the token on, recording each token it is given (temporalio's Client has the same `api_key`)."""

    def __init__(self, api_key: str | None = None, refuse: bool = False) -> None:
        self._api_key = api_key
        self.given: list[str | None] = []
        self.refuse = refuse

    @property
    def api_key(self) -> str | None:
        return self._api_key

    @api_key.setter
    def api_key(self, value: str | None) -> None:
        if self.refuse:
            raise RuntimeError(f"metadata refused: {value}")
        self.given.append(value)
        self._api_key = value


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [f"{record.levelname}: {record.getMessage()}" for record in caplog.records if record.name == LOGGER]


async def wait_for(condition: object, what: str, timeout_s: float = 10.0) -> None:
    """Polls `condition` (a callable) until it holds, or fails naming `what`."""
    assert callable(condition)
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


def settings_of(path: Path, recheck_ms: int = 60_000) -> ApiKeyFileSettings:
    return ApiKeyFileSettings(path, recheck_ms)


# --- settings -------------------------------------------------------------------------------------------


def test_reads_the_token_of_the_file_at_start_with_its_recheck(tmp_path: Path) -> None:
    path = token_file(tmp_path, " token-1 \n")
    settings = client_settings_from_env({**BASE, "TEMPORAL_API_KEY_FILE": str(path)})
    assert settings.api_key == "token-1"
    assert settings.api_key_file == ApiKeyFileSettings(path, TEMPORAL_API_KEY_FILE_RECHECK_MS_DEFAULT)
    assert TEMPORAL_API_KEY_FILE_RECHECK_MS_DEFAULT == 10_000
    # A token implies TLS, as TEMPORAL_API_KEY's does; TEMPORAL_TLS=false turns it off.
    assert settings.tls is not None
    assert client_settings_from_env({**BASE, "TEMPORAL_API_KEY_FILE": str(path), "TEMPORAL_TLS": "false"}).tls is None
    assert client_settings_from_env({**BASE, "TEMPORAL_API_KEY_FILE": str(path), "TEMPORAL_API_KEY_FILE_RECHECK_MS": "100"}).api_key_file == ApiKeyFileSettings(
        path, 100
    )
    assert "token-1" not in repr(settings), "the settings' repr holds no token"
    assert client_settings_from_env({**BASE, "TEMPORAL_API_KEY": "k"}).api_key_file is None


def test_refuses_both_variables_naming_both(tmp_path: Path) -> None:
    path = token_file(tmp_path, "token-1")
    assert problems_of({"TEMPORAL_API_KEY": "key-1", "TEMPORAL_API_KEY_FILE": str(path)}) == [
        "TEMPORAL_API_KEY_FILE: TEMPORAL_API_KEY and TEMPORAL_API_KEY_FILE are both set: give the token one way (the file when a sidecar renews it)"
    ]


def test_refuses_a_missing_empty_or_malformed_file_naming_the_path_never_the_content(tmp_path: Path) -> None:
    missing = tmp_path / "absent"
    assert problems_of({"TEMPORAL_API_KEY_FILE": str(missing)}) == [f"TEMPORAL_API_KEY_FILE: cannot read {missing} (no such file)"]
    assert problems_of({"TEMPORAL_API_KEY_FILE": str(tmp_path)}) == [f"TEMPORAL_API_KEY_FILE: cannot read {tmp_path} (a directory)"]
    empty = token_file(tmp_path, " \n")
    assert problems_of({"TEMPORAL_API_KEY_FILE": str(empty)}) == [f"TEMPORAL_API_KEY_FILE: {empty} is empty"]
    rewrite(empty, "secret-half\nsecret-other-half\n")
    [malformed] = problems_of({"TEMPORAL_API_KEY_FILE": str(empty)})
    assert malformed == f"TEMPORAL_API_KEY_FILE: {empty} does not hold one token (it has spaces, line breaks or characters outside printable ASCII inside)"
    rewrite(empty, "caf\u00e9-token")
    [not_ascii] = problems_of({"TEMPORAL_API_KEY_FILE": str(empty)})
    assert "does not hold one token" in not_ascii and "caf" not in not_ascii.replace(str(empty), "")
    with pytest.raises(TemporalApiKeyFileError) as caught:
        read_api_key_file(empty)
    assert str(caught.value).startswith("TEMPORAL_API_KEY_FILE: ") and caught.value.path == str(empty) and "caf\u00e9" not in str(caught.value)


def test_refuses_a_recheck_under_100_ms_or_not_a_whole_number(tmp_path: Path) -> None:
    path = token_file(tmp_path, "token-1")
    for text in ("99", "0", "1.5", "soon"):
        assert problems_of({"TEMPORAL_API_KEY_FILE": str(path), "TEMPORAL_API_KEY_FILE_RECHECK_MS": text}) == [
            "TEMPORAL_API_KEY_FILE_RECHECK_MS: must be a whole number, at least 100"
        ], text


def test_the_file_wins_over_a_profiles_api_key_as_temporal_api_key_does(tmp_path: Path) -> None:
    profile = tmp_path / "temporal.toml"
    profile.write_text('[profile.default]\naddress = "ns.acct.tmprl.cloud:7233"\napi_key = "profile-key"\n')
    path = token_file(tmp_path, "file-token")
    with_profile = {"TEMPORAL_CONFIG_FILE": str(profile)}
    assert client_settings_from_env({**BASE, **with_profile}).api_key == "profile-key"
    settings = client_settings_from_env({**BASE, **with_profile, "TEMPORAL_API_KEY_FILE": str(path)})
    assert (settings.address, settings.api_key) == ("ns.acct.tmprl.cloud:7233", "file-token")
    assert list(settings.from_env_config) == ["address"], "the profile's API key is not among what it gave"


async def test_connect_reads_the_file_again_and_names_it_when_it_no_longer_holds_a_token(tmp_path: Path) -> None:
    path = token_file(tmp_path, "token-1")
    settings = client_settings_from_env({**BASE, "TEMPORAL_API_KEY_FILE": str(path), "TEMPORAL_ADDRESS": "127.0.0.1:1"})
    path.unlink()
    with pytest.raises(TemporalUnavailableError) as caught:
        await ConnectionsClient.connect(settings, codec=None, external_storage=None)
    assert str(caught.value) == f"cannot connect to Temporal at 127.0.0.1:1: TEMPORAL_API_KEY_FILE: cannot read {path} (no such file)"
    assert isinstance(caught.value.__cause__, TemporalApiKeyFileError)


# --- the renewal -----------------------------------------------------------------------------------------


async def test_gives_a_renewed_token_to_every_holder_once_and_says_so_without_the_token(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    path = token_file(tmp_path, "token-1\n")
    holders = [Holder("token-1"), Holder("token-1")]
    watch = watch_api_key_file(settings_of(path), "token-1", holders)
    try:
        await watch.check()
        assert [holder.given for holder in holders] == [[], []], "an unchanged token is not set again"
        rewrite(path, "token-2\n")
        await watch.check()
        await watch.check()
        assert [holder.given for holder in holders] == [["token-2"], ["token-2"]]
        assert messages(caplog) == [f"INFO: TEMPORAL_API_KEY_FILE: renewed the Temporal token from {path}"]
        # getattr: logging's extra= sets the field, which LogRecord's type does not declare (mypy).
        assert getattr(caplog.records[0], "temporal_api_key_file") == str(path), "the path also as a field of the record"  # noqa: B009
    finally:
        await watch.stop()


async def test_keeps_the_last_token_through_a_broken_file_says_so_once_and_says_when_it_recovers(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    path = token_file(tmp_path, "token-1")
    holder = Holder("token-1")
    watch = watch_api_key_file(settings_of(path), "token-1", [holder])
    try:
        rewrite(path, "")
        await watch.check()
        rewrite(path, "secret-half\nsecret-other-half\n")
        await watch.check()
        path.unlink()
        await watch.check()
        assert holder.given == [] and holder.api_key == "token-1", "the last token stays"
        assert messages(caplog) == [f"WARNING: TEMPORAL_API_KEY_FILE: {path} is empty; keeping the last token until the file holds one again"]
        rewrite(path, "token-1\n")
        await watch.check()
        assert messages(caplog)[1] == f"INFO: TEMPORAL_API_KEY_FILE: {path} holds a token again (unchanged)"
        rewrite(path, "not one token")
        await watch.check()
        assert "does not hold one token" in messages(caplog)[2] and "keeping the last token" in messages(caplog)[2], (
            "a new failure after a recovery is said again"
        )
        rewrite(path, "token-2")
        await watch.check()
        assert holder.given == ["token-2"]
        assert messages(caplog)[3:] == [
            f"INFO: TEMPORAL_API_KEY_FILE: {path} holds a token again",
            f"INFO: TEMPORAL_API_KEY_FILE: renewed the Temporal token from {path}",
        ]
        assert not any(word in caplog.text for word in ("token-1", "token-2", "secret", "not one token")), caplog.text
    finally:
        await watch.stop()


async def test_tries_a_refused_token_again_at_the_next_check_and_reads_the_file_on_its_own(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    path = token_file(tmp_path, "token-1")
    holder = Holder("token-1", refuse=True)
    watch = watch_api_key_file(settings_of(path, recheck_ms=20), "token-1", [holder])
    try:
        rewrite(path, "token-2")
        await wait_for(lambda: any("did not take" in line for line in messages(caplog)), "the refusal to be said")
        holder.refuse = False
        await wait_for(lambda: holder.given == ["token-2"], "the token to be taken at a later check")
        [refused, *_] = messages(caplog)
        # The setter's error named the token: the message says <token> in its place.
        assert refused == (
            f"WARNING: TEMPORAL_API_KEY_FILE: the connections did not take the renewed token from {path} (metadata refused: <token>); "
            "trying again at the next check"
        )
        assert "token-2" not in caplog.text
    finally:
        await watch.stop()
    assert not watch.running


async def test_renews_a_real_temporalio_client_until_stopped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """temporalio 1.35's Client.api_key setter: the client's config and its connection (service_client) take the token."""
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    path = token_file(tmp_path, "token-1")
    # Lazy: no server is reached until a call is made, so the SDK's own client stands here offline.
    client = await temporalio.client.Client.connect("127.0.0.1:1", api_key="token-1", lazy=True)
    watch = watch_api_key_file(settings_of(path, recheck_ms=100), "token-1", [client])
    try:
        rewrite(path, "token-2")
        await wait_for(lambda: client.api_key == "token-2", "the client to hold the renewed token")
        assert client.service_client.config.api_key == "token-2"
    finally:
        await watch.stop()
    assert not watch.running, "stopped: nothing reads the file any more"
    assert "token-" not in caplog.text


async def test_ends_on_its_own_when_its_client_is_gone(tmp_path: Path) -> None:
    path = token_file(tmp_path, "token-1")
    holder: Holder | None = Holder("token-1")
    assert holder is not None
    watch: ApiKeyFileWatch = watch_api_key_file(settings_of(path, recheck_ms=100), "token-1", [holder])
    holder = None
    gc.collect()
    await wait_for(lambda: not watch.running, "the watch to end")
    await watch.stop()
