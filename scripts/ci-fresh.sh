#!/usr/bin/env bash
# `npm run ci:fresh`: `.ci/run` as a machine that never ran the project runs it. Clones HEAD into a
# new temporary root (git clone --no-local), points every cache at empty folders there (the
# project's Temporal cache and Python venvs, Go's module and build caches and GOPATH, npm's, pip's,
# Maven's, XDG_CACHE_HOME, TMPDIR, and HOME itself), runs `bash .ci/run` in the clone with CI=true,
# no stdin and only the environment a fresh machine has, and prints the wall time, the runner's
# closing lines and every provisioning step's seconds and whether it was built, fetched or cached.
# Takes the better part of an hour on 2 cores and 15 GB or more of disk; run it before a change to
# provisioning, the tests' servers or timeouts lands (docs/development.md).
#
#   npm run ci:fresh                      the whole run; the log is kept in artifacts/ci-fresh/<time>/
#   CI_FRESH_DRY=1 npm run ci:fresh       print the environment and the command, run nothing
#   npm run ci:fresh -- go env GOMODCACHE run another command in the fresh clone (a check of the plumbing)
#   KEEP=1 npm run ci:fresh               leave the temporary root (clone and caches) for a look
#
# What the run gets from this machine: PATH without the project's caches and GOPATH/bin, the
# variables through which it reaches the registries (proxies, certificates, index and proxy URLs,
# PYENV_ROOT, JAVA_HOME; CI_FRESH_PASS names more), and the machine's configuration files (npm's
# ~/.npmrc, Go's env file, pip's and git's configuration, Maven's settings.xml) by reference, none of
# them a cache. Only committed work is tested: uncommitted changes are not in the clone.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[ci-fresh] %s\n' "$*" >&2; }

head="$(git -C "$repo" rev-parse HEAD)"
command=("$@")
(( ${#command[@]} > 0 )) || command=(bash .ci/run)

fresh="$(mktemp -d "${CI_FRESH_TMPDIR:-${TMPDIR:-/tmp}}/ci-fresh-XXXXXX")"
cleanup() {
  if [[ "${KEEP:-}" == 1 && -z "${CI_FRESH_DRY:-}" ]]; then log "kept $fresh (KEEP=1): remove it with chmod -R u+w $fresh && rm -rf $fresh"; return; fi
  # Go's module cache is read-only.
  chmod -R u+w "$fresh" 2>/dev/null || true
  rm -rf "$fresh"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# PATH without what this machine's runs left: the project's caches (the pinned Node.js that
# with-pinned-node.sh put first), GOPATH's bin, npm's node_modules/.bin and node-gyp-bin.
old_cache="${TEMPORAL_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/aggregation-connections/temporal}"
old_gopath="$(go env GOPATH 2>/dev/null || true)"
old_gopath="${old_gopath%%:*}"
path=""
IFS=: read -ra dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
  case "$dir" in
    "" | "$repo" | "$repo"/* | "$(dirname "$old_cache")"/* | */node_modules/.bin | */node-gyp-bin) continue ;;
  esac
  [[ -n "$old_gopath" && "$dir" == "$old_gopath/bin" ]] && continue
  [[ ":$path:" == *":$dir:"* ]] && continue
  path="${path:+$path:}$dir"
done

home="$fresh/home" cache="$fresh/cache"
vars=(
  PATH="$path" HOME="$home" CI=true TMPDIR="$fresh/tmp"
  XDG_CACHE_HOME="$cache"
  TEMPORAL_CACHE_DIR="$cache/aggregation-connections/temporal"
  GOPATH="$fresh/go" GOMODCACHE="$fresh/go/pkg/mod" GOCACHE="$cache/go-build"
  npm_config_cache="$fresh/npm-cache"
  PIP_CACHE_DIR="$cache/pip"
  MAVEN_OPTS="-Dmaven.repo.local=$fresh/m2/repository"
)
# The machine's configuration (not caches), where it has one: read in place.
[[ -f "$HOME/.npmrc" ]] && vars+=(npm_config_userconfig="$HOME/.npmrc")
go_env="$(go env GOENV 2>/dev/null || true)"
[[ -n "$go_env" && -f "$go_env" ]] && vars+=(GOENV="$go_env")
for pip_conf in "$HOME/.config/pip/pip.conf" "$HOME/.pip/pip.conf"; do
  if [[ -f "$pip_conf" ]]; then vars+=(PIP_CONFIG_FILE="$pip_conf"); break; fi
done
[[ -f "$HOME/.gitconfig" ]] && vars+=(GIT_CONFIG_GLOBAL="$HOME/.gitconfig")
maven_settings=""
[[ -f "$HOME/.m2/settings.xml" ]] && maven_settings="$HOME/.m2/settings.xml"
# How this machine reaches the registries, and who it is.
for name in USER LOGNAME SHELL TERM LANG LC_ALL LC_CTYPE TZ \
  http_proxy https_proxy no_proxy all_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY ALL_PROXY \
  SSL_CERT_FILE SSL_CERT_DIR NODE_EXTRA_CA_CERTS REQUESTS_CA_BUNDLE CURL_CA_BUNDLE \
  PIP_CERT PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST PIP_DEFAULT_TIMEOUT PIP_DISABLE_PIP_VERSION_CHECK \
  npm_config_registry NPM_CONFIG_REGISTRY GOPROXY GOSUMDB GONOSUMDB GONOSUMCHECK GOPRIVATE GONOPROXY GOINSECURE \
  PYENV_ROOT PYENV_VERSION JAVA_HOME ${CI_FRESH_PASS:-}; do
  [[ -n "${!name+set}" ]] && vars+=("$name=${!name}")
done

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
logs="${CI_FRESH_LOG_DIR:-$repo/artifacts/ci-fresh/$stamp}"

if [[ -n "${CI_FRESH_DRY:-}" ]]; then
  log "dry run (CI_FRESH_DRY): nothing cloned, nothing run"
  log "temporary root: $fresh (removed afterwards unless KEEP=1)"
  log "clone: git clone --no-local $repo $fresh/clone, then HEAD $head"
  log "environment (env -i, nothing else):"
  printf '  %s\n' "${vars[@]}" >&2
  [[ -n "$maven_settings" ]] && log "Maven's settings: $maven_settings, copied to $home/.m2/settings.xml"
  log "command, in $fresh/clone with stdin from /dev/null: ${command[*]}"
  log "log: $logs/run.log"
  exit 0
fi

[[ -z "$(git -C "$repo" status --porcelain --untracked-files=no)" ]] || log "uncommitted changes are not in the clone: it runs HEAD ($head)"
free_kb="$(df -Pk "$fresh" | awk 'NR == 2 { print $4 }')"
(( free_kb >= 15 * 1024 * 1024 )) || log "only $(( free_kb / 1024 / 1024 )) GB free under $fresh: a whole run needs 15 GB or more (Go's caches)"

mkdir -p "$home" "$cache" "$fresh/tmp" "$logs"
# As a machine's /tmp: anyone may pass through the root (mktemp -d made it 0700) and write in its
# tmp (sticky), so PostgreSQL, which the tests start as the postgres user under root, reaches its
# data directory under TMPDIR.
chmod 0711 "$fresh"
chmod 1777 "$fresh/tmp"
if [[ -n "$maven_settings" ]]; then mkdir -p "$home/.m2" && cp "$maven_settings" "$home/.m2/settings.xml"; fi
git clone --quiet --no-local "$repo" "$fresh/clone"
git -C "$fresh/clone" checkout --quiet --detach "$head"
log "HEAD $head in $fresh/clone, every cache empty under $fresh; log: $logs/run.log"
log "running: ${command[*]}"

started=$(date +%s)
status=0
(cd "$fresh/clone" && exec env -i "${vars[@]}" "${command[@]}") </dev/null 2>&1 | tee "$logs/run.log" || status=$?
seconds=$(( $(date +%s) - started ))

# The runner writes the `later` lanes' provisioning to the cache, which goes with the root.
later_log="$cache/aggregation-connections/temporal/provision-later.log"
[[ -f "$later_log" ]] && cp "$later_log" "$logs/provision-later.log"

{
  echo
  echo "[ci-fresh] ${command[*]} on HEAD $head, every cache empty: exit $status in $(( seconds / 60 )) min $(( seconds % 60 )) s ($seconds s wall)"
  grep -E '^(suite: |replay: )' "$logs/run.log" | tail -2 | sed 's/^/[ci-fresh]   /' || true
  grep -E '^[0-9]+ passed, [0-9]+ failed' "$logs/run.log" | tail -1 | sed 's/^/[ci-fresh]   /' || true
  echo "[ci-fresh] provisioning, each step's seconds and what it did:"
  for file in "$logs/run.log" "$logs/provision-later.log"; do
    [[ -f "$file" ]] && grep -hE '^\[provision-(temporal|node)\] (provisioned |FAILED |Node\.js .* ready)' "$file" | sed 's/^/[ci-fresh]   /' || true
  done
  echo "[ci-fresh] logs: $logs"
} | tee -a "$logs/summary.txt"
exit "$status"
