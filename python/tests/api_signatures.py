"""The package's public API as signatures: the body of docs/python-pipeline.md's API block.

    python tests/api_signatures.py   (in python/, the project's venv) prints it

scripts/lib/docs-check.ts runs this (``npm run docs:check``) and compares its output with the page's
block between ``<!-- api-signatures:begin -->`` and ``<!-- api-signatures:end -->``; ``npm run
docs:python-api`` rewrites that block with it. It lives beside the tests, as payload_vectors.py does:
``mypy --strict`` checks it with them, and it is not part of the package a pipeline installs.

What is public (the rule, here only): for each subpackage of ``aggregation_connections``, in
alphabetical order,
- the public members of the client classes: the classes the ``client`` subpackage exports (its
  ``__all__``) that define public methods of their own, today ``ConnectionsClient``; their methods,
  class and static methods and properties whose names do not start with ``_``, in the order the class
  defines them;
- every function the subpackage exports (its ``__all__``), in that order.
A subpackage with none of these (``contract``: models only) has no section. Each signature is rendered
by ``inspect.signature`` with its annotations as the source writes them (every module has
``from __future__ import annotations``), as a stub (``def name(params) -> result: ...``).
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import aggregation_connections

#: The subpackage whose exported classes are client classes (their methods are on the page).
CLIENT_SUBPACKAGE = "client"
#: A stub longer than this puts one parameter a line, as black would.
WIDTH = 120


def _annotation(annotation: object) -> str:
    # Strings as written in the source (postponed annotations); anything else as inspect writes it.
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)


def _default(value: object) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def render(function: Callable[..., Any], indent: str = "", decorator: str | None = None) -> str:
    """One stub (``def name(params) -> result: ...``), the annotations as the source writes them."""
    signature = inspect.signature(function)
    kinds = [parameter.kind for parameter in signature.parameters.values()]
    parameters: list[str] = []
    for index, parameter in enumerate(signature.parameters.values()):
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY and inspect.Parameter.VAR_POSITIONAL not in kinds[:index] and "*" not in parameters:
            parameters.append("*")
        prefix = "*" if parameter.kind is inspect.Parameter.VAR_POSITIONAL else "**" if parameter.kind is inspect.Parameter.VAR_KEYWORD else ""
        text = prefix + parameter.name
        if parameter.annotation is not inspect.Parameter.empty:
            text += f": {_annotation(parameter.annotation)}"
        if parameter.default is not inspect.Parameter.empty:
            text += f" = {_default(parameter.default)}"
        parameters.append(text)
        if parameter.kind is inspect.Parameter.POSITIONAL_ONLY and inspect.Parameter.POSITIONAL_ONLY not in kinds[index + 1 :]:
            parameters.append("/")
    head = f"{indent}{'async def' if inspect.iscoroutinefunction(function) else 'def'} {function.__name__}("
    result = "" if signature.return_annotation is inspect.Signature.empty else f" -> {_annotation(signature.return_annotation)}"
    tail = f"){result}: ..."
    line = head + ", ".join(parameters) + tail
    if len(line) > WIDTH:
        line = head + "\n" + "".join(f"{indent}    {parameter},\n" for parameter in parameters) + indent + tail
    return f"{indent}{decorator}\n{line}" if decorator else line


def subpackages() -> list[ModuleType]:
    """Every subpackage (or module) of aggregation_connections, by name."""
    names = sorted(info.name for info in pkgutil.iter_modules(aggregation_connections.__path__))
    return [importlib.import_module(f"aggregation_connections.{name}") for name in names]


def exported(module: ModuleType) -> list[tuple[str, object]]:
    return [(name, getattr(module, name)) for name in getattr(module, "__all__", [])]


def _methods(cls: type) -> Iterator[str]:
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, classmethod):
            yield render(member.__func__, "    ", "@classmethod")
        elif isinstance(member, staticmethod):
            yield render(member.__func__, "    ", "@staticmethod")
        elif isinstance(member, property) and member.fget is not None:
            yield render(member.fget, "    ", "@property")
        elif inspect.isfunction(member):
            yield render(member, "    ")


def client_classes(module: ModuleType) -> list[type]:
    """The classes ``module`` exports that define public methods of their own, when it is the client subpackage."""
    if module.__name__ != f"aggregation_connections.{CLIENT_SUBPACKAGE}":
        return []
    return [member for _, member in exported(module) if inspect.isclass(member) and any(True for _ in _methods(member))]


def functions(module: ModuleType) -> list[Callable[..., Any]]:
    """The functions ``module`` exports, in the order of its ``__all__``."""
    return [member for _, member in exported(module) if inspect.isfunction(member)]


def api_signatures() -> str:
    """The block's body: one section per subpackage with public members, sections two blank lines apart."""
    sections: list[str] = []
    for module in subpackages():
        parts = [f"class {cls.__name__}:\n" + "\n".join(_methods(cls)) for cls in client_classes(module)]
        if functions(module):
            parts.append("\n".join(render(function) for function in functions(module)))
        if parts:
            sections.append(f"# {module.__name__}\n" + "\n\n\n".join(parts))
    return "\n\n\n".join(sections) + "\n"


if __name__ == "__main__":
    sys.stdout.write(api_signatures())
