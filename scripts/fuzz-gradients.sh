#!/usr/bin/env bash
# Hunts for gradient bugs with the gradient fuzzer (tests/gradient_fuzz.rs) on fresh
# seeds: random C programs differentiated in reverse, forward and split mode, checked
# against finite differences. Prints how many programs and comparisons were checked and
# writes each failure, shrunk, to the output folder (seed-N.c, seed-N.txt).
#
#   scripts/fuzz-gradients.sh --minutes 30 [--jobs 2] [--out DIR] [--first-seed N] [--adc PATH]
#
# --adc checks another adc binary (default: this checkout's release build, built first);
# --out defaults to target/fuzz-found.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes=5
jobs=2
out=target/fuzz-found
first=""
adc=""
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --first-seed) first="$2"; shift 2 ;;
    --adc) adc="$2"; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "fuzz-gradients.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
if [ -z "$adc" ]; then
  cargo build --release --bin adc
  adc="$PWD/target/release/adc"
fi
export ADC="$adc" ADC_FUZZ_MINUTES="$minutes" ADC_FUZZ_JOBS="$jobs" ADC_FUZZ_OUT="$out"
if [ -n "$first" ]; then
  export ADC_FUZZ_FIRST_SEED="$first"
fi
cargo test --test gradient_fuzz
