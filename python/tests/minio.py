"""A real S3 server for the tests (the Python twin of test/helpers/minio.ts): the MinIO that
`scripts/provision-temporal.sh minio` builds into the Temporal cache (or MINIO_PATH), on a free loopback
port, a temporary data directory, known root credentials and one bucket. ``stop()`` ends only its own process."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass

import httpx

from .openbao import cached_executable, free_port, stop_process

STARTUP_TIMEOUT_S = 30.0
ACCESS_KEY = "minio-test-root"
SECRET_KEY = "minio-test-secret-0123456789"
REGION = "us-east-1"


def minio_path() -> str:
    """MINIO_PATH, else the build `npm run provision` put in the Temporal cache."""
    return cached_executable("MINIO_PATH", "bin/minio", "minio", "minio")


@dataclass
class Minio:
    endpoint: str
    bucket: str
    process: subprocess.Popen[bytes]
    home: tempfile.TemporaryDirectory[str]

    @property
    def aws_env(self) -> dict[str, str]:
        """The AWS default chain's variables for this server's root user (and no instance metadata lookups)."""
        return {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_EC2_METADATA_DISABLED": "true"}

    def store_env(self, bucket: str | None = None, prefix: str | None = None) -> dict[str, str]:
        """The worker's PAYLOAD_STORE variables for this server (credentials included)."""
        env = {
            **self.aws_env,
            "PAYLOAD_STORE": "s3",
            "PAYLOAD_STORE_S3_BUCKET": bucket or self.bucket,
            "PAYLOAD_STORE_S3_ENDPOINT": self.endpoint,
            "PAYLOAD_STORE_S3_REGION": REGION,
            "PAYLOAD_STORE_S3_FORCE_PATH_STYLE": "true",
        }
        return {**env, "PAYLOAD_STORE_S3_PREFIX": prefix} if prefix else env

    def stop(self) -> None:
        stop_process(self.process)
        self.home.cleanup()


def start_minio(bucket: str = "payloads") -> Minio:
    home = tempfile.TemporaryDirectory(prefix="minio-pytest-")
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": home.name,
        "MINIO_ROOT_USER": ACCESS_KEY,
        "MINIO_ROOT_PASSWORD": SECRET_KEY,
        "MINIO_BROWSER": "off",
        "MINIO_UPDATE": "off",
        "MINIO_CI_CD": "on",
    }
    process = subprocess.Popen(
        [minio_path(), "server", f"{home.name}/data", "--address", f"127.0.0.1:{port}", "--certs-dir", f"{home.name}/certs", "--quiet"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = Minio(endpoint, bucket, process, home)
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while True:
        if process.poll() is not None:
            server.stop()
            raise RuntimeError(f"minio exited with {process.returncode} before it was live")
        try:
            if httpx.get(f"{endpoint}/minio/health/live", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"minio was not live at {endpoint} after {STARTUP_TIMEOUT_S} s")
        time.sleep(0.1)
    return server


async def create_bucket(server: Minio, bucket: str) -> None:
    """Creates a bucket on the server (as root), or keeps it when it exists."""
    import aioboto3

    async with aioboto3.Session(aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY).client(
        "s3", endpoint_url=server.endpoint, region_name=REGION
    ) as client:
        try:
            await client.create_bucket(Bucket=bucket)
        except client.exceptions.BucketAlreadyOwnedByYou:
            pass
