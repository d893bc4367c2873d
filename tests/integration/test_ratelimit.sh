#!/bin/bash
# The download rate limit on demo: `mhttp --limit-rate 2M` fetches 32 MiB split over wifi0 and lte0 byte-exact at an average rate within [0.8, 1.1] x the limit (curl --limit-rate 2M on the same file in the same run printed beside), 4 MiB over HTTPS (libcurl's TLS on every leg) at 1M likewise; the daemon (daemon_ratelimit.py): max-download-limit, then changeGlobalOption max-overall-download-limit slows the active download, lifting both speeds it up, the file exact.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo --tls

MHTTP=$MHTTP_BUILD_DIR/cli/mhttp
F=files/33554432.bin
SIZE=33554432
LIM=2M
LIM_B=2097152
echo "   load: $(cut -d' ' -f1-3 /proc/loadavg)"
# rate NAME LIMIT CMD...: runs CMD, prints and leaves in RATE the bytes/s of $SIZE over its
# wall time (and its ratio to LIMIT bytes/s)
rate() {
  local name=$1 lim=$2 t0; shift 2
  t0=$(date +%s%N)
  "$@"; RC=$?
  RATE=$(awk -v n=$(($(date +%s%N) - t0)) -v s=$SIZE 'BEGIN {printf "%.0f", s / (n / 1e9)}')
  echo "   $name: rc $RC, $RATE B/s = $(awk -v r=$RATE -v l=$lim 'BEGIN {printf "%.3f", r / l}') x the limit"
}

rate "mhttp --limit-rate $LIM" $LIM_B timeout 120 "$MHTTP" -q --limit-rate $LIM --stats "$WORK/s.json" -o "$WORK/m.bin" \
  "$TESTBED_URL_A/$F"
mrate=$RATE
check "mhttp --limit-rate: exact, exit 0" eval '[ $RC = 0 ] && [ "$(mh_sha $WORK/m.bin)" = "$(mh_sum $F)" ]'
check "mhttp --limit-rate: split, wifi0 and lte0 carried bytes ($(cat "$WORK/s.json" 2>/dev/null))" eval "$PY"' -c "
import json,sys
d=json.load(open(sys.argv[1])); b={p[\"iface\"]: p[\"bytes\"] for p in d[\"paths\"]}
sys.exit(0 if d[\"event\"]==\"complete\" and d[\"split\"]==1 and b.get(\"wifi0\",0)>0 and b.get(\"lte0\",0)>0 else 1)" "$WORK/s.json"'
check "mhttp --limit-rate: average rate within [0.8, 1.1] x $LIM_B ($mrate)" \
  awk -v r="$mrate" -v l=$LIM_B 'BEGIN {exit !(r >= 0.8 * l && r <= 1.1 * l)}'
rate "curl --limit-rate $LIM" $LIM_B timeout 120 curl -s --limit-rate $LIM -o "$WORK/c.bin" "$TESTBED_URL_A/$F"
check "curl --limit-rate: exact (its rate printed beside mhttp's)" eval '[ $RC = 0 ] && [ "$(mh_sha $WORK/c.bin)" = "$(mh_sum $F)" ]'
H=https://$TESTBED_HOST_A:$TESTBED_TLS_PORT
SIZE=4194304
rate "mhttp --limit-rate 1M https" 1048576 timeout 120 "$MHTTP" -q --limit-rate 1M --cacert "$TESTBED_TLS_CA" \
  --stats "$WORK/t.json" -o "$WORK/t.bin" "$H/files/4194304.bin"
check "https --limit-rate 1M: exact, split over both paths, within [0.8, 1.1] x ($RATE)" eval \
  '[ $RC = 0 ] && [ "$(mh_sha $WORK/t.bin)" = "$(mh_sum files/4194304.bin)" ] && grep -q "\"split\":1" "$WORK/t.json" &&
   awk -v r="$RATE" -v l=1048576 "BEGIN {exit !(r >= 0.8 * l && r <= 1.1 * l)}"'
"$MHTTP" --limit-rate 2X -o "$WORK/x.bin" "$TESTBED_URL_A/$F" 2>"$WORK/x.err"; rc=$?
check "mhttp --limit-rate 2X: refused (exit $rc: $(head -c 200 "$WORK/x.err"))" eval '[ $rc = 2 ] && [ ! -e "$WORK/x.bin" ]'

PORT=16821
SECRET=r4te-$$
mkdir -p "$WORK/d"
check "the daemon starts" mh_daemon "$WORK/daemon.log" $PORT --rpc-secret="$SECRET" -d "$WORK/d"
"$PY" "$HERE/daemon_ratelimit.py" $PORT "$SECRET" "$TESTBED_URL_A/$F" "$(mh_sum $F)" "$WORK/d/r.bin"
check "daemon: max-download-limit and max-overall-download-limit applied while it runs" [ $? = 0 ]
check "the daemon exits 0 at SIGTERM" eval 'kill -TERM $DPID && exits_within $DPID 10'
check "daemon log: no sanitizer report" eval '! grep -q "ERROR: .*Sanitizer\|runtime error:" "$WORK/daemon.log"'
mh_finish
