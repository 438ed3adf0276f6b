"""docs/python-pipeline.md's API block is the package's public functions as the code declares them: every
method of ConnectionsClient and every function the subpackages export (their ``__all__``), rendered from
their signatures (annotations as written). When one changes, the test fails and shows the new block;
``PYTHONPATH=src python -m tests.test_docs_api`` (in python/) prints it to paste."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aggregation_connections.client import ConnectionsClient

PAGE = Path(__file__).resolve().parents[2] / "docs/python-pipeline.md"
MODULES = ("client", "settings", "codec", "payload_store")
# Longer lines put one parameter a line, as black would.
WIDTH = 120


def _default(value: object) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def render(function: Callable[..., Any], indent: str = "", decorator: str | None = None) -> str:
    """One stub (``def name(params) -> result: ...``), the annotations as the source writes them."""
    signature = inspect.signature(function)
    parameters: list[str] = []
    keyword_only = False
    for parameter in signature.parameters.values():
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and not keyword_only:
            parameters.append("*")
            keyword_only = True
        text = parameter.name if parameter.annotation is inspect.Parameter.empty else f"{parameter.name}: {parameter.annotation}"
        parameters.append(text if parameter.default is inspect.Parameter.empty else f"{text} = {_default(parameter.default)}")
    head = f"{indent}{'async def' if inspect.iscoroutinefunction(function) else 'def'} {function.__name__}("
    tail = f") -> {signature.return_annotation}: ..."
    line = head + ", ".join(parameters) + tail
    if len(line) > WIDTH:
        line = head + "\n" + "".join(f"{indent}    {parameter},\n" for parameter in parameters) + indent + tail
    return f"{indent}{decorator}\n{line}" if decorator else line


def api_block() -> str:
    """The block the page must show."""
    lines = ["class ConnectionsClient:"]
    for name, member in vars(ConnectionsClient).items():
        if name.startswith("_"):
            continue
        if isinstance(member, classmethod):
            lines.append(render(member.__func__, "    ", "@classmethod"))
        elif inspect.isfunction(member):
            lines.append(render(member, "    "))
    for module_name in MODULES:
        module = importlib.import_module(f"aggregation_connections.{module_name}")
        functions = [getattr(module, name) for name in module.__all__ if inspect.isfunction(getattr(module, name))]
        lines += ["", "", f"# aggregation_connections.{module_name}", *(render(function) for function in functions)]
    return "\n".join(lines) + "\n"


def page_block() -> str | None:
    match = re.search(r"^## API\n.*?^```python\n(.*?)^```$", PAGE.read_text("utf-8"), re.DOTALL | re.MULTILINE)
    return match.group(1) if match else None


def test_the_page_shows_every_public_signature_as_the_code_declares_it() -> None:
    expected = api_block()
    ast.parse(expected)  # stubs a reader (or an editor) can take as Python
    assert page_block() == expected, f"docs/python-pipeline.md's ## API block differs from the code; it should read:\n\n{expected}"


def test_a_changed_signature_is_noticed() -> None:
    def start(key: str, *, rerun: str = "never") -> str:
        return key

    def start_later(key: str, *, rerun: str = "always") -> str:
        return key

    assert render(start, "    ") == '    def start(key: str, *, rerun: str = "never") -> str: ...'
    assert render(start_later, "    ") != render(start, "    ").replace("start(", "start_later(")
    # The page's block holds each parameter of a long signature on its line, so one default changed shows.
    assert '        rerun: RerunPolicy = "if-failed",\n' in api_block()


if __name__ == "__main__":
    print(api_block(), end="")
