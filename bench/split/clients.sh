#!/bin/bash
# Everyday clients with and without the shim (issue 19): wget, curl, python3 urllib (Connection: close), curl --http1.0, wget -c from 7 MB, curl -r 0-24999999, axel -n 4, wget2 --chunk-size=4M; interleaved rounds, median of RUNS, sha256 of the exact bytes checked, ratios vs plain and vs wget under the shim.
#
#   bench/split/clients.sh RUNS [SCENARIO=equal] [CLIENT...]      (root)
#   e.g. flock /tmp/mhttp-bench.lock bench/split/clients.sh 7 equal
#
# SCENARIO: equal (two 50 Mbit/s links, 5 and 20 ms: sym-high reshaped, the links issue 19 was
# measured on) or any testbed scenario (demo: wifi0 10 ms 20 Mbit/s, lte0 50 ms 50 Mbit/s).
# The object is 32 MiB (CLIENTS_SIZE to change it). Within a round every client runs plain,
# then under the shim, the clients' order rotated each round so that slow drift of a shared
# machine hits them alike. Plain runs use the default route (wifi0), as the programs would.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../env.sh"
RUNS=${1:?RUNS}
SCEN=${2:-equal}
shift 2 || shift $#
ALL="wget curl urllib curl10 wgetc curlr axel wget2"
CLIENTS=${*:-$ALL}
if [ -z "${TESTBED_ID:-}" ]; then
  [ -f "$SHIM" ] || { echo "$SHIM is not built" >&2; exit 1; }
  echo "# clients.sh $RUNS runs on $SCEN ($(date -u +%FT%TZ), $(git -C "$SRC" rev-parse --short HEAD), load $(cut -d' ' -f1-3 /proc/loadavg))"
  set -- run "$SCEN"
  [ "$SCEN" = equal ] && set -- run sym-high --set wifi0.rate=50mbit --set lte0.rate=50mbit --set wifi0.rtt=5 --set lte0.rtt=20
  exec "$PY" "$TESTBED" "$@" -- env CLIENTS_SIZE="${CLIENTS_SIZE:-33554432}" /bin/bash "$0" "$RUNS" "$SCEN" $CLIENTS
fi
N=${CLIENTS_SIZE:-33554432}
CUT=7000000 SPAN=24999999
W=$(mktemp -d /tmp/mhttp-clients.XXXXXX)
trap 'rm -rf "$W"' EXIT
FILE=$TESTBED_FILES_DIR/files/$N.bin
URL=$TESTBED_URL_A/files/$N.bin
WHOLE=$(sha256sum "$FILE" | cut -d' ' -f1)
PART=$(head -c $((SPAN + 1)) "$FILE" | sha256sum | cut -d' ' -f1)

# fetch CLIENT: runs it in $W/d (the cwd is fresh), writing out.bin
fetch() {
  case $1 in
    wget) wget -q -O out.bin "$URL" ;;
    curl) curl -sS -o out.bin "$URL" ;;
    urllib) "$PY" -c 'import sys, urllib.request as u; open("out.bin", "wb").write(u.urlopen(sys.argv[1]).read())' "$URL" ;;
    curl10) curl -sS --http1.0 -o out.bin "$URL" ;;
    wgetc) wget -q -c "$URL" && mv "$N.bin" out.bin ;;
    curlr) curl -sS -r 0-$SPAN -o out.bin "$URL" ;;
    axel) axel -q -n 4 -o out.bin "$URL" ;;
    wget2) wget2 -q --no-robots --chunk-size=4M -O out.bin "$URL" ;;
  esac
}
# run CLIENT plain|shim: µs wall time of one fetch, 999999999 on failure or wrong bytes
run() {
  local s e want=$WHOLE
  rm -rf "$W/d" && mkdir "$W/d" && cd "$W/d" || return
  [ "$1" = wgetc ] && head -c $CUT "$FILE" >"$N.bin"  # the cut file it resumes (not timed)
  [ "$1" = curlr ] && want=$PART
  s=$(date +%s%N)
  if [ "$2" = plain ]; then
    (fetch "$1") >/dev/null 2>&1
  else
    (export LD_PRELOAD="$SHIM"; fetch "$1") >/dev/null 2>&1
  fi || { echo "FAILED: $1 $2" >&2; echo 999999999; return; }
  e=$(date +%s%N)
  [ "$(sha256sum out.bin | cut -d' ' -f1)" = "$want" ] || { echo "SHA256 MISMATCH: $1 $2" >&2; echo 999999999; return; }
  echo $(( (e - s) / 1000 ))
}
read -r -a C <<<"$CLIENTS"
# one unmeasured shim fetch so the host-wide metrics store knows every path
LD_PRELOAD="$SHIM" wget -q -O "$W/warm" "$TESTBED_URL_A/files/1048576.bin" >/dev/null 2>&1
declare -A T
for r in $(seq 0 $((RUNS - 1))); do
  for i in $(seq 0 $((${#C[@]} - 1))); do
    c=${C[$(( (i + r) % ${#C[@]} ))]}
    T[$c.plain]+="$(run "$c" plain) "
    T[$c.shim]+="$(run "$c" shim) "
  done
done
m() { echo "${T[$1]}" | med | awk '{printf "%.3f", $1/1e6}'; }
ref=$( [ -n "${T[wget.shim]:-}" ] && m wget.shim )
printf '%-7s %9s %9s %8s %11s  %-15s %s\n' client plain_s shim_s pl/shim shim/wgetsh shim_range_s "shim_all_ms | plain_all_ms"
for c in "${C[@]}"; do
  p=$(m "$c.plain") s=$(m "$c.shim")
  printf '%-7s %9s %9s %8.2f %11s  %-15s %s | %s\n' "$c" "$p" "$s" "$(echo "$p $s" | awk '{print $1/$2}')" \
    "$( [ -n "$ref" ] && echo "$s $ref" | awk '{printf "%.3f", $1/$2}' || echo -)" "$(echo "${T[$c.shim]}" | rng)" \
    "$(echo "${T[$c.shim]}" | tr ' ' '\n' | grep . | awk '{printf "%d ", $1/1000}')" \
    "$(echo "${T[$c.plain]}" | tr ' ' '\n' | grep . | awk '{printf "%d ", $1/1000}')"
done
echo "# $N B (curlr: its first $((SPAN + 1)) B; wgetc resumes at $CUT B); median of $RUNS; pl/shim > 1: the shim is faster"
