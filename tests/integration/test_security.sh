#!/bin/bash
# Security rules of the shim (demo): config others can rewrite refused, credentials never logged nor sent to another host, non-idempotent requests never repeated, TLS never taken over, a 1 TiB claim bounded by the window.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo

A=$TESTBED_URL_A
P=8081  # secorigin.py on each replica's address (nginx has 80 and 8080)
export MHTTP_PORTS=80,$P
# lte0's resolver names its own replica of cdn.test (B): a replica leg of the same name
export MHTTP_DNS_lte0=$TESTBED_LTE0_DNS
ip netns exec "$TESTBED_ID-oa" "$PY" "$HERE/secorigin.py" "$TESTBED_ORIGIN_A" $P "$WORK/sec-a.log" >"$WORK/sec-a.err" 2>&1 &
MH_BG_PIDS+=($!)
ip netns exec "$TESTBED_ID-ob" "$PY" "$HERE/secorigin.py" "$TESTBED_ORIGIN_B" $P "$WORK/sec-b.log" >"$WORK/sec-b.err" 2>&1 &
MH_BG_PIDS+=($!)
for ip in "$TESTBED_ORIGIN_A" "$TESTBED_ORIGIN_B"; do
  mh_wait_listen "$ip" "$P"
done
touch "$WORK/sec-a.log" "$WORK/sec-b.log"

# -- a config file someone else could rewrite is refused: one line, the program runs untouched
printf 'log = info\n' >"$WORK/ow.conf"
cfg_case() {  # cfg_case NAME MODE GROUP EXPECT(regex of the one line, or "" for accepted)
  local n=$1 want=$4
  chmod "$2" "$WORK/ow.conf"; chgrp "$3" "$WORK/ow.conf"
  out=$(env LD_PRELOAD="$SHIM" MHTTP_CONFIG="$WORK/ow.conf" MHTTP_LOG_FILE="$WORK/ow-$n.log" \
    curl -sS -o "$WORK/ow.bin" -w '%{http_code}' "$A/files/65536.bin" 2>"$WORK/ow-$n.err")
  local taken; taken=$(grep -c "taken over" "$WORK/ow-$n.log" 2>/dev/null)
  if [ -n "$want" ]; then
    check "config $2 group $3: refused in one line, program unchanged" eval '[ "$out" = 200 ] &&
      [ "$(wc -l <"$WORK/ow-$n.err")" = 1 ] && grep -q "^libmhttp: $WORK/ow.conf: $want.*libmhttp disabled\$" "$WORK/ow-$n.err" &&
      [ "${taken:-0}" = 0 ] && [ "$(mh_sha "$WORK/ow.bin")" = "$(mh_sum files/65536.bin)" ]'
  else
    check "config $2 group $3: accepted" eval '[ "$out" = 200 ] && [ ! -s "$WORK/ow-$n.err" ] && [ "${taken:-0}" -ge 1 ]'
  fi
}
cfg_case ow 666 root "writable by others (mode 0666): refused"
cfg_case ow2 602 root "writable by others"
cfg_case gw 664 nogroup "writable by group [0-9]* (mode 0664): refused"
cfg_case ok 644 root ""
cfg_case okg 664 root ""

# -- credentials never logged: debug log, stats and stderr of split, relayed and POST requests
B64=$(printf 'secret-user:hunter2-%s' "$RANDOM" | base64)
COOKIE="sid=c00kie-s3cret-$RANDOM"
cred() {  # cred NAME CURL-ARGS...: one curl run at debug level with both secrets
  local n=$1; shift
  LD_PRELOAD="$SHIM" MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/cred.log MHTTP_STATS=$WORK/cred.json \
    timeout 30 curl -sS -H "Authorization: Basic $B64" -H "Cookie: $COOKIE" "$@" >>"$WORK/cred.out" 2>>"$WORK/cred.err"
}
cred split -o "$WORK/cred1.bin" "$A/files/4194304.bin"
cred split8081 -o "$WORK/cred2.bin" "http://a.test:$P/obj/1048576"
cred post --data-binary @"$WORK/cred1.bin" -o /dev/null "http://a.test:$P/post"
cred relayed -r 0-99 -o /dev/null "http://a.test:$P/obj/1048576"
check "credentials: the requests carried them and were split (the check below has teeth)" eval '
  grep -q "probe 206, total 4194304" "$WORK/cred.log" && grep -q "probe 206, total 1048576" "$WORK/cred.log" &&
  [ "$(grep -cF "auth=Basic $B64 cookie=$COOKIE" "$WORK/sec-a.log")" -ge 4 ] && [ -s "$WORK/cred.json" ]'
check "credentials: never in the debug log, the stats or stderr" eval '! grep -qF -e "$B64" -e "$COOKIE" -e "c00kie" \
  "$WORK/cred.log" "$WORK/cred.json" "$WORK/cred.err"'

# -- credentials never sent to another host. Range legs copy the program's head, Authorization
# included: they may only go to addresses of the name the program asked for.
tok=run-a-$RANDOM
LD_PRELOAD="$SHIM" MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/host-a.log timeout 30 \
  curl -sS -H "Authorization: Basic $tok" -o "$WORK/h1.bin" "http://a.test:$P/obj/4194304"; rc=$?
check "a.test: split over both links, every leg carried it to a.test's address, none to b" eval '[ $rc = 0 ] &&
  [ "$(grep -c "^GET /obj/4194304 .*auth=Basic $tok" "$WORK/sec-a.log")" -ge 2 ] &&
  grep -q "lte0" "$WORK/host-a.log" && ! grep -q "auth=Basic $tok" "$WORK/sec-b.log"'
tok=run-redir-$RANDOM
LD_PRELOAD="$SHIM" MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/host-r.log timeout 30 curl -sS -L -H "Authorization: Basic $tok" \
  -o "$WORK/h2.bin" "http://a.test:$P/redirect?http://b.test:$P/obj/4194303"; rc=$?
check "redirect a.test -> b.test: b never sees the Authorization, yet served the object" eval '[ $rc = 0 ] &&
  grep -q "^GET /redirect.*auth=Basic $tok" "$WORK/sec-a.log" && grep -q "^GET /obj/4194303 host=b.test" "$WORK/sec-b.log" &&
  ! grep -q "auth=Basic $tok" "$WORK/sec-b.log" && ! grep -q "^GET /obj/4194303" "$WORK/sec-a.log"'
tok=run-cdn-$RANDOM
LD_PRELOAD="$SHIM" MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/host-c.log timeout 30 \
  curl -sS -H "Authorization: Basic $tok" -o "$WORK/h3.bin" "http://cdn.test:$P/obj/4194302"; rc=$?
check "cdn.test (replica per network): every server that saw it is an address of cdn.test, Host cdn.test" eval '[ $rc = 0 ] &&
  [ "$(grep -h "auth=Basic $tok" "$WORK/sec-a.log" "$WORK/sec-b.log" | grep -vc "^GET /obj/4194302 host=cdn.test:$P ")" = 0 ]'
echo "   (cdn.test: requests with the header at A $(grep -c "auth=Basic $tok" "$WORK/sec-a.log"), at B (lte0's replica) $(grep -c "auth=Basic $tok" "$WORK/sec-b.log"))"

# -- non-idempotent requests are never repeated: a server that resets or stalls mid-answer
# receives exactly as many as without the shim (one)
# (a reset may lose the received bytes before curl writes any: then neither run has the file)
same_or_none() { [ ! -e "$MH_D/plain/$1" ] && [ ! -e "$MH_D/shim/$1" ] || mh_same_file "$1"; }
head -c 200000 /dev/urandom >"$WORK/post.bin"
for m in POST PUT; do
  for p in reset stall; do
    mh_pair "nonidem-$m-$p" sh -c 'exec curl -sS -X "$0" --data-binary @"$1" --max-time 8 -o out.bin \
      "http://a.test:$2/$3?tag=$(basename "$(dirname "$PWD")")-$(basename "$PWD")"' "$m" "$WORK/post.bin" $P $p
    np=$(grep -c "^$m /$p?tag=nonidem-$m-$p-plain .*body=200000" "$WORK/sec-a.log")
    ns=$(grep -c "^$m /$p?tag=nonidem-$m-$p-shim .*body=200000" "$WORK/sec-a.log")
    check "$m to a server that ${p}s mid-answer: received $ns time(s) with the shim, $np without" eval '
      [ "$np" = 1 ] && [ "$ns" = 1 ] && mh_same_rc && [ "$PLAIN_RC" != 0 ] && mh_taken 1 && same_or_none out.bin'
  done
done

# -- TLS is never taken over, even on an eligible port
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -days 1 \
  -keyout "$WORK/key.pem" -out "$WORK/cert.pem" >/dev/null 2>&1
"$PY" "$HERE/origin.py" 8443 --tls "$WORK/cert.pem" "$WORK/key.pem" >"$WORK/tls.log" 2>&1 & MH_BG_PIDS+=($!)
for _ in $(seq 50); do
  "$PY" -c "import socket; socket.create_connection(('127.0.0.1', 8443), 0.2).close()" 2>/dev/null && break
  sleep 0.1
done
for ports in 8443 '*'; do
  MHTTP_PORTS=$ports MH_LOG_LEVEL=debug mh_pair "tls-$([ "$ports" = '*' ] && echo all || echo "$ports")" \
    curl -sS --cacert "$WORK/cert.pem" https://127.0.0.1:8443/
  check "curl https with MHTTP_PORTS=$ports: same bytes and exit, nothing taken over" eval 'mh_same_rc && [ "$PLAIN_RC" = 0 ] &&
    mh_same_stdout && [ -s "$MH_D/shim.out" ] && [ "$TAKEN" = 0 ] && ! grep -q "session [0-9]*:" "$MH_D/shim.log"'
done

# -- a server claiming 1 TiB (and ending each answer early) cannot grow the process past the
# window: a slow reader (1 MB/s for 8 s) while the links could bring ~70 MB
maxrss() { awk -F': ' '/Maximum resident set size/{print $2}' "$1"; }
/usr/bin/time -v -o "$WORK/huge-plain.time" curl -s --limit-rate 1M --max-time 8 -o /dev/null "http://a.test:$P/huge"
LD_PRELOAD="$SHIM" MHTTP_WINDOW=8M MHTTP_LOG=debug MHTTP_LOG_FILE=$WORK/huge.log \
  /usr/bin/time -v -o "$WORK/huge-shim.time" curl -s --limit-rate 1M --max-time 8 -o /dev/null -w '%{size_download}' \
  "http://a.test:$P/huge" >"$WORK/huge.size"
grow=$(( ($(maxrss "$WORK/huge-shim.time") - $(maxrss "$WORK/huge-plain.time")) / 1024 ))
got=$(cat "$WORK/huge.size")
# how far ahead of the program the shim asked: the furthest range start and the furthest
# range end, but for the claimed end's last chunk (asked first, once, to check the total before
# the head goes out)
TIB=1099511627776
ranges=$(sed -n 's|^GET /huge .*range=bytes=\([0-9]*\)-\([0-9]*\) .*|\1 \2|p' "$WORK/sec-a.log" | sort -n)
ends=$(awk -v t=$TIB '$1 >= t - 1048576' <<<"$ranges" | wc -l)
ahead=$(( ($(awk -v t=$TIB '$1 < t - 1048576 {print $1}' <<<"$ranges" | tail -1) - got) >> 20 ))
reach=$(( ($(awk -v t=$TIB '$1 < t - 1048576 && $2 != "" {print $2 + 1}' <<<"$ranges" | sort -n | tail -1) - got) >> 20 ))
echo "   (1 TiB: read $got B; the furthest range asked starts $ahead MiB and ends $reach MiB ahead of it; $ends asked the claimed end)"
# the window really was used (else the RSS bound proves nothing: what was asked reached 4 MiB
# past the program; where the last range starts depends on how large the rates made it) and
# bounded what was asked (window + the program's socket buffer); the end was asked at most
# twice (once per split)
check "1 TiB claim, MHTTP_WINDOW=8M: max RSS ${grow} MiB over plain curl <= window + 8 MiB, asked <= 2 windows ahead" eval '
  grep -q "probe 206, total 1099511627776" "$WORK/huge.log" && [ "$got" -ge 4194304 ] && mh_rss_in "$grow" -1000000 16 &&
  [ "$reach" -ge 4 ] && [ "$ahead" -le 16 ] && [ "$ends" -le 2 ]'

# SEC_KEEP=DIR keeps this run's logs (debugging)
[ -n "${SEC_KEEP:-}" ] && cp -r "$WORK" "$SEC_KEEP"
mh_finish
