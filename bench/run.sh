#!/usr/bin/env bash
# bench/run.sh: times each kernel in bench/kernels built three ways, and prints a table:
#   native:  clang -O2 prog.c
#   adc:     clang -O2 -c -emit-llvm prog.c -> adc build (bitcode, no adc passes) -> cc -lm
#   adc-opt: ... -> adc import -> adc opt --pipeline pre-ad -> adc opt --pipeline post-ad
#            -> adc build (the .adir) -> cc -lm        (the pipelines adc build will run)
# with the ratios to native and their geometric means. Per-pass statistics of each
# kernel's pipelines (--time-passes --json-stats) go to $OUT_DIR when it is set.
# Usage: bench/run.sh [path/to/adc]   (default: target/release/adc; a debug adc emits the
# same machine code, only slower to compile; build one with
# `cargo build --release`). Not part of `cargo test`: timings are noisy by nature.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
adc="${1:-$here/../target/release/adc}"
cc="${CLANG:-clang-19}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
stats="${OUT_DIR:-$work}"
mkdir -p "$stats"
printf "%-10s %11s %11s %11s %8s %8s  %s\n" kernel "native (s)" "adc (s)" "adc-opt (s)" ratio ratio-opt "output"
logsum=0; logsum_opt=0; count=0
for src in "$here"/kernels/*.c; do
  name="$(basename "$src" .c)"
  "$cc" -O2 "$src" -lm -o "$work/$name.native"
  "$cc" -O2 -c -emit-llvm "$src" -o "$work/$name.bc"
  "$adc" build "$work/$name.bc" -o "$work/$name.o"
  cc "$work/$name.o" -lm -o "$work/$name.adc"
  "$adc" import "$work/$name.bc" -o "$work/$name.adir"
  "$adc" opt "$work/$name.adir" --pipeline pre-ad --time-passes --json-stats \
    -o "$work/$name.pre.adir" 2>"$stats/$name.pre-ad.stats"
  "$adc" opt "$work/$name.pre.adir" --pipeline post-ad --time-passes --json-stats \
    -o "$work/$name.opt.adir" 2>"$stats/$name.post-ad.stats"
  "$adc" build "$work/$name.opt.adir" -o "$work/$name.opt.o"
  cc "$work/$name.opt.o" -lm -o "$work/$name.adc-opt"
  out_n="$("$work/$name.native" 2>"$work/tn")"
  out_a="$("$work/$name.adc" 2>"$work/ta")"
  out_o="$("$work/$name.adc-opt" 2>"$work/to")"
  same=$([ "$out_n" = "$out_a" ] && [ "$out_n" = "$out_o" ] && echo same || echo DIFFERENT)
  tn="$(cat "$work/tn")"; ta="$(cat "$work/ta")"; to="$(cat "$work/to")"
  ratio="$(awk -v a="$ta" -v n="$tn" 'BEGIN { printf "%.2f", a / n }')"
  ratio_opt="$(awk -v a="$to" -v n="$tn" 'BEGIN { printf "%.2f", a / n }')"
  logsum="$(awk -v s="$logsum" -v a="$ta" -v n="$tn" 'BEGIN { print s + log(a / n) }')"
  logsum_opt="$(awk -v s="$logsum_opt" -v a="$to" -v n="$tn" 'BEGIN { print s + log(a / n) }')"
  count=$((count + 1))
  printf "%-10s %11s %11s %11s %8s %8s  %s\n" "$name" "$tn" "$ta" "$to" "$ratio" "$ratio_opt" "$same"
done
awk -v s="$logsum" -v o="$logsum_opt" -v c="$count" \
  'BEGIN { printf "%-10s %11s %11s %11s %8.2f %8.2f\n", "geomean", "", "", "", exp(s / c), exp(o / c) }'
