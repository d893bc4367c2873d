#!/bin/bash
# Interleaved A/B on the fault origin's slow and resetting rows (sym-high): curl and wget plain, under an older libmhttp.so and under this build's; first downloads (each URL tagged per run, store off), median and range of RUNS, exit status and sha256 compared with plain's.
#
#   bench/split/faults_ab.sh RUNS OLD_LIBMHTTP_SO      (root)
#   e.g. git worktree add /tmp/old HEAD~1 && (cd /tmp/old && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release &&
#        cmake --build build --target mhttp_shim) && bench/split/faults_ab.sh 7 /tmp/old/build/shim/libmhttp.so
#
# Rows (bench/testbed/origin_server.py, fault.test): lr-trickle (every later range at 10 B per
# 100 ms), the same after 64 KiB at full speed, cdn-slow.test after 64 KiB (a replica that
# trickles), reset (every answer reset after 1000 body bytes: curl exits 56, wget 4).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../env.sh"
RUNS=${1:?RUNS} OLD=${2:?OLD_LIBMHTTP_SO}
if [ -z "${TESTBED_ID:-}" ]; then
  [ -f "$SHIM" ] && [ -f "$OLD" ] || { echo "need $SHIM and $OLD" >&2; exit 1; }
  echo "# faults_ab.sh $RUNS runs on sym-high ($(date -u +%FT%TZ), $(git -C "$SRC" rev-parse --short HEAD) against $OLD)"
  exec "$PY" "$TESTBED" run sym-high -- /bin/bash "$0" "$RUNS" "$OLD"
fi
W=$(mktemp -d /tmp/mhttp-fab.XXXXXX)
trap 'rm -rf "$W"' EXIT
F=files/1048576.bin
ROWS=("f=lr-trickle" "f=lr-trickle&after=65536" "cdn-slow&after=65536" "f=reset")
# run ROW CLIENT VARIANT TAG: "µs rc sha" of one download
run() {
  local url="http://fault.test/$F?$1&t=$4" lib= s e rc
  case $1 in cdn-slow*) url="http://cdn-slow.test/$F?${1#cdn-slow&}&t=$4" ;; esac
  case $3 in old) lib=$OLD ;; new) lib=$SHIM ;; esac
  rm -f "$W/o"
  s=$(date +%s%N)
  if [ "$2" = curl ]; then
    env ${lib:+LD_PRELOAD=$lib} MHTTP_METRICS_STORE=off MHTTP_DNS_lte0="$TESTBED_LTE0_DNS" timeout 30 curl -sS -o "$W/o" "$url" 2>/dev/null
  else
    env ${lib:+LD_PRELOAD=$lib} MHTTP_METRICS_STORE=off MHTTP_DNS_lte0="$TESTBED_LTE0_DNS" timeout 30 wget -q --tries=1 -O "$W/o" "$url"
  fi
  rc=$?
  e=$(date +%s%N)
  echo "$(( (e - s) / 1000 )) $rc $( [ -f "$W/o" ] && sha256sum < "$W/o" | cut -c1-16)"
}
declare -A T
bad=0
for r in $(seq 1 "$RUNS"); do
  for row in "${ROWS[@]}"; do
    for c in curl wget; do
      read -r tp rcp shp <<<"$(run "$row" "$c" plain "$r.p$c")"
      T[$row.$c.plain]+="$tp "
      for v in old new; do
        read -r t rc sh <<<"$(run "$row" "$c" $v "$r.$v$c")"
        T[$row.$c.$v]+="$t "
        [ "$rc $sh" = "$rcp $shp" ] || { echo "DIFFERS from plain: $row $c $v (rc $rc, plain $rcp)" >&2; bad=1; }
      done
    done
  done
done
printf '%-26s %-5s %-6s %9s %13s %7s\n' row client build median_s range_s x_plain
for row in "${ROWS[@]}"; do
  for c in curl wget; do
    p=$(echo "${T[$row.$c.plain]}" | med)
    for v in plain old new; do
      m=$(echo "${T[$row.$c.$v]}" | med)
      printf '%-26s %-5s %-6s %9.3f %13s %7.2f\n' "$row" "$c" "$v" "$(awk -v m="$m" 'BEGIN {print m / 1e6}')" \
        "$(echo "${T[$row.$c.$v]}" | rng)" "$(awk -v m="$m" -v p="$p" 'BEGIN {print m / p}')"
    done
  done
done
exit $bad
