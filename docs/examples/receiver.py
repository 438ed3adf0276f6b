"""A completion-callback receiver (docs/pipelines.md), Python's standard library only.
Run: WEBHOOK_SECRET=whsec_... PORT=8443 python3 receiver.py (behind your TLS proxy)."""

import base64
import hashlib
import hmac
import json
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Mapping, Optional, Set

TOLERANCE_SECONDS = 5 * 60


class WebhookVerificationError(Exception):
    pass


def verify(secret: str, body: bytes, headers: Mapping[str, str], now: Optional[float] = None) -> Any:
    """The event, parsed, when one of the message's signatures is `secret`'s; else WebhookVerificationError."""
    lower = {name.lower(): value for name, value in headers.items()}
    webhook_id = lower.get("webhook-id", "")
    timestamp = lower.get("webhook-timestamp", "")
    signatures = lower.get("webhook-signature", "")
    if not webhook_id or not timestamp.isdigit() or not signatures:
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature")
    if abs((time.time() if now is None else now) - int(timestamp)) > TOLERANCE_SECONDS:
        raise WebhookVerificationError("timestamp more than 5 minutes away: a replay, or a wrong clock")
    key = base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret)
    signed = webhook_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest())
    # One `v1,<base64>` per secret the sender holds (two during a rotation): any one may match.
    for signature in signatures.split(" "):
        version, _, value = signature.partition(",")
        if version == "v1" and hmac.compare_digest(value.encode(), expected):
            return json.loads(body)
    raise WebhookVerificationError("no signature matches the secret")


SECRET = os.environ.get("WEBHOOK_SECRET", "")
seen: Set[str] = set()  # in production: a table with a unique key on the webhook-id
seen_lock = threading.Lock()


def accept(event: Any, webhook_id: str) -> None:
    """Must be quick: put the event in your queue or table; fetch the result after the answer."""
    print(webhook_id, event["type"], event["data"]["workflowId"], event["data"]["status"], flush=True)


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))  # the exact bytes received
        try:
            event = verify(SECRET, body, dict(self.headers.items()))
        except (WebhookVerificationError, ValueError):
            return self.answer(401, b"bad signature")
        webhook_id = self.headers["webhook-id"]
        with seen_lock:
            if webhook_id in seen:
                return self.answer(200, b"already received")  # a retry: acknowledge, do nothing
            seen.add(webhook_id)
        try:
            accept(event, webhook_id)
        except Exception:
            with seen_lock:
                seen.discard(webhook_id)  # not stored: the answer is not 2xx, so it comes again
            return self.answer(500, b"not stored")
        self.answer(204)

    def answer(self, status: int, body: bytes = b"") -> None:
        self.send_response(status)
        if body:
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


if __name__ == "__main__":
    ThreadingHTTPServer(("", int(os.environ.get("PORT", "8443"))), Receiver).serve_forever()
