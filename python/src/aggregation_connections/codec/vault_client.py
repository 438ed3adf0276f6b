"""A small client of Vault's (and OpenBao's) HTTP API, enough for the transit key provider
(src/codec/vault-client.ts): JSON over httpx, token or AppRole auth, the namespace header, a CA file.
An AppRole token is fetched at the first call, renewed by logging in again before its lease ends, and
once more when Vault answers 403. Network errors, timeouts, 429 and 5xx are KeyProviderUnavailableError;
any other answer goes back to the caller."""

from __future__ import annotations

import asyncio
import json
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from .errors import KeyProviderRefusedError, KeyProviderUnavailableError

# Renew an AppRole token after this share of its lease.
_RENEW_MARGIN = 0.8


@dataclass(frozen=True)
class TokenAuth:
    token: str = field(repr=False)


@dataclass(frozen=True)
class AppRoleAuth:
    role_id: str
    secret_id: str = field(repr=False)
    mount: str = "approle"


VaultAuth = TokenAuth | AppRoleAuth


@dataclass(frozen=True)
class VaultSettings:
    """``address`` is http(s)://host:port; ``ca_certificate`` the PEM of the CA(s) that signed Vault's certificate."""

    address: str
    auth: VaultAuth
    namespace: str | None = None
    ca_certificate: str | None = field(default=None, repr=False)
    timeout_s: float = 5.0


@dataclass(frozen=True)
class VaultAnswer:
    status: int
    body: dict[str, Any]

    @property
    def data(self) -> dict[str, Any]:
        data = self.body.get("data")
        return data if isinstance(data, dict) else {}


def errors_of(answer: VaultAnswer, fallback: str) -> str:
    """Vault's ``errors``, joined, or ``fallback``."""
    errors = answer.body.get("errors")
    texts = [error for error in errors if isinstance(error, str) and error] if isinstance(errors, list) else []
    return "; ".join(texts)[:500] if texts else fallback


class VaultClient:
    def __init__(self, settings: VaultSettings, provider: str, now: Callable[[], float] = time.monotonic) -> None:
        self._settings = settings
        self._provider = provider
        self._now = now
        self._token: tuple[str, float] | None = None
        self._login: asyncio.Future[str] | None = None
        self._verify: ssl.SSLContext | bool = ssl.create_default_context(cadata=settings.ca_certificate) if settings.ca_certificate else True

    async def post(self, path: str, body: object, operation: str) -> VaultAnswer:
        return await self.request("POST", path, body, operation)

    async def request(self, method: Literal["GET", "POST"], path: str, body: object, operation: str) -> VaultAnswer:
        answer = await self._send(method, path, body, operation, await self._current_token())
        if answer.status != 403 or not isinstance(self._settings.auth, AppRoleAuth):
            return answer
        self._token = None
        return await self._send(method, path, body, operation, await self._current_token())

    async def _current_token(self) -> str:
        auth = self._settings.auth
        if isinstance(auth, TokenAuth):
            return auth.token
        if self._token is not None and self._token[1] > self._now():
            return self._token[0]
        if self._login is None:
            self._login = asyncio.ensure_future(self._log_in(auth))
            self._login.add_done_callback(self._logged_in)
        return await asyncio.shield(self._login)

    def _logged_in(self, _: asyncio.Future[str]) -> None:
        self._login = None

    async def _log_in(self, auth: AppRoleAuth) -> str:
        answer = await self._send("POST", f"auth/{auth.mount}/login", {"role_id": auth.role_id, "secret_id": auth.secret_id}, "login", None)
        login = answer.body.get("auth")
        token = login.get("client_token") if isinstance(login, dict) else None
        if answer.status != 200 or not isinstance(token, str) or not isinstance(login, dict):
            raise KeyProviderRefusedError(self._provider, "login", answer.status, errors_of(answer, f"AppRole login at auth/{auth.mount} refused"))
        lease = float(login.get("lease_duration") or 0)
        self._token = (token, self._now() + lease * _RENEW_MARGIN if lease > 0 else float("inf"))
        return token

    async def _send(self, method: str, path: str, body: object, operation: str, token: str | None) -> VaultAnswer:
        url = f"{self._settings.address.rstrip('/')}/v1/{path}"
        headers: dict[str, str] = {}
        if token is not None:
            headers["x-vault-token"] = token
        if self._settings.namespace:
            headers["x-vault-namespace"] = self._settings.namespace
        origin = httpx.URL(url)
        where = f"{origin.scheme}://{origin.netloc.decode()}"
        try:
            # A client per call: key-provider calls are rare (keys are cached) and a client is bound to one event loop.
            async with httpx.AsyncClient(verify=self._verify, timeout=self._settings.timeout_s) as client:
                response = await client.request(method, url, headers=headers, json=body if body is not None else None)
        except httpx.HTTPError as error:
            raise KeyProviderUnavailableError(self._provider, operation, f"{where} did not answer: {error!r}") from error
        answer = VaultAnswer(response.status_code, _parse_body(response.text))
        if answer.status == 429 or answer.status >= 500:
            raise KeyProviderUnavailableError(self._provider, operation, f"{where} answered HTTP {answer.status}: {errors_of(answer, 'no reason given')}")
        return answer


def _parse_body(text: str) -> dict[str, Any]:
    if text.strip() == "":
        return {}
    try:
        parsed = json.loads(text)
    except ValueError:
        return {"errors": [f"a body that is not JSON: {text[:200]}"]}
    return parsed if isinstance(parsed, dict) else {}
