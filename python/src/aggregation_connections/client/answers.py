"""Reads what the worker answered (a connection's state, result, first step or an answer's outcome) into
the contract's generated model, so a caller gets typed fields, and a value off the contract a typed error
naming its field."""

from __future__ import annotations

from typing import TypeVar

import pydantic

from .errors import AnswerKind, UnexpectedConnectionAnswerError

Answer = TypeVar("Answer")


def describe_validation(error: pydantic.ValidationError) -> str:
    """One ``path: message`` per problem, the wire's field names in the path, as the TypeScript side words them."""
    parts = []
    for issue in error.errors():
        path = ".".join(str(part) for part in issue["loc"])
        parts.append(f"{path}: {issue['msg']}" if path else issue["msg"])
    return "; ".join(parts)


def parse_answer(model: type[Answer] | pydantic.TypeAdapter[Answer], value: object, workflow_id: str, what: AnswerKind) -> Answer:
    """``value`` (the JSON the worker wrote) as ``model``: a model class, or the TypeAdapter of a union of
    them (FirstStep, AnswerOutcome); else UnexpectedConnectionAnswerError."""
    adapter = model if isinstance(model, pydantic.TypeAdapter) else pydantic.TypeAdapter(model)
    try:
        return adapter.validate_python(value)
    except pydantic.ValidationError as error:
        first = error.errors()[0]["loc"] if error.errors() else ()
        field = ".".join(str(part) for part in first)
        raise UnexpectedConnectionAnswerError(workflow_id, what, field, describe_validation(error), value) from error
