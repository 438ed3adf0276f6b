#!/usr/bin/env bash
# Runs a command with the project's Node.js first on PATH: the machine's own `node` when it is the
# major that .nvmrc pins, else that exact version from the cache (scripts/provision-node.sh brings it
# from the npm registry once). Every npm script goes through here, so the stack, the tests, the CLI,
# the console and the benchmarks run on one runtime, and so does every `node` they start.
#   bash scripts/with-pinned-node.sh tsx src/worker.ts
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
(( $# > 0 )) || { printf 'usage: %s <command> [args...]\n' "$0" >&2; exit 2; }
pinned="$(tr -d 'v \r\n' < "$root/.nvmrc")"
own="$(node --version 2>/dev/null || true)"
own="${own#v}"
if [[ "${own%%.*}" != "${pinned%%.*}" ]]; then
  bin="$(bash "$root/scripts/provision-node.sh" "$pinned")"
  export PATH="$bin:$PATH"
fi
exec "$@"
