#!/usr/bin/env bash
# bench/forward_width/run.sh: time of one width-8 vector forward call against 8 width-1
# forward calls on the kernel in width.c, built by
#   clang-19 -O2 -c -emit-llvm -> adc build [flags] -> cc -lm
# once per build mode: AD after / before optimization, each with lane packing on (the
# default) and off (--passes=-lane-packing). Then the IR size of the width-8 derivative
# (the whole function and its loop body, the block that ends in a branch back to itself)
# with packing on and off, and how many of its instructions are vector ones.
# Usage: [RUNS=n] bench/forward_width/run.sh [path/to/adc]   (default: target/release/adc; the code
# adc emits does not depend on how adc itself was built, so a debug adc gives the same
# timings). Not part of `cargo test`: timings are noisy by nature; compare runs on the
# same machine.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
adc="${1:-$here/../../target/release/adc}"
cc="${CLANG:-clang-19}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$cc" -O2 -c -emit-llvm "$here/width.c" -o "$work/width.bc"
modes=(after-opt after-opt,-lane-packing before-opt before-opt,-lane-packing)
for mode in "${modes[@]}"; do
  flags=()
  case "$mode" in before-opt*) flags+=(--ad-before-opt) ;; esac
  case "$mode" in *-lane-packing) flags+=(--passes=-lane-packing) ;; esac
  "$adc" build "$work/width.bc" -o "$work/width-$mode.o" "${flags[@]}"
  cc "$work/width-$mode.o" -lm -o "$work/width-$mode"
done
# RUNS=n runs every binary n times, interleaved, and keeps the best time of each column
# (on a loaded machine the minimum is the least disturbed run).
for _ in $(seq "${RUNS:-1}"); do
  for mode in "${modes[@]}"; do
    "$work/width-$mode" >"$work/out-$mode" 2>>"$work/t-$mode"
  done
done
printf "%-34s %14s %14s %8s  %s\n" build "8 x width 1 (s)" "width 8 (s)" speedup output
for mode in "${modes[@]}"; do
  read -r ts tv < <(awk 'NR == 1 || $1 < s { s = $1 } NR == 1 || $2 < v { v = $2 }
                         END { print s, v }' "$work/t-$mode")
  speedup="$(awk -v s="$ts" -v v="$tv" 'BEGIN { printf "%.2f", s / v }')"
  printf "%-34s %14s %14s %8s  %s\n" "adc AD $mode" "$ts" "$tv" "$speedup" "$(cat "$work/out-$mode")"
done

# Instructions of the width-8 derivative (the forward derivative with 8 shadow pointers).
count() {
  awk '
    /^func internal @__adc_forward_loss/ && /%v9: ptr/ { inside = 1; next }
    inside && /^}/ { inside = 0 }
    !inside { next }
    /^\^/ { block = $1; sub(/\(.*/, "", block); n[block] = 0; v[block] = 0; next }
    /^  / {
      total++; n[block]++
      if ($0 ~ /<8 x/) { vec++; v[block]++ }
      if ($0 ~ /^  (jump|brif)/ && index($0, block "(") > 0) loop = block
    }
    END { printf "%5d (%3d vector) %5d (%3d vector)\n", total, vec, n[loop], v[loop] }
  ' "$1"
}
printf "\n%-34s %24s %24s\n" "width-8 derivative IR" "function: insts (vector)" "loop body: insts (vector)"
for mode in after-opt after-opt,-lane-packing; do
  flags=()
  case "$mode" in *-lane-packing) flags+=(--passes=-lane-packing) ;; esac
  "$adc" build "$work/width.bc" -o "$work/width-$mode.ir" --emit ir "${flags[@]}"
  printf "%-34s %s\n" "adc AD $mode" "$(count "$work/width-$mode.ir")"
done
