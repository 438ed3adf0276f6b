"""The pipeline's async client: ``ConnectionsClient.connect()`` and its verbs (start,
start_and_await_first_step, state, answer, result, cancel, list), with the TypeScript client's errors."""

from . import exit_collect  # noqa: F401 (registers the hook)
from .business_key import connection_key, parse_business_key
from .connections import ConnectionsClient, ConnectionSummary, data_converter_for, visibility_query
from .errors import (
    CONNECTION_FAILURE_TYPES,
    AnswerRejectedError,
    ConnectionAlreadyEndedError,
    ConnectionClientError,
    ConnectionFailedError,
    ConnectionNotFoundError,
    InvalidBusinessKeyError,
    InvalidConnectionInputError,
    TemporalUnavailableError,
    UnexpectedConnectionAnswerError,
)

__all__ = [
    "CONNECTION_FAILURE_TYPES",
    "AnswerRejectedError",
    "ConnectionAlreadyEndedError",
    "ConnectionClientError",
    "ConnectionFailedError",
    "ConnectionNotFoundError",
    "ConnectionSummary",
    "ConnectionsClient",
    "InvalidBusinessKeyError",
    "InvalidConnectionInputError",
    "TemporalUnavailableError",
    "UnexpectedConnectionAnswerError",
    "connection_key",
    "data_converter_for",
    "parse_business_key",
    "visibility_query",
]
