#!/usr/bin/env bash
# One command for a fresh Debian 12 machine (as root): install the system packages, build
# adc in release mode, and build and run the bundled example: a C program whose gradient adc
# synthesizes, printed next to a finite-difference check.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cargo build --release --locked
adc=target/release/adc

# The main job: a C program that calls __enzyme_autodiff, compiled by clang to bitcode,
# built by adc (which synthesizes the gradient) and linked by cc.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "== clang-19 -O2 -> adc build -> cc: examples/gradient/rosenbrock.c"
clang-19 -O2 -c -emit-llvm examples/gradient/rosenbrock.c -o "$work/rosenbrock.bc"
"$adc" build "$work/rosenbrock.bc" -o "$work/rosenbrock.o"
cc "$work/rosenbrock.o" -lm -o "$work/rosenbrock"
"$work/rosenbrock"
