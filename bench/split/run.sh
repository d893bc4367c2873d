#!/bin/bash
# Range-splitting benchmark: wget under the shim vs plain wget on each link (the better one is the reference), aria2c over both interfaces and the ideal size / sum of rates, on the demo and single scenarios; median of N runs, side by side in one run.
#
#   bench/split/run.sh [RUNS] [SIZES...]        (root; MHTTP_BUILD_DIR = build tree, default build/release)
#
# demo: wifi0 10 ms/20 Mbit/s + lte0 50 ms/50 Mbit/s (ideal = size / 70 Mbit/s); single: wifi0 only.
# plain_s is wget on the default route (wifi0), lte0_s wget bound to lte0 (--bind-address); which
# is faster depends on the size (1 MiB: lte0 by ~3 %, its slow start against wifi0's rate), so
# best/sh divides the better of the two by the shim's time.
# Kernel MPTCP is not compared: the testbed's nginx and the client's wget would both need it
# (no mptcpize here), see the README.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../env.sh"
RUNS=${1:-3}
shift || true
SIZES=${*:-16384 65536 1048576 4194304 33554432 134217728}

if [ -z "${TESTBED_ID:-}" ]; then
  [ -f "$SHIM" ] || { echo "$SHIM is not built" >&2; exit 1; }
  echo "# libmhttp range splitting, median of $RUNS runs ($(date -u +%FT%TZ), $(git -C "$SRC" rev-parse --short HEAD))"
  "$PY" "$TESTBED" run demo -- /bin/bash "$0" "$RUNS" $SIZES 2>/dev/null | sed 's/^/demo   /'
  "$PY" "$TESTBED" run single -- /bin/bash "$0" "$RUNS" $(for s in $SIZES; do [ "$s" -le 33554432 ] && echo "$s"; done) 2>/dev/null | sed 's/^/single /'
  exit 0
fi

W=$(mktemp -d /tmp/mhttp-bench-split.XXXXXX)
trap 'rm -rf "$W"' EXIT
URL=$TESTBED_URL_A/files
two=$([ -n "${TESTBED_IF1_ADDR:-}" ] && echo 1 || echo 0)
rate_bps=$(( ${TESTBED_IF0_RATE_DOWN:-0} + ${TESTBED_IF1_RATE_DOWN:-0} ))

# t [VAR=VALUE...] CMD...: wall time of CMD in seconds, run with those variables (fails loudly
# on a bad download). The variables are exported by the forked shell itself, not by env(1):
# an extra env exec costs about 0.7 ms, which would be charged to the shim's small objects.
t() {
  local s e a=()
  while [[ $1 == [A-Z]*=* ]]; do a+=("$1"); shift; done
  s=$(date +%s.%N)
  (for v in "${a[@]}"; do export "$v"; done; exec "$@") >/dev/null 2>&1 || { echo "FAILED: $*" >&2; echo 999; return; }
  e=$(date +%s.%N)
  echo "$e - $s" | bc -l
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
check() { [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$(awk -v p="files/$2.bin" '$2==p || $2=="./"p {print $1}' "$TESTBED_SHA256SUMS")" ] || echo "  (sha256 mismatch for $2 in $1)" >&2; }

if [ "$two" = 1 ]; then
  printf '%-10s %9s %9s %9s %9s %9s %8s %8s %8s\n' size plain_s lte0_s shim_s aria2_s ideal_s shim/id best/sh aria2/id
else
  printf '%-10s %9s %9s %8s\n' size plain_s shim_s shim/pl
fi
for n in $SIZES; do
  P=() L=() S=() A=()
  for _ in $(seq 1 "$RUNS"); do
    P+=("$(t wget -q -O "$W/p" "$URL/$n.bin")"); check "$W/p" "$n"
    S+=("$(t LD_PRELOAD="$SHIM" wget -q -O "$W/s" "$URL/$n.bin")"); check "$W/s" "$n"
    if [ "$two" = 1 ]; then
      L+=("$(t wget -q -O "$W/l" --bind-address="$TESTBED_IF1_ADDR" "$URL/$n.bin")"); check "$W/l" "$n"
      rm -f "$W/a"
      A+=("$(t aria2c -q --allow-overwrite=true --auto-file-renaming=false -x2 -s2 -k1M \
        --multiple-interface="$TESTBED_IF0_ADDR,$TESTBED_IF1_ADDR" -d "$W" -o a "$URL/$n.bin")"); check "$W/a" "$n"
    fi
  done
  p=$(median "${P[@]}") s=$(median "${S[@]}")
  if [ "$two" = 1 ]; then
    a=$(median "${A[@]}") l=$(median "${L[@]}")
    ideal=$(echo "$n * 8 / $rate_bps" | bc -l)
    best=$(echo "if ($l < $p) $l else $p" | bc -l)
    printf '%-10s %9.3f %9.3f %9.3f %9.3f %9.3f %8.2f %8.2f %8.2f\n' "$n" "$p" "$l" "$s" "$a" "$ideal" \
      "$(echo "$s / $ideal" | bc -l)" "$(echo "$best / $s" | bc -l)" "$(echo "$a / $ideal" | bc -l)"
  else
    printf '%-10s %9.3f %9.3f %8.3f\n' "$n" "$p" "$s" "$(echo "$s / $p" | bc -l)"
  fi
done
