#!/usr/bin/env bash
# Lints the project's Dockerfiles (the product's and the sandbox's) with hadolint, configured in
# .hadolint.yaml: Docker's best practices and ShellCheck over every RUN. Exits non-zero on a finding
# at or above the configured threshold. hadolint comes pinned in python/requirements.lock (its own
# binary in a wheel), in the venv scripts/python-env.sh makes or reuses. image:check (scripts/image-check/)
# is the other half: it builds and runs what the Dockerfile says, which no linter can.
#   bash scripts/lint-docker.sh [Dockerfile...]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
venv="$(bash scripts/python-env.sh)"
if [[ $# -eq 0 ]]; then set -- Dockerfile sandbox/Dockerfile; fi
exec "$venv/bin/hadolint" --config .hadolint.yaml --no-color "$@"
