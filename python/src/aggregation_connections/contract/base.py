"""What every generated contract model shares."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ContractModel(BaseModel):
    def to_wire(self) -> dict[str, Any]:
        """The JSON the TypeScript side reads: its field names, and only what was given (the worker applies the same defaults)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)
