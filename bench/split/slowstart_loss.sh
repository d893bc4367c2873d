#!/bin/bash
# Where the 4 MiB split's bimodality comes from: wget under the shim on demo with lte0's downlink queue at 1, 2 and 4 BDP and the origin's congestion control bbr or cubic; median time and lte0 queue drops per cell.
#
#   bench/split/slowstart_loss.sh [RUNS=5] [SIZE=4194304]      (root)
#
# The shim runs with MHTTP_RWND_CLAMP=off: the clamp removes this loss (rwnd_clamp.sh). The
# origin's congestion control is forced here per run with a route attribute (ip route ...
# congctl), and the queue with a live `testbed set`. Nothing else of the testbed changes;
# cells are interleaved.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../env.sh"
RUNS=${1:-5} SIZE=${2:-4194304}
if [ -z "${TESTBED_ID:-}" ]; then
  [ -f "$SHIM" ] || { echo "$SHIM is not built" >&2; exit 1; }
  exec "$PY" "$TESTBED" run demo -- /bin/bash "$0" "$RUNS" "$SIZE"
fi
URL=$TESTBED_URL_A/files/$SIZE.bin
W=$(mktemp -d /tmp/mhttp-ssloss.XXXXXX)
trap 'rm -rf "$W"' EXIT
ONS=$TESTBED_ID-oa
DEF=$(ip netns exec "$ONS" ip route show default | sed 's/ congctl [a-z]*//')
bdp=$(( ${TESTBED_IF1_RATE_DOWN:-50000000} / 8 * 50 / 1000 ))   # lte0: 50 ms RTT
drops() { "$PY" "$TESTBED" status --stats 2>/dev/null | awk '/lte0/ {f=1} f && /ba.drops_queue=/ {match($0, /ba.drops_queue=[0-9]+/); print substr($0, RSTART + 15, RLENGTH - 15); exit}'; }
declare -A T D
for _ in $(seq 1 "$RUNS"); do
  for cc in bbr cubic; do
    ip netns exec "$ONS" ip route replace $DEF congctl $cc
    for k in 1 2 4; do
      "$PY" "$TESTBED" set lte0 queue_down=$((k * bdp)) >/dev/null
      d0=$(drops)
      s=$(date +%s%N)
      MHTTP_RWND_CLAMP=off LD_PRELOAD="$SHIM" wget -q -O "$W/o" "$URL" || echo "FAILED: $cc $k" >&2
      e=$(date +%s%N)
      T[$cc.$k]+="$(( (e - s) / 1000 )) "
      D[$cc.$k]+="$(( $(drops) - d0 )) "
    done
  done
done
ip netns exec "$ONS" ip route replace $DEF
printf '%-6s %-10s %9s %13s %10s  (%s runs, %s bytes; lte0 BDP %s B)\n' cc queue median_s range_s lte0_drops "$RUNS" "$SIZE" "$bdp"
for cc in bbr cubic; do
  for k in 1 2 4; do
    printf '%-6s %-10s %9.3f %13s %10s\n' "$cc" "${k} BDP" "$(echo "${T[$cc.$k]}" | med | awk '{print $1/1e6}')" \
      "$(echo "${T[$cc.$k]}" | rng)" "$(echo "${D[$cc.$k]}" | med)"
  done
done
