#!/usr/bin/env bash
# Provides a real Temporal dev server (official CLI, built from its Go module), sdk-java's
# time-skipping test server (from Maven Central) and MinIO (an S3 server for the payload store's
# tests, built from its Go module), cached in .temporal/ and reused on later runs.
# No Docker, no GitHub downloads: only the Go module proxy and Maven Central are needed.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${TEMPORAL_CACHE_DIR:-$root/.temporal}"
cli_version="${TEMPORAL_CLI_VERSION:-1.5.1}"
test_server_version="${TEMPORAL_TEST_SERVER_VERSION:-1.32.1}"
# MinIO's release tags are not Go semver: pin one pseudo-version (its go.mod has no replace, so go install works).
minio_version="${MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
mkdir -p "$cache/bin"

log() { printf '[provision-temporal] %s\n' "$*" >&2; }

provide_cli() {
  local target="$cache/bin/temporal"
  if [[ -n "${TEMPORAL_CLI_PATH:-}" ]]; then log "using TEMPORAL_CLI_PATH=$TEMPORAL_CLI_PATH"; return; fi
  if [[ -x "$target" ]] && "$target" --version 2>/dev/null | grep -q "$cli_version"; then
    log "temporal CLI $cli_version cached at $target"; return
  fi
  if command -v temporal >/dev/null 2>&1; then
    log "temporal found on PATH: $(command -v temporal)"; ln -sf "$(command -v temporal)" "$target"; return
  fi
  command -v go >/dev/null || { log "go is required to build the Temporal CLI"; exit 1; }
  log "building temporal CLI v$cli_version from its Go module (first run only, several minutes)"
  GOBIN="$cache/bin" CGO_ENABLED=0 GOFLAGS=-mod=mod GOSUMDB="${GOSUMDB:-sum.golang.org}" \
    go install -ldflags "-X github.com/temporalio/cli/temporalcli.Version=$cli_version" \
    "github.com/temporalio/cli/cmd/temporal@v$cli_version" \
  || GOBIN="$cache/bin" CGO_ENABLED=0 GOFLAGS=-mod=mod GOSUMDB=off \
    go install -ldflags "-X github.com/temporalio/cli/temporalcli.Version=$cli_version" \
    "github.com/temporalio/cli/cmd/temporal@v$cli_version"
  log "built $("$target" --version)"
}

provide_test_server() {
  local dir="$cache/test-server-$test_server_version" wrapper="$cache/bin/temporal-test-server"
  if [[ -x "$wrapper" && -d "$dir/lib" ]] && grep -q "$test_server_version" "$wrapper"; then
    log "time-skipping test server $test_server_version cached"; return
  fi
  command -v mvn >/dev/null || { log "maven and java 17 are required for the time-skipping test server"; exit 1; }
  log "fetching io.temporal:temporal-test-server:$test_server_version and its dependencies from Maven Central"
  mkdir -p "$dir"
  cat >"$dir/pom.xml" <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.provision</groupId><artifactId>temporal-test-server-deps</artifactId><version>0</version>
  <dependencies>
    <dependency><groupId>io.temporal</groupId><artifactId>temporal-test-server</artifactId><version>$test_server_version</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-nop</artifactId><version>2.0.16</version></dependency>
  </dependencies>
</project>
POM
  mvn -B -q -f "$dir/pom.xml" dependency:copy-dependencies -DoutputDirectory="$dir/lib" -DincludeScope=runtime
  # The SDK kills the process it started, so the wrapper must exec java rather than fork it.
  cat >"$wrapper" <<SH
#!/usr/bin/env bash
# temporal-test-server $test_server_version (sdk-java), args: <port>
exec java -cp "$dir/lib/*" io.temporal.testserver.TestServer "\$@"
SH
  chmod +x "$wrapper"
  log "test server ready: $wrapper"
}

# The cached binary records the module version it was built from (`go version -m`).
minio_is_current() {
  [[ -x "$1" ]] || return 1
  command -v go >/dev/null || return 0
  go version -m "$1" 2>/dev/null | grep -q "github.com/minio/minio[[:space:]]*$minio_version"
}

provide_minio() {
  local target="$cache/bin/minio"
  if [[ -n "${MINIO_PATH:-}" ]]; then log "using MINIO_PATH=$MINIO_PATH"; return; fi
  if minio_is_current "$target"; then log "minio $minio_version cached at $target"; return; fi
  command -v go >/dev/null || { log "go is required to build MinIO (the S3 server of the payload-store tests)"; exit 1; }
  log "building minio $minio_version from its Go module (first run only, about 3 minutes)"
  GOBIN="$cache/bin" CGO_ENABLED=0 GOFLAGS=-mod=mod GOSUMDB="${GOSUMDB:-sum.golang.org}" \
    go install "github.com/minio/minio@$minio_version" \
  || GOBIN="$cache/bin" CGO_ENABLED=0 GOFLAGS=-mod=mod GOSUMDB=off \
    go install "github.com/minio/minio@$minio_version"
  log "built $target"
}

case "${1:-all}" in
  cli) provide_cli ;;
  test-server) provide_test_server ;;
  minio) provide_minio ;;
  all) provide_cli; provide_test_server; provide_minio ;;
  *) log "usage: $0 [all|cli|test-server|minio]"; exit 2 ;;
esac
