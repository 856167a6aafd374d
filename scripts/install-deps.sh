#!/usr/bin/env bash
# Installs the system packages adc needs on Debian 12 (run as root). Idempotent: packages
# already present are skipped, and nothing is fetched when all are there.
set -euo pipefail

packages=(
  llvm-19-dev libpolly-19-dev libzstd-dev   # LLVM 19 for the llvm-ir crate (bitcode import)
  clang-19 clang-14                         # front ends for tests and benchmarks (new and old bitcode)
  build-essential                           # cc to link adc's objects
  python3-venv                              # a venv for ptxas (nvidia-cuda-nvcc-cu12 on PyPI)
  valgrind                                  # leak check of the reverse-mode C programs (tests/reverse.rs)
  csmith libcsmith-dev creduce              # random C programs vs clang (tests/csmith.rs, scripts/csmith.sh)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: must run as root to install packages" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all system packages present"
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "install-deps: adc needs Rust 1.95 or newer (cargo) from rustup; none found on PATH" >&2
  exit 1
fi

# ptxas for the PTX emitter's tests (adc-ptx): NVIDIA's PyPI package in a local venv at the
# repository root (git-ignored). Idempotent: skipped when ptxas is already there.
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if compgen -G "$repo_root/.venv/lib/python3*/site-packages/nvidia/cuda_nvcc/bin/ptxas" >/dev/null; then
  echo "install-deps: ptxas present in .venv"
else
  echo "install-deps: installing ptxas (nvidia-cuda-nvcc-cu12) into $repo_root/.venv"
  # Without network the PTX tests print SKIPPED instead of failing the whole set-up.
  if ! { [ -x "$repo_root/.venv/bin/pip" ] || python3 -m venv "$repo_root/.venv"; } ||
    ! "$repo_root/.venv/bin/pip" install -q nvidia-cuda-nvcc-cu12; then
    echo "install-deps: warning: could not install ptxas; the PTX tests will be skipped" >&2
  fi
fi
