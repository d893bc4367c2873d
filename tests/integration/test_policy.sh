#!/bin/bash
# Policies in the engine and the shim (demo scenario): single:lte0 puts every byte on lte0, connect-time binding of a port that is not taken over, loopback never re-bound, sane MHTTP_METRICS lines.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo

A=$TESTBED_URL_A
f=files/1048576.bin
J="$PY -c"

# 1. single:lte0: the connect is bound to lte0 (wifi0 is the kernel's default), the probe and
#    every range go there, nothing on wifi0.
rm -f "$WORK/s.json" "$WORK/m.json"
LD_PRELOAD="$SHIM" MHTTP_POLICY=single:lte0 MHTTP_STATS=$WORK/s.json MHTTP_METRICS=$WORK/m.json \
  MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/single.log timeout 60 curl -s -o "$WORK/c.bin" "$A/$f"; rc=$?
check "single:lte0: curl 1 MiB exact" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/c.bin)" = "$(mh_sum $f)" ]'
check "single:lte0: every byte via lte0, none via wifi0" $J '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])][-1]
b = {p["iface"]: p["bytes"] for p in s["paths"]}
print("   per path:", b, "policy", s.get("policy"), "plan", s.get("plan"))
sys.exit(0 if s["result"] == "ok" and b.get("lte0") == 1048576 and b.get("wifi0", 0) == 0
         and s.get("policy") == "single:lte0" else 1)' "$WORK/s.json"
check "single:lte0: the connect was bound to lte0 (debug log)" grep -q "from lte0 (policy single" "$WORK/single.log"

# 2. metrics file: one line per interface, keys exact, lte0 measured near its 50 ms RTT
check "metrics: sane values after the download" $J '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = {"metrics","pid","iface","srtt_min_us","srtt_med_us","max_rate_Bps","cur_rate_Bps","transfers","conns"}
last = {r["iface"]: r for r in rows}
print("   ", last.get("lte0"))
ok = all(set(r) == keys for r in rows) and set(last) == {"wifi0", "lte0"}
l = last.get("lte0", {})
ok = ok and 40000 <= l.get("srtt_min_us", 0) <= 120000 and l["srtt_med_us"] >= l["srtt_min_us"]
ok = ok and 1e6 <= l.get("max_rate_Bps", 0) <= 8e6 and l["transfers"] == 0
sys.exit(0 if ok else 1)' "$WORK/m.json"

# 3. a port that is not taken over (MHTTP_PORTS=80, connect to 8080): the policy still picks
#    the source interface; the origin sees the lte0 address
out=$(LD_PRELOAD="$SHIM" MHTTP_PORTS=80 MHTTP_POLICY=single:lte0 timeout 30 $PY "$HERE/get16k.py" "$TESTBED_ORIGIN_A" 8080)
check "port 8080 not taken over: bound to lte0 ($out)" eval '[ "${out%% *}" = "$TESTBED_LTE0_ADDR" ] && [ "${out#* }" -gt 16384 ]'
out=$(LD_PRELOAD="$SHIM" MHTTP_PORTS=80 timeout 30 $PY "$HERE/get16k.py" "$TESTBED_ORIGIN_A" 8080)
check "eaf, unknown size, nothing measured: left to the kernel (wifi0) ($out)" eval '[ "${out%% *}" = "$TESTBED_WIFI0_ADDR" ]'
out=$(env -u LD_PRELOAD timeout 30 $PY "$HERE/get16k.py" "$TESTBED_ORIGIN_A" 8080)
check "without the shim: wifi0 ($out)" eval '[ "${out%% *}" = "$TESTBED_WIFI0_ADDR" ]'

# 4. loopback is never re-bound
mh_local_origin 18080
out=$(LD_PRELOAD="$SHIM" MHTTP_PORTS=80 MHTTP_POLICY=single:lte0 timeout 30 $PY "$HERE/get16k.py" 127.0.0.1 18080)
check "loopback destination: not re-bound ($out)" eval '[ "${out%% *}" = "127.0.0.1" ]'

# 5. a destination on one of our links (here wifi0's resolver, reachable through wifi0 only)
#    is never re-bound, whatever the policy says
out=$(LD_PRELOAD="$SHIM" MHTTP_POLICY=single:lte0 timeout 30 $PY -c '
import socket, sys
s = socket.create_connection((sys.argv[1], 53), timeout=5)
print(s.getsockname()[0])' "$TESTBED_WIFI0_GW" 2>&1)
check "on-link destination (wifi0 resolver, TCP 53): not re-bound ($out)" eval '[ "$out" = "$TESTBED_WIFI0_ADDR" ]'

# 6. a bad policy disables the shim with one line naming the variable; the program still works
LD_PRELOAD="$SHIM" MHTTP_POLICY=fastest timeout 30 curl -s -o "$WORK/d.bin" "$A/files/16384.bin" 2>"$WORK/bad.err"; rc=$?
check "MHTTP_POLICY=fastest: clear error, program unaffected" eval '[ $rc = 0 ] && grep -q "MHTTP_POLICY: policy: unknown policy .fastest." "$WORK/bad.err" && grep -q disabled "$WORK/bad.err"'
mh_finish
