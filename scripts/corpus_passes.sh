#!/bin/bash
# The C corpus through a pass list: clang-19 -O0 bitcode -> adc import -> interp @main,
# before and after `adc opt --passes LIST --verify-each`; prints programs whose output differs.
# Usage: scripts/corpus_passes.sh [LIST]   (ADC=path/to/adc, default target/debug/adc)
A=$(realpath "${ADC:-target/debug/adc}")
ROOT=$(realpath "${ROOT:-$(dirname "$0")/..}")
PASSES="${1:-mem2reg,sccp,simplify-cfg,dce}"
cd "$(mktemp -d)"
ok=0; bad=0; skip=0
for c in $ROOT/tests/c/import/*.c; do
  s=$(basename $c .c)
  clang-19 -O0 -Xclang -disable-O0-optnone -c -emit-llvm $c -o $s.bc 2>/dev/null || { skip=$((skip+1)); continue; }
  $A import $s.bc -o $s.adir 2>/dev/null || { skip=$((skip+1)); continue; }
  before=$(timeout 60 $A interp $s.adir --fn main 2>&1)
  $A opt $s.adir --passes "$PASSES" --verify-each -o $s.opt.adir > $s.optlog 2>&1 || { echo "OPT FAIL $s: $(head -3 $s.optlog)"; bad=$((bad+1)); continue; }
  after=$(timeout 60 $A interp $s.opt.adir --fn main 2>&1)
  if [ "$before" == "$after" ]; then ok=$((ok+1)); else echo "DIFF $s"; bad=$((bad+1)); fi
done
echo "same=$ok different/failed=$bad skipped=$skip"
