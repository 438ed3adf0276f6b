"""moto's server for the tests (the Python twin of test/helpers/moto.ts): a stand-in for AWS KMS, the
``moto_server`` that scripts/provision-temporal.sh moto installed from PyPI, on a free loopback port, in
memory, with one symmetric KMS key. ``stop()`` ends only its own process."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass

from botocore.exceptions import BotoCoreError, ClientError

from aggregation_connections.codec import AwsCredentials, AwsKmsSettings
from aggregation_connections.codec.aws_kms import aws_kms_client

from .openbao import cached_executable, free_port, pinned_version

STARTUP_TIMEOUT_S = 30.0
#: moto accepts any credentials; these are what the tests present (as the TypeScript tests do).
MOTO_CREDENTIALS = AwsCredentials("moto-test-access-key", "moto-test-secret-key")
MOTO_REGION = "us-east-1"


def moto_server_path() -> str:
    """MOTO_SERVER_PATH, else the venv `npm run provision` put in the Temporal cache at the pinned release."""
    version = pinned_version("MOTO_VERSION")
    return cached_executable("MOTO_SERVER_PATH", f"moto/v{version}/venv/bin/moto_server", f"moto_server (moto {version})", "moto")


@dataclass
class Moto:
    endpoint: str
    key_arn: str
    process: subprocess.Popen[bytes]

    @property
    def key_uuid(self) -> str:
        return self.key_arn.rsplit("/", 1)[-1]

    def settings(self, key: str | None = None, endpoint: str | None = None, timeout_s: float = 5.0) -> AwsKmsSettings:
        """Client settings for ``key`` (default: the key made at start) on this server."""
        return AwsKmsSettings(
            key=key or self.key_arn, region=MOTO_REGION, endpoint=endpoint or self.endpoint, timeout_s=timeout_s, credentials=MOTO_CREDENTIALS
        )

    def variables(self, key: str | None = None) -> dict[str, str]:
        """What an operator sets for this server (PAYLOAD_AWS_* and boto3's credentials)."""
        return {
            "PAYLOAD_KEY_PROVIDER": "aws-kms",
            "PAYLOAD_AWS_KMS_KEY_ID": key or self.key_arn,
            "PAYLOAD_AWS_REGION": MOTO_REGION,
            "PAYLOAD_AWS_KMS_ENDPOINT": self.endpoint,
            "AWS_ACCESS_KEY_ID": MOTO_CREDENTIALS.access_key_id,
            "AWS_SECRET_ACCESS_KEY": MOTO_CREDENTIALS.secret_access_key,
        }

    def create_key(self, description: str) -> str:
        made = aws_kms_client(self.settings()).create_key(Description=description, KeySpec="SYMMETRIC_DEFAULT", KeyUsage="ENCRYPT_DECRYPT")
        return made["KeyMetadata"]["Arn"]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_moto() -> Moto:
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [moto_server_path(), "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")},
    )
    server = Moto(endpoint, "", process)
    admin = aws_kms_client(server.settings(key="unused"))
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"moto_server exited ({process.returncode}) before it answered: {process.stderr.read().decode()[-2000:] if process.stderr else ''}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(f"moto_server did not answer within {STARTUP_TIMEOUT_S} s")
            try:
                admin.list_keys()
                break
            except (BotoCoreError, ClientError):
                time.sleep(0.1)
        server.key_arn = server.create_key("aggregation payloads (pytest)")
        return server
    except BaseException:
        server.stop()
        raise
