#!/usr/bin/env bash
# bench/forward_width/run.sh: time of one width-8 vector forward call against 8 width-1
# forward calls on the kernel in width.c, built by
#   clang-19 -O2 -c -emit-llvm -> adc build [flags] -> cc -lm
# Usage: bench/forward_width/run.sh [path/to/adc]   (default: target/release/adc).
# Not part of `cargo test`: timings are noisy by nature; compare runs on the same machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
adc="${1:-$here/../../target/release/adc}"
cc="${CLANG:-clang-19}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$cc" -O2 -c -emit-llvm "$here/width.c" -o "$work/width.bc"
printf "%-22s %14s %14s %8s  %s\n" build "8 x width 1 (s)" "width 8 (s)" speedup output
for mode in after-opt before-opt; do
  flags=()
  [ "$mode" = before-opt ] && flags=(--ad-before-opt)
  "$adc" build "$work/width.bc" -o "$work/width-$mode.o" "${flags[@]}"
  cc "$work/width-$mode.o" -lm -o "$work/width-$mode"
  out="$("$work/width-$mode" 2>"$work/t-$mode")"
  read -r ts tv <"$work/t-$mode"
  speedup="$(awk -v s="$ts" -v v="$tv" 'BEGIN { printf "%.2f", s / v }')"
  printf "%-22s %14s %14s %8s  %s\n" "adc AD $mode" "$ts" "$tv" "$speedup" "$out"
done
