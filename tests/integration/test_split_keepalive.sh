#!/bin/bash
# Keep-alive after a split (two equal 50 Mbit/s links): python http.client fetches 4 MiB then 32 MiB on one connection; the program's connection stays open as the origin left it, every body exact, both objects split.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo --set wifi0.rate=50mbit --set lte0.rate=50mbit --set wifi0.rtt=5 --set lte0.rtt=20

A=$TESTBED_HOST_A
want="200 $(mh_sum files/4194304.bin) 4194304
200 $(mh_sum files/33554432.bin) 33554432"
runs=${KA_RUNS:-6}
ok=0 split=0 one=0
for i in $(seq "$runs"); do
  rm -f "$WORK/st.$i" "$WORK/log.$i"
  LD_PRELOAD="$SHIM" MHTTP_STATS=$WORK/st.$i MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/log.$i \
    timeout 120 "$PY" "$HERE/kaseq.py" "$A" /files/4194304.bin /files/33554432.bin >"$WORK/out.$i" 2>"$WORK/err.$i"
  rc=$?
  if [ $rc = 0 ] && [ "$(cat "$WORK/out.$i")" = "$want" ]; then ok=$((ok + 1)); else
    echo "   run $i: rc $rc: $(head -c 300 "$WORK/out.$i" "$WORK/err.$i" | tr '\n' ' ')"; fi
  [ "$(grep -c '"result":"ok"' "$WORK/st.$i" 2>/dev/null)" = 2 ] && grep -q '"size":33554432' "$WORK/st.$i" && split=$((split + 1))
  [ "$(grep -c "taken over" "$WORK/log.$i")" = 1 ] && one=$((one + 1))
done
check "http.client keep-alive, 4 then 32 MiB: $ok of $runs runs exact, no RemoteDisconnected" [ "$ok" = "$runs" ]
check "both objects were split in every run ($split of $runs)" [ "$split" = "$runs" ]
check "one program connection per run ($one of $runs)" [ "$one" = "$runs" ]
mh_finish
