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

# numpy and JAX (CPU wheels from PyPI) in the same venv, for the tests of the Python package
# (python/, issue 29; scripts/test.sh runs them). Idempotent: skipped when both import.
# PyTorch's PyPI wheel brings ~3 GB of CUDA libraries (5.4 GB installed, ~2 min), so it is
# opt-in: ADC_PYTHON_TORCH=1 scripts/install-deps.sh; without it the PyTorch tests are skipped.
venv_py="$repo_root/.venv/bin/python"
if [ -x "$venv_py" ] && "$venv_py" -c 'import numpy, jax' 2>/dev/null; then
  echo "install-deps: numpy and jax present in .venv"
else
  echo "install-deps: installing numpy and jax[cpu] into $repo_root/.venv"
  if ! { [ -x "$venv_py" ] || python3 -m venv "$repo_root/.venv"; } ||
    ! "$repo_root/.venv/bin/pip" install -q numpy==2.4.6 'jax[cpu]==0.10.2'; then
    echo "install-deps: warning: could not install numpy and jax; the Python tests will fail" >&2
  fi
fi
if [ "${ADC_PYTHON_TORCH:-0}" = 1 ]; then
  if "$venv_py" -c 'import torch' 2>/dev/null; then
    echo "install-deps: torch present in .venv"
  else
    echo "install-deps: installing torch (PyPI's wheel, with CUDA libraries: ~5 GB) into $repo_root/.venv"
    "$repo_root/.venv/bin/pip" install -q torch==2.15.0 ||
      echo "install-deps: warning: could not install torch; the PyTorch tests will be skipped" >&2
  fi
fi
