"""The aws-kms key provider against moto's server (tests/moto.py, the AWS KMS stand-in the TypeScript
tests use): envelope-v1 payloads whose data keys GenerateDataKey made and Decrypt unwraps, how many KMS
calls N payloads cost, the encryption context, a key that does not exist; the answers AWS KMS gives that
moto does not model (a disabled key, throttling, 5xx, a wrong key), injected by a proxy in front of it; a
KMS that does not answer; no credentials; and the settings an operator writes
(test/codec/aws-kms.test.ts checks the same on the TypeScript side)."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from botocore.exceptions import ClientError
from temporalio.api.common.v1 import Payload
from temporalio.converter import WorkflowSerializationContext

from aggregation_connections.codec import (
    AWS_KMS_ENCRYPTION_CONTEXT,
    AwsKmsEncryption,
    AwsKmsSettings,
    DataKeyCacheSettings,
    EncryptionCodec,
    EnvelopeKeySource,
    KeyDisabledError,
    KeyProviderRefusedError,
    KeyProviderUnavailableError,
    PayloadDecryptionError,
    key_source_for,
)
from aggregation_connections.codec.aws_kms import AwsKms, aws_kms_client
from aggregation_connections.codec.envelope_keys import DataKey
from aggregation_connections.codec.payload_format import EnvelopeMetadata
from aggregation_connections.settings import ConfigError, codec_from_env, encryption_from_env

from .moto import MOTO_CREDENTIALS, MOTO_REGION, Moto
from .openbao import free_port

PLAIN = Payload(metadata={"encoding": b"json/plain"}, data=b'{"password":"Everyday"}')
ELSEWHERE = {"TEMPORAL_ADDRESS": "temporal.bank.internal:7233"}


class CountedKms:
    """AwsKms with its calls counted: what a process asks of KMS."""

    def __init__(self, settings: AwsKmsSettings) -> None:
        self._kms = AwsKms(settings)
        self.data_keys = 0
        self.unwraps = 0

    @property
    def key_id(self) -> str:
        return self._kms.key_id

    @property
    def tenant(self) -> str | None:
        return self._kms.tenant

    def for_tenant(self, tenant: str) -> AwsKms:
        return self._kms.for_tenant(tenant)

    async def new_data_key(self) -> DataKey:
        self.data_keys += 1
        return await self._kms.new_data_key()

    async def unwrap(self, envelope: EnvelopeMetadata) -> bytes:
        self.unwraps += 1
        return await self._kms.unwrap(envelope)


@dataclass
class Process:
    codec: EncryptionCodec
    kms: CountedKms


def process_on(settings: AwsKmsSettings) -> Process:
    kms = CountedKms(settings)
    return Process(EncryptionCodec(EnvelopeKeySource(kms, DataKeyCacheSettings())), kms)


def relabelled(payload: Payload, **metadata: str) -> Payload:
    return Payload(metadata={**payload.metadata, **{key.replace("_", "-"): value.encode() for key, value in metadata.items()}}, data=payload.data)


async def test_writes_envelope_v1_naming_the_key_arn_and_another_process_reads_it_through_decrypt(moto: Moto) -> None:
    [sealed] = await process_on(moto.settings()).codec.encode([PLAIN])
    metadata = {key: value.decode() for key, value in sealed.metadata.items()}
    assert metadata["encoding"] == "binary/encrypted"
    assert metadata["encryption-format"] == "envelope-v1"
    assert metadata["encryption-key-id"] == f"aws-kms:{moto.key_arn}"
    assert metadata["encryption-key-version"] == "1"
    assert len(metadata["encryption-wrapped-key"]) > 44, "a CiphertextBlob, longer than the key it wraps"
    assert b"Everyday" not in sealed.data
    reader = process_on(moto.settings())
    assert await reader.codec.decode([sealed]) == [PLAIN]
    assert reader.kms.unwraps == 1


async def test_configured_by_key_id_or_alias_still_names_the_key_arn(moto: Moto) -> None:
    aws_kms_client(moto.settings()).create_alias(AliasName="alias/pytest-payloads", TargetKeyId=moto.key_uuid)
    for key in (moto.key_uuid, "alias/pytest-payloads"):
        [sealed] = await process_on(moto.settings(key=key)).codec.encode([PLAIN])
        assert sealed.metadata["encryption-key-id"] == f"aws-kms:{moto.key_arn}".encode(), key
        assert await process_on(moto.settings()).codec.decode([sealed]) == [PLAIN]


async def test_asks_kms_once_per_data_key_never_once_per_payload(moto: Moto) -> None:
    writer = process_on(moto.settings())
    sealed = [payload for _ in range(200) for payload in await writer.codec.encode([PLAIN])]
    readers = [process_on(moto.settings()), process_on(moto.settings())]
    for reader in readers:
        # Concurrent batches, as a worker reads: concurrent misses share one Decrypt.
        batches = [reader.codec.decode(sealed[start : start + 10]) for start in range(0, len(sealed), 10)]
        assert [payload for batch in await asyncio.gather(*batches) for payload in batch] == [PLAIN] * 200
    await writer.codec.decode(sealed[:1])
    assert (writer.kms.data_keys, writer.kms.unwraps, [reader.kms.unwraps for reader in readers]) == (1, 0, [1, 1])


async def test_binds_the_data_key_to_the_encryption_context(moto: Moto) -> None:
    assert dict(AWS_KMS_ENCRYPTION_CONTEXT) == {"purpose": "temporal-payloads"}
    [sealed] = await process_on(moto.settings()).codec.encode([PLAIN])
    blob = base64.b64decode(sealed.metadata["encryption-wrapped-key"])
    client = aws_kms_client(moto.settings())
    with pytest.raises(ClientError, match="InvalidCiphertext"):
        client.decrypt(CiphertextBlob=blob, EncryptionContext={"purpose": "something-else"})
    assert len(client.decrypt(CiphertextBlob=blob, EncryptionContext=dict(AWS_KMS_ENCRYPTION_CONTEXT))["Plaintext"]) == 32


async def test_binds_a_tenants_data_keys_to_the_tenant_as_the_typescript_codec_does(moto: Moto) -> None:
    codec = EncryptionCodec(key_source_for(AwsKmsEncryption(aws=moto.settings())))
    tenant_codec = codec.with_context(WorkflowSerializationContext(namespace="default", workflow_id="connection-py-lender-a:app-1"))
    [sealed] = await tenant_codec.encode([PLAIN])
    assert sealed.metadata["encryption-tenant"] == b"py-lender-a"
    blob = base64.b64decode(sealed.metadata["encryption-wrapped-key"])
    client = aws_kms_client(moto.settings())
    with pytest.raises(ClientError, match="InvalidCiphertext"):
        client.decrypt(CiphertextBlob=blob, EncryptionContext=dict(AWS_KMS_ENCRYPTION_CONTEXT))
    assert len(client.decrypt(CiphertextBlob=blob, EncryptionContext={**AWS_KMS_ENCRYPTION_CONTEXT, "tenant": "py-lender-a"})["Plaintext"]) == 32
    reader = EncryptionCodec(key_source_for(AwsKmsEncryption(aws=moto.settings())))
    assert await reader.decode([sealed]) == [PLAIN]
    with pytest.raises(PayloadDecryptionError):
        await reader.decode([relabelled(sealed, encryption_tenant="py-lender-b")])


async def test_a_key_that_does_not_exist_is_refused_naming_it_and_a_relabelled_payload_cannot_be_unwrapped(moto: Moto) -> None:
    missing = "arn:aws:kms:us-east-1:123456789012:key/00000000-0000-4000-8000-000000000000"
    with pytest.raises(KeyProviderRefusedError) as refused:
        await process_on(moto.settings(key=missing)).codec.encode([PLAIN])
    assert not isinstance(refused.value, KeyDisabledError)
    assert refused.value.operation == "GenerateDataKey"
    assert missing in str(refused.value) and "NotFoundException" in str(refused.value)

    other = moto.create_key("another key")
    [sealed] = await process_on(moto.settings()).codec.encode([PLAIN])
    # moto answers AccessDeniedException where AWS answers IncorrectKeyException (injected below).
    with pytest.raises(KeyProviderRefusedError, match=f'key "{other}": AccessDeniedException') as wrong:
        await process_on(moto.settings()).codec.decode([relabelled(sealed, encryption_key_id=f"aws-kms:{other}")])
    assert wrong.value.operation == "Decrypt"

    reader = process_on(moto.settings())
    with pytest.raises(PayloadDecryptionError, match="encryption-key-version is 2, but aws-kms envelopes are always version 1"):
        await reader.codec.decode([relabelled(sealed, encryption_key_version="2")])
    with pytest.raises(PayloadDecryptionError, match="not by an aws-kms key"):
        await reader.codec.decode([relabelled(sealed, encryption_key_id="vault-transit:aggregation-payloads")])
    assert reader.kms.unwraps == 2, "refused by the provider itself, before any call"


@dataclass
class InjectingProxy:
    """In front of moto: forwards each call, or answers ``injected`` (status, AWS's error type) while it is set."""

    endpoint: str
    upstream: str
    injected: tuple[int, str] | None = None


class _ProxyHandler(BaseHTTPRequestHandler):
    proxy: InjectingProxy

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        if self.proxy.injected is not None:
            status, kind = self.proxy.injected
            answer = json.dumps({"__type": kind, "message": f"injected {kind}"}).encode()
            content_type = "application/x-amz-json-1.1"
        else:
            headers = {name: value for name, value in self.headers.items() if name.lower() not in ("host", "content-length")}
            forwarded = httpx.post(self.proxy.upstream, content=body, headers=headers, timeout=10)
            status, answer, content_type = forwarded.status_code, forwarded.content, forwarded.headers.get("content-type", "application/json")
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def proxy(moto: Moto) -> Iterator[InjectingProxy]:
    port = free_port()
    proxy = InjectingProxy(f"http://127.0.0.1:{port}", moto.endpoint)
    server = ThreadingHTTPServer(("127.0.0.1", port), type("Handler", (_ProxyHandler,), {"proxy": proxy}))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield proxy
    server.shutdown()
    server.server_close()


def via(proxy: InjectingProxy, moto: Moto) -> Process:
    return process_on(moto.settings(endpoint=proxy.endpoint))


@pytest.mark.parametrize("kind", ["DisabledException", "KMSInvalidStateException"])
async def test_a_disabled_key_is_key_disabled_error_naming_it_and_serves_again_when_enabled(moto: Moto, proxy: InjectingProxy, kind: str) -> None:
    [written] = await via(proxy, moto).codec.encode([PLAIN])
    fresh = via(proxy, moto)
    proxy.injected = (400, kind)
    for operation, call in (("GenerateDataKey", fresh.codec.encode([PLAIN])), ("Decrypt", fresh.codec.decode([written]))):
        with pytest.raises(KeyDisabledError) as disabled:
            await call
        assert isinstance(disabled.value, KeyProviderRefusedError) and not isinstance(disabled.value, PayloadDecryptionError)
        assert (disabled.value.key_name, disabled.value.operation) == (moto.key_arn, operation)
        assert f'key "{moto.key_arn}" is disabled or pending deletion' in str(disabled.value)
    proxy.injected = None
    assert await fresh.codec.decode([written]) == [PLAIN]
    assert len(await fresh.codec.encode([PLAIN])) == 1


@pytest.mark.parametrize("kind", ["IncorrectKeyException", "InvalidCiphertextException"])
async def test_a_wrapped_key_kms_will_never_open_is_a_payload_error(moto: Moto, proxy: InjectingProxy, kind: str) -> None:
    [written] = await via(proxy, moto).codec.encode([PLAIN])
    proxy.injected = (400, kind)
    with pytest.raises(PayloadDecryptionError, match=kind) as caught:
        await via(proxy, moto).codec.decode([written])
    assert moto.key_arn in str(caught.value)


@pytest.mark.parametrize(
    ("status", "kind", "unavailable"),
    [(400, "ThrottlingException", True), (503, "KMSInternalException", True), (500, "KeyUnavailableException", True), (400, "AccessDeniedException", False)],
)
async def test_throttling_and_5xx_are_unavailable_and_access_denied_is_refused(
    moto: Moto, proxy: InjectingProxy, status: int, kind: str, unavailable: bool
) -> None:
    proxy.injected = (status, kind)
    expected = KeyProviderUnavailableError if unavailable else KeyProviderRefusedError
    with pytest.raises(expected) as caught:
        await via(proxy, moto).codec.encode([PLAIN])
    assert kind in str(caught.value) and moto.key_arn in str(caught.value)


async def test_a_kms_that_does_not_answer_is_unavailable_and_retryable(moto: Moto) -> None:
    with pytest.raises(KeyProviderUnavailableError, match=r"aws-kms is unavailable \(GenerateDataKey\)") as caught:
        await process_on(moto.settings(endpoint=f"http://127.0.0.1:{free_port()}", timeout_s=0.5)).codec.encode([PLAIN])
    assert caught.value.retryable


async def test_no_credentials_is_refused_saying_where_boto3_looks(moto: Moto, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", f"{tmp_path}/none")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", f"{tmp_path}/none")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    settings = AwsKmsSettings(key=moto.key_arn, region=MOTO_REGION, endpoint=moto.endpoint)
    with pytest.raises(KeyProviderRefusedError, match="no AWS credentials: boto3's default chain looks at AWS_ACCESS_KEY_ID"):
        await process_on(settings).codec.encode([PLAIN])


async def test_no_region_is_refused_saying_how_to_give_one(moto: Moto, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", f"{tmp_path}/none")
    settings = AwsKmsSettings(key=moto.key_uuid, endpoint=moto.endpoint, credentials=MOTO_CREDENTIALS)
    with pytest.raises(KeyProviderRefusedError, match="no region: set PAYLOAD_AWS_REGION, or give PAYLOAD_AWS_KMS_KEY_ID as an ARN"):
        await process_on(settings).codec.encode([PLAIN])


async def test_the_settings_an_operator_writes_make_a_codec_that_reads_what_another_wrote(moto: Moto, monkeypatch: pytest.MonkeyPatch) -> None:
    # boto3 reads credentials from the process's environment, as the AWS SDK does on the TypeScript side.
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", MOTO_CREDENTIALS.access_key_id)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", MOTO_CREDENTIALS.secret_access_key)
    env = {**ELSEWHERE, **moto.variables(), "PAYLOAD_AWS_KMS_TIMEOUT_MS": "2500", "PAYLOAD_DATA_KEY_MAX_USES": "7"}
    encryption = encryption_from_env(env)
    assert isinstance(encryption, AwsKmsEncryption)
    assert encryption.key_id == f"aws-kms:{moto.key_arn}"
    assert (encryption.aws.key, encryption.aws.region, encryption.aws.endpoint, encryption.aws.timeout_s) == (moto.key_arn, MOTO_REGION, moto.endpoint, 2.5)
    assert encryption.cache.data_key_max_uses == 7 and encryption.static_keys is None
    writer, reader = codec_from_env(env), codec_from_env(env)
    assert writer is not None and reader is not None
    assert await reader.decode(await writer.encode([PLAIN])) == [PLAIN]


def test_keeps_configured_keys_to_read_static_payloads_and_takes_the_region_from_a_key_arn() -> None:
    env = {
        **ELSEWHERE,
        "PAYLOAD_KEY_PROVIDER": "aws-kms",
        "PAYLOAD_AWS_KMS_KEY_ID": "arn:aws:kms:eu-west-1:123456789012:alias/payloads",
        "PAYLOAD_ENCRYPTION_KEY": "A" * 43 + "=",
        "PAYLOAD_ENCRYPTION_KEY_ID": "before-kms",
    }
    encryption = encryption_from_env(env)
    assert isinstance(encryption, AwsKmsEncryption)
    assert encryption.aws.region == "eu-west-1" and encryption.aws.timeout_s == 5.0 and encryption.aws.endpoint is None
    assert encryption.static_keys is not None and encryption.static_keys.key_id == "before-kms"


def problems(env: dict[str, str]) -> str:
    with pytest.raises(ConfigError) as caught:
        encryption_from_env({**ELSEWHERE, **env})
    return "\n".join(caught.value.problems)


def test_names_what_is_wrong_with_the_aws_kms_settings() -> None:
    assert "PAYLOAD_AWS_KMS_KEY_ID: is required with PAYLOAD_KEY_PROVIDER=aws-kms" in problems({"PAYLOAD_KEY_PROVIDER": "aws-kms"})
    assert "PAYLOAD_AWS_KMS_KEY_ID: must name an AWS KMS key: a key id" in problems({"PAYLOAD_KEY_PROVIDER": "aws-kms", "PAYLOAD_AWS_KMS_KEY_ID": "my key"})
    arn = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    assert "PAYLOAD_AWS_REGION: is us-east-1, but PAYLOAD_AWS_KMS_KEY_ID is an ARN in eu-west-1" in problems(
        {"PAYLOAD_KEY_PROVIDER": "aws-kms", "PAYLOAD_AWS_KMS_KEY_ID": arn, "PAYLOAD_AWS_REGION": "us-east-1"}
    )
    assert "PAYLOAD_AWS_KMS_KEY_ID: is set but PAYLOAD_KEY_PROVIDER is static: set PAYLOAD_KEY_PROVIDER=aws-kms" in problems(
        {"PAYLOAD_ENCRYPTION_KEY": "A" * 43 + "=", "PAYLOAD_AWS_KMS_KEY_ID": "alias/payloads"}
    )
    assert "PAYLOAD_AWS_KMS_ENDPOINT: must be an http(s) URL" in problems(
        {"PAYLOAD_KEY_PROVIDER": "aws-kms", "PAYLOAD_AWS_KMS_KEY_ID": "alias/payloads", "PAYLOAD_AWS_KMS_ENDPOINT": "kms.internal"}
    )
    assert "PAYLOAD_AWS_REGION: must be an AWS region, e.g. eu-west-1" in problems(
        {"PAYLOAD_KEY_PROVIDER": "aws-kms", "PAYLOAD_AWS_KMS_KEY_ID": "alias/payloads", "PAYLOAD_AWS_REGION": "Europe"}
    )
    assert "PAYLOAD_AWS_KMS_TIMEOUT_MS: must be a whole number, at least 100" in problems(
        {"PAYLOAD_KEY_PROVIDER": "aws-kms", "PAYLOAD_AWS_KMS_KEY_ID": "alias/payloads", "PAYLOAD_AWS_KMS_TIMEOUT_MS": "50"}
    )
    assert "PAYLOAD_ENCRYPTION: is off but PAYLOAD_KEY_PROVIDER is aws-kms" in problems(
        {"PAYLOAD_ENCRYPTION": "off", "PAYLOAD_KEY_PROVIDER": "aws-kms", "PAYLOAD_AWS_KMS_KEY_ID": "alias/payloads"}
    )
    assert "PAYLOAD_VAULT_ADDR: is set but PAYLOAD_KEY_PROVIDER is aws-kms" in problems(
        {"PAYLOAD_KEY_PROVIDER": "aws-kms", "PAYLOAD_AWS_KMS_KEY_ID": "alias/payloads", "PAYLOAD_VAULT_ADDR": "http://127.0.0.1:8200"}
    )
