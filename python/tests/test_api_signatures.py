"""The generator of docs/python-pipeline.md's API block (tests/api_signatures.py): how it renders a
signature and which members it takes as public. Whether the page's block matches its output is the
docs checker's (scripts/lib/docs-check.ts, ``npm run docs:check``), not this file's."""

from __future__ import annotations

import ast
import inspect
import re

from aggregation_connections.client import ConnectionsClient
from tests.api_signatures import api_signatures, functions, render, subpackages


def test_the_block_is_stubs_that_parse_as_python() -> None:
    ast.parse(api_signatures())


def test_a_signature_is_rendered_with_its_kinds_defaults_and_annotations_as_written() -> None:
    def start(key: str, *, rerun: str = "never") -> str:
        return key

    def every_kind(a: int, /, b: bytes = b"", *names: str, flag: bool = False, **extra: str) -> None:
        pass

    async def close(self) -> None:  # type: ignore[no-untyped-def]
        pass

    assert render(start, "    ") == '    def start(key: str, *, rerun: str = "never") -> str: ...'
    assert render(every_kind) == "def every_kind(a: int, /, b: bytes = b'', *names: str, flag: bool = False, **extra: str) -> None: ..."
    assert render(close, "    ", "@classmethod") == "    @classmethod\n    async def close(self) -> None: ..."


def test_a_long_signature_puts_one_parameter_a_line() -> None:
    def visibility(*, status: str | None = None, customer_id: str | None = None, institution: str | None = None, login_id: str | None = None) -> str:
        return ""

    assert render(visibility).split("\n") == [
        "def visibility(",
        "    *,",
        "    status: str | None = None,",
        "    customer_id: str | None = None,",
        "    institution: str | None = None,",
        "    login_id: str | None = None,",
        ") -> str: ...",
    ]


def test_every_exported_function_and_every_public_method_of_the_client_is_in_the_block() -> None:
    block = api_signatures()
    defined = re.findall(r"^\s*(?:async )?def (\w+)\(", block, re.MULTILINE)
    exported = [function.__name__ for module in subpackages() for function in functions(module)]
    methods = [
        name for name, member in vars(ConnectionsClient).items() if not name.startswith("_") and (inspect.isfunction(member) or isinstance(member, classmethod))
    ]
    assert "connection_key" in exported and "codec_from_env" in exported and "start" in methods
    assert sorted(defined) == sorted(exported + methods)
    # One section per subpackage with public members, in the order of their names; contract has models only.
    sections = re.findall(r"^# (aggregation_connections\.\w+)$", block, re.MULTILINE)
    assert sections == sorted(sections) and "aggregation_connections.client" in sections
    assert "aggregation_connections.contract" not in sections
