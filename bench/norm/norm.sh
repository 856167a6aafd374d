#!/usr/bin/env bash
# bench/norm/norm.sh: the norm example (norm.c) compiled by clang-19 at -O0, then by adc:
# import -> `adc opt --pipeline pre-ad` -> `adc opt --pipeline post-ad` -> `adc build`
# (no AD), once with the default pipelines and once with `--passes=-licm` on both; each
# built twice, as written and with -DRESTRICT. Prints, per build, the program's table of
# t(n), t(2n) and t(2n)/t(n): ~2 means mag() was hoisted out of norm's loop, ~4 that it
# was not. Per-pass statistics of the default build go to $OUT_DIR (default: a temp dir).
# Usage: bench/norm/norm.sh [path/to/adc]   (default: target/release/adc)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
adc="${1:-$here/../../target/release/adc}"
cc="${CLANG:-clang-19}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
out_dir="${OUT_DIR:-$work}"
mkdir -p "$out_dir"
for variant in plain restrict; do
  defs=""; [ "$variant" = restrict ] && defs="-DRESTRICT"
  "$cc" -O0 -Xclang -disable-O0-optnone $defs -c -emit-llvm "$here/norm.c" -o "$work/norm.$variant.bc"
  "$adc" import "$work/norm.$variant.bc" -o "$work/norm.$variant.adir"
  for toggle in default -licm; do
    passes=(); [ "$toggle" != default ] && passes=("--passes=$toggle")
    tag="$variant.$toggle"
    "$adc" opt "$work/norm.$variant.adir" --pipeline pre-ad "${passes[@]}" --time-passes --json-stats \
      -o "$work/$tag.pre.adir" 2>"$out_dir/norm.$tag.pre-ad.stats"
    "$adc" opt "$work/$tag.pre.adir" --pipeline post-ad "${passes[@]}" --time-passes --json-stats \
      -o "$work/$tag.adir" 2>"$out_dir/norm.$tag.post-ad.stats"
    cp "$work/$tag.adir" "$out_dir/norm.$tag.adir"
    "$adc" build "$work/$tag.adir" -o "$work/$tag.o"
    cc "$work/$tag.o" -lm -o "$work/$tag.exe"
    echo "== norm ($variant, adc pre-ad + post-ad, $toggle)"
    "$work/$tag.exe"
  done
done
