#!/bin/bash
# The mhttp command from the build tree on demo: `mhttp run -- wget` splits with the shim it found, keeps the caller's LD_PRELOAD and returns the command's status; `mhttp ifaces` lists the testbed's interfaces, their DNS servers and the metrics the run left in the host-wide store.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo

MHTTP=$MHTTP_BUILD_DIR/cli/mhttp
A=$TESTBED_URL_A
# The Asan tree's shim needs the ASan runtime before it (lib.sh's $SHIM): hand mhttp run that
# whole list; the Release tree checks the command's own discovery of the tree's shim.
[ -n "$MH_SAN_RT" ] && export MHTTP_PRELOAD="$SHIM"
want_pre=${MHTTP_PRELOAD:-$SHIM_LIB}

want=$(sed -n 's/^project(libmhttp VERSION \([0-9.]*\).*/\1/p' "$MHTTP_SOURCE_DIR/CMakeLists.txt")
out=$("$MHTTP" --version)
check "mhttp --version: $out" test "$out" = "mhttp $want (libmhttp $want)"

# 1. mhttp run -- wget: the shim active (MHTTP_STATS names both paths), byte-exact
f=files/4194304.bin
ST=$WORK/store/metrics
mkdir -m 700 "$WORK/store"
MHTTP_STATS=$WORK/stats.json MHTTP_METRICS_STORE=$ST timeout 120 \
  "$MHTTP" run -- wget -q -O "$WORK/w.bin" "$A/$f"; rc=$?
line=$(grep '"size":4194304' "$WORK/stats.json" 2>/dev/null | tail -1)
check "mhttp run -- wget 4 MiB: exact" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/w.bin)" = "$(mh_sum $f)" ]'
check "mhttp run -- wget: split over wifi0 and lte0 ($line)" eval "$PY"' -c "
import json,sys
d=json.loads(sys.argv[1]); b={p[\"iface\"]: p[\"bytes\"] for p in d[\"paths\"]}
sys.exit(0 if d[\"result\"]==\"ok\" and b.get(\"wifi0\",0)>0 and b.get(\"lte0\",0)>0 and sum(b.values())==4194304 else 1)" "$line"'

# 2. LD_PRELOAD: the shim first, what was there kept; the command's exit status and signals
out=$(LD_PRELOAD=libc.so.6 "$MHTTP" run -- sh -c 'echo "$LD_PRELOAD"')
check "mhttp run keeps LD_PRELOAD after the shim ($out)" test "$out" = "$want_pre libc.so.6"
out=$("$MHTTP" run sh -c 'echo "$LD_PRELOAD"')
check "mhttp run without -- and without an LD_PRELOAD ($out)" test "$out" = "$want_pre"
"$MHTTP" run -- sh -c 'exit 7'; rc=$?
check "mhttp run returns the command's status (7: $rc)" test "$rc" = 7
"$MHTTP" run -- sh -c 'kill -TERM $$'; rc=$?
check "mhttp run: a command killed by SIGTERM gives 143 ($rc)" test "$rc" = 143
"$MHTTP" run -- /nonexistent/cmd 2>"$WORK/nx.err"; rc=$?
check "mhttp run: a missing command gives 127 and a message ($rc)" eval \
  '[ $rc = 127 ] && grep -q "mhttp: run: /nonexistent/cmd: No such file or directory" "$WORK/nx.err"'
MHTTP_PRELOAD=relative.so "$MHTTP" run -- true 2>"$WORK/rel.err"; rc=$?
check "mhttp run: a relative MHTTP_PRELOAD is refused (2: $rc)" eval '[ $rc = 2 ] && grep -q "absolute" "$WORK/rel.err"'

# 3. mhttp ifaces: the testbed's interfaces with their addresses, each one's resolver, and what
#    the wget above measured, read back from the store it wrote at exit
MHTTP_DNS_lte0=$TESTBED_LTE0_DNS MHTTP_METRICS_STORE=$ST "$MHTTP" ifaces >"$WORK/ifaces.txt" 2>&1; rc=$?
sed 's/^/   | /' "$WORK/ifaces.txt"
block() { awk -v n="$1" '/^[^ ]/ {on = ($1 == n)} on' "$WORK/ifaces.txt"; }
check "ifaces: exit 0, the store's path" eval '[ $rc = 0 ] && grep -qx "metrics store: $ST" "$WORK/ifaces.txt"'
check "ifaces: wifi0 with its address and the resolv.conf resolver" eval \
  'block wifi0 | grep -q "^  address  $TESTBED_WIFI0_ADDR " &&
   block wifi0 | grep -qx "  dns      $TESTBED_WIFI0_DNS (resolv.conf (default-route interface))"'
check "ifaces: lte0 with its address and the resolver from MHTTP_DNS_lte0" eval \
  'block lte0 | grep -q "^  address  $TESTBED_LTE0_ADDR " &&
   block lte0 | grep -qx "  dns      $TESTBED_LTE0_DNS (environment)"'
check "ifaces: both paths show the RTT and rate the wget run stored" eval \
  'block wifi0 | grep -Eq "srtt min [0-9.]+ ms, median .* max [0-9.]+ [KMG]iB/s" &&
   block lte0 | grep -Eq "srtt min [0-9.]+ ms, median .* max [0-9.]+ [KMG]iB/s"'
MHTTP_IFACES=lte0 MHTTP_METRICS_STORE=off "$MHTTP" ifaces >"$WORK/if2.txt"; rc=$?
check "ifaces with MHTTP_IFACES=lte0 and the store off: lte0 only, no metrics" eval \
  '[ $rc = 0 ] && ! grep -q "^wifi0" "$WORK/if2.txt" && grep -q "^lte0" "$WORK/if2.txt" &&
   grep -qx "metrics store: off" "$WORK/if2.txt" && grep -q "no shared metrics" "$WORK/if2.txt"'

# 4. usage errors in curl's words, before any network
"$MHTTP" --frobnicate http://a.test/ 2>"$WORK/u.err"; rc=$?
check "unknown option: exit 2, curl's message" eval \
  '[ $rc = 2 ] && [ "$(head -1 "$WORK/u.err")" = "mhttp: option --frobnicate: is unknown" ]'
mh_finish
