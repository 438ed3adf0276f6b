"""A real OpenBao for the tests (the Python twin of test/helpers/openbao.ts): ``bao server -dev`` on a
free loopback port, in memory, a known root token, the transit engine and one key; optionally TLS with
its own CA (the file a client gets as PAYLOAD_VAULT_CA_FILE). ``stop()`` ends only its own process."""

from __future__ import annotations

import os
import secrets
import socket
import ssl
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 20.0


def cached_executable(variable: str, relative: str, what: str, provision: str) -> str:
    """``variable``'s path if set, else ``relative`` under the Temporal cache, where `npm run provision` puts it."""
    explicit = os.environ.get(variable)
    if explicit:
        return explicit
    path = Path(os.environ.get("TEMPORAL_CACHE_DIR") or str(REPO / ".temporal")) / relative
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"{what} not found at {path}: run `bash scripts/provision-temporal.sh {provision}` or set {variable}")
    return str(path)


def pinned_version(name: str) -> str:
    """A release pinned in scripts/lib/temporal-versions.env (``OPENBAO_VERSION``, ``MOTO_VERSION``)."""
    versions = (REPO / "scripts/lib/temporal-versions.env").read_text()
    return next(line.split("=", 1)[1].strip() for line in versions.splitlines() if line.startswith(f"{name}="))


def bao_path() -> str:
    """OPENBAO_PATH, else the binary `npm run provision` put in the Temporal cache at the pinned release."""
    version = pinned_version("OPENBAO_VERSION")
    return cached_executable("OPENBAO_PATH", f"openbao/v{version}/bao", f"bao (OpenBao {version})", "openbao")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Ends a server this test process started: terminate, then kill after 5 s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def worker_policy(key: str, mount: str = "transit") -> str:
    """What a worker needs on a transit key and its tenants' keys (scripts/lib/openbao-server.ts): make data keys and
    unwrap them, and create a tenant's key on first use (keys/+ with only ``type``: no key's config); nothing else."""
    return "\n".join(
        [
            f'path "{mount}/datakey/plaintext/{key}" {{ capabilities = ["update"] }}',
            f'path "{mount}/decrypt/{key}" {{ capabilities = ["update"] }}',
            f'path "{mount}/datakey/plaintext/{key}-tenant-*" {{ capabilities = ["update"] }}',
            f'path "{mount}/decrypt/{key}-tenant-*" {{ capabilities = ["update"] }}',
            f'path "{mount}/keys/+" {{ capabilities = ["update"] allowed_parameters = {{ "type" = ["aes256-gcm96"] }} }}',
            "",
        ]
    )


def tenant_reader_policy(key: str, tenant: str, mount: str = "transit") -> str:
    """A reader of one tenant only: unwraps that tenant's data keys, nothing of the others' or the product's."""
    return f'path "{mount}/decrypt/{key}-tenant-{tenant}" {{ capabilities = ["update"] }}\n'


@dataclass
class OpenBao:
    address: str
    root_token: str
    transit_key: str
    process: subprocess.Popen[bytes]
    home: tempfile.TemporaryDirectory[str]
    ca_file: str | None = None
    _verify: ssl.SSLContext | bool = field(default=True, repr=False)

    def api(self, method: str, path: str, body: Any = None, namespace: str | None = None) -> dict[str, Any]:
        """Calls the API as root; raises on any answer but 2xx."""
        headers = {"x-vault-token": self.root_token, **({"x-vault-namespace": namespace} if namespace else {})}
        response = httpx.request(method, f"{self.address}/v1/{path}", json=body, headers=headers, verify=self._verify, timeout=10)
        if not 200 <= response.status_code < 300:
            raise RuntimeError(f"openbao {method} /v1/{path} (namespace {namespace}): HTTP {response.status_code} {response.text}")
        parsed: dict[str, Any] = response.json() if response.text.strip() else {}
        return parsed

    def token(self, name: str, policy: str) -> str:
        self.api("POST", f"sys/policies/acl/{name}", {"policy": policy})
        token: str = self.api("POST", "auth/token/create", {"policies": [name], "no_default_policy": True, "ttl": "1h"})["auth"]["client_token"]
        return token

    def app_role(self, name: str, policy: str) -> tuple[str, str]:
        self.api("POST", f"sys/policies/acl/{name}", {"policy": policy})
        if "approle/" not in self.api("GET", "sys/auth")["data"]:
            self.api("POST", "sys/auth/approle", {"type": "approle"})
        self.api("POST", f"auth/approle/role/{name}", {"token_policies": [name], "token_ttl": "1h"})
        role_id: str = self.api("GET", f"auth/approle/role/{name}/role-id")["data"]["role_id"]
        secret_id: str = self.api("POST", f"auth/approle/role/{name}/secret-id", {})["data"]["secret_id"]
        return role_id, secret_id

    def stop(self) -> None:
        stop_process(self.process)
        self.home.cleanup()


def start_openbao(tls: bool = False, transit_key: str = "aggregation-payloads") -> OpenBao:
    home = tempfile.TemporaryDirectory(prefix="openbao-pytest-")
    root_token = f"root-{os.getpid()}-{secrets.token_hex(4)}"
    port = free_port()
    cert_dir = Path(home.name) / "certs"
    args = [bao_path(), "server", "-dev", f"-dev-root-token-id={root_token}", f"-dev-listen-address=127.0.0.1:{port}"]
    if tls:
        cert_dir.mkdir()
        args += ["-dev-tls", f"-dev-tls-cert-dir={cert_dir}"]
    # HOME: the dev server writes the root token to ~/.bao-token; keep it in the temporary directory.
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={"PATH": os.environ.get("PATH", ""), "HOME": home.name})
    address = f"{'https' if tls else 'http'}://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    server = OpenBao(address, root_token, transit_key, process, home)
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(
                    f"bao exited ({process.returncode}) before it was active: {process.stderr.read().decode()[-2000:] if process.stderr else ''}"
                )
            if time.monotonic() > deadline:
                raise RuntimeError(f"bao was not active after {STARTUP_TIMEOUT_S} s")
            if tls and server.ca_file is None:
                ca = next((path for path in cert_dir.glob("*ca.pem") if "-----END CERTIFICATE-----" in path.read_text()), None)
                if ca is None:
                    time.sleep(0.05)
                    continue
                server.ca_file = str(ca)
                server._verify = ssl.create_default_context(cafile=str(ca))
            try:
                if httpx.get(f"{address}/v1/sys/health", verify=server._verify, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        server.api("POST", "sys/mounts/transit", {"type": "transit"})
        server.api("POST", f"transit/keys/{transit_key}", {})
        return server
    except BaseException:
        server.stop()
        raise
