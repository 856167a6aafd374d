#!/usr/bin/env bash
# bench/norm/grad_norm.sh: the gradient of the norm example (grad_norm.c, clang-19 -O0
# bitcode) built by `adc build` with the default pipeline (AD after optimization: licm
# hoists mag before AD) and with --ad-before-opt; prints each build's table of t(n),
# t(2n), t(2n)/t(n): ~2 is O(n), ~4 is O(n^2).
# Usage: bench/norm/grad_norm.sh [path/to/adc]   (default: target/debug/adc)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
adc="${1:-$here/../../target/debug/adc}"
cc="${CLANG:-clang-19}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$cc" -O0 -Xclang -disable-O0-optnone -c -emit-llvm "$here/grad_norm.c" -o "$work/grad_norm.bc"
for variant in default ad-before-opt; do
  flags=(); [ "$variant" = ad-before-opt ] && flags=(--ad-before-opt)
  "$adc" build "$work/grad_norm.bc" "${flags[@]}" -o "$work/$variant.o"
  cc "$work/$variant.o" -lm -o "$work/$variant.exe"
  echo "== gradient of norm ($variant)"
  "$work/$variant.exe"
done
