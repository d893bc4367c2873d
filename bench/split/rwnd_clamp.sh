#!/bin/bash
# Receive-window clamp of the extra legs (MHTTP_RWND_CLAMP) against lte0's slow-start loss: wget under the shim on demo (1-BDP queues), origin bbr and cubic, clamp off and K; median time and lte0 queue drops per cell.
#
#   bench/split/rwnd_clamp.sh [RUNS=5] [SIZE=4194304] [CLAMPS="off 2"]      (root)
#
# Extra MHTTP_* variables in the caller's environment (e.g. MHTTP_PRECONNECT=1) apply to every
# cell. The origin's congestion control is forced per run with a route attribute (ip route ...
# congctl), as in slowstart_loss.sh; cells are interleaved, each preceded by one unmeasured
# fetch so the host-wide metrics store knows both paths.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../env.sh"
RUNS=${1:-5} SIZE=${2:-4194304} CLAMPS=${3:-off 2}
if [ -z "${TESTBED_ID:-}" ]; then
  [ -f "$SHIM" ] || { echo "$SHIM is not built" >&2; exit 1; }
  exec "$PY" "$TESTBED" run demo -- /bin/bash "$0" "$RUNS" "$SIZE" "$CLAMPS"
fi
URL=$TESTBED_URL_A/files/$SIZE.bin
W=$(mktemp -d /tmp/mhttp-rwnd.XXXXXX)
trap 'rm -rf "$W"' EXIT
ONS=$TESTBED_ID-oa
DEF=$(ip netns exec "$ONS" ip route show default | sed 's/ congctl [a-z]*//')
drops() { "$PY" "$TESTBED" status --stats 2>/dev/null | awk '/lte0/ {f=1} f && /ba.drops_queue=/ {match($0, /ba.drops_queue=[0-9]+/); print substr($0, RSTART + 15, RLENGTH - 15); exit}'; }
LD_PRELOAD="$SHIM" wget -q -O "$W/o" "$URL" || echo "FAILED: warm-up" >&2
declare -A T D
for _ in $(seq 1 "$RUNS"); do
  for cc in bbr cubic; do
    ip netns exec "$ONS" ip route replace $DEF congctl $cc
    for k in $CLAMPS; do
      d0=$(drops)
      s=$(date +%s%N)
      MHTTP_RWND_CLAMP=$k LD_PRELOAD="$SHIM" wget -q -O "$W/o" "$URL" || echo "FAILED: $cc $k" >&2
      e=$(date +%s%N)
      [ "$(stat -c %s "$W/o")" = "$SIZE" ] || echo "WRONG SIZE: $cc $k" >&2
      T[$cc.$k]+="$(( (e - s) / 1000 )) "
      D[$cc.$k]+="$(( $(drops) - d0 )) "
    done
  done
done
ip netns exec "$ONS" ip route replace $DEF
printf '%-6s %-6s %9s %13s %10s  (%s runs, %s bytes; %s)\n' cc clamp median_s range_s lte0_drops "$RUNS" "$SIZE" "$(env | grep '^MHTTP_' | grep -v BUILD_DIR | tr '\n' ' ')"
for cc in bbr cubic; do
  for k in $CLAMPS; do
    printf '%-6s %-6s %9.3f %13s %10s\n' "$cc" "$k" "$(echo "${T[$cc.$k]}" | med | awk '{print $1/1e6}')" \
      "$(echo "${T[$cc.$k]}" | rng)" "$(echo "${D[$cc.$k]}" | med)"
  done
done
