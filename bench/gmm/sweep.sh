#!/usr/bin/env bash
# bench/gmm/sweep.sh: GMM gradient / primal (both built by adc from the same clang -O2
# bitcode as the runner uses) on ADBench inputs, with the peak heap growth of one gradient
# (tapes, shadows, scratch; bench/programs/heap_meter.c). Checks the gradient against
# central finite differences first.
# Usage: [REPS=n] [ROUNDS=n] [BITCODE=scalar|default] [INPUTS=all] bench/gmm/sweep.sh [adc] [input files...]
#   default adc: target/debug/adc (the code adc emits does not depend on its own profile);
#   default inputs: d in {2,10,20,64} x K in {5,25,50,200} under ../shared/data/adbench/gmm/1k
#   (INPUTS=all: every file there);
#   BITCODE=scalar (default): clang -O2 -fno-vectorize -fno-slp-vectorize -fno-unroll-loops;
#   BITCODE=default: plain clang -O2 (vectorized and unrolled, as users compile).
# Times are process CPU seconds per repetition, the best over ROUNDS runs of REPS each.
# ADC_FLAGS: extra `adc build` flags for both programs (ADC_FLAGS=--passes=-tape-reuse).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
adc="${1:-$root/target/debug/adc}"
shift || true
cc="${CLANG:-clang-19}"
case "${BITCODE:-scalar}" in
  scalar) flags=(-O2 -fno-vectorize -fno-slp-vectorize -fno-unroll-loops) ;;
  default) flags=(-O2) ;;
  *) echo "BITCODE must be scalar or default" >&2; exit 2 ;;
esac
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
src="$root/bench/programs/gmm.c"
"$cc" "${flags[@]}" -c -emit-llvm -DHEAP_METER "$src" -o "$work/grad.bc"
"$cc" "${flags[@]}" -c -emit-llvm -DPRIMAL_ONLY "$src" -o "$work/primal.bc"
read -r -a adc_flags <<<"${ADC_FLAGS:-}"
"$adc" build "${adc_flags[@]}" "$work/grad.bc" -o "$work/grad.o"
"$adc" build "${adc_flags[@]}" "$work/primal.bc" -o "$work/primal.o"
"$cc" -O2 -c "$root/bench/programs/heap_meter.c" -o "$work/heap_meter.o"
cc "$work/grad.o" "$work/heap_meter.o" -lm \
  -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free -o "$work/grad"
cc "$work/primal.o" -lm -o "$work/primal"
data="$root/../shared/data/adbench/gmm/1k"
inputs=("$@")
if [ ${#inputs[@]} -eq 0 ] && [ "${INPUTS:-}" = all ]; then
  inputs=("$data"/gmm_d*_K*.txt)
elif [ ${#inputs[@]} -eq 0 ]; then
  for d in 2 10 20 64; do
    for k in 5 25 50 200; do
      [ -f "$data/gmm_d${d}_K${k}.txt" ] && inputs+=("$data/gmm_d${d}_K${k}.txt")
    done
  done
fi
"$work/grad" check | tail -1
reps="${REPS:-3}"
best() { awk '$1 == "time" && (m == "" || $2 < m) { m = $2 } END { print m }'; }
printf "| input | primal ms | gradient ms | grad/primal | peak heap MiB (one gradient) |\n"
printf "|---|---|---|---|---|\n"
for input in "${inputs[@]}"; do
  : >"$work/p" ; : >"$work/g"
  for _ in $(seq "${ROUNDS:-3}"); do
    "$work/primal" primal "$reps" "$input" >>"$work/p"
    "$work/grad" grad "$reps" "$input" >>"$work/g"
  done
  tp="$(best <"$work/p")"
  tg="$(best <"$work/g")"
  heap="$(awk '$1 == "heap" && $2 > m { m = $2 } END { print m + 0 }' "$work/g")"
  awk -v n="$(basename "$input" .txt)" -v p="$tp" -v g="$tg" -v h="$heap" \
    'BEGIN { printf "| %s | %.3f | %.3f | %.2f | %.1f |\n", n, p * 1e3, g * 1e3, g / p, h / 1048576 }'
done
