#!/bin/bash
# mhttp daemon on demo: 32 MiB added over JSON-RPC, over HTTP POST and over the WebSocket (daemon_split.py), split over wifi0 and lte0: byte-exact, both interfaces carried >= 10 % and getServers named both, tellStatus' completedLength steady and its downloadSpeed within 25 % of the bytes' rate; the time (addUri sent to onDownloadComplete received) over the physical limit printed, and with MH_DAEMON_SPLIT_VERDICT=time (the TIMING registration, 3 interleaved rounds) the median of each within 1.10 x the limit (the mhttp command's time in the same rounds printed beside).
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo

PORT=16820
SECRET=spl1t-$$
F=files/33554432.bin
SIZE=33554432
TIMED=$([ "${MH_DAEMON_SPLIT_VERDICT:-}" = time ] && echo 1)
ROUNDS=${MH_DAEMON_SPLIT_ROUNDS:-$([ -n "$TIMED" ] && echo 3 || echo 1)}
# the physical limit: the size over both links' rates as TCP payload (1448 B of a full segment;
# linkemu counts 1500 B of it on the wire, netem and tbf 1514 as test_metrics_accuracy.sh says)
case $TESTBED_SHAPER in linkemu) WIRE=1500 ;; *) WIRE=1514 ;; esac
LIMIT=$(awk -v s=$SIZE -v a="$TESTBED_WIFI0_RATE_DOWN" -v b="$TESTBED_LTE0_RATE_DOWN" -v w=$WIRE \
  'BEGIN {printf "%.3f", s / ((a + b) / 8 * 1448 / w)}')
echo "   limit $LIMIT s (wifi0 $TESTBED_WIFI0_RATE_DOWN + lte0 $TESTBED_LTE0_RATE_DOWN bit/s, shaper $TESTBED_SHAPER); load: $(cut -d' ' -f1-3 /proc/loadavg)"

check "the daemon starts" mh_daemon "$WORK/daemon.log" $PORT --rpc-secret="$SECRET" -d "$WORK/d"
for ((r = 1; r <= ROUNDS; r++)); do
  for mode in http ws; do
    rm -f "$WORK/d/$mode.bin"
    "$PY" "$HERE/daemon_split.py" $PORT "$SECRET" $mode "$TESTBED_URL_A/$F" "$(mh_sum $F)" "$WORK/d/$mode.bin" >"$WORK/out" 2>&1
    rc=$?
    grep -v '^elapsed' "$WORK/out"
    check "$mode round $r: byte-exact over both paths, tellStatus rates match the bytes" [ $rc = 0 ]
    echo "$mode $(sed -n 's/^elapsed //p' "$WORK/out")" >>"$WORK/times"
  done
  # the same download by the mhttp command in the same round: what the engine does without the daemon
  [ -n "$TIMED" ] || continue
  t0=$(date +%s%N)
  timeout 120 "$MHTTP_BUILD_DIR/cli/mhttp" -q -o "$WORK/cmd.bin" "$TESTBED_URL_A/$F"
  echo "cmd $(awk -v n=$(($(date +%s%N) - t0)) 'BEGIN {printf "%.3f", n / 1e9}')" >>"$WORK/times"
  rm -f "$WORK/cmd.bin"
done
for mode in http ws $([ -n "$TIMED" ] && echo cmd); do
  med=$(awk -v m=$mode '$1 == m && $2 != "" {print $2}' "$WORK/times" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
  ratio=$(awk -v t="${med:-0}" -v l="$LIMIT" 'BEGIN {printf "%.3f", t / l}')
  echo "   $mode: median ${med:-none} s of $ROUNDS = $ratio x the limit (load $(cut -d' ' -f1-3 /proc/loadavg))"
  [ -n "$TIMED" ] && [ $mode != cmd ] && check "$mode: median within 1.10 x the limit ($ratio)" awk -v r="$ratio" 'BEGIN {exit !(r > 0 && r <= 1.10)}'
done
check "the daemon exits 0 at SIGTERM" eval 'kill -TERM $DPID && exits_within $DPID 10'
check "daemon log: no sanitizer report" eval '! grep -q "ERROR: .*Sanitizer\|runtime error:" "$WORK/daemon.log"'
mh_finish
