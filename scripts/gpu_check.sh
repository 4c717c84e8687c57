#!/usr/bin/env bash
# make gpu-check: rerankd on CUDA against itself on CPU and against transformers on the same GPU
# (scripts/gpu_check.py says what each step measures). Needs an NVIDIA GPU, Python with torch +
# transformers + sentence-transformers, and no network once setup and setup-gpu have run.
#   scripts/gpu_check.sh [--dry-run] [gpu_check.py flags]
# --dry-run: tiny models on the CPU provider, the CPU library (setup's), for a CPU-only machine.
# Results: $GPU_CHECK_OUT (default gpu-check.json in the work folder); models are generated
# into $GPU_CHECK_WORK (default a temp folder, removed at the end).
# Environment: RERANKD_BIN (default: builds bin/rerankd and bin/rerankd-bench beside it), RERANKD_CACHE as scripts/setup.sh.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
dry=0
for a in "$@"; do [ "$a" = --dry-run ] && dry=1; done

eval "$("$ROOT/scripts/setup.sh")"   # ORT_LIB, RERANKD_TOKENIZER (offline once installed)
if [ "$dry" = 1 ]; then
  lib=$ORT_LIB
else
  eval "$("$ROOT/scripts/setup_gpu.sh")"   # ORT_GPU_LIB
  lib=$ORT_GPU_LIB
fi
bin=${RERANKD_BIN:-}
if [ -z "$bin" ]; then
  (cd "$ROOT" && GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3} go build -o bin/ ./cmd/rerankd ./cmd/rerankd-bench)
  bin=$ROOT/bin/rerankd
fi
work=${GPU_CHECK_WORK:-}
if [ -z "$work" ]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
out=${GPU_CHECK_OUT:-$ROOT/gpu-check.json}
exec_py=${PYTHON:-python3}
"$exec_py" "$ROOT/scripts/gpu_check.py" --rerankd "$bin" --ort-lib "$lib" --tokenizer "$RERANKD_TOKENIZER" \
  --work "$work" --out "$out" "$@"
