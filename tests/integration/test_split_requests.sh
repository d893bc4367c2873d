#!/bin/bash
# Requests per object (scheduler/README.md's bound) counted in nginx's access logs: on a server that meters each request (limit_rate 1m) and closes a connection after its 100th answer (the testbed's /rated/), the mhttp command with a mirror and wget under the shim fetch 128 MiB exactly in at most one request per MiB plus the first rounds and the tail, and no path leaves the object when a connection ends; the plain demo files too.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo

MHTTP=$MHTTP_BUILD_DIR/cli/mhttp
big=files/134217728.bin
# bound SIZE [CONNS]: the most requests scheduler/README.md allows: the steady-state ranges (at
# least max(256 KiB, min(SIZE/64, 1 MiB)) each), plus the first rounds (the probe, the last
# bytes checked first, each connection's doubling chunks before its rate is known: 8 per
# connection) and the tail (balanced shares, re-split pieces of at least 64 KiB: 16); 48 for
# both when the connections are not counted; and RESCUES (a metered answer past its budget
# waits for the server's next second, and a stalled connection's requests are asked again
# elsewhere: at most SCHED_MAX_QUEUE, 8, each).
bound() {
  local f=$(($1 / 64))
  [ $f -gt 1048576 ] && f=1048576
  [ $f -lt 262144 ] && f=262144
  local more=48
  [ -n "${2:-}" ] && more=$((8 * $2 + 16))
  echo $(($1 / f + more + 8 * ${3:-0}))
}
# rescues JSON: the rescues in a MHTTP_STATS line
rescues() { "$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["fallbacks"].count("rescue"))' "$1" 2>/dev/null || echo 0; }
# conns TAG: the connections that carried those requests (/rated/ and /recycled/ log them)
conns() { grep -h "[?&]t=$1 HTTP/1.1\"" "$TESTBED_RUN_DIR"/origin-a/conns.log | awk '{print "a" $1}' | sort -u | wc -l; }
conns2() { echo $(( $(conns "$1") + $(grep -h "[?&]t=$1 HTTP/1.1\"" "$TESTBED_RUN_DIR"/origin-b/conns.log | awk '{print $1}' | sort -u | wc -l) )); }

# reqs TAG: the requests that carried ?t=TAG, on both replicas
reqs() { cat "$TESTBED_RUN_DIR"/origin-{a,b}/access.log | grep -c "[?&]t=$1 HTTP/1.1\""; }
# small TAG KIB: of those, the ranges answered with fewer than KIB KiB
small() {
  cat "$TESTBED_RUN_DIR"/origin-{a,b}/access.log | awk -v t="[?&]t=$1 HTTP" -v k="$2" \
    '$0 ~ t && $9 == 206 && $10 < k * 1024 {n++} END {print n + 0}'
}
# small_list TAG: those answers under 256 KiB as status:bytes, smallest first
small_list() {
  cat "$TESTBED_RUN_DIR"/origin-{a,b}/access.log | awk -v t="[?&]t=$1 HTTP" \
    '$0 ~ t && $10 < 262144 {print $9 ":" $10}' | sort -t: -k2 -n | tr '\n' ' '
}
# no_drop FILE: --stats says complete, every path's bytes add up, none was dropped
no_drop() {
  "$PY" -c "
import json,sys
d=json.load(open(sys.argv[1])); p=d['paths']
bad=[x for x in p if x.get('dropped') or x.get('why')]
sys.exit(0 if d['event']=='complete' and sum(x['bytes'] for x in p)==int(sys.argv[2]) and not bad else 1)" "$1" "$2"
}

# shim_clean RC OUT FILE LOG STATS_LINE: wget exited 0 with FILE's bytes, no leg failed (LOG),
# no fallback but rescues, and every path carried bytes (its MHTTP_STATS line)
shim_clean() {
  [ "$1" = 0 ] && [ "$(mh_sha "$2")" = "$(mh_sum "$3")" ] && ! grep -q "failed" "$4" && "$PY" -c "
import json,sys
d=json.loads(sys.argv[1])
sys.exit(0 if d['result']=='ok' and set(d['fallbacks']) <= {'rescue'} and all(p['bytes'] for p in d['paths']) else 1)" "$5"
}

# 1. the mhttp command, a mirror (B) beside the URL (A), both metered
MHTTP_STATS="$WORK/m.jsonl" timeout 240 "$MHTTP" -q --stats "$WORK/m.json" -o "$WORK/m.bin" "$TESTBED_URL_A/rated/$big?t=cmd" \
  --mirror "$TESTBED_URL_B/rated/$big?t=cmd" 2>"$WORK/m.err"; rc=$?
n=$(reqs cmd)
s=$(small cmd 256)
nb=$(grep -c "t=cmd HTTP/1.1\" 206" "$TESTBED_RUN_DIR/origin-b/access.log")
k=$(conns2 cmd)
r=$(rescues "$(grep '"size":134217728' "$WORK/m.jsonl" | tail -1)")
echo "   mhttp + mirror, 128 MiB metered: $n requests ($s under 256 KiB, $nb to the mirror) on $k connections, $r rescues, rc $rc"
echo "   their answers under 256 KiB (status:bytes sent): $(small_list cmd)"
check "mhttp + mirror, 128 MiB metered: exact" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/m.bin)" = "$(mh_sum $big)" ]'
check "mhttp + mirror: $n requests <= $(bound 134217728 "$k" "$r") ($r rescues), the mirror served ($nb)" eval \
  '[ "$n" -le $(bound 134217728 "$k" "$r") ] && [ "$nb" -gt 0 ]'
check "mhttp + mirror: no path dropped ($(head -c 900 "$WORK/m.json"))" no_drop "$WORK/m.json" 134217728

# 2. wget under the shim, metered (the replicas multiDNS names: A on both paths)
LD_PRELOAD="$SHIM" MHTTP_LOG=debug MHTTP_LOG_FILE="$WORK/shim.log" MHTTP_STATS="$WORK/shim.jsonl" \
  MHTTP_DNS_lte0="$TESTBED_LTE0_DNS" timeout 240 wget -q -O "$WORK/w.bin" "$TESTBED_URL_A/rated/$big?t=shim"; rc=$?
n=$(reqs shim)
s=$(small shim 256)
line=$(grep '"size":134217728' "$WORK/shim.jsonl" | tail -1)
k=$(conns2 shim)
echo "   wget under the shim, 128 MiB metered: $n requests ($s under 256 KiB) on $k connections, rc $rc"
echo "   their answers under 256 KiB (status:bytes sent): $(small_list shim)"
check "shim, 128 MiB metered: exact" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/w.bin)" = "$(mh_sum $big)" ]'
r=$(rescues "$line")
check "shim: $n requests <= $(bound 134217728 "$k" "$r") ($r rescues)" test "$n" -le "$(bound 134217728 "$k" "$r")"
# no leg failed, no fallback but rescues (a metered answer past its budget pauses for a second),
# except a stall: nginx holds a long range's last bytes until the request's budget allows them,
# which may be longer than the stall limit; that connection ends, and its path comes back
# (mh_stalled_came_back). Every path carried bytes.
check "shim: split over both paths, no leg failed but at a stall whose path came back, no other fallback ($line; $(grep -v " debug: " "$WORK/shim.log" | grep -m3 'failed'))" eval '
  ! grep -v " debug: " "$WORK/shim.log" | grep "failed" | grep -vq "failed: stalled" &&
  { ! grep -q "failed: stalled" "$WORK/shim.log" || mh_stalled_came_back "$WORK/shim.log"; } && "$PY" -c "
import json,sys
d=json.loads(sys.argv[1]); b={p[\"iface\"]: p[\"bytes\"] for p in d[\"paths\"]}
bad=[f for f in d[\"fallbacks\"] if f not in (\"rescue\", \"stall\", \"reprobe\")]
sys.exit(0 if d[\"result\"]==\"ok\" and all(b.values()) and not bad else 1)" "$line"'

# 3. the plain demo replicas (no metering): the same bound, and the counts for the record
for sz in 4194304 33554432; do
  LD_PRELOAD="$SHIM" MHTTP_DNS_lte0="$TESTBED_LTE0_DNS" timeout 120 \
    wget -q -O "$WORK/p.bin" "$TESTBED_URL_A/files/$sz.bin?t=plain$sz"; rc=$?
  n=$(reqs "plain$sz")
  echo "   wget under the shim, demo, $sz bytes: $n requests"
  check "shim, demo $sz: exact, $n requests <= $(bound $sz)" eval \
    '[ $rc = 0 ] && [ "$(mh_sha $WORK/p.bin)" = "$(mh_sum files/$sz.bin)" ] && [ "$n" -le $(bound $sz) ]'
done
timeout 120 "$MHTTP" -q -o "$WORK/pm.bin" "$TESTBED_URL_A/files/33554432.bin?t=pcmd" \
  --mirror "$TESTBED_URL_B/files/33554432.bin?t=pcmd"; rc=$?
n=$(reqs pcmd)
echo "   mhttp + mirror, demo, 32 MiB: $n requests"
check "mhttp + mirror, demo 32 MiB: exact, $n requests <= $(bound 33554432)" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $WORK/pm.bin)" = "$(mh_sum files/33554432.bin)" ] && [ "$n" -le $(bound 33554432) ]'

# 4. keepalive_requests reached gracefully: /recycled/ ends every connection after its 10th
#    answer. Each split connection reaches it; the path stays up (no path-down event, nothing
#    dropped), no leg fails, no fallback but a rescue (a new connection's slow start may look
#    stalled); the bytes exact.
timeout 120 "$MHTTP" --progress-json --stats "$WORK/r.json" -o "$WORK/r.bin" "$TESTBED_URL_A/recycled/files/33554432.bin?t=rcmd" \
  --mirror "$TESTBED_URL_B/recycled/files/33554432.bin?t=rcmd" 2>"$WORK/r.err"; rc=$?
n=$(reqs rcmd)
echo "   mhttp + mirror, 32 MiB, 10 answers per connection: $n requests on $(conns2 rcmd) connections, rc $rc"
check "recycled connections, mhttp + mirror: exact ($rc)" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $WORK/r.bin)" = "$(mh_sum files/33554432.bin)" ]'
early_down() {  # FILE: path-down events before the transfer's end (the command reports every path down then)
  "$PY" -c "
import json,sys
n=0
for l in open(sys.argv[1]):
    if l.startswith('{'):
        e=json.loads(l)
        n+=e['event']=='path-down' and e['done']<e['total']
print(n)" "$1"
}
d=$(early_down "$WORK/r.err")
check "recycled connections, mhttp + mirror: no path went down before the end ($d; $(grep -m2 path-down "$WORK/r.err"))" eval \
  '[ "$d" = 0 ] && no_drop "$WORK/r.json" 33554432'
LD_PRELOAD="$SHIM" MHTTP_LOG=info MHTTP_LOG_FILE="$WORK/rshim.log" MHTTP_STATS="$WORK/rshim.jsonl" \
  MHTTP_DNS_lte0="$TESTBED_LTE0_DNS" timeout 120 wget -q -O "$WORK/rw.bin" "$TESTBED_URL_A/recycled/files/33554432.bin?t=rshim"; rc=$?
line=$(grep '"size":33554432' "$WORK/rshim.jsonl" | tail -1)
n=$(reqs rshim)
echo "   wget under the shim, 32 MiB, 10 answers per connection: $n requests on $(conns2 rshim) connections, rc $rc"
check "recycled connections, shim: exact, no leg failed, no reconnect ($line; $(grep -m3 failed "$WORK/rshim.log"))" \
  shim_clean "$rc" "$WORK/rw.bin" files/33554432.bin "$WORK/rshim.log" "$line"

# 5. The same limit met by a pipelined request: fault.test's kareset says close on every
#    connection's 3rd answer and, when a request of ours is already behind it, sends only part
#    of it and resets (what a closed socket's kernel does when that request arrives; seen once
#    on nginx's /recycled/ above). A reset is the server's keep-alive end, not a failed path: a
#    new connection takes over, nothing fails, no fallback; and once a connection said close
#    after 3 answers none asks more than 3, so only the connections already past that when it
#    was learned meet a reset (every connection did before: 10 in 55 requests).
ka_url="http://fault.test/files/4194304.bin?f=kareset&n=3&t=kars"
LD_PRELOAD="$SHIM" MHTTP_LOG=info MHTTP_LOG_FILE="$WORK/kshim.log" MHTTP_STATS="$WORK/kshim.jsonl" \
  MHTTP_DNS_lte0="$TESTBED_LTE0_DNS" timeout 120 wget -q -O "$WORK/kw.bin" "$ka_url"; rc=$?
line=$(grep '"size":4194304' "$WORK/kshim.jsonl" | tail -1)
kst=$(env -u LD_PRELOAD curl -s -m 5 "http://fault.test/_stats?t=kars")
resets=$(echo "$kst" | awk '$1 == "RST" {print $3}'); resets=${resets:-0}
kreqs=$(echo "$kst" | awk '$1 == "GET" {n += $4} END {print n + 0}')
echo "   wget under the shim, 4 MiB, close after 3 answers, reset behind pipelining: $kreqs requests, $resets resets, rc $rc"
check "keep-alive limit met by pipelining, shim: exact, no leg failed, no fallback ($line; $(grep -m3 failed "$WORK/kshim.log"))" \
  shim_clean "$rc" "$WORK/kw.bin" files/4194304.bin "$WORK/kshim.log" "$line"
check "keep-alive limit learned: $resets resets in $kreqs requests (at least one met, at most 4)" eval \
  '[ "$resets" -ge 1 ] && [ "$resets" -le 4 ]'
mh_finish
