#!/usr/bin/env bash
# Lints the Python package in python/ (and the chart check's scripts/helm-check/*.py) with ruff, as configured in python/pyproject.toml ([tool.ruff]):
# `ruff check` (pycodestyle, pyflakes, isort, bugbear, pyupgrade) and `ruff format --check` (the
# formatter's layout; the generated contract/models.py and contract/names.py are left out of it). Exits
# non-zero on any finding; fix with `ruff check --fix python/` and `ruff format python/` from the same venv.
# The venv is the one scripts/python-env.sh makes (or reuses) from python/requirements.lock, which pins ruff.
#   bash scripts/lint-python.sh
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv="$(bash scripts/python-env.sh)"
status=0
"$venv/bin/ruff" check python/ scripts/helm-check/ || status=1
"$venv/bin/ruff" format --check python/ scripts/helm-check/ || status=1
exit "$status"
