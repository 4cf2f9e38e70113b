#!/usr/bin/env bash
# One GPU benchmark, sized for ~10 minutes on one data-centre GPU (bench/README.md, "GPU"):
# generates the Qwen2.5-7B-shape random model on that machine (bench/make-model.ts --shape 7b,
# Q4_0, 4.3 GB), then runs bench/throughput.ts with gpu "auto" (node-llama-cpp's prebuilt CUDA
# binary) at 16 streams: deterministic vs throughput mode, plus llama-server / llama-batched-bench
# when a CUDA build of them is found (make llama-server; --llama-bin DIR). Writes one JSON.
#
#   bench/gpu.sh [--dry-run] [--out FILE] [--llama-bin DIR]
#
# Output: FILE, else $OUT/throughput-gpu.json when $OUT is set, else runs/bench/throughput-gpu.json.
# --dry-run: the same pipeline on CPU with the 0.5B-shape model and a 2-stream, 4-token slice
# (about a minute), to check the script end to end on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."

dry=0
out=""
llama_bin=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry=1 ;;
    --out) [ $# -ge 2 ] || { echo "gpu.sh: --out needs a file path" >&2; exit 2; }; out="$2"; shift ;;
    --llama-bin) [ $# -ge 2 ] || { echo "gpu.sh: --llama-bin needs a directory" >&2; exit 2; }; llama_bin=(--llama-bin "$2"); shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "gpu.sh: unknown argument '$1'; usage: bench/gpu.sh [--dry-run] [--out FILE] [--llama-bin DIR]" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$out" ]; then
  if [ -n "${OUT:-}" ]; then out="$OUT/throughput-gpu.json"; else out="runs/bench/throughput-gpu.json"; fi
fi
if [ "$dry" = 1 ]; then out="${out%.json}-dry-run.json"; fi

command -v node >/dev/null || { echo "gpu.sh: node (>= 20) is not installed" >&2; exit 2; }
export NODE_LLAMA_CPP_SKIP_DOWNLOAD=true NO_COLOR=1
if [ ! -d node_modules/node-llama-cpp ]; then
  echo "gpu.sh: installing npm dependencies (prebuilt llama.cpp binaries, CUDA included)" >&2
  npm ci --no-audit --no-fund >&2
fi

if [ "$dry" = 1 ]; then
  shape=0.5b; gpu=false; slice=(--streams 2 --queries 1 --steps 1 --max-tokens 4 --engines deterministic,throughput)
else
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader >&2 || echo "gpu.sh: nvidia-smi not found; node-llama-cpp falls back to what it finds" >&2
  shape=7b; gpu=auto; slice=(--streams 16 --queries 3 --steps 3 --max-tokens 128)
fi

model="$(node bench/make-model.ts --shape "$shape")"
start=$(date +%s)
export MERIT_BENCH_GPU_NAME="$( (command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader | head -1) || echo none)"
node bench/throughput.ts --model "$model" --gpu "$gpu" "${slice[@]}" "${llama_bin[@]}" --json "$out"
echo "gpu.sh: done in $(( $(date +%s) - start )) s; $out" >&2
