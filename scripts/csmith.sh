#!/usr/bin/env bash
# Differential testing with csmith: random C programs built by clang-19 and by adc (clang-19
# bitcode at -O0 and -O2 -> `adc build` -> cc) must print the same checksum.
#
#   scripts/csmith.sh --count N [--start S] [--keep DIR]
#
# Seeds S .. S+N-1 (default S = 1). A seed whose clang build does not finish within the
# time limit (csmith programs may loop for very long) is skipped. Prints one line per failure
# and a summary of counts, failures grouped by their first error line. Needs csmith and
# libcsmith-dev (scripts/install-deps.sh) and a release build of adc (built if missing).
set -uo pipefail
cd "$(dirname "$0")/.."

count=20
start=1
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --count) count="$2"; shift 2 ;;
    --start) start="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    *) echo "usage: scripts/csmith.sh --count N [--start S] [--keep DIR]" >&2; exit 2 ;;
  esac
done

adc="${ADC:-target/release/adc}"
if [ ! -x "$adc" ]; then
  cargo build --release --locked -q || exit 1
fi
include=/usr/include/csmith
run_limit=10
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
[ -n "$keep" ] && mkdir -p "$keep"

pass=0
skipped=0
failed=0
declare -A classes
for ((seed = start; seed < start + count; seed++)); do
  prog="$work/p$seed.c"
  # csmith writes platform.info into the current directory.
  (cd "$work" && csmith --seed "$seed" --no-volatiles --no-packed-struct -o "$prog") >/dev/null 2>&1 || {
    skipped=$((skipped + 1)); continue
  }
  clang-19 -O0 -w -I"$include" "$prog" -o "$work/ref" 2>/dev/null || {
    skipped=$((skipped + 1)); continue
  }
  expected="$(timeout "$run_limit" "$work/ref" 2>/dev/null)" || {
    skipped=$((skipped + 1)); continue
  }
  for level in O0 O2; do
    bc="$work/p$seed-$level.bc"
    obj="$work/p$seed-$level.o"
    class=""
    if ! clang-19 "-$level" -w -I"$include" -c -emit-llvm "$prog" -o "$bc" 2>/dev/null; then
      class="clang failed"
    elif ! err="$(timeout 120 "$adc" build "$bc" -o "$obj" 2>&1)"; then
      class="adc build: $(printf '%s\n' "$err" | grep -m1 -v '^\s*$' | sed -E 's/[0-9]+/N/g' | cut -c1-120)"
    elif ! cc "$obj" -lm -o "$work/adc" 2>/dev/null; then
      class="link failed"
    else
      got="$(timeout "$run_limit" "$work/adc" 2>/dev/null)"
      status=$?
      if [ $status -eq 124 ]; then
        class="adc program timed out"
      elif [ "$got" != "$expected" ]; then
        class="wrong checksum"
      fi
    fi
    if [ -z "$class" ]; then
      pass=$((pass + 1))
    else
      failed=$((failed + 1))
      classes["$class"]=$((${classes["$class"]:-0} + 1))
      echo "seed $seed -$level: $class"
      [ -n "$keep" ] && cp "$prog" "$keep/"
    fi
  done
done

echo "== csmith seeds $start..$((start + count - 1)): $pass passed, $failed failed (builds at -O0 and -O2), $skipped seeds skipped"
for class in "${!classes[@]}"; do
  printf '%5d  %s\n' "${classes[$class]}" "$class"
done | sort -rn
[ "$failed" -eq 0 ]
