#!/bin/bash
# Where the shim's fixed per-program cost goes: small-object wget wall times, plain vs the shim loaded but disabled, relay only (no split), no multiDNS resolvers, and the full shim, interleaved; medians of N.
#
#   bench/split/fixed_cost.sh [RUNS=21] [SIZE=16384] [SCENARIO=demo]     (root)
#
# Each round runs every configuration once, in turn, so drift hits them all alike; every
# configuration starts the same way (the shell's own fork + exec, no env(1) in between).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../env.sh"
RUNS=${1:-21} SIZE=${2:-16384} SCEN=${3:-demo}
if [ -z "${TESTBED_ID:-}" ]; then
  [ -f "$SHIM" ] || { echo "$SHIM is not built" >&2; exit 1; }
  exec "$PY" "$TESTBED" run "$SCEN" -- /bin/bash "$0" "$RUNS" "$SIZE" "$SCEN"
fi
URL=$TESTBED_URL_A/files/$SIZE.bin
W=$(mktemp -d /tmp/mhttp-fixed.XXXXXX)
trap 'rm -rf "$W"' EXIT
names=(plain loaded relay nodns shim)
declare -A T
run() {  # run NAME: one timed wget in configuration NAME, seconds
  local s e
  s=$(date +%s%N)
  case $1 in
    plain) wget -q -O "$W/o" "$URL" ;;
    loaded) LD_PRELOAD="$SHIM" MHTTP_DISABLE=1 wget -q -O "$W/o" "$URL" ;;
    relay) LD_PRELOAD="$SHIM" MHTTP_SPLIT=off wget -q -O "$W/o" "$URL" ;;
    nodns) LD_PRELOAD="$SHIM" MHTTP_DNS_wifi0= MHTTP_DNS_lte0= wget -q -O "$W/o" "$URL" ;;
    shim) LD_PRELOAD="$SHIM" wget -q -O "$W/o" "$URL" ;;
  esac || { echo "FAILED: $1" >&2; return; }
  e=$(date +%s%N)
  T[$1]+="$(( (e - s) / 1000 )) "
}
for _ in $(seq 1 "$RUNS"); do
  for n in "${names[@]}"; do run "$n"; done
done
stat() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "%8.2f %8.2f %8.2f", a[int((NR+1)/2)]/1000, a[1]/1000, a[NR]/1000}'; }
printf '%-8s %8s %8s %8s  (ms, %s runs, %s bytes, %s)\n' config median min max "$RUNS" "$SIZE" "$SCEN"
for n in "${names[@]}"; do printf '%-8s %s\n' "$n" "$(echo "${T[$n]}" | stat)"; done
