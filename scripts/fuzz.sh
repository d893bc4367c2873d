#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, build/fuzz) and runs each for SECONDS (default 10) over a scratch copy of its seed corpus; non-zero on any finding.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-10}
dir="$top/build/fuzz"
targets="request response values config dns"
cmake -S "$top" -B "$dir" -DCMAKE_C_COMPILER=clang -DMHTTP_FUZZ=ON -DMHTTP_SANITIZE=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DMHTTP_MODULES="include;scheduler;policy;multidns;multihttp;shim;tests" >/dev/null
# shellcheck disable=SC2086
nice cmake --build "$dir" -j2 --target $(printf 'fuzz_%s ' $targets) -- --no-print-directory >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for t in $targets; do
  # a scratch corpus: what the run learns stays out of the tree; findings land in $work/$t-art
  mkdir -p "$work/$t" "$work/$t-art"
  cp "$top/tests/fuzz/corpus/$t/"* "$work/$t/"
  if nice "$dir/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$work/$t-art/" "$work/$t" >"$work/$t.log" 2>&1; then
    echo "fuzz_$t: ok ($(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$work/$t.log" | grep -Eo '[0-9]+$') runs in ${secs}s)"
  else
    status=1
    echo "fuzz_$t: FINDING" >&2
    tail -n 40 "$work/$t.log" >&2
    for a in "$work/$t-art/"*; do
      [ -e "$a" ] && echo "  input ($(basename "$a")): $(od -An -c "$a" | head -c 600)" >&2
    done
  fi
done
exit $status
