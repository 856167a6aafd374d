#!/usr/bin/env bash
# backend/bench/run.sh: ns per <8 x f64> element of the kernels in simd_kernels.adir, built
# by `adc build` with SIMD (default) and lane by lane (--no-simd), driven by harness.c.
# Usage: backend/bench/run.sh [path/to/adc] [reps]   (default: target/release/adc, 20000).
# Not part of `cargo test`: timings are noisy; compare runs on the same machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
adc="${1:-$here/../../target/release/adc}"
reps="${2:-20000}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf "%-14s %18s %18s\n" lowering "fma8_stream ns/el" "horner8 ns/el"
for mode in simd lanes; do
  flags=()
  [ "$mode" = lanes ] && flags=(--no-simd)
  "$adc" build "$here/simd_kernels.adir" -o "$work/k-$mode.o" "${flags[@]}"
  cc -O2 "$here/harness.c" "$work/k-$mode.o" -lm -o "$work/h-$mode"
  read -r stream horner < <("$work/h-$mode" "$reps")
  printf "%-14s %18s %18s\n" "$mode" "$stream" "$horner"
done
