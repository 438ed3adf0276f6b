from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from .minio import Minio, start_minio
from .moto import Moto, start_moto
from .openbao import REPO, OpenBao, start_openbao


@pytest.fixture(scope="session")
def openbao() -> Iterator[OpenBao]:
    server = start_openbao()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def openbao_tls() -> Iterator[OpenBao]:
    server = start_openbao(tls=True)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def minio() -> Iterator[Minio]:
    """A real MinIO, its root user's keys in the AWS default chain's variables, as a pipeline's environment would hold them."""
    server = start_minio()
    saved = {name: os.environ.get(name) for name in server.aws_env}
    os.environ.update(server.aws_env)
    yield server
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    server.stop()


@pytest.fixture(scope="session")
def moto() -> Iterator[Moto]:
    server = start_moto()
    yield server
    server.stop()


def doc_vectors() -> list[dict[str, Any]]:
    """The JSON test vectors of docs/payload-format.md, as that page shows them."""
    text = (REPO / "docs/payload-format.md").read_text("utf-8")
    section = text.split("## Test vectors", 1)[1]
    block = re.search(r"```json\n(.*?)\n```", section, re.DOTALL)
    assert block is not None, "docs/payload-format.md has no ```json block under ## Test vectors"
    vectors: list[dict[str, Any]] = json.loads(block.group(1))["vectors"]
    return vectors


def run_typescript(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A TypeScript tool of this repository on the pinned Node.js (scripts/with-pinned-node.sh)."""
    # Only what the tool needs: PATH, HOME, the cache of the pinned Node.js, and the codec's variables.
    base = {name: value for name, value in os.environ.items() if name in ("PATH", "HOME", "TEMPORAL_CACHE_DIR", "XDG_CACHE_HOME")}
    return subprocess.run(
        ["bash", "scripts/with-pinned-node.sh", str(REPO / "node_modules/.bin/tsx"), *args],
        cwd=REPO,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
