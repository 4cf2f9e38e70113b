#!/usr/bin/env bash
# `make install`: node_modules for the Node that runs the kit (the `node` on PATH; the Makefile puts
# scripts/node24.sh's first and sets npm_config_nodedir to its headers). `npm ci` runs when
# node_modules is missing, older than package.json or package-lock.json, stamped with another Node
# ABI (node_modules/.installed), or when an add-on does not load with this Node (built for another
# one, or against other headers); then each add-on is loaded with this Node (scripts/check-addons.mjs)
# and a failure is one line and exit 1. Two commands at once wait for each other (flock on
# .cache/install.lock), so one installs and the other finds it done.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .cache
if command -v flock >/dev/null 2>&1; then
  exec 9>.cache/install.lock
  flock 9
fi
abi=$(node -p process.versions.modules)
stamp=node_modules/.installed
if [ -f "$stamp" ] && [ "$stamp" -nt package.json ] && [ "$stamp" -nt package-lock.json ]; then
  if [ "$(cat "$stamp")" = "$abi" ] && node scripts/check-addons.mjs 2>/dev/null; then exit 0; fi
  echo "node_modules does not load under Node $(node --version) (ABI $abi; built for ABI $(cat "$stamp") or against other headers); reinstalling it"
fi
npm ci --no-audit --no-fund
node scripts/check-addons.mjs
echo "$abi" > "$stamp"
