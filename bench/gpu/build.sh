#!/usr/bin/env bash
# Builds the GPU benchmark kernels (tests/cuda/grad_*.cu, sizes from bench/gpu/sizes) into PTX for sm_90:
#
#   bench/gpu/build.sh [NAME ...]        (default: every kernel; run from anywhere)
#
# Each kernel: clang-19 (CUDA device bitcode, no CUDA headers) -> `adc build --emit ptx`
# (primal and gradient kernels in one PTX, libdevice linked when adc finds it in ./.venv or
# ADC_LIBDEVICE) -> bench/gpu/out/NAME.ptx, with adc's messages in NAME.log. When ptxas is
# found (ADC_PTXAS, .venv, PATH), the PTX is also assembled as a whole program for sm_90
# and `ptxas -v` (registers, stack frame, spills) is kept in NAME.ptxas.txt: a PTX error
# shows here instead of on the GPU machine, which has no compiler.
#
# Environment: ADC (adc binary, default target/debug/adc, built with `cargo build -p adc`
# when missing), ADC_FLAGS (`adc build` flags for every kernel, instead of the per-kernel
# ones below; `ADC_FLAGS=` builds everything with adc's defaults), OUT_DIR (default
# bench/gpu/out). The run on the GPU machine is bench/gpu/device.sh (bench/README.md).
set -uo pipefail
cd "$(dirname "$0")/../.."

out="${OUT_DIR:-bench/gpu/out}"
adc="${ADC:-target/debug/adc}"
arch=sm_90
mkdir -p "$out"
# Bitcode in a scratch folder: out/ travels to the GPU machine, which needs only the PTX.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$adc" ]; then
  if [ -n "${ADC:-}" ]; then echo "ADC=$adc is not an executable" >&2; exit 1; fi
  cargo build -q -p adc || exit 1
fi

# adc flags per kernel. Tapes whose size is known only at run time go to a 4096-byte
# region per thread (`--gpu-tapes local`, adc's default); a constant-size tape larger than
# that and than adc's 16 KiB local budget is a build error. At benchmark size nbody's is:
# 4096 bodies x 24 bytes per thread (96 KiB; `vel` may alias `pos`, so loads are taped).
# As local memory the driver would reserve that for every thread the GPU can hold resident
# (~26 GB on an H100), so it goes to the device heap instead: one malloc per thread,
# 384 MiB for 4096 threads (run.py raises the heap limit).
kernel_flags() {
  case "$1" in
    nbody) echo "--gpu-tapes heap" ;;
    *) echo "" ;;
  esac
}

ptxas="${ADC_PTXAS:-}"
if [ -z "$ptxas" ]; then
  ptxas=$(ls .venv/lib/python3*/site-packages/nvidia/cuda_nvcc/bin/ptxas 2>/dev/null | head -1)
fi
if [ -z "$ptxas" ]; then ptxas=$(command -v ptxas || true); fi

if [ $# -gt 0 ]; then
  names=("$@")
else
  names=()
  for f in tests/cuda/grad_*.cu; do n=$(basename "$f" .cu); names+=("${n#grad_}"); done
fi

failed=()
for name in "${names[@]}"; do
  src="tests/cuda/grad_$name.cu"
  if [ ! -f "$src" ]; then echo "$name: no $src" >&2; failed+=("$name"); continue; fi
  # Benchmark sizes: the kernel's line of bench/gpu/sizes, as -D flags over the tests' own.
  defines=$(awk -v k="$name" '$1 == k { for (i = 2; i <= NF; i++) printf "-D%s ", $i }' \
    bench/gpu/sizes)
  rm -f "$out/$name.ptx" "$out/$name.ptxas.txt"
  if [ -n "${ADC_FLAGS+set}" ]; then flags="$ADC_FLAGS"; else flags=$(kernel_flags "$name"); fi
  # shellcheck disable=SC2086 # defines are words
  if ! clang-19 -x cuda --cuda-device-only --cuda-gpu-arch=sm_80 -nocudainc -nocudalib -O2 \
      -emit-llvm -c -I tests/cuda $defines "$src" -o "$tmp/$name.bc" 2> "$out/$name.log"; then
    echo "$name: clang failed (see $out/$name.log)"; failed+=("$name"); continue
  fi
  # shellcheck disable=SC2086 # flags are words
  if ! "$adc" build "$tmp/$name.bc" --emit ptx --gpu-arch "$arch" $flags \
      -o "$out/$name.ptx" >> "$out/$name.log" 2>&1; then
    echo "$name: adc build failed: $(grep -m1 -i error "$out/$name.log")"; failed+=("$name")
    rm -f "$out/$name.ptx"; continue
  fi
  entries=$(grep -o '^\.visible \.entry [A-Za-z_0-9$]*' "$out/$name.ptx" | awk '{print $3}' | tr '\n' ' ')
  externs=$(grep -c '^\.extern' "$out/$name.ptx")
  heap=$(grep -c 'call[^;]*malloc' "$out/$name.ptx")
  line="$name: entries: ${entries}externs: $externs, malloc calls: $heap"
  # A tape check that folded to `0 == 0` before a trap: the kernel traps on every launch
  # (a constant-size tape larger than its --gpu-tapes local region).
  if grep -A4 -E 'setp\.eq\.u32 %p[0-9]+, 0, 0;' "$out/$name.ptx" | grep -q trap; then
    line="$line, WARNING: a kernel always traps (tape over its local region?)"
  fi
  [ -n "$flags" ] && line="$line, flags: $flags"
  if [ -n "$ptxas" ]; then
    # Whole program (no --compile-only): an unresolved external is an error, as on the GPU.
    if "$ptxas" --gpu-name "$arch" -v "$out/$name.ptx" -o "$out/$name.cubin" \
        > "$out/$name.ptxas.txt" 2>&1; then
      line="$line, ptxas ok"
    else
      line="$line, PTXAS FAILED (see $out/$name.ptxas.txt)"; failed+=("$name")
    fi
    rm -f "$out/$name.cubin"
  fi
  echo "$line"
done

[ -z "$ptxas" ] && echo "(no ptxas found: PTX not assembled here)"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "built ${#names[@]} kernels into $out"
