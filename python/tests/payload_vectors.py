"""Cross-language payload vectors, Python's side (TypeScript's: scripts/payload-vectors.ts, the same
commands and file format): payloads this codec encrypts, in a JSON file the other side decodes.

    python python/tests/payload_vectors.py write <file>   encrypt the samples with the codec of the environment
    python python/tests/payload_vectors.py read <file>    decrypt a file's payloads and check each equals its plain one

The codec is configured by the variables the worker reads (PAYLOAD_ENCRYPTION_KEY, PAYLOAD_KEY_PROVIDER, ...).
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

from temporalio.api.common.v1 import Payload

from aggregation_connections.codec import EncryptionCodec, KeyProviderRefusedError, KeyProviderUnavailableError, PayloadDecryptionError
from aggregation_connections.settings import ConfigError, codec_from_env


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
        "payloads": [{"name": name, "plain": to_wire(payload), "encoded": to_wire(sealed)} for (name, payload), sealed in zip(samples, encoded)],
    }
    Path(file).write_text(json.dumps(vectors, indent=2, ensure_ascii=False) + "\n", "utf-8")
    print(f"wrote {len(samples)} payloads encrypted under key id {codec.key_id} to {file}")
    return 0


async def read(codec: EncryptionCodec, file: str) -> int:
    vectors = json.loads(Path(file).read_text("utf-8"))
    decoded = await codec.decode([from_wire(vector["encoded"]) for vector in vectors["payloads"]])
    for vector, payload in zip(vectors["payloads"], decoded):
        if canonical(to_wire(payload)) != canonical(vector["plain"]):
            print(f"payload-vectors: {vector['name']} of {file} (written by {vectors['writer']}) decrypts to something else than its plain payload", file=sys.stderr)
            return 1
        print(f"read {vector['name']} (written by {vectors['writer']}, key id {vectors['keyId']})")
    return 0


def main(args: list[str]) -> int:
    if len(args) != 2 or args[0] not in ("write", "read"):
        print("usage: python python/tests/payload_vectors.py write|read <file>", file=sys.stderr)
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
        return asyncio.run(write(codec, args[1]) if args[0] == "write" else read(codec, args[1]))
    except (PayloadDecryptionError, KeyProviderRefusedError, KeyProviderUnavailableError) as error:
        print(f"payload-vectors: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
