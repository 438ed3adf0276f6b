#!/usr/bin/env bash
# Brings a Node.js runtime from the npm registry (the package node-<os>-<arch>, which is the
# runtime's own binary) into the cache beside the Temporal binaries, and prints its bin directory.
#   scripts/provision-node.sh            the version .nvmrc pins (what every npm script runs on)
#   scripts/provision-node.sh 20.20.2    another one (bench/runtimes.ts compares runtimes)
# npm verifies the package against the registry's integrity hash; nothing else is downloaded.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${TEMPORAL_CACHE_DIR:-$root/.temporal}"
log() { printf '[provision-node] %s\n' "$*" >&2; }

version="${1:-$(tr -d 'v \r\n' < "$root/.nvmrc")}"
if [[ ! "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  log "expected a Node.js version such as 24.21.0, got '$version'"; exit 2
fi
case "$(uname -s)" in
  Linux) os=linux ;; Darwin) os=darwin ;;
  *) log "no node-<os>-<arch> package for $(uname -s); install Node.js $version yourself (nvm install / volta install node@$version)"; exit 1 ;;
esac
case "$(uname -m)" in
  x86_64|amd64) arch=x64 ;; aarch64|arm64) arch=arm64 ;;
  *) log "no node-$os-<arch> package for $(uname -m); install Node.js $version yourself"; exit 1 ;;
esac

package="node-$os-$arch"
target="$cache/node/v$version-$os-$arch"
if [[ -x "$target/bin/node" && "$("$target/bin/node" --version 2>/dev/null)" == "v$version" ]]; then
  echo "$target/bin"; exit 0
fi

command -v npm >/dev/null || { log "npm is required to fetch $package@$version"; exit 1; }
log "fetching $package@$version from the npm registry into $target (first run only, ~50 MB)"
mkdir -p "$cache/node"
work="$(mktemp -d "$cache/node/.partial-XXXXXX")"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack "$package@$version" --silent --no-update-notifier >/dev/null)
tar -xzf "$work/$package-$version.tgz" -C "$work"
found="$("$work/package/bin/node" --version 2>/dev/null || true)"
[[ "$found" == "v$version" ]] || { log "$package@$version holds no runnable node (it says '$found')"; exit 1; }
# Another process may have finished the same version meanwhile: either copy is the same package.
rm -rf "$target.old"; [[ -d "$target" ]] && mv "$target" "$target.old"
mv -T "$work/package" "$target"; rm -rf "$target.old"
log "Node.js $found ready at $target/bin/node"
echo "$target/bin"
