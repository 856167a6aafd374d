#!/usr/bin/env bash
# The whole test suite: system packages (idempotent), formatting, lints, every test.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo test --workspace --locked
