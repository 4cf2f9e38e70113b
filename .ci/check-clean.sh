#!/usr/bin/env bash
# CI, after `make demo` (and `make notebooks`): the replay left every committed artefact byte for byte
# as it was. `make demo` replays every model call from the committed call cache, so on any CPU it must
# rewrite results/demo identically and never touch the cache file itself (README, "Reproducibility").
# Prints the changed paths and `git diff --stat` and exits 1 when anything differs.
set -euo pipefail
cd "$(dirname "$0")/.."
paths=(results/demo results/demo-call-cache.sqlite "$@")
changed=$(git status --porcelain -- "${paths[@]}")
if [ -n "$changed" ]; then
  echo "check-clean: make demo changed committed files (replay not exact):" >&2
  echo "$changed" >&2
  git --no-pager diff --stat -- "${paths[@]}" >&2 || true
  exit 1
fi
echo "check-clean: ${paths[*]} unchanged"
