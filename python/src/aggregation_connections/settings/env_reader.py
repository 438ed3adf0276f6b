"""What the codec's settings modules read the environment with (encryption.py and aws_kms.py): typed
reads of one variable each, with every problem collected and named, as the TypeScript loader's zod
issues are."""

from __future__ import annotations

import re
from collections.abc import Mapping


class EnvReader:
    """Reads settings from an environment, collecting every problem (each naming its variable) rather than stopping at the first."""

    def __init__(self, env: Mapping[str, str]) -> None:
        # Empty strings count as unset, so `FOO=` in a .env file means "use the default".
        self.env = {name: value for name, value in env.items() if value != ""}
        self.problems: list[str] = []

    def problem(self, name: str, message: str) -> None:
        self.problems.append(f"{name}: {message}")

    def text(self, name: str, default: str | None = None) -> str | None:
        value = self.env.get(name)
        return default if value is None else value.strip()

    def choice(self, name: str, options: tuple[str, ...], default: str) -> str:
        value = self.text(name, default) or default
        if value not in options:
            self.problem(name, f"must be one of {', '.join(repr(option) for option in options)}, got {value!r}")
            return default
        return value

    def matching(self, name: str, pattern: re.Pattern[str], rule: str, default: str | None = None) -> str | None:
        value = self.text(name, default)
        if value is not None and not pattern.fullmatch(value):
            self.problem(name, rule)
            return default
        return value

    def flag(self, name: str, default: bool) -> bool:
        value = self.text(name)
        if value is None:
            return default
        if value not in ("true", "false", "1", "0"):
            self.problem(name, f"must be one of 'true', 'false', '1', '0', got {value!r}")
            return default
        return value in ("true", "1")

    def count(self, name: str, minimum: int, default: int) -> int:
        value = self.text(name)
        if value is None:
            return default
        try:
            number = float(value)
        except ValueError:
            number = float("nan")
        if not number.is_integer() or number < minimum:
            self.problem(name, f"must be a whole number, at least {minimum}")
            return default
        return int(number)
