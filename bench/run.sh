#!/usr/bin/env bash
# bench/run.sh: times each kernel in bench/kernels built two ways, and prints a table:
#   native: clang -O2 prog.c
#   adc:    clang -O2 -c -emit-llvm prog.c -> adc build -> cc prog.o -lm
# Usage: bench/run.sh [path/to/adc]   (default: target/release/adc; a debug adc emits the
# same machine code, only slower to compile; build one with
# `cargo build --release`). Not part of `cargo test`: timings are noisy by nature.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
adc="${1:-$here/../target/release/adc}"
cc="${CLANG:-clang-19}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
printf "%-10s %12s %12s %8s  %s\n" kernel "native (s)" "adc (s)" ratio "output"
for src in "$here"/kernels/*.c; do
  name="$(basename "$src" .c)"
  "$cc" -O2 "$src" -lm -o "$work/$name.native"
  "$cc" -O2 -c -emit-llvm "$src" -o "$work/$name.bc"
  "$adc" build "$work/$name.bc" -o "$work/$name.o"
  cc "$work/$name.o" -lm -o "$work/$name.adc"
  out_n="$("$work/$name.native" 2>"$work/tn")"
  out_a="$("$work/$name.adc" 2>"$work/ta")"
  same=$([ "$out_n" = "$out_a" ] && echo same || echo DIFFERENT)
  tn="$(cat "$work/tn")"; ta="$(cat "$work/ta")"
  ratio="$(awk -v a="$ta" -v n="$tn" 'BEGIN { printf "%.2f", a / n }')"
  printf "%-10s %12s %12s %8s  %s\n" "$name" "$tn" "$ta" "$ratio" "$same"
done
