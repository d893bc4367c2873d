#!/bin/bash
# Host-wide metrics store (asym scenario): what one program measured is what the next program's first connect-time pick and its engine see; with MHTTP_METRICS_STORE=off they start cold.
source "$(dirname "$0")/lib.sh"
mh_in_testbed asym --ipv6

A=$TESTBED_URL_A
J="$PY -c"
ST=$WORK/store/metrics   # private to this run: the directory is created by nobody but us
mkdir -m 700 "$WORK/store"

# 1. two programs measure one path each and write the store at exit: wifi0 (10 ms, 2 Mbit/s),
#    then lte0 (100 ms, 20 Mbit/s), each with wget of 1 MiB (a smaller object ends in lte0's
#    slow start and its rate would be measured below wifi0's)
for ifn in wifi0 lte0; do
  MHTTP_METRICS_STORE=$ST LD_PRELOAD="$SHIM" MHTTP_POLICY=single:$ifn timeout 60 \
    wget -q -O "$WORK/w-$ifn.bin" "$A/files/1048576.bin"; rc=$?
  check "wget over $ifn: exact" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/w-$ifn.bin)" = "$(mh_sum files/1048576.bin)" ]'
done
check "store written, 0600, fixed size" eval '[ "$(stat -c "%a %s" "$ST")" = "600 23576" ]'
# a path other than the kernel's is bound only once it agreed with another about the server
# (policy/trust.h): one split download over both paths to each of a.test's addresses (curl
# prefers IPv6 for the name) notes lte0's agreement in the store (single:IF compares nothing)
agree() {
  for u in "$TESTBED_URL_A_IP" "$TESTBED_URL_A_IP6"; do
    MHTTP_METRICS_STORE=$ST LD_PRELOAD="$SHIM" timeout 60 curl -sS -o /dev/null "$u/files/1048576.bin"
  done
}
agree

# 2. a fresh program's FIRST connect (no engine yet: the port is not taken over), sized 1 MiB:
#    with the store, EAF predicts with both paths' metrics and takes lte0 (capacity); cold, it
#    knows nothing and the lone first connection gets the preferred path (wifi0)
first() {  # first STORE SIZE LOG [ORIGIN]: prints "source-address bytes"
  MHTTP_METRICS_STORE=$1 LD_PRELOAD="$SHIM" MHTTP_PORTS=80 MHTTP_INTENT_SIZE=$2 MHTTP_LOG=debug \
    MHTTP_LOG_FILE=$3 timeout 30 $PY "$HERE/get16k.py" "${4:-$TESTBED_ORIGIN_A}" 8080
}
out=$(first "$ST" 1M "$WORK/warm.log")
check "store on, 1 MiB: first connect from lte0 ($out)" eval '[ "${out%% *}" = "$TESTBED_LTE0_ADDR" ]'
check "store on: the pick came from the host-wide store with a prediction (debug log)" eval \
  'grep -q "connect-time metrics from the host-wide store" "$WORK/warm.log" && grep -Eq "from lte0 \(policy eaf, size hint 1048576, predicted [1-9][0-9]* us" "$WORK/warm.log"'
out=$(first "$ST" 16k "$WORK/warm16.log")
check "store on, 16 KiB: first connect from wifi0, the lower latency ($out)" eval '[ "${out%% *}" = "$TESTBED_WIFI0_ADDR" ]'
out=$(first "$ST" 1M "$WORK/warm6.log" "$TESTBED_ORIGIN_A6")
check "store on, IPv6 destination: the paths measured over IPv4 count, lte0 ($out)" eval '[ "${out%% *}" = "$TESTBED_LTE0_ADDR6" ]'
out=$(first off 1M "$WORK/cold.log")
check "store off, 1 MiB: cold start, not lte0 ($out)" eval '[ "${out%% *}" = "$TESTBED_WIFI0_ADDR" ] && ! grep -q "host-wide store" "$WORK/cold.log"'

# 3. the engine: a program whose object goes over lte0 publishes wifi0's host-wide rate too
#    (MHTTP_METRICS lines are what its policies see); with the store off wifi0's rate is
#    unknown (its SRTT may be measured: the program's own connection can use wifi0)
for mode in on off; do
  s=$ST; [ $mode = off ] && s=off
  rm -f "$WORK/m-$mode.json"
  MHTTP_METRICS_STORE=$s LD_PRELOAD="$SHIM" MHTTP_POLICY=single:lte0 MHTTP_METRICS=$WORK/m-$mode.json \
    timeout 60 wget -q -O "$WORK/e.bin" "$A/files/65536.bin"
  check "engine, store $mode: wifi0 in MHTTP_METRICS" $J '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
w = [r for r in rows if r["iface"] == "wifi0"][-1]
print("   ", w)
on = sys.argv[2] == "on"
ok = (5000 <= w["srtt_min_us"] <= 60000 and 1e5 <= w["max_rate_Bps"] <= 4e5) if on else \
     w["max_rate_Bps"] == 0
sys.exit(0 if ok and w["transfers"] == 0 else 1)' "$WORK/m-$mode.json" $mode
done

# 4. a damaged store is ignored (cold start, no crash) and replaced by the next writer
head -c 23576 /dev/urandom >"$ST"
out=$(first "$ST" 1M "$WORK/junk.log")
check "garbage store: program fine, cold pick ($out)" eval '[ "${out%% *}" = "$TESTBED_WIFI0_ADDR" ] && [ "${out#* }" -gt 16384 ]'
MHTTP_METRICS_STORE=$ST LD_PRELOAD="$SHIM" MHTTP_POLICY=single:lte0 timeout 60 wget -q -O /dev/null "$A/files/1048576.bin"
agree
out=$(first "$ST" 1M "$WORK/again.log")
check "rewritten after garbage: lte0 measured again, picked ($out)" eval '[ "${out%% *}" = "$TESTBED_LTE0_ADDR" ]'
mh_finish
