#!/bin/bash
# Interleaved A/B of shim settings on one scenario: wget under the shim with each set of MHTTP_* variables (plus plain wget), per size, median and range of RUNS; sha256 checked.
#
#   bench/split/ab.sh RUNS "SIZES" [SCENARIO=demo] SETTING...     (root)
#   e.g. flock /tmp/mhttp-bench.lock bench/split/ab.sh 7 "1048576 4194304" demo "MHTTP_PRECONNECT=0" "MHTTP_PRECONNECT=1"
#
# A SETTING is a space-separated list of VAR=VALUE ("-" = defaults; LIB=PATH preloads that
# libmhttp.so instead of $MHTTP_BUILD_DIR's, e.g. a build of the commit before). The settings run in turn
# within each round (rotated every round, so none always follows plain wget), so slow drift of
# the shared machine hits them alike. AB_PLAIN=0 leaves plain wget out (slow links).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../env.sh"
RUNS=${1:?RUNS} SIZES=${2:?SIZES} SCEN=${3:-demo}
shift 3 || { echo "usage: ab.sh RUNS SIZES SCENARIO SETTING..." >&2; exit 2; }
[ $# -ge 1 ] || { echo "need at least one SETTING" >&2; exit 2; }
if [ -z "${TESTBED_ID:-}" ]; then
  [ -f "$SHIM" ] || { echo "$SHIM is not built" >&2; exit 1; }
  echo "# ab.sh $RUNS runs on $SCEN ($(date -u +%FT%TZ), $(git -C "$SRC" rev-parse --short HEAD))"
  exec "$PY" "$TESTBED" run "$SCEN" -- env AB_PLAIN="${AB_PLAIN:-1}" /bin/bash "$0" "$RUNS" "$SIZES" "$SCEN" "$@"
fi
W=$(mktemp -d /tmp/mhttp-ab.XXXXXX)
trap 'rm -rf "$W"' EXIT
URL=$TESTBED_URL_A/files
want() { awk -v p="files/$1.bin" '$2==p || $2=="./"p {print $1}' "$TESTBED_SHA256SUMS"; }
# run SETTING SIZE: µs wall time of one wget (plain when SETTING is "plain"), 999999999 on failure
run() {
  local s e
  s=$(date +%s%N)
  if [ "$1" = plain ]; then
    wget -q -O "$W/o" "$URL/$2.bin" >/dev/null 2>&1
  else
    (export LD_PRELOAD="$SHIM"
     for v in $1; do
       case $v in -) ;; LIB=*) LD_PRELOAD=${v#LIB=} ;; *) export "$v" ;; esac
     done
     exec wget -q -O "$W/o" "$URL/$2.bin") >/dev/null 2>&1
  fi || { echo "FAILED: $1 $2" >&2; echo 999999999; return; }
  e=$(date +%s%N)
  [ "$(sha256sum "$W/o" | cut -d' ' -f1)" = "$(want "$2")" ] || { echo "SHA256 MISMATCH: $1 $2" >&2; echo 999999999; return; }
  echo $(( (e - s) / 1000 ))
}
if [ "${AB_PLAIN:-1}" = 0 ]; then SET=("$@"); else SET=(plain "$@"); fi
# one unmeasured shim fetch so the host-wide metrics store knows every path
LD_PRELOAD="$SHIM" wget -q -O "$W/o" "$URL/1048576.bin" >/dev/null 2>&1
declare -A T
for n in $SIZES; do
  for r in $(seq 0 $((RUNS - 1))); do
    k=${#SET[@]}
    for i in $(seq 0 $((k - 1))); do
      j=$(( (i + r) % k ))
      T[$n.$j]+="$(run "${SET[$j]}" "$n") "
    done
  done
done
printf '%-10s %-40s %9s %13s  %s\n' size setting median_s range_s all_ms
for n in $SIZES; do
  for j in $(seq 0 $((${#SET[@]} - 1))); do
    printf '%-10s %-40s %9.3f %13s  %s\n' "$n" "${SET[$j]}" "$(echo "${T[$n.$j]}" | med | awk '{print $1/1e6}')" \
      "$(echo "${T[$n.$j]}" | rng)" "$(echo "${T[$n.$j]}" | tr ' ' '\n' | grep . | awk '{printf "%d ", $1/1000}')"
  done
done
