#!/usr/bin/env bash
# Builds `llama-server` and `llama-batched-bench` from the llama.cpp release that node-llama-cpp bundles
# (node_modules/node-llama-cpp/llama/gitRelease.bundle, tag in llama.cpp.info.json), so the server path
# runs the same llama.cpp as the in-process backend (README "Inference servers"; issue 16 §1).
# Output folder, outside git and keyed by the release tag and the compute backend:
#   ${MERIT_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/merit-kit}/llama.cpp-<tag>-<cpu|cuda>/
# A present binary is reused. MERIT_LLAMA_GPU=cpu|cuda overrides the automatic choice (CUDA only
# when both `nvcc` and a working `nvidia-smi` are found); MERIT_BUILD_JOBS sets the make jobs (2).
# Progress goes to stderr; the last line on stdout is the path of the llama-server binary.
# `--locate` builds nothing: it prints the path when both binaries are present and exits 1 otherwise.
set -euo pipefail
locate=0
case "${1:-}" in
  "") ;;
  --locate) locate=1 ;;
  *) echo "build-llama-server: unknown argument $1; usage: scripts/build-llama-server.sh [--locate]" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "$0")/.." && pwd)"
llama_dir="$root/node_modules/node-llama-cpp/llama"
bundle="$llama_dir/gitRelease.bundle"
info="$llama_dir/llama.cpp.info.json"
if [ ! -f "$bundle" ] || [ ! -f "$info" ]; then
  echo "build-llama-server: $bundle not found; run \`make install\` first" >&2
  exit 2
fi
tag="$(sed -nE 's/.*"tag"[[:space:]]*:[[:space:]]*"([^"]+)".*/\1/p' "$info")"
if [ -z "$tag" ] || ! [[ "$tag" =~ ^[A-Za-z0-9._-]+$ ]]; then
  echo "build-llama-server: no usable \"tag\" in $info; reinstall node-llama-cpp (npm ci)" >&2
  exit 2
fi

gpu="${MERIT_LLAMA_GPU:-auto}"
case "$gpu" in
  auto)
    if command -v nvcc >/dev/null 2>&1 && command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
      gpu=cuda
    else
      gpu=cpu
    fi ;;
  cpu|cuda) ;;
  *) echo "build-llama-server: MERIT_LLAMA_GPU=$gpu is not one of auto, cpu, cuda" >&2; exit 2 ;;
esac
if [ "$gpu" = cuda ] && ! command -v nvcc >/dev/null 2>&1; then
  echo "build-llama-server: MERIT_LLAMA_GPU=cuda but nvcc is not on PATH; install the CUDA toolkit or set MERIT_LLAMA_GPU=cpu" >&2
  exit 2
fi

cache="${MERIT_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/merit-kit}"
out="$cache/llama.cpp-$tag-$gpu"
server="$out/build/bin/llama-server"
bench="$out/build/bin/llama-batched-bench"
if [ "$locate" = 1 ]; then
  if [ -x "$server" ] && [ -x "$bench" ]; then echo "$server"; exit 0; fi
  echo "build-llama-server: $server is not built; run \`make llama-server\`" >&2
  exit 1
fi
mkdir -p "$cache"

# One build at a time per output folder (two `make llama-server` calls wait for each other).
exec 9>"$out.lock"
flock 9
if [ -x "$server" ] && [ -x "$bench" ]; then
  echo "build-llama-server: reusing $out" >&2
  echo "$server"
  exit 0
fi

jobs="${MERIT_BUILD_JOBS:-2}"
echo "build-llama-server: llama.cpp $tag ($gpu) into $out with $jobs jobs (about 10 minutes on 2 cores)" >&2
if [ ! -f "$out/src/CMakeLists.txt" ]; then
  rm -rf "$out.clone"
  git clone --quiet "$bundle" "$out.clone" >&2
  rm -rf "$out"
  mkdir -p "$out"
  mv "$out.clone" "$out/src"
fi
cuda_flag=OFF
[ "$gpu" = cuda ] && cuda_flag=ON
cmake -S "$out/src" -B "$out/build" \
  -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DGGML_CUDA="$cuda_flag" -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_TESTS=OFF >&2
cmake --build "$out/build" --config Release --target llama-server llama-batched-bench -j "$jobs" >&2
if [ ! -x "$server" ] || [ ! -x "$bench" ]; then
  echo "build-llama-server: the build finished without $server; see the cmake output above" >&2
  exit 1
fi
echo "$server"
