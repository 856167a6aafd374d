#!/usr/bin/env bash
# bench/gradient/run.sh: gradient/primal time ratio of the loss kernel in loss.c, built by
#   clang-19 -O2 -c -emit-llvm -> adc build [flags] -> cc -lm
# once with AD after optimization (the default) and once with --ad-before-opt.
# Usage: bench/gradient/run.sh [path/to/adc]   (default: target/release/adc).
# Not part of `cargo test`: timings are noisy by nature; compare runs on the same machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
adc="${1:-$here/../../target/release/adc}"
cc="${CLANG:-clang-19}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$cc" -O2 -c -emit-llvm "$here/loss.c" -o "$work/loss.bc"
printf "%-22s %12s %12s %8s  %s\n" build "primal (s)" "gradient (s)" ratio output
for mode in after-opt before-opt; do
  flags=()
  [ "$mode" = before-opt ] && flags=(--ad-before-opt)
  "$adc" build "$work/loss.bc" -o "$work/loss-$mode.o" "${flags[@]}"
  cc "$work/loss-$mode.o" -lm -o "$work/loss-$mode"
  out="$("$work/loss-$mode" 2>"$work/t-$mode")"
  read -r tp tg <"$work/t-$mode"
  ratio="$(awk -v g="$tg" -v p="$tp" 'BEGIN { printf "%.2f", g / p }')"
  printf "%-22s %12s %12s %8s  %s\n" "adc AD $mode" "$tp" "$tg" "$ratio" "$out"
done
