"""The contract with the worker, generated from its zod schemas (scripts/generate-python-models.ts)."""

from .base import ContractModel
from .models import (
    AccountsDetailResponse,
    AttributesResponse,
    ChallengeSet,
    ConnectionFailureInfo,
    ConnectionInput,
    ConnectionResult,
    ConnectionState,
    InvestmentsResponse,
    SecurityChallenge,
    SecurityResponses,
)

__all__ = [
    "AccountsDetailResponse",
    "AttributesResponse",
    "ChallengeSet",
    "ConnectionFailureInfo",
    "ConnectionInput",
    "ConnectionResult",
    "ConnectionState",
    "ContractModel",
    "InvestmentsResponse",
    "SecurityChallenge",
    "SecurityResponses",
]
