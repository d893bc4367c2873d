#!/bin/bash
# Networks that lie (demo with wifi0 40 ms and lte0 4 ms RTT, so the policies like the lying lte0; the kernel's path is wifi0): a captive portal (302 to a login page, a 200 login page, a made-up 206 "whole object"), a hijacking resolver and a stale transparent cache, each with curl, wget and the mhttp command under libmhttp, cold (MHTTP_METRICS_STORE=off), warm (two earlier downloads through the shim into a store under $WORK, the lie on) and honest (two downloads before the lie began: lte0 agreed about the server, so programs are bound there): exact bytes and plain's exit status in every run (NETLIE_RUNS, default 3, 1 in the Asan tree; the issue's verdict is 20).
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo --set wifi0.rtt=40 --set lte0.rtt=4

RUNS=${NETLIE_RUNS:-$([ -n "$MH_SAN_RT" ] && echo 1 || echo 3)}  # the Asan tree checks memory: one run
f=files/1048576.bin
A=$TESTBED_URL_A
MHTTP=$MHTTP_BUILD_DIR/cli/mhttp
LN=$TESTBED_LTE0_ROUTER_NS
# multiDNS asks lte0's own resolver (the one that lies in the hijack case)
export MHTTP_DNS_lte0=$TESTBED_LTE0_DNS
CASES=${NETLIE_CASES:-portal302 portal200 portal206 stale hijack}
want_case() { [[ " $CASES " == *" $1 "* ]]; }
LIE_PID=

# The lie lives in lte0's router namespace: the origins' addresses on its loopback make the
# router answer for them (no packet filter needed), netlie.py answers as the portal or cache.
lie_on() {  # lie_on MODE [hijack]
  if [ "${2:-}" = hijack ]; then
    # lte0's resolver names the router itself (the portal) for every .test name
    kill "$(cat "$TESTBED_RUN_DIR/dns1.pid")" 2>/dev/null
    sleep 0.3
    ip netns exec "$LN" dnsmasq --no-resolv --no-hosts --conf-file=/dev/null --listen-address="$TESTBED_LTE0_GW" \
      --bind-interfaces --port=53 --user=root --group=root --address=/test/"$TESTBED_LTE0_GW" \
      --pid-file="$WORK/hijack.pid"
  else
    ip -n "$LN" addr add "$TESTBED_ORIGIN_A/32" dev lo
    ip -n "$LN" addr add "$TESTBED_ORIGIN_B/32" dev lo
  fi
  ip netns exec "$LN" "$PY" "$HERE/netlie.py" "$1" "$TESTBED_FILES_DIR" 80 8080 >"$WORK/netlie.log" 2>&1 &
  LIE_PID=$!
  local probe=$TESTBED_ORIGIN_A
  [ "${2:-}" = hijack ] && probe=$TESTBED_LTE0_GW
  for _ in $(seq 1 50); do
    curl -s -o /dev/null --interface "$TESTBED_LTE0_ADDR" -m 1 "http://$probe/" && break
    sleep 0.1
  done
}
lie_off() {
  [ -n "$LIE_PID" ] && kill "$LIE_PID" 2>/dev/null && wait "$LIE_PID" 2>/dev/null
  LIE_PID=
  ip -n "$LN" addr del "$TESTBED_ORIGIN_A/32" dev lo 2>/dev/null
  ip -n "$LN" addr del "$TESTBED_ORIGIN_B/32" dev lo 2>/dev/null
  [ -f "$WORK/hijack.pid" ] && kill "$(cat "$WORK/hijack.pid")" 2>/dev/null && rm -f "$WORK/hijack.pid"
}

get() {  # get PROG OUT [env...]: one download of $A/$f; prints the exit status
  local prog=$1 out=$2; shift 2
  rm -f "$out"
  case $prog in
    curl) env "$@" timeout 60 curl -sS -o "$out" "$A/$f" 2>>"$WORK/err.log" ;;
    wget) env "$@" timeout 60 wget -q -O "$out" "$A/$f" 2>>"$WORK/err.log" ;;
    mhttp) env -u LD_PRELOAD "$@" timeout 60 "$MHTTP" -o "$out" "$A/$f" 2>>"$WORK/err.log" ;;
  esac
  echo $?
}

want=$(mh_sum $f)
netlie_case() {  # netlie_case NAME MODE [hijack]
  local name=$1 mode=$2 hij=${3:-}
  # the honest store: two downloads while lte0 still told the truth (it agreed about the
  # server, so the connect-time choice binds programs there until its answers disagree)
  local honest=$WORK/honest-$name
  mkdir -m 700 -p "$honest"
  for w in 1 2; do
    get curl "$WORK/warm.bin" LD_PRELOAD="$SHIM" MHTTP_METRICS_STORE="$honest/metrics" >/dev/null
  done
  lie_on "$mode" $hij
  local store=$WORK/store-$name
  mkdir -m 700 -p "$store"
  # the warm store: two earlier downloads through the shim, the network as it is now
  for w in 1 2; do
    get curl "$WORK/warm.bin" LD_PRELOAD="$SHIM" MHTTP_METRICS_STORE="$store/metrics" >/dev/null
  done
  for prog in curl wget mhttp; do
    local prc; prc=$(get "$prog" "$WORK/plain.bin")
    [ "$prog" = mhttp ] && prc=$(get curl "$WORK/plain.bin")  # the command against plain curl
    local psha; psha=$(mh_sha "$WORK/plain.bin")
    for st in cold warm honest; do
      local sv=off bad=0 detail=""
      [ $st = warm ] && sv=$store/metrics
      [ $st = honest ] && sv=$honest/metrics
      for r in $(seq 1 "$RUNS"); do
        local rc sha
        if [ "$prog" = mhttp ]; then
          rc=$(get mhttp "$WORK/shim.bin" MHTTP_METRICS_STORE="$sv" MHTTP_LOG=info MHTTP_LOG_FILE="$WORK/$name-$prog-$st.log")
        else
          rc=$(get "$prog" "$WORK/shim.bin" LD_PRELOAD="$SHIM" MHTTP_METRICS_STORE="$sv" MHTTP_LOG=info \
               MHTTP_LOG_FILE="$WORK/$name-$prog-$st.log" MHTTP_STATS="$WORK/$name-$prog-$st.json")
        fi
        sha=$(mh_sha "$WORK/shim.bin")
        if [ "$rc" != "$prc" ] || [ "$sha" != "$psha" ]; then
          bad=$((bad + 1))
          detail="$detail run $r: exit $rc (plain $prc), $(stat -c %s "$WORK/shim.bin" 2>/dev/null || echo 0) bytes;"
        fi
      done
      check "$name, $prog, $st store: $RUNS of $RUNS runs exact and plain's exit $prc (plain: $([ "$psha" = "$want" ] && echo the file || echo other bytes))$detail" \
        eval "[ $bad = 0 ] && [ '$psha' = '$want' ]"
    done
  done
  [ "$name" = portal302 ] && portal_check_case
  lie_off
}

# The engine's own portal check (MHTTP_PORTAL_CHECK): an empty file on replica A is the URL
# expected to answer an empty 200. Object 1's split starts the check on each interface; lte0's
# answer is the portal's 302, so object 2 (same curl, same engine) leaves lte0 out.
portal_check_case() {
  rm -f "$WORK"/pc.*
  LD_PRELOAD="$SHIM" MHTTP_METRICS_STORE=off MHTTP_PORTAL_CHECK="$TESTBED_URL_A_IP/files/0.bin" MHTTP_LOG=debug \
    MHTTP_LOG_FILE="$WORK/pc.log" timeout 60 curl -sS -o "$WORK/pc.1" "$A/$f" -o "$WORK/pc.2" "$A/$f"; local rc=$?
  check "portal check: both objects exact, exit $rc" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/pc.1)" = "$want" ] && [ "$(mh_sha $WORK/pc.2)" = "$want" ]'
  check "portal check: lte0 found a portal, wifi0 the expected answer, object 2 left lte0 out" eval \
    'grep -q "portal check: lte0 answered otherwise (HTTP/1.[01] 302" "$WORK/pc.log" &&
     grep -q "portal check: wifi0: the expected answer" "$WORK/pc.log" && grep -q "split: lte0 left out" "$WORK/pc.log"'
}

want_case portal302 && netlie_case portal302 portal302
want_case portal200 && netlie_case portal200 portal200
want_case portal206 && netlie_case portal206 portal206
want_case stale && netlie_case stale stale
want_case hijack && netlie_case hijack portal302 hijack
# the hijacking resolver costs only the replicas it named: lte0 still carried bytes of the
# object from the program's server (before, its legs there retired and wifi0 carried it alone)
want_case hijack && check "hijack: lte0 carried bytes from the program's server in the last cold curl run" "$PY" -c '
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])][-1]
b = {p["iface"]: p["bytes"] for p in s["paths"]}
print("   per path:", b, s.get("fallbacks"))
sys.exit(0 if s["result"] == "ok" and b.get("lte0", 0) > 0 else 1)' "$WORK/hijack-curl-cold.json"
want_case portal302 && check "portal: the disagreement was noted (log)" grep -q "trust: lte0 disagreed" "$WORK/portal302-curl-cold.log"
mh_finish
