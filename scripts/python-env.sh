#!/usr/bin/env bash
# Makes (or reuses) the Python environment of python/ and prints its directory: a venv holding
# exactly python/requirements.lock (installed with --require-hashes), kept in the cache beside the
# Temporal binaries and named by the hash of the lock and the interpreter's version, so a fresh clone with the
# same lock reuses it in no time and a changed lock gets a new one. The package itself is not
# installed into it (several clones share one venv): pytest and mypy import it from the checkout's
# python/src (pyproject.toml's pythonpath and mypy_path).
#   venv="$(bash scripts/python-env.sh)" && "$venv/bin/python" -m pytest python/
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Beside the Temporal cache (…/aggregation-connections/python-venv in CI), else in the ignored .temporal/.
if [[ -n "${TEMPORAL_CACHE_DIR:-}" ]]; then venvs="$(dirname "$TEMPORAL_CACHE_DIR")/python-venv"; else venvs="$root/.temporal/python-venv"; fi
lock="$root/python/requirements.lock"
log() { printf '[python-env] %s\n' "$*" >&2; }

python="${PYTHON:-python3}"
command -v "$python" >/dev/null || { log "$python not found: install Python 3.11 or later (Debian: apt-get install python3 python3-venv)"; exit 1; }
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || { log "$("$python" --version 2>&1) is too old: python/ needs 3.11 or later (set PYTHON to another interpreter)"; exit 1; }

# The lock holds every dependency (pyproject.toml's own settings need no new venv), and the interpreter's version.
key="$(cat "$lock" <("$python" --version 2>&1) | sha256sum | cut -c1-16)"
venv="$venvs/$key"
# .complete's time is the last use: venvs of older locks unused for 30 days are removed when a new one is made.
if [[ -f "$venv/.complete" ]]; then touch "$venv/.complete"; printf '%s\n' "$venv"; exit 0; fi

mkdir -p "$venvs"
find "$venvs" -mindepth 2 -maxdepth 2 -name .complete -mtime +30 -printf '%h\n' 2>/dev/null | xargs -r rm -rf
# Built beside its final place and renamed when whole: a run stopped halfway leaves no half venv,
# and two runs at once each build their own (the second rename finds the first's and keeps it).
draft="$(mktemp -d "$venvs/.draft-$key-XXXXXX")"
trap 'rm -rf "$draft"' EXIT
log "creating the Python environment for python/requirements.lock at $venv"
if ! "$python" -m venv "$draft" >&2; then
  log "python3 -m venv failed: on Debian or Ubuntu install python3-venv (apt-get install python3-venv)"; exit 1
fi
"$draft/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-hashes --only-binary :all: -r "$lock" >&2
touch "$draft/.complete"
# Only `python -m ...` is used, which finds its venv from where it is run: the renamed draft works
# (the console scripts' shebangs would name the draft; nothing calls them). bin/ruff is the exception:
# ruff's wheel ships it as a native binary, no shebang, so scripts/lint-python.sh runs it directly.
mv -T "$draft" "$venv" 2>/dev/null || [[ -f "$venv/.complete" ]] || { log "cannot move the new environment to $venv"; exit 1; }
printf '%s\n' "$venv"
