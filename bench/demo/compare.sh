#!/usr/bin/env bash
# Runs inside the testbed's client namespace: times plain wget and wget under libmhttp.so on
# the same files, checks both copies against the manifest, and prints the ratios.
set -euo pipefail
shim=$1
runs=${DEMO_RUNS:-3}
sizes=${DEMO_SIZES:-"1048576 4194304 33554432"}  # add 134217728 for the big one (~4 min)
out=$(mktemp -d /tmp/mhttp-demo.XXXXXX)
trap 'rm -rf "$out"' EXIT
base=${DEMO_URL:-${TESTBED_URL_A:?testbed env missing (TESTBED_URL_A)}}
sums=${TESTBED_SHA256SUMS:?testbed env missing (TESTBED_SHA256SUMS)}

# time_one MODE SIZE -> prints seconds; fails when the bytes differ from the manifest
time_one() {
  local mode=$1 f=$2.bin t0 t1
  rm -f "$out/$f"
  t0=$(date +%s.%N)
  if [ "$mode" = shim ]; then
    LD_PRELOAD="$shim" wget -q -O "$out/$f" "$base/files/$f"
  else
    wget -q -O "$out/$f" "$base/files/$f"
  fi
  t1=$(date +%s.%N)
  want=$(awk -v f="files/$f" '$2==f {print $1}' "$sums")
  got=$(sha256sum "$out/$f" | cut -d' ' -f1)
  if [ "$want" != "$got" ]; then echo "demo: $mode $f: sha256 mismatch" >&2; return 1; fi
  echo "$t1 - $t0" | bc -l
}
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# ideal: every link's rate used from the first byte (size / sum of the download rates)
rate=$(( ${TESTBED_IF0_RATE_DOWN:-0} + ${TESTBED_IF1_RATE_DOWN:-0} + ${TESTBED_IF2_RATE_DOWN:-0} ))
printf '%-10s %12s %12s %8s %10s\n' bytes "wget (s)" "+shim (s)" speedup "ideal (s)"
for f in $sizes; do
  p=(); s=()
  for _ in $(seq "$runs"); do
    p+=("$(time_one plain "$f")")
    s+=("$(time_one shim "$f")")
  done
  mp=$(printf '%s\n' "${p[@]}" | median)
  ms=$(printf '%s\n' "${s[@]}" | median)
  ideal=$( [ "$rate" -gt 0 ] && echo "$f * 8 / $rate" | bc -l || echo 0)
  printf '%-10s %12.3f %12.3f %7.2fx %10.3f\n' "$f" "$mp" "$ms" "$(echo "$mp / $ms" | bc -l)" "$ideal"
done
echo "(median of $runs runs each, interleaved; sha256 of every copy checked against the manifest)"
