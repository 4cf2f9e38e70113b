#!/usr/bin/env bash
# Builds `llama-server` and `llama-batched-bench` from the llama.cpp release that node-llama-cpp bundles
# (node_modules/node-llama-cpp/llama/gitRelease.bundle, tag in llama.cpp.info.json), so the server path
# runs the same llama.cpp as the in-process backend (README "Inference servers"; issue 16 §1).
# Output folder, outside git and keyed by the release tag and the compute backend:
#   ${MERIT_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/merit-kit}/llama.cpp-<tag>-<cpu-VARIANT|cuda>/
# A CPU build targets the instruction sets of the ggml CPU variant that node-llama-cpp's
# in-process backend loads on this machine (scripts/cpu-variant.mjs; e.g. haswell, sapphirerapids;
# MERIT_LLAMA_CPU_VARIANT names another), never -march=native: on an AVX-512-FP16 CPU a native build
# takes other float paths and its greedy tokens drift from the in-process backend's at near-ties.
# AMX instructions are left out (see below).
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

variant=""
if [ "$gpu" = cpu ]; then
  variant="${MERIT_LLAMA_CPU_VARIANT:-$(NODE_LLAMA_CPP_SKIP_DOWNLOAD=true node "$root/scripts/cpu-variant.mjs" 2>/dev/null || true)}"
  if [ -n "$variant" ] && ! [[ "$variant" =~ ^[a-z0-9_.]+$ ]]; then
    echo "build-llama-server: CPU variant \"$variant\" is not a ggml variant name (MERIT_LLAMA_CPU_VARIANT)" >&2
    exit 2
  fi
fi
cache="${MERIT_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/merit-kit}"
out="$cache/llama.cpp-$tag-$gpu${variant:+-$variant}"
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
# The variant's instruction sets, as ggml's own CMakeLists.txt lists them for its CPU variants.
cpu_flags=()
if [ -n "$variant" ]; then
  features="$(sed -nE "s/^[[:space:]]*ggml_add_cpu_backend_variant\($variant([[:space:]]+([A-Z0-9_ ]*))?\)[[:space:]]*$/\2/p" "$out/src/ggml/src/CMakeLists.txt" | head -n 1)"
  if ! grep -qE "^[[:space:]]*ggml_add_cpu_backend_variant\($variant[[:space:])]" "$out/src/ggml/src/CMakeLists.txt"; then
    echo "build-llama-server: ggml defines no CPU variant \"$variant\" in $out/src/ggml/src/CMakeLists.txt" >&2
    exit 2
  fi
  # Without AMX: the server's AMX matmul path traps (SIGILL) where the kernel grants no AMX tile
  # state, e.g. in many VMs, while the in-process backend never reaches it; outputs are unchanged
  # (the parity tests compare both).
  features="$(echo "$features" | tr ' ' '\n' | grep -v '^AMX_' | tr '\n' ' ')"
  cpu_flags+=(-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF)
  for feature in $features; do cpu_flags+=("-DGGML_$feature=ON"); done
  echo "build-llama-server: CPU variant $variant (${features:-baseline x86-64}; AMX left out), as node-llama-cpp loads it here" >&2
fi
cmake -S "$out/src" -B "$out/build" \
  -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DGGML_CUDA="$cuda_flag" -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_TESTS=OFF "${cpu_flags[@]}" >&2
cmake --build "$out/build" --config Release --target llama-server llama-batched-bench -j "$jobs" >&2
if [ ! -x "$server" ] || [ ! -x "$bench" ]; then
  echo "build-llama-server: the build finished without $server; see the cmake output above" >&2
  exit 1
fi
echo "$server"
