#!/bin/bash
# One interface (single, rate unshaped so every size is quick): no probe and no change to the request, since no second path could help; every testbed size byte-exact with wget.
source "$(dirname "$0")/lib.sh"
mh_in_testbed single --set wifi0.rate=0

A=$TESTBED_URL_A
A_LOG=$TESTBED_RUN_DIR/origin-a/access.log
from=$(wc -l <"$A_LOG")
for n in $TESTBED_FILE_SIZES; do
  f=files/$n.bin
  rm -f "$WORK/w.bin"
  LD_PRELOAD="$SHIM" MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/shim.log MHTTP_STATS=$WORK/stats.json \
    timeout 120 wget -q -O "$WORK/w.bin" "$A/$f"; rc=$?
  check "one link: wget $n bytes exact" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/w.bin)" = "$(mh_sum $f)" ]'
done
# the origin saw the program's own requests only: every answer a 200, none a 206 to a probe
check "one link: the origin answered every request 200 (no Range added)" eval \
  '[ "$(tail -n +$((from + 1)) "$A_LOG" | awk "\$9 == 200" | wc -l)" -ge 9 ] && ! tail -n +$((from + 1)) "$A_LOG" | awk "\$9 == 206" | grep -q .'
check "one link: the engine saw one path and relayed unchanged" grep -q "one path to the server: relayed unchanged" "$WORK/shim.log"
check "one link: no object was split (no stats line)" eval '[ ! -s "$WORK/stats.json" ]'
mh_finish
