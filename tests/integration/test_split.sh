#!/bin/bash
# Range splitting over two links (demo): every testbed size byte-exact with wget and curl, both interfaces carrying bytes, the rewritten head.
source "$(dirname "$0")/lib.sh"
# lte0 unshaped in rate keeps the big sizes quick; delays stay (the scheduler sees two RTTs)
mh_in_testbed demo --set lte0.rate=0 --set wifi0.rate=100mbit

A=$TESTBED_URL_A
STATS=$WORK/stats.json

# -- every size, wget: the body is exact and the program saw a 200 with the right length
for n in $TESTBED_FILE_SIZES; do
  f=files/$n.bin
  rm -f "$WORK/w.bin"
  LD_PRELOAD="$SHIM" MHTTP_STATS=$STATS MHTTP_LOG_FILE=$WORK/w.log timeout 120 \
    wget -q -S -O "$WORK/w.bin" "$A/$f" 2>"$WORK/w.head"; rc=$?
  check "wget $n bytes exact" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/w.bin)" = "$(mh_sum $f)" ] &&
    grep -q "HTTP/1.1 200 OK" "$WORK/w.head" && grep -qi "Content-Length: $n\$" <(tr -d "\r" <"$WORK/w.head") &&
    ! grep -qi "Content-Range" "$WORK/w.head"'
done

# -- a sample of sizes with curl (poll-based client), headers included in the comparison
for n in 0 1 32767 32768 32769 1048576 33554432; do
  f=files/$n.bin
  LD_PRELOAD="$SHIM" MHTTP_LOG_FILE=$WORK/c.log timeout 120 curl -sS -o "$WORK/c.bin" "$A/$f"; rc=$?
  check "curl $n bytes exact" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/c.bin)" = "$(mh_sum $f)" ]'
done

# -- the stats: a 32 MiB object used both interfaces; a 16 KiB one needed no second path
big=$(grep '"size":33554432' "$STATS" | tail -1)
check "32 MiB: wifi0 and lte0 both carried bytes ($big)" eval "$PY"' -c "
import json,sys
d=json.loads(sys.argv[1]); b={p[\"iface\"]: p[\"bytes\"] for p in d[\"paths\"]}
sys.exit(0 if d[\"result\"]==\"ok\" and b.get(\"wifi0\",0)>0 and b.get(\"lte0\",0)>0 and sum(b.values())==33554432 else 1)" "$big"'
small=$(grep '"size":16384' "$STATS" | tail -1)
check "16 KiB: the probe alone served it" eval '[ -n "$small" ] && echo "$small" | grep -q "\"lte0\",\"bytes\":0"'

# -- several objects on one keep-alive connection, each split, in order
LD_PRELOAD="$SHIM" MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/k.log timeout 120 curl -sS \
  "$A/files/4194304.bin" -o "$WORK/k1" "$A/files/65536.bin" -o "$WORK/k2" "$A/files/1048576.bin" -o "$WORK/k3"; rc=$?
check "curl 3 URLs on one connection, split each" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/k1)" = "$(mh_sum files/4194304.bin)" ] &&
  [ "$(mh_sha $WORK/k2)" = "$(mh_sum files/65536.bin)" ] && [ "$(mh_sha $WORK/k3)" = "$(mh_sum files/1048576.bin)" ] &&
  [ "$(grep -c "DONE (split)" $WORK/k.log)" = 3 ] && [ "$(grep -c "taken over" $WORK/k.log)" = 1 ]'

# -- pre-connect (MHTTP_PRECONNECT=1): lte0's connection opens at the program's connect() and the split's leg adopts
#    it; a second connection to the same server finds the other interface's pooled one and opens no other (the
#    connect-time choice may put that second connection on either interface: while one has no rate, connections
#    take the interfaces in turn), so no interface is pre-connected twice
LD_PRELOAD="$SHIM" MHTTP_PRECONNECT=1 MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/pc.log timeout 60 curl -sS -H "Connection: close" \
  "$A/files/1048576.bin" -o "$WORK/pc1" "$A/files/4194304.bin" -o "$WORK/pc2"; rc=$?
check "pre-connect adopted by the split, one per (interface, address)" eval '[ $rc = 0 ] &&
  [ "$(mh_sha $WORK/pc1)" = "$(mh_sum files/1048576.bin)" ] && [ "$(mh_sha $WORK/pc2)" = "$(mh_sum files/4194304.bin)" ] &&
  [ "$(grep -c "taken over" $WORK/pc.log)" = 2 ] && [ "$(grep -c "pool: keeps a connecting lte0" $WORK/pc.log)" = 1 ] &&
  grep -q "split 1: leg 1 (lte0) reuses a pooled connection (pre-connect" $WORK/pc.log &&
  grep -q "split 2: leg 1 ([a-z0-9]*) reuses a pooled connection" $WORK/pc.log &&
  [ "$(grep -c "pool: keeps a connecting wifi0" $WORK/pc.log)" -le 1 ]'
# -- two Hosts on one address share lte0's pooled leg (plain HTTP, RFC 7540 §9.1.1): a.test, then its address
#    as the Host; b.test (another address) never gets that connection. The program's connections stay on wifi0
#    (curl binds them), so the extra leg is lte0's every time; pre-connect off, so every lte0 reuse is the pool's.
LD_PRELOAD="$SHIM" MHTTP_PRECONNECT=off MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/xh.log timeout 60 curl -sS --interface wifi0 \
  "$A/files/1048576.bin" -o "$WORK/xh1" "$TESTBED_URL_A_IP/files/1048576.bin" -o "$WORK/xh2" \
  "$TESTBED_URL_B/files/1048576.bin" -o "$WORK/xh3"; rc=$?
check "two Hosts on one address share a pooled leg, another address does not" eval '[ $rc = 0 ] &&
  [ "$(mh_sha $WORK/xh1)" = "$(mh_sum files/1048576.bin)" ] && [ "$(mh_sha $WORK/xh2)" = "$(mh_sum files/1048576.bin)" ] &&
  [ "$(mh_sha $WORK/xh3)" = "$(mh_sum files/1048576.bin)" ] &&
  [ "$(grep -c "DONE (split)" $WORK/xh.log)" = 3 ] &&
  ! grep -q "split 1: leg [0-9] (lte0) reuses" $WORK/xh.log &&
  grep -q "split 2: leg [0-9] (lte0) reuses a pooled connection\$" $WORK/xh.log &&
  grep -q "pool: lte0 connection of $TESTBED_HOST_A carries $TESTBED_ORIGIN_A (same address)" $WORK/xh.log &&
  ! grep -q "split 3: leg [0-9] (lte0) reuses" $WORK/xh.log'
LD_PRELOAD="$SHIM" MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/pcd.log timeout 60 wget -q -O "$WORK/pcd.bin" "$A/files/1048576.bin"; rc=$?
check "pre-connect on by default" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/pcd.bin)" = "$(mh_sum files/1048576.bin)" ] &&
  grep -q "pool: keeps a connecting lte0" $WORK/pcd.log && grep -q "split 1: leg 1 (lte0) reuses a pooled connection (pre-connect" $WORK/pcd.log'
LD_PRELOAD="$SHIM" MHTTP_PRECONNECT=off MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/pc0.log timeout 60 wget -q -O "$WORK/pc0.bin" "$A/files/1048576.bin"; rc=$?
check "MHTTP_PRECONNECT=off: no pre-connect" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/pc0.bin)" = "$(mh_sum files/1048576.bin)" ] &&
  grep -q "split 1" $WORK/pc0.log && ! grep -q "connecting lte0\|pre-connect" $WORK/pc0.log'

# -- MHTTP_SPLIT=off: plain relay, no Range ever sent
LD_PRELOAD="$SHIM" MHTTP_SPLIT=off MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/off.log timeout 60 wget -q -O "$WORK/off.bin" "$A/files/1048576.bin"; rc=$?
check "MHTTP_SPLIT=off relays" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/off.bin)" = "$(mh_sum files/1048576.bin)" ] && ! grep -q "split 1" $WORK/off.log'

# -- a bad value disables the shim with one line, the program still works
LD_PRELOAD="$SHIM" MHTTP_WINDOW=lots timeout 60 wget -q -O "$WORK/bad.bin" "$A/files/16384.bin" 2>"$WORK/bad.err"; rc=$?
# (one line per process: timeout(1) and wget each say it once)
check "MHTTP_WINDOW=lots: one line, shim off" eval '[ $rc = 0 ] && [ -s $WORK/bad.err ] && [ "$(grep -c "window: bad value .lots.*libmhttp disabled" $WORK/bad.err)" = "$(wc -l <$WORK/bad.err)" ] &&
  [ "$(mh_sha $WORK/bad.bin)" = "$(mh_sum files/16384.bin)" ]'

mh_finish
