"""The data converter of a lender's caller worker and client: the contract's models go out as the
worker's JSON (their wire names, only what was set: ``ContractModel.to_wire``) and come back validated
into the operation's output type (its model, or a union such as AnswerOutcome); every payload sealed
under the caller's own key with the product's payload format (``aggregation_connections.codec``), so the
product's Nexus worker, given the same key for the caller's endpoint, opens what the caller sends and
seals what it returns."""

from __future__ import annotations

from typing import Any

import temporalio.api.common.v1
import temporalio.converter
from pydantic_core import SchemaSerializer, core_schema
from temporalio.contrib.pydantic import PydanticJSONPlainPayloadConverter

from ..codec.encryption_codec import EncryptionCodec
from ..codec.key_source import EncryptionKeys

_SERIALIZER = SchemaSerializer(core_schema.any_schema())


class ContractJSONPayloadConverter(PydanticJSONPlainPayloadConverter):
    """JSON through pydantic, a model under its wire names (aliases) with only the fields that were set;
    read back with a TypeAdapter of the type hint (the contract's models accept their wire names)."""

    def to_payload(self, value: Any) -> temporalio.api.common.v1.Payload | None:
        data = _SERIALIZER.to_json(value, by_alias=True, exclude_unset=True)
        return temporalio.api.common.v1.Payload(metadata={"encoding": self.encoding.encode()}, data=data)


class ContractPayloadConverter(temporalio.converter.CompositePayloadConverter):
    """The default converters, JSON replaced by ContractJSONPayloadConverter."""

    def __init__(self) -> None:
        json_converter = ContractJSONPayloadConverter()
        super().__init__(
            *(
                json_converter if isinstance(converter, temporalio.converter.JSONPlainPayloadConverter) else converter
                for converter in temporalio.converter.DefaultPayloadConverter.default_encoding_payload_converters
            )
        )


def caller_data_converter(keys: EncryptionKeys) -> temporalio.converter.DataConverter:
    """For the caller's Client and Worker: the contract's models as JSON, sealed under the caller's key."""
    return temporalio.converter.DataConverter(payload_converter_class=ContractPayloadConverter, payload_codec=EncryptionCodec(keys))
