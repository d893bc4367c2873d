#!/bin/bash
# The public API on two links (tests/harness/api_get.c, built only against include/mhttp.h and libmhttp.so.0): 32 MiB to a file (sha256 exact, both paths in the path stats), to an fd, to an ordered callback, in the program's own epoll loop; a 404 writes nothing, an unresolvable host, a cancel from another thread, a wrong checksum; mirrors (B serves ranges; one that disagrees or does not resolve is dropped) and a replica pinned on lte0; credentials never leave their origin (redirect, mirror); with libmhttp.so preloaded the API's connections are never taken over.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo --set lte0.rate=0 --set wifi0.rate=100mbit

BIN=$MHTTP_BUILD_DIR/tests/harness/mhttp_api_get
[ -x "$BIN" ] || { fail "$BIN is not built"; mh_finish; }
F=files/33554432.bin
SUM=$(mh_sum $F)
URL=$TESTBED_URL_A/$F

# run ARGS...: api_get's report line in $OUT, its exit code in $RC
run() {
  timeout 120 "$BIN" "$@" >"$WORK/stdout" 2>"$WORK/err"; RC=$?
  OUT=$(grep '^code=' "$WORK/err" | tail -1)
  echo "   rc $RC: ${OUT:0:300}"
}
# field NAME: a name=value of the report
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $OUT"; }
# both_paths: the path stats name wifi0 and lte0, each with body bytes
both_paths() { [[ " $(field paths)," =~ wifi0:[1-9] ]] && [[ " $(field paths)," =~ lte0:[1-9] ]]; }

run thread "file:$WORK/a.bin" "$URL" "checksum=sha-256=$SUM"
check "file: 32 MiB exact, checksum checked, completed" eval '[ $RC = 0 ] && [ "$(mh_sha $WORK/a.bin)" = "$SUM" ] && [ "$(field done)" = 33554432 ]'
check "file: both paths carried bytes (path stats) and split=1" eval 'both_paths && [ "$(field split)" = 1 ]'
ev=$(field events)
check "file: events start first, path up, progress, path down, complete once and last ($ev)" eval \
  '[[ $ev == start,* && ",$ev," == *,up,* && ",$ev," == *,progress,* && ",$ev," == *,down,* && $ev == *,complete ]] &&
   [ "$(grep -o "complete\|error" <<<"${ev//,/ }" | wc -l)" = 1 ]'

run thread fd "$URL"
check "fd (a file): 32 MiB exact, in order" eval '[ $RC = 0 ] && [ "$(mh_sha $WORK/stdout)" = "$SUM" ]'
# a non-blocking pipe whose reader starts 2 s late: the pipe fills, write(2) says EAGAIN, the
# transfer waits for writable and goes on
timeout 120 "$BIN" thread fdnb "$URL" 2>"$WORK/err" | { sleep 2; cat >"$WORK/pipe.bin"; }; RC=${PIPESTATUS[0]}
OUT=$(grep '^code=' "$WORK/err" | tail -1); echo "   rc $RC: ${OUT:0:200}"
check "fd (a non-blocking pipe read late): 32 MiB exact, in order" eval '[ $RC = 0 ] && [ "$(mh_sha $WORK/pipe.bin)" = "$SUM" ]'

run thread cb "$URL"
check "ordered callback: 32 MiB exact, offsets only grew" eval '[ $RC = 0 ] && [ "$(mh_sha $WORK/stdout)" = "$SUM" ] && [ "$(field disorder)" = 0 ]'

run thread cb "$URL" cbmax=4096
check "a callback taking 4 KiB per call, offered again after mhttp_xfer_pause(x, 0): exact, in order" eval \
  '[ $RC = 0 ] && [ "$(mh_sha $WORK/stdout)" = "$SUM" ] && [ "$(field disorder)" = 0 ]'
run thread "file:$WORK/pz.bin" "$URL" pause=4000000
check "paused for 1 s at 4 MB: nothing delivered meanwhile ($(field paused_delta) bytes), then exact" eval \
  '[ $RC = 0 ] && [ "$(field paused_delta)" = 0 ] && [ "$(mh_sha $WORK/pz.bin)" = "$SUM" ]'

run embed "file:$WORK/e.bin" "$URL"
check "embedded in the program's epoll loop: 32 MiB exact over both paths" eval '[ $RC = 0 ] && [ "$(mh_sha $WORK/e.bin)" = "$SUM" ] && both_paths'

rm -f "$WORK/404.bin"
run thread "file:$WORK/404.bin" "$TESTBED_URL_A/files/no-such-file"
check "404: MHTTP_E_HTTP (9) with \"HTTP 404\", no file written" eval '[ $RC = 9 ] && [[ "$OUT" == *"HTTP 404"* ]] && [ ! -e "$WORK/404.bin" ]'

F4=files/4194304.bin
run thread "file:$WORK/rd.bin" "http://fault.test/$F4?f=redir302x"
check "a 302 to another host is followed: exact" eval '[ $RC = 0 ] && [ "$(mh_sha $WORK/rd.bin)" = "$(mh_sum $F4)" ]'
run thread "file:$WORK/rd0.bin" "http://fault.test/$F4?f=redir302x" max-redirs=0
check "max-redirs=0: MHTTP_E_REDIRECTS (17), nothing written" eval '[ $RC = 17 ] && [ ! -e "$WORK/rd0.bin" ]'
run thread "file:$WORK/au.bin" "http://fault.test/$F4?f=auth-basic" "header=Authorization: Basic dXNlcjpwYXNz"
check "the header option reaches the origin (Basic auth): exact" eval '[ $RC = 0 ] && [ "$(mh_sha $WORK/au.bin)" = "$(mh_sum $F4)" ]'
run thread "file:$WORK/au0.bin" "http://fault.test/$F4?f=auth-basic"
check "without it: MHTTP_E_HTTP \"HTTP 401\"" eval '[ $RC = 9 ] && [[ "$OUT" == *"HTTP 401"* ]] && [ ! -e "$WORK/au0.bin" ]'
# a redirect to another origin does not take the caller's credentials along (curl neither): A's
# nginx logs the Basic user it was sent ($remote_user, the 3rd field), "-" for none
run thread "file:$WORK/ra.bin" "http://fault.test/$F4?f=redir302x&t=redirauth" "header=Authorization: Basic dXNlcjpwYXNz"
users=$(awk '/t=redirauth/ {print $3}' "$TESTBED_RUN_DIR/origin-a/access.log" | sort | uniq -c | xargs)
check "a 302 to another host: exact, and Authorization not sent there (A's log: $users)" eval \
  '[ $RC = 0 ] && [ "$(mh_sha $WORK/ra.bin)" = "$(mh_sum $F4)" ] && [ -n "$users" ] && [[ "$users" != *user* ]]'

# Mirrors and pinned replicas. servers= lists each path IFACE/ADDRESS/MIRROR:BYTES; B's nginx log
# names the client address of every range it served and the Basic user it was sent ($3).
# logged PATH TAG FIELD: FIELD ($1 client address, $3 user) of the lines of origin PATH's log
# whose request carries t=TAG, counted per value
logged() { awk -v t="t=$2 HTTP" -v f="$3" 'index($0, t) {print $f}' "$TESTBED_RUN_DIR/origin-$1/access.log" | sort | uniq -c | xargs; }
mirror_bytes() { grep -o "/$1:[0-9]*" <<<"$(field servers)" | awk -F: '{s += $2} END {print s + 0}'; }
run thread "file:$WORK/m.bin" "$URL?t=m1" "mirror=$TESTBED_URL_B/$F?t=m1"
check "a mirror: 32 MiB exact, the mirror's paths carried $(mirror_bytes 1) bytes, B served ranges ($(logged b m1 1))" eval \
  '[ $RC = 0 ] && [ "$(mh_sha $WORK/m.bin)" = "$SUM" ] && [ "$(mirror_bytes 1)" -gt 0 ] && [ -n "$(logged b m1 1)" ]'
# another version (7: MHTTP_E_PROTOCOL), no ranges (7), no name (5: _RESOLVE), no listener (6: _CONNECT)
for bad in "http://changing.test/$F" "http://norange.test/$F" "http://no-such-host.invalid/$F" \
           "http://$TESTBED_ORIGIN_B:9/$F"; do
  run thread "file:$WORK/bad.bin" "$URL" "mirror=$bad"
  check "a mirror that disagrees, does not resolve or connect ($bad): dropped (a path down with its cause), exact" eval \
    '[ $RC = 0 ] && [ "$(mh_sha $WORK/bad.bin)" = "$SUM" ] && [[ "$(field events)" =~ down\((5|6|7)@m1\) ]] &&
     [ "$(mirror_bytes 1)" = 0 ]'
done
# a pinned replica: a.test resolves to A on every network; B pinned on lte0 takes ranges there
run thread "file:$WORK/pin.bin" "$URL?t=pin" "replica=$TESTBED_ORIGIN_B@lte0"
check "a replica pinned on lte0: exact, B served ranges to lte0's address only ($(logged b pin 1))" eval \
  '[ $RC = 0 ] && [ "$(mh_sha $WORK/pin.bin)" = "$SUM" ] && [[ "$(field servers)" =~ lte0/$TESTBED_ORIGIN_B/0:[1-9] ]] &&
   [[ "$(logged b pin 1)" =~ ^[0-9]+\ $TESTBED_LTE0_ADDR$ ]]'
# credentials: the URL's origin gets them (a mirror there too), a mirror on another host never
run thread "file:$WORK/cr.bin" "$URL?t=cred" "mirror=$TESTBED_URL_B/$F?t=cred" "mirror=$TESTBED_URL_A/$F?t=samecred" \
  "header=Authorization: Basic dXNlcjpwYXNz"
check "Authorization goes to a.test (a: $(logged a cred 3); its same-origin mirror: $(logged a samecred 3)), never to the mirror b.test (b: $(logged b cred 3))" eval \
  '[ $RC = 0 ] && [ "$(mh_sha $WORK/cr.bin)" = "$SUM" ] && [[ "$(logged a cred 3)" =~ ^[0-9]+\ user$ ]] &&
   [[ "$(logged b cred 3)" =~ ^[0-9]+\ -$ ]] && [[ "$(logged a samecred 3)" =~ ^[0-9]+\ user$ ]]'

run thread "file:$WORK/nx.bin" "http://no-such-host.invalid/x"
check "unresolvable host: MHTTP_E_RESOLVE (5)" eval '[ $RC = 5 ]'

run thread "file:$WORK/c.bin" "$URL" cancel=1048576
check "cancel from another thread after 1 MiB: MHTTP_E_CANCELED (16), paths down with it, error last" eval \
  '[ $RC = 16 ] && [[ "$(field events)" == *,down\(16\),error ]]'

run embed "file:$WORK/k.bin" "$URL" "checksum=sha-256=$(printf '0%.0s' $(seq 64))"
check "wrong checksum: MHTTP_E_CHECKSUM (14), the bytes kept" eval '[ $RC = 14 ] && [ "$(mh_sha $WORK/k.bin)" = "$SUM" ]'

# Resume: a transfer cancelled at about half leaves OUTPUT.mhttp; continue=1 fetches only what
# the file lacks (the probe's 32 KiB and the last byte are always asked again)
run thread "file:$WORK/r.bin" "$URL" cancel=16000000
check "cancelled at half: the resume file names the runs written" eval \
  '[ $RC = 16 ] && grep -q "^range 0 [1-9]" "$WORK/r.bin.mhttp" && grep -q "^validator \"" "$WORK/r.bin.mhttp"'
run thread "file:$WORK/r.bin" "$URL" continue=1 progress-interval=100
fetched=$(field fetched) resumed=$(field resumed)
check "continued: exact, $resumed bytes kept, $fetched fetched (at most the rest + 1 MiB), the resume file gone" eval \
  '[ $RC = 0 ] && [ "$(mh_sha $WORK/r.bin)" = "$SUM" ] && [ "$resumed" -gt 8000000 ] &&
   [ "$fetched" -le $((33554432 - resumed + 1048576)) ] && [ ! -e "$WORK/r.bin.mhttp" ]'
run thread "file:$WORK/v.bin" "$URL" cancel=16000000
sed -i 's/^validator .*/validator "another-representation"/' "$WORK/v.bin.mhttp"
run thread "file:$WORK/v.bin" "$URL" continue=1
check "continued after the validator changed: starts over, exact ($(field fetched) fetched, $(field resumed) kept)" eval \
  '[ $RC = 0 ] && [ "$(mh_sha $WORK/v.bin)" = "$SUM" ] && [ "$(field resumed)" = 0 ] && [ "$(field fetched)" -ge 33554432 ]'
run thread "file:$WORK/u.bin" "$URL" cancel=4000000
sed -i 's|^url .*|url http://elsewhere.test/x|' "$WORK/u.bin.mhttp"
run thread "file:$WORK/u.bin" "$URL" continue=1
check "a resume file of another URL: MHTTP_E_RESUME (15), nothing fetched" eval '[ $RC = 15 ] && [ "$(field fetched)" = 0 ]'

# libmhttp.so preloaded into the same process: its hooks must leave the API's sockets alone.
# Both libraries log to MHTTP_LOG_FILE: a takeover logs "taken over" and starts the shim's own
# engine, which logs "engine started" beside the API session's (a threaded session's only).
started() { grep -c "engine started" "$1"; }
LD_PRELOAD="$SHIM" MHTTP_LOG=info MHTTP_LOG_FILE=$WORK/shim.log run thread "file:$WORK/p.bin" "$URL"
check "preloaded shim: 32 MiB exact over both paths" eval '[ $RC = 0 ] && [ "$(mh_sha $WORK/p.bin)" = "$SUM" ] && both_paths'
check "preloaded shim: it took over nothing ($(started "$WORK/shim.log") engine started: the session's)" eval \
  '[ "$(started "$WORK/shim.log")" = 1 ] && ! grep -q "taken over" "$WORK/shim.log"'
LD_PRELOAD="$SHIM" MHTTP_LOG=info MHTTP_LOG_FILE=$WORK/shim2.log run embed "file:$WORK/q.bin" "$URL"
check "preloaded shim, embedded: exact, nothing taken over ($(started "$WORK/shim2.log") engine started)" eval \
  '[ $RC = 0 ] && [ "$(mh_sha $WORK/q.bin)" = "$SUM" ] && [ "$(started "$WORK/shim2.log")" = 0 ] && ! grep -q "taken over" "$WORK/shim2.log"'
mh_finish
