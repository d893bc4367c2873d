#!/bin/bash
# The mhttp command from the build tree on demo: `mhttp run -- wget` splits with the shim it found, keeps the caller's LD_PRELOAD and returns the command's status; `mhttp ifaces` lists the testbed's interfaces, their DNS servers and the metrics the run left in the host-wide store; downloads over HTTP and HTTPS (the testbed's CA; an unknown CA exits 60 and writes nothing), with a mirror (B serves ranges, over HTTPS too; a plain mirror of https is refused), resume, curl's exit codes; curl's conventions run beside curl itself (-L, -o -, the binary-to-terminal guard, the default scheme, 45, 77, -o x -o y, several URLs, paths checked first, SIGPIPE, Ctrl-C, curl's words for refused connections and timeouts); bad mirrors told with their cause; one rate everywhere.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo --tls

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
# (the Asan tree's mhttp is itself built with ASan: its runtime must come first for it too)
had=libc.so.6
[ -n "$MH_SAN_RT" ] && had="$MH_SAN_RT libc.so.6"
out=$(LD_PRELOAD=$had "$MHTTP" run -- sh -c 'echo "$LD_PRELOAD"')
check "mhttp run keeps LD_PRELOAD after the shim ($out)" test "$out" = "$want_pre $had"
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

# 4. downloads through the API
sum=$(mh_sum $f)
timeout 120 "$MHTTP" --stats "$WORK/s.json" -o "$WORK/m.bin" "$A/$f" 2>"$WORK/m.err"; rc=$?
check "mhttp -o: 4 MiB exact, quiet when stderr is no terminal" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $WORK/m.bin)" = "$sum" ] && [ ! -s "$WORK/m.err" ]'
echo "   rc $rc, sha256 $(mh_sha "$WORK/m.bin"), stderr: $(head -c 400 "$WORK/m.err")"
check "--stats: complete, split, wifi0 and lte0 carried bytes ($(cat "$WORK/s.json" 2>/dev/null))" eval "$PY"' -c "
import json,sys
d=json.load(open(sys.argv[1])); b={p[\"iface\"]: p[\"bytes\"] for p in d[\"paths\"]}
sys.exit(0 if d[\"event\"]==\"complete\" and d[\"done\"]==4194304 and d[\"split\"]==1 and b.get(\"wifi0\",0)>0 and b.get(\"lte0\",0)>0 else 1)" "$WORK/s.json"'
timeout 120 "$MHTTP" --progress-json "$A/$f" >"$WORK/stdout.bin" 2>"$WORK/pj.err"; rc=$?
check "stdout: exact; --progress-json: JSON lines ending with complete" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $WORK/stdout.bin)" = "$sum" ] &&
   "$PY" -c "import json,sys; l=[json.loads(x) for x in open(sys.argv[1])]; sys.exit(0 if l and l[-1][\"event\"]==\"complete\" else 1)" "$WORK/pj.err"'
echo "   rc $rc, sha256 $(mh_sha "$WORK/stdout.bin"), not JSON on stderr: $(grep -v '^{' "$WORK/pj.err" | head -c 400)"
(cd "$WORK" && timeout 120 "$MHTTP" -O "$A/$f" --mirror "$TESTBED_URL_B/$f"); rc=$?
check "-O with a mirror: 4194304.bin exact" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/4194304.bin)" = "$sum" ]'
# -c: a download killed (SIGKILL) at about half resumes without refetching what was written
big=files/33554432.bin
"$MHTTP" -c --progress-json -o "$WORK/r.bin" "$A/$big" 2>"$WORK/r1.json" & kp=$!
MH_BG_PIDS+=("$kp")
for _ in $(seq 300); do  # at most 30 s
  d=$(tail -n 1 "$WORK/r1.json" 2>/dev/null | sed -n 's/.*"fetched":\([0-9]*\).*/\1/p')
  [ -n "$d" ] && [ "$d" -ge 16777216 ] && break
  sleep 0.1
done
sleep 0.5  # the resume file is saved once a second: it names at least the bytes of 1 s ago
kill -KILL "$kp" 2>/dev/null; wait "$kp" 2>/dev/null
timeout 120 "$MHTTP" -c --stats "$WORK/r2.json" -o "$WORK/r.bin" "$A/$big" 2>"$WORK/r2.err"; rc=$?
echo "   killed after $d bytes fetched; resumed: $(cat "$WORK/r2.json" 2>/dev/null)"
check "-c after SIGKILL at about half: exact, the written part not fetched again" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $WORK/r.bin)" = "$(mh_sum $big)" ] && [ ! -e "$WORK/r.bin.mhttp" ] && "$PY" -c "
import json,sys
d=json.load(open(sys.argv[1]))
sys.exit(0 if d[\"resumed\"]>=4194304 and d[\"fetched\"]<=33554432-d[\"resumed\"]+4194304 else 1)" "$WORK/r2.json"'
zeros=$(printf '0%.0s' $(seq 64))
timeout 60 "$MHTTP" -o "$WORK/c.bin" --checksum="sha-256=$zeros" "$A/$f" 2>"$WORK/ck.err"; rc=$?
check "a wrong checksum: exit 32 ($rc: $(cat "$WORK/ck.err"))" test "$rc" = 32
timeout 60 "$MHTTP" -o "$WORK/x" "$A/files/none.bin" 2>"$WORK/404.err"; rc=$?
check "404: exit 22, curl's message ($rc: $(cat "$WORK/404.err"))" eval \
  '[ $rc = 22 ] && [ "$(cat "$WORK/404.err")" = "mhttp: (22) The requested URL returned error: 404" ]'
timeout 60 "$MHTTP" -o "$WORK/x" "http://nonexistent.test/" 2>"$WORK/6.err"; rc=$?
check "unresolvable: exit 6, curl's message ($rc: $(cat "$WORK/6.err"))" eval \
  '[ $rc = 6 ] && [ "$(cat "$WORK/6.err")" = "mhttp: (6) Could not resolve host: nonexistent.test" ]'
timeout 60 "$MHTTP" -o "$WORK/x" "http://$TESTBED_ORIGIN_A:9/" 2>"$WORK/7.err"; rc=$?
check "refused: exit 7 ($rc: $(cat "$WORK/7.err"))" eval '[ $rc = 7 ] && grep -q "^mhttp: (7) Failed to connect to $TESTBED_ORIGIN_A" "$WORK/7.err"'

# 5. HTTPS (libcurl's TLS on every leg): exact over both paths with the testbed's CA, and with
#    -k; without the CA (the system's bundle does not know the test CA): curl's 60, no file
[ "${TESTBED_TLS:-0}" = 1 ] || fail "the testbed serves no HTTPS (testbed up --tls)"
H=https://$TESTBED_HOST_A:$TESTBED_TLS_PORT
timeout 120 "$MHTTP" --cacert "$TESTBED_TLS_CA" --stats "$WORK/t.json" -o "$WORK/t.bin" "$H/$f" 2>"$WORK/t.err"; rc=$?
check "https 4 MiB with --cacert: exact, split over wifi0 and lte0 ($rc: $(head -c 300 "$WORK/t.err"))" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $WORK/t.bin)" = "$sum" ] && "$PY" -c "
import json,sys
d=json.load(open(sys.argv[1])); b={p[\"iface\"]: p[\"bytes\"] for p in d[\"paths\"]}
sys.exit(0 if d[\"split\"]==1 and b.get(\"wifi0\",0)>0 and b.get(\"lte0\",0)>0 else 1)" "$WORK/t.json"'
timeout 120 "$MHTTP" -k -o "$WORK/k.bin" "$H/$f" 2>"$WORK/k.err"; rc=$?
check "https with -k: exact ($rc)" eval '[ $rc = 0 ] && [ "$(mh_sha $WORK/k.bin)" = "$sum" ]'
timeout 60 "$MHTTP" -o "$WORK/n.bin" "$H/$f" 2>"$WORK/60.err"; rc=$?
check "https, an unknown CA: exit 60, curl's words, nothing written ($rc: $(cat "$WORK/60.err"))" eval \
  '[ $rc = 60 ] && [ ! -e "$WORK/n.bin" ] &&
   [ "$(cat "$WORK/60.err")" = "mhttp: (60) SSL certificate problem: unable to get local issuer certificate" ]'

# 6. mirrors: B serves ranges (its nginx log, the request tagged), --stats names its paths (mirror
#    1 at B's address) and all paths' bytes add up to the object; over HTTPS with each mirror's own
#    certificate name; a plain mirror of an https URL is refused before any network
mirror_stats() {  # FILE: complete, mirror 1 at B carried bytes, the paths add up to the object
  "$PY" -c "
import json,sys
d=json.load(open(sys.argv[1])); m=[p for p in d['paths'] if p['mirror']==1 and p['replica']==sys.argv[2]]
sys.exit(0 if d['event']=='complete' and m and sum(p['bytes'] for p in m)>0 and
         sum(p['bytes'] for p in d['paths'])==33554432 else 1)" "$1" "$TESTBED_ORIGIN_B"
}
timeout 120 "$MHTTP" --stats "$WORK/mi.json" -o "$WORK/mi.bin" "$A/$big" --mirror "$TESTBED_URL_B/$big?t=climirror"; rc=$?
n=$(grep -c "t=climirror HTTP/1.1\" 206" "$TESTBED_RUN_DIR/origin-b/access.log")
check "a mirror: 32 MiB exact, B answered $n ranges, --stats names it ($(head -c 600 "$WORK/mi.json"))" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $WORK/mi.bin)" = "$(mh_sum $big)" ] && [ "$n" -gt 0 ] && mirror_stats "$WORK/mi.json"'
HB=https://$TESTBED_HOST_B:$TESTBED_TLS_PORT
timeout 120 "$MHTTP" --cacert "$TESTBED_TLS_CA" --stats "$WORK/mt.json" -o "$WORK/mt.bin" "$H/$big" --mirror "$HB/$big?t=clitls" \
  2>"$WORK/mt.err"; rc=$?
n=$(grep -c "t=clitls HTTP/1.1\" 206" "$TESTBED_RUN_DIR/origin-b/access.log")
check "https with an https mirror: exact, B answered $n ranges, --stats names it ($rc: $(head -c 300 "$WORK/mt.err"))" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $WORK/mt.bin)" = "$(mh_sum $big)" ] && [ "$n" -gt 0 ] && mirror_stats "$WORK/mt.json"'
# B by its address: its certificate names b.test, not 10.210.2.10, so that mirror is dropped
timeout 120 "$MHTTP" --cacert "$TESTBED_TLS_CA" --stats "$WORK/mc.json" -o "$WORK/mc.bin" "$H/$f" \
  --mirror "https://$TESTBED_ORIGIN_B:$TESTBED_TLS_PORT/$f" 2>"$WORK/mc.err"; rc=$?
check "https, a mirror whose certificate does not name it: tried, dropped with a warning and nothing taken, exact ($rc: $(head -c 300 "$WORK/mc.err"))" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $WORK/mc.bin)" = "$(mh_sum $f)" ] && grep -q "^mhttp: warning: mirror https://.* dropped.*: could not connect to .*: its certificate did not verify" "$WORK/mc.err" && "$PY" -c "
import json,sys
m=[p for p in json.load(open(sys.argv[1]))[\"paths\"] if p[\"mirror\"]==1]
sys.exit(0 if m and not any(p[\"bytes\"] for p in m) else 1)" "$WORK/mc.json"'
"$MHTTP" -o "$WORK/pm.bin" "$H/$f" --mirror "$TESTBED_URL_B/$f" 2>"$WORK/pm.err"; rc=$?
check "a plain mirror of an https URL: exit 3, the reason, nothing written ($rc: $(cat "$WORK/pm.err"))" eval \
  '[ $rc = 3 ] && [ ! -e "$WORK/pm.bin" ] && grep -q "plain http for an https URL is refused" "$WORK/pm.err"'

# 7. usage errors in curl's words, before any network
"$MHTTP" --frobnicate http://a.test/ 2>"$WORK/u.err"; rc=$?
check "unknown option: exit 2, curl's message" eval \
  '[ $rc = 2 ] && [ "$(head -1 "$WORK/u.err")" = "mhttp: option --frobnicate: is unknown" ]'
# 8. curl's conventions, each case run with curl itself beside (differential): same exit code,
#    same kind of message, same files
cmp_rc() {  # NAME WANT MHTTP_RC CURL_RC
  check "$1: mhttp $3, curl $4, want $2" eval "[ $3 = $2 ] && [ $4 = $2 ]"
}
D=$WORK/curlish; mkdir -p "$D/m" "$D/c"
small=files/1048576.bin
(cd "$D/m" && timeout 60 "$MHTTP" -L -o - "$A/$small" >l.bin 2>l.err); rc=$?
(cd "$D/c" && timeout 60 curl -sS -L -o - "$A/$small" >l.bin 2>l.err); crc=$?
cmp_rc "-L accepted, -o - is stdout" 0 $rc $crc
check "-L -o -: exact on stdout, no file named '-'" eval \
  '[ "$(mh_sha $D/m/l.bin)" = "$(mh_sum $small)" ] && [ ! -e "$D/m/-" ] && [ ! -e "$D/c/-" ]'
(cd "$D/m" && timeout 60 "$MHTTP" -o s.bin "${A#http://}/$small"); rc=$?
(cd "$D/c" && timeout 60 curl -sS -o s.bin "${A#http://}/$small"); crc=$?
cmp_rc "a URL without a scheme is http://" 0 $rc $crc
check "no scheme: exact" test "$(mh_sha "$D/m/s.bin")" = "$(mh_sum $small)"
# binary to a terminal: refused with curl's warning, exit 23 (script gives both a pty); text is shown
script -qec "timeout 60 $MHTTP $A/$small; echo rc=\$?" /dev/null >"$D/m/tty.txt" 2>&1
script -qec "timeout 60 curl $A/$small; echo rc=\$?" /dev/null >"$D/c/tty.txt" 2>&1
rc=$(grep -ao 'rc=[0-9]*' "$D/m/tty.txt" | tail -1); crc=$(grep -ao 'rc=[0-9]*' "$D/c/tty.txt" | tail -1)
check "binary to a terminal: mhttp $rc, curl $crc, both 23, curl's warning, nothing of the body" eval \
  '[ "$rc" = rc=23 ] && [ "$crc" = rc=23 ] && grep -aq "Binary output can mess up your terminal" "$D/m/tty.txt" &&
   [ "$(wc -c <"$D/m/tty.txt")" -lt 2000 ]'
script -qec "timeout 60 $MHTTP -q $A/index.html; echo rc=\$?" /dev/null >"$D/m/text.txt" 2>&1
check "text to a terminal is shown ($(grep -ao 'rc=[0-9]*' "$D/m/text.txt"))" eval \
  'grep -aq "rc=0" "$D/m/text.txt" && grep -aiq "<html" "$D/m/text.txt"'
timeout 60 "$MHTTP" -i nosuch0 -o "$D/m/x" "$A/$small" 2>"$D/m/45.err"; rc=$?
timeout 60 curl -sS --interface nosuch0 -o "$D/c/x" "$A/$small" 2>"$D/c/45.err"; crc=$?
cmp_rc "-i nosuch0 ($(cat "$D/m/45.err"))" 45 $rc $crc
check "-i nosuch0: curl's words, nothing written" eval \
  '[ "$(cat "$D/m/45.err")" = "mhttp: (45) Couldn'"'"'t bind to '"'"'nosuch0'"'"'" ] && [ ! -e "$D/m/x" ]'
(cd "$D/m" && timeout 60 "$MHTTP" -o x -o y "$A/$small" 2>xy.err); rc=$?
(cd "$D/c" && timeout 60 curl -sS -o x -o y "$A/$small" 2>xy.err); crc=$?
cmp_rc "-o x -o y" 0 $rc $crc
check "-o x -o y: x written exact, y not, as curl" eval \
  '[ "$(mh_sha $D/m/x)" = "$(mh_sum $small)" ] && [ ! -e "$D/m/y" ] && [ -e "$D/c/x" ] && [ ! -e "$D/c/y" ] &&
   grep -q "got more output options than URLs" "$D/m/xy.err"'
timeout 60 "$MHTTP" --cacert /nonexistent/ca.pem -o "$D/m/ca" "$H/$small" 2>"$D/m/77.err"; rc=$?
timeout 60 curl -sS --cacert /nonexistent/ca.pem -o "$D/c/ca" "$H/$small" 2>"$D/c/77.err"; crc=$?
cmp_rc "a missing --cacert ($(cat "$D/m/77.err"))" 77 $rc $crc
# several URLs: curl's -O u1 -O u2, and u1 u2 with one -o (the second to stdout)
(cd "$D/m" && timeout 120 "$MHTTP" -O "$A/$small" -O "$A/$f"); rc=$?
(cd "$D/c" && timeout 120 curl -sS -O "$A/$small" -O "$A/$f"); crc=$?
cmp_rc "-O u1 -O u2" 0 $rc $crc
check "-O u1 -O u2: both files exact" eval \
  '[ "$(mh_sha $D/m/1048576.bin)" = "$(mh_sum $small)" ] && [ "$(mh_sha $D/m/4194304.bin)" = "$(mh_sum $f)" ]'
(cd "$D/m" && timeout 120 "$MHTTP" -o one.bin "$A/$small" "$A/$f" >two.bin); rc=$?
check "-o one u1 u2: u1 in one.bin, u2 on stdout, exact ($rc)" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $D/m/one.bin)" = "$(mh_sum $small)" ] && [ "$(mh_sha $D/m/two.bin)" = "$(mh_sum $f)" ]'
timeout 120 "$MHTTP" -o "$D/m/nf.bin" "$A/files/none.bin" "$A/$small" >/dev/null 2>/dev/null; rc=$?
timeout 120 curl -sSf -o "$D/c/nf.bin" "$A/files/none.bin" "$A/$small" >/dev/null 2>/dev/null; crc=$?
cmp_rc "a 404 then a good URL: the last transfer's code" 0 $rc $crc
# paths checked before the transfer: no request reaches the origin
timeout 60 "$MHTTP" --stats /nonexistent/s.json -o "$D/m/st.bin" "$A/$small?t=clistats" 2>"$D/m/st.err"; rc=$?
timeout 60 "$MHTTP" -o /nonexistent/o.bin "$A/$small?t=clioutput" 2>"$D/m/o.err"; rc2=$?
timeout 60 curl -sS -o /nonexistent/o.bin "$A/$small" 2>/dev/null; crc=$?
n=$(grep -c "t=cli\(stats\|output\)" "$TESTBED_RUN_DIR/origin-a/access.log")
check "unwritable --stats / -o: 23 before any request (mhttp $rc $rc2, curl $crc, $n requests: $(cat "$D/m/st.err" "$D/m/o.err"))" \
  eval '[ $rc = 23 ] && [ $rc2 = 23 ] && [ $crc = 23 ] && [ "$n" = 0 ] && [ ! -e "$D/m/st.bin" ]'
# a closed stdout pipe: 23, not death by SIGPIPE
timeout 120 "$MHTTP" "$A/$big" 2>"$D/m/pipe.err" | head -c 10 >/dev/null; rc=${PIPESTATUS[0]}
timeout 120 curl -sS "$A/$big" 2>/dev/null | head -c 10 >/dev/null; crc=${PIPESTATUS[0]}
cmp_rc "a closed stdout pipe ($(cat "$D/m/pipe.err"))" 23 $rc $crc
# Ctrl-C: silent, dies of SIGINT (130 to the shell), the resume file stays for -c
bash -c 'trap - INT; exec "$0" -o "$1" "$2"' "$MHTTP" "$D/m/int.bin" "$A/$big" 2>"$D/m/int.err" & kp=$!
MH_BG_PIDS+=("$kp")
sleep 1
kill -INT "$kp"; wait "$kp"; rc=$?
check "SIGINT: exit 130, nothing on stderr, the resume file stays ($rc: $(head -c 300 "$D/m/int.err"))" eval \
  '[ $rc = 130 ] && [ ! -s "$D/m/int.err" ] && [ -e "$D/m/int.bin.mhttp" ]'
# curl's words: a refused connection names the port and the time, a timeout the bytes received
timeout 60 "$MHTTP" -o "$D/m/r" "http://$TESTBED_ORIGIN_A:9/" 2>"$D/m/7.err"; rc=$?
timeout 60 curl -sS -o "$D/c/r" "http://$TESTBED_ORIGIN_A:9/" 2>"$D/c/7.err"; crc=$?
cmp_rc "refused ($(cat "$D/m/7.err") / $(cat "$D/c/7.err"))" 7 $rc $crc
check "refused: curl's 'Failed to connect to HOST port 9 after N ms: '" eval \
  'grep -Eq "^mhttp: \(7\) Failed to connect to $TESTBED_ORIGIN_A port 9 after [0-9]+ ms: Connection refused$" "$D/m/7.err" &&
   grep -Eq "^curl: \(7\) Failed to connect to $TESTBED_ORIGIN_A port 9 after [0-9]+ ms: " "$D/c/7.err"'
timeout 60 "$MHTTP" -m 1 -o "$D/m/t" "$A/$big" 2>"$D/m/28.err"; rc=$?
timeout 60 curl -sS -m 1 -o "$D/c/t" "$A/$big" 2>"$D/c/28.err"; crc=$?
cmp_rc "-m 1 ($(cat "$D/m/28.err") / $(cat "$D/c/28.err"))" 28 $rc $crc
re='Operation timed out after [0-9]+ milliseconds with [0-9]+ out of 33554432 bytes received$'
check "timeout: curl's words with the bytes received" eval \
  'grep -Eq "^mhttp: \(28\) $re" "$D/m/28.err" && grep -Eq "^curl: \(28\) $re" "$D/c/28.err"'
# -i before a sub-command is the sub-command's
"$MHTTP" -i lte0 ifaces >"$D/m/if.txt" 2>&1; rc=$?
check "mhttp -i lte0 ifaces: the sub-command, lte0 only ($rc)" eval \
  '[ $rc = 0 ] && grep -q "^lte0" "$D/m/if.txt" && ! grep -q "^wifi0" "$D/m/if.txt"'

# 9. no silent failure: mirrors that answer 404, serve another file, do not resolve or refuse the
#    connection are dropped with a warning naming the cause, in --stats and --progress-json too
timeout 120 "$MHTTP" --stats "$D/m/bad.json" --progress-json -o "$D/m/bad.bin" "$A/$big" \
  --mirror "$TESTBED_URL_B/files/none.bin" --mirror "$TESTBED_URL_B/$f" \
  --mirror "http://nonexistent.test/$big" --mirror "http://$TESTBED_ORIGIN_B:9/$big" 2>"$D/m/bad.err"; rc=$?
grep -v '^{' "$D/m/bad.err" | sed 's/^/   | /'
check "four bad mirrors: exact, exit 0" eval '[ $rc = 0 ] && [ "$(mh_sha $D/m/bad.bin)" = "$(mh_sum $big)" ]'
for k in 1 2 3 4; do
  m=$(grep -a '^{' "$D/m/bad.err" | "$PY" -c "
import json,sys
c=[json.loads(l)['cause'] for l in sys.stdin if '\"cause\"' in l]
print(' / '.join(x['message'] for x in c if x['mirror']==$k))")
  check "mirror $k dropped: a warning, the cause in path-down and --stats ($m)" eval \
    '[ -n "$m" ] && grep -q "^mhttp: warning: mirror .* dropped.*: " "$D/m/bad.err" &&
     "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if any(c[\"mirror\"]==$k and c[\"message\"] for c in d[\"dropped\"]) else 1)" "$D/m/bad.json"'
done
check "the causes: 404, another length, does not resolve, refused" eval \
  'grep -q "mirror $TESTBED_URL_B/files/none.bin dropped.*404" "$D/m/bad.err" &&
   grep -q "mirror http://nonexistent.test/.* dropped.*resolve" "$D/m/bad.err" &&
   grep -q "mirror http://$TESTBED_ORIGIN_B:9/.* dropped.*refused" "$D/m/bad.err"'
timeout 120 "$MHTTP" -q -o "$D/m/q.bin" "$A/$small" --mirror "http://nonexistent.test/$small" 2>"$D/m/q.err"; rc=$?
check "-q: no warning ($rc: $(cat "$D/m/q.err"))" eval '[ $rc = 0 ] && [ ! -s "$D/m/q.err" ]'
# ... and so is the URL's own server when one interface cannot reach it (lte0's table has no
#     route to it): the download completes over wifi0, the cause said once
A_ADDR=$TESTBED_ORIGIN_A
ip route add unreachable "$A_ADDR/32" table "$TESTBED_LTE0_TABLE"
timeout 120 "$MHTTP" --stats "$D/m/un.json" -o "$D/m/un.bin" "$A/$big" 2>"$D/m/un.err"; rc=$?
ip route del unreachable "$A_ADDR/32" table "$TESTBED_LTE0_TABLE"
check "the URL's server unreachable over lte0: exact, a warning with the cause, in --stats ($rc: $(head -c 300 "$D/m/un.err"))" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $D/m/un.bin)" = "$(mh_sum $big)" ] &&
   grep -q "^mhttp: warning: server $A_ADDR dropped (over lte0): could not connect to $A_ADDR: No route to host" "$D/m/un.err" &&
   "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if any(c[\"iface\"]==\"lte0\" and c[\"mirror\"]==0 and \"No route\" in c[\"message\"] for c in d[\"dropped\"]) else 1)" "$D/m/un.json"'

# 10. one rate everywhere: the final rate is the average (bytes over the time), the paths' rates
#     add up to it, and a short transfer's rate is not 0
check "one rate: final rate = done / elapsed, paths add up ($(head -c 400 "$D/m/bad.json"))" eval "$PY"' -c "
import json,sys
d=json.load(open(sys.argv[1])); avg=(d[\"done\"]-d[\"resumed\"])/d[\"elapsed\"]; paths=sum(p[\"rate\"] for p in d[\"paths\"])
fetched_avg=d[\"fetched\"]/d[\"elapsed\"]
sys.exit(0 if abs(d[\"rate\"]-avg)<=0.02*avg and abs(paths-fetched_avg)<=0.02*fetched_avg else 1)" "$D/m/bad.json"'
timeout 60 "$MHTTP" --stats "$D/m/short.json" -o "$D/m/short.bin" "$A/files/16384.bin"; rc=$?
check "a short transfer's rate is its average, not 0 ($(cat "$D/m/short.json"))" eval "$PY"' -c "
import json,sys
d=json.load(open(sys.argv[1])); sys.exit(0 if d[\"rate\"]>0 and abs(d[\"rate\"]-16384/d[\"elapsed\"])<=0.02*16384/d[\"elapsed\"] else 1)" "$D/m/short.json"'
mh_finish
