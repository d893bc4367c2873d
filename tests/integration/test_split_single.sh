#!/bin/bash
# Range splitting with one interface (single, rate unshaped so every size is quick): every testbed size byte-exact with wget.
source "$(dirname "$0")/lib.sh"
mh_in_testbed single --set wifi0.rate=0

A=$TESTBED_URL_A
for n in $TESTBED_FILE_SIZES; do
  f=files/$n.bin
  rm -f "$WORK/w.bin"
  LD_PRELOAD=$SHIM MHTTP_STATS=$WORK/stats.json timeout 120 wget -q -O "$WORK/w.bin" "$A/$f"; rc=$?
  check "one link: wget $n bytes exact" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/w.bin)" = "$(mh_sum $f)" ]'
done
check "one link: objects were managed (stats lines)" eval '[ "$(grep -c "\"result\":\"ok\"" $WORK/stats.json)" -ge 9 ]'
mh_finish
