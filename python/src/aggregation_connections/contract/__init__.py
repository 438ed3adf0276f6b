"""The contract with the worker, generated from its zod schemas (scripts/generate-python-models.ts)."""

from .base import ContractModel
from .models import (
    AccountsDetailResponse,
    AttributesResponse,
    ConnectionInput,
    InvestmentsResponse,
    SecurityChallenge,
    SecurityResponses,
)

__all__ = [
    "AccountsDetailResponse",
    "AttributesResponse",
    "ConnectionInput",
    "ContractModel",
    "InvestmentsResponse",
    "SecurityChallenge",
    "SecurityResponses",
]
