"""What every generated contract model shares."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict

# The keys src/logging/redact.ts redacts: a password, an answer, a token, holder identity.
_SECRET_FIELD = re.compile(r"pass(word)?|secret|token|api[-_]?key|authorization|security_?responses|responses|answers?|holder|email|phone", re.IGNORECASE)


class ContractModel(BaseModel):
    # A validation error never quotes its input (a password or an answer would reach a traceback, or
    # the __cause__ of our own errors); each generated model's config adds to this one.
    model_config = ConfigDict(hide_input_in_errors=True)

    def to_wire(self) -> dict[str, Any]:
        """The JSON the TypeScript side reads: its field names, and only what was given (the worker applies the same defaults)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def __repr_args__(self) -> Any:
        """repr() and str() (a log line, a traceback's locals) show a secret field as [redacted]; to_wire() keeps it."""
        for name, value in super().__repr_args__():
            yield (name, "[redacted]") if name is not None and _SECRET_FIELD.search(name) else (name, value)
