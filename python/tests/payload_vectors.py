"""Cross-language payload vectors, Python's side (TypeScript's: scripts/payload-vectors.ts, the same
commands and file format): payloads this codec encrypts, in a JSON file the other side decodes.

    python python/tests/payload_vectors.py write <file>   encrypt the samples with the codec of the environment
    python python/tests/payload_vectors.py read <file>    decrypt a file's payloads and check each equals its plain one
    python python/tests/payload_vectors.py write-stored <file>   encrypt three samples and keep them in the payload store
    python python/tests/payload_vectors.py read-stored <file>    read a file's references through the store and the codec

The codec is configured by the variables the worker reads (PAYLOAD_ENCRYPTION_KEY, PAYLOAD_KEY_PROVIDER, ...),
the store by PAYLOAD_STORE, PAYLOAD_STORE_DIRECTORY, PAYLOAD_STORE_S3_* (a stored file: { writer, keyId,
workflowId, payloads: [{ name, plain, reference, stored: { key, bytes } }] }, `reference` the payload history
holds, `stored` the object the store keeps; `materialize` puts a file's objects into a fresh directory).
``read`` prints one line per payload and exits 1 naming the first that does not match (2 on a bad call).
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import dataclasses

import temporalio.converter
from temporalio.api.common.v1 import Payload
from temporalio.api.sdk.v1 import ExternalStorageReference
from temporalio.converter import ExternalStorage, StorageDriver, StorageDriverStoreContext, StorageDriverWorkflowInfo

from aggregation_connections.codec import EncryptionCodec, KeyProviderRefusedError, KeyProviderUnavailableError, PayloadDecryptionError
from aggregation_connections.payload_store import PayloadStoreError, S3StorageDriver, payload_store_driver_for, payload_store_from_env
from aggregation_connections.settings import ConfigError, codec_from_env

#: The workflow the stored samples are filed under: an id that needs escaping in keys.
STORED_VECTORS_WORKFLOW_ID = "vectors/stored ü"
STORED_SAMPLES = ("input", "large", "metadata")


def sample_payloads() -> list[tuple[str, Payload]]:
    """Python's samples: a pipeline's input, unicode, an empty binary, a large result, extra metadata."""
    rows = [{"account": f"acct-{i}", "balance": round(i * 12.5, 2), "holder": "Zoë Ångström"} for i in range(200)]
    return [
        ("input", Payload(metadata={"encoding": b"json/plain"}, data=b'{"institutionId":"101732","username":"tfa_text"}')),
        ("unicode", Payload(metadata={"encoding": b"json/plain"}, data=json.dumps({"answer": "山田 ✓ €"}, ensure_ascii=False).encode())),
        ("null", Payload(metadata={"encoding": b"binary/null"}, data=b"")),
        ("large", Payload(metadata={"encoding": b"json/plain"}, data=json.dumps(rows).encode())),
        ("metadata", Payload(metadata={"encoding": b"json/plain", "messageType": b"pipeline.Answer"}, data=b'{"answers":["123456"]}')),
    ]


def to_wire(payload: Payload) -> dict[str, Any]:
    return {
        "metadata": {key: base64.b64encode(value).decode() for key, value in payload.metadata.items()},
        "data": base64.b64encode(payload.data).decode(),
    }


def from_wire(wire: dict[str, Any]) -> Payload:
    return Payload(metadata={key: base64.b64decode(value) for key, value in wire["metadata"].items()}, data=base64.b64decode(wire["data"]))


def canonical(wire: dict[str, Any]) -> str:
    return json.dumps({"metadata": dict(sorted(wire["metadata"].items())), "data": wire["data"]})


async def write(codec: EncryptionCodec, file: str) -> int:
    samples = sample_payloads()
    encoded = await codec.encode([payload for _, payload in samples])
    vectors = {
        "writer": "python",
        "keyId": codec.key_id,
        "payloads": [{"name": name, "plain": to_wire(payload), "encoded": to_wire(sealed)} for (name, payload), sealed in zip(samples, encoded, strict=True)],
    }
    Path(file).write_text(json.dumps(vectors, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(f"wrote {len(samples)} payloads encrypted under key id {codec.key_id} to {file}")
    return 0


async def read(codec: EncryptionCodec, file: str) -> int:
    vectors = json.loads(Path(file).read_text("utf-8"))
    decoded = await codec.decode([from_wire(vector["encoded"]) for vector in vectors["payloads"]])
    for vector, payload in zip(vectors["payloads"], decoded, strict=True):
        if canonical(to_wire(payload)) != canonical(vector["plain"]):
            print(
                f"payload-vectors: {vector['name']} of {file} (written by {vectors['writer']}) decrypts to something else than its plain payload",
                file=sys.stderr,
            )
            return 1
        print(f"read {vector['name']} (written by {vectors['writer']}, key id {vectors['keyId']})")
    return 0


async def write_stored(codec: EncryptionCodec, driver: StorageDriver, file: str) -> int:
    """Encrypts three samples, keeps them with ``driver`` as External Storage would past its threshold, and
    writes their references (the SDK's own encoding: json/protobuf ExternalStorageReference) to ``file``."""
    samples = [(name, payload) for name, payload in sample_payloads() if name in STORED_SAMPLES]
    encoded = await codec.encode([payload for _, payload in samples])
    target = StorageDriverWorkflowInfo(namespace="default", id=STORED_VECTORS_WORKFLOW_ID)
    claims = await driver.store(StorageDriverStoreContext(target=target), encoded)
    to_reference = temporalio.converter.JSONProtoPayloadConverter()
    payloads = []
    for (name, plain), sealed, claim in zip(samples, encoded, claims, strict=True):
        reference = to_reference.to_payload(ExternalStorageReference(driver_name=driver.name(), claim_data=claim.claim_data))
        assert reference is not None
        stored = {"key": claim.claim_data["key"], "bytes": base64.b64encode(sealed.SerializeToString(deterministic=True)).decode()}
        payloads.append({"name": name, "plain": to_wire(plain), "reference": to_wire(reference), "stored": stored})
    vectors = {"writer": "python", "keyId": codec.key_id, "workflowId": STORED_VECTORS_WORKFLOW_ID, "payloads": payloads}
    Path(file).write_text(json.dumps(vectors, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(f"wrote {len(payloads)} stored payloads encrypted under key id {codec.key_id} to {file}")
    return 0


async def read_stored(codec: EncryptionCodec, driver: StorageDriver, file: str) -> int:
    """Decodes a file's references as a client does (the SDK's DataConverter with External Storage over
    ``driver`` and the codec) and checks each gives the value of its plain payload."""
    vectors = json.loads(Path(file).read_text("utf-8"))
    storage = ExternalStorage(drivers=[driver])
    converter = dataclasses.replace(temporalio.converter.DataConverter.default, payload_codec=codec, external_storage=storage)
    values = await converter.decode([from_wire(vector["reference"]) for vector in vectors["payloads"]])
    plain = temporalio.converter.DataConverter.default.payload_converter.from_payloads([from_wire(vector["plain"]) for vector in vectors["payloads"]])
    for vector, value, expected in zip(vectors["payloads"], values, plain, strict=True):
        if value != expected:
            print(
                f"payload-vectors: stored {vector['name']} of {file} (written by {vectors['writer']}) reads as something else than its plain payload",
                file=sys.stderr,
            )
            return 1
        claim = json.loads(base64.b64decode(vector["reference"]["data"]))["claimData"]
        print(f"read stored {vector['name']} (written by {vectors['writer']}, key id {vectors['keyId']}, claim {' '.join(sorted(claim))})")
    return 0


def materialize(file: str | Path, directory: str | Path) -> None:
    """Puts a stored file's objects at their keys under ``directory``, as a local store would hold them."""
    vectors = json.loads(Path(file).read_text("utf-8"))
    for vector in vectors["payloads"]:
        path = Path(directory) / vector["stored"]["key"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(vector["stored"]["bytes"]))


async def _stored(command: str, codec: EncryptionCodec, file: str) -> int:
    driver = payload_store_driver_for(payload_store_from_env())
    if driver is None:
        print("payload-vectors: PAYLOAD_STORE is off: stored vectors need a store", file=sys.stderr)
        return 2
    try:
        return await (write_stored(codec, driver, file) if command == "write-stored" else read_stored(codec, driver, file))
    finally:
        if isinstance(driver, S3StorageDriver):
            await driver.close()


def main(args: list[str]) -> int:
    if len(args) != 2 or args[0] not in ("write", "read", "write-stored", "read-stored"):
        print("usage: python python/tests/payload_vectors.py write|read|write-stored|read-stored <file>", file=sys.stderr)
        return 2
    try:
        codec = codec_from_env()
    except ConfigError as error:
        print(f"payload-vectors: {'; '.join(error.problems)}", file=sys.stderr)
        return 2
    if codec is None:
        print("payload-vectors: PAYLOAD_ENCRYPTION is off: there is nothing to encrypt with", file=sys.stderr)
        return 2
    try:
        if args[0] in ("write-stored", "read-stored"):
            return asyncio.run(_stored(args[0], codec, args[1]))
        return asyncio.run(write(codec, args[1]) if args[0] == "write" else read(codec, args[1]))
    except ConfigError as error:
        print(f"payload-vectors: {'; '.join(error.problems)}", file=sys.stderr)
        return 2
    except (PayloadDecryptionError, KeyProviderRefusedError, KeyProviderUnavailableError, PayloadStoreError) as error:
        print(f"payload-vectors: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
