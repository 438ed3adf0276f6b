"""Calling the product's ``connections`` Nexus service from a lender's own Temporal namespace
(docs/nexus.md): the service definition typed with the contract's models, the caller's data converter
(the models as the worker's JSON, sealed under the caller's own key) and the boundary key file the
product is given for the caller's endpoint."""

from ..contract.models import (
    ChallengeAnswer,
    NexusAnswerInput,
    NexusConnectionInput,
    NexusConnectionRef,
    NexusRefreshBookInput,
    NexusStartInput,
    NexusStateInput,
)
from ..contract.names import CONNECTIONS_NEXUS_OPERATIONS, CONNECTIONS_NEXUS_SERVICE_NAME, NEXUS_HANDLER_ERROR_TYPES
from .boundary_key import BoundaryKeyFileError, boundary_key_text, new_boundary_key, parse_boundary_key, read_boundary_key
from .data_converter import ContractJSONPayloadConverter, ContractPayloadConverter, caller_data_converter
from .service import ConnectionsNexusService, handler_error_of

__all__ = [
    "CONNECTIONS_NEXUS_OPERATIONS",
    "CONNECTIONS_NEXUS_SERVICE_NAME",
    "NEXUS_HANDLER_ERROR_TYPES",
    "BoundaryKeyFileError",
    "ChallengeAnswer",
    "ConnectionsNexusService",
    "ContractJSONPayloadConverter",
    "ContractPayloadConverter",
    "NexusAnswerInput",
    "NexusConnectionInput",
    "NexusConnectionRef",
    "NexusRefreshBookInput",
    "NexusStartInput",
    "NexusStateInput",
    "boundary_key_text",
    "caller_data_converter",
    "handler_error_of",
    "new_boundary_key",
    "parse_boundary_key",
    "read_boundary_key",
]
