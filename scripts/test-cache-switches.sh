#!/usr/bin/env bash
# Every test that synthesizes a derivative, once under each setting of the cache planner
# (issue 11: "every earlier gradient test passes under each switch setting"). `ADC_CACHE`
# sets the defaults of `adc build` (the C suites of tests/reverse.rs and tests/cli.rs) and
# of the gradient filetest harness; a filetest's own `; cache:` line still pins the setting
# its checks are about. The default setting is what scripts/test.sh runs already.
# Usage: scripts/test-cache-switches.sh [setting...]   (default: every one below)
set -euo pipefail
cd "$(dirname "$0")/.."

settings=("$@")
if [ ${#settings[@]} -eq 0 ]; then
  settings=(heuristic -cache-ivs -cache-licm -cache-cse -cache-records -tape-reuse +tapes-by-kind)
fi

cargo build --locked --workspace --tests --quiet
failed=()
for setting in "${settings[@]}"; do
  echo "== ADC_CACHE=$setting"
  if ! ADC_CACHE="$setting" cargo test --locked --quiet -p adc \
    --test filetests --test reverse --test reverse_errors --test cli; then
    failed+=("$setting")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "test-cache-switches: failures under: ${failed[*]}" >&2
  exit 1
fi
echo "test-cache-switches: every setting passed (${settings[*]})"
