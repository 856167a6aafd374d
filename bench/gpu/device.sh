#!/usr/bin/env bash
# The GPU benchmark on the machine with the GPU (python3 + CuPy + numpy; no compiler, no
# network), from the repository root, after bench/gpu/build.sh ran elsewhere and its
# bench/gpu/out/ (ignored by git) was copied along:
#
#   bash bench/gpu/device.sh          results in $OUT (else bench/gpu/out/results)
#
# Prints the GPU, then runs bench/gpu/run.py over every kernel: gpu_kernels.md,
# gpu_kernels.json and run.log land in the results folder. Bounded to about 5.5 minutes:
# run.py starts no kernel after 300 s (each kernel has 60 s at most, most take a few
# seconds) and rewrites the results after every kernel, so even the outer timeout below
# leaves what was measured.
set -uo pipefail
cd "$(dirname "$0")/../.."

out="${OUT:-bench/gpu/out/results}"
mkdir -p "$out"

nvidia-smi -L || echo "(nvidia-smi failed)"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader \
  2>/dev/null || true
python3 -c 'import cupy, numpy; print("cupy", cupy.__version__, "numpy", numpy.__version__)'

if ! ls bench/gpu/out/*.ptx > /dev/null 2>&1; then
  echo "no bench/gpu/out/*.ptx: run bench/gpu/build.sh first and bring bench/gpu/out along"
  exit 1
fi

timeout 330 python3 bench/gpu/run.py bench/gpu/out --out "$out" --deadline 300 --timeout 60 \
  2>&1 | tee "$out/run.log"
status=${PIPESTATUS[0]}
[ "$status" = 124 ] && echo "run.py stopped by the outer timeout; partial results in $out"
exit "$status"
