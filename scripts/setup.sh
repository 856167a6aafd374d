#!/usr/bin/env bash
# One command for a fresh Debian 12 machine (as root): install the system packages, build
# adc in release mode, and run it on the bundled example.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cargo build --release --locked
adc=target/release/adc

echo "== adc opt examples/sum.adir (parse, verify, print)"
"$adc" opt examples/sum.adir
echo "== adc interp examples/sum.adir --fn sum_of_squares '[f64 1.0, 2.0, 3.0]' 3"
"$adc" interp examples/sum.adir --fn sum_of_squares '[f64 1.0, 2.0, 3.0]' 3
echo "== adc interp examples/sum.adir --fn scale '\$v = [f64 1.0, 2.0, 3.0]' 2.0 3"
"$adc" interp examples/sum.adir --fn scale '$v = [f64 1.0, 2.0, 3.0]' 2.0 3
