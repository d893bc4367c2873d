#!/bin/bash
# HTTPS split through libcurl (tests/harness/tls_split.c, no shim) on demo with TLS replicas (testbed up --tls, a test CA made at up): 32 and 128 MiB byte-exact over both paths, a replica reached under the URL's name, a pooled TLS leg reused by the next object, a path lost mid-transfer survived; a wrong certificate fails as curl fails (60) and writes nothing; a server that closes mid-handshake fails cleanly (35), no hang.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo --tls

BIN=$MHTTP_BUILD_DIR/tests/harness/mhttp_tls_split
[ -x "$BIN" ] || { fail "$BIN is not built"; mh_finish; }
[ "${TESTBED_TLS:-0}" = 1 ] || { fail "the testbed serves no HTTPS (testbed up --tls)"; mh_finish; }
PORT=$TESTBED_TLS_PORT
CA=$TESTBED_TLS_CA

# In the Asan tree the harness is ours, so its leaks are judged (mh_san_check reads the report)
SAN_OPTS=${ASAN_OPTIONS:-}
[ -n "$MH_SAN_RT" ] && SAN_OPTS=${ASAN_OPTIONS/detect_leaks=0/detect_leaks=1}

# tls HOST PATH CAFILE OUT STATS [ADDR PORT SRC IFACES]: one run of the harness; its exit code
tls() {
  ASAN_OPTIONS=$SAN_OPTS MHTTP_LOG=${MH_TEST_LOG:-} timeout 150 "$BIN" "${6:-$TESTBED_ORIGIN_A}" "${7:-$PORT}" "$1" "$2" \
    "${9:-wifi0,lte0}" "${8:-$TESTBED_WIFI0_ADDR}" "$3" "$4" "$5" >"$WORK/out" 2>"$WORK/err"
}

# paths STATS SIZE [LINE]: split line LINE (default the last) is a whole object over wifi0 and
# lte0, both carrying bytes
paths() {
  "$PY" - "$1" "$2" "${3:--1}" <<'PY'
import json, sys
lines, size = open(sys.argv[1]).read().splitlines(), int(sys.argv[2])
d = json.loads(lines[int(sys.argv[3])]) if lines else {}
b = {p["iface"]: p["bytes"] for p in d.get("paths", [])}
print("   paths: %s, %s ms" % (b, d.get("duration_ms")))
sys.exit(0 if d.get("result") == "ok" and d.get("size") == size and sorted(b) == ["lte0", "wifi0"]
         and all(v > 0 for v in b.values()) and sum(b.values()) == size else 1)
PY
}

# The issue's target, printed only (speed verdicts belong to bench/): time against
# 1.10 x size / (sum of the links' rates)
target() {
  "$PY" - "$1" "$2" <<'PY'
import json, os, sys
d = json.loads(open(sys.argv[1]).read().splitlines()[-1])
rates = sum(float(os.environ["TESTBED_%s_RATE_DOWN" % i.upper()]) for i in ("wifi0", "lte0"))
ideal = int(sys.argv[2]) * 8 / rates
print("   %s B over HTTPS in %.3f s; size/sum of rates %.3f s; ratio %.3f (target <= 1.10)"
      % (sys.argv[2], d["duration_ms"] / 1000, ideal, d["duration_ms"] / 1000 / ideal))
PY
}

# fetched NAME PATHS OUT STATS: a run for a.test with the testbed's CA that ends with every byte
fetched() {
  rm -f "$4"
  tls a.test "$2" "$CA" "$3" "$4"; local rc=$?
  cat "$WORK/out"
  [ "$rc" = 0 ] || head -20 "$WORK/err"
  check "$1: every byte (rc $rc)" [ "$rc" = 0 ]
}

for SIZE in 33554432 134217728; do
  F=files/$SIZE.bin
  fetched "https $SIZE" "/$F" "$WORK/o.bin" "$WORK/s.stats"
  check "https $SIZE: bytes exact" [ "$(mh_sha "$WORK/o.bin")" = "$(mh_sum $F)" ]
  check "https $SIZE: both paths carried ranges" paths "$WORK/s.stats" "$SIZE"
  [ -s "$WORK/s.stats" ] && target "$WORK/s.stats" "$SIZE"
  rm -f "$WORK/o.bin"
done

# Replicas over TLS: with each network's resolver, lte0's names replica B for cdn.test; its leg
# goes to B's address under cdn.test's name (SNI and certificate check: cdn.test, the address
# pinned with CURLOPT_CONNECT_TO), and B's log shows TLS range answers to lte0's address
F=files/33554432.bin
BLOG=$TESTBED_RUN_DIR/origin-b/access.log
b0=$(wc -l <"$BLOG")
rm -f "$WORK/r.stats"
MHTTP_DNS_wifi0=$TESTBED_WIFI0_DNS MHTTP_DNS_lte0=$TESTBED_LTE0_DNS tls cdn.test "/$F" "$CA" "$WORK/r.bin" "$WORK/r.stats"; rc=$?
cat "$WORK/out"
check "cdn.test with replicas: every byte (rc $rc)" [ "$rc" = 0 ]
check "cdn.test with replicas: bytes exact" [ "$(mh_sha "$WORK/r.bin")" = "$(mh_sum $F)" ]
nb=$(tail -n +$((b0 + 1)) "$BLOG" | grep -c "^$TESTBED_LTE0_ADDR .*\"GET /$F HTTP/1.1\" 206 ")
echo "   replica B answered $nb range requests from lte0"
check "cdn.test with replicas: replica B served lte0's ranges" [ "$nb" -ge 1 ]
rm -f "$WORK/r.bin"

# Connections are reused per path as for plain HTTP: a second object on the same engine goes
# out on the first connection; an extra leg the first split parked (it may not: a leg whose
# tail ranges were taken over has answers in flight and is closed) is pooled under the TLS key,
# never the plain one, and the second split takes it (its stats line's "pooled" counts the legs
# it took from the pool; its new connections also count a standby on the program's path)
F=files/4194304.bin
fetched "keep-alive: both objects" "/$F,/$F" "$WORK/k.bin" "$WORK/k.stats"
check "keep-alive: first object exact" [ "$(mh_sha "$WORK/k.bin")" = "$(mh_sum $F)" ]
check "keep-alive: second object exact" [ "$(mh_sha "$WORK/k.bin.2")" = "$(mh_sum $F)" ]
check "keep-alive: first object over both paths" paths "$WORK/k.stats" 4194304 0
check "keep-alive: second object over both paths" paths "$WORK/k.stats" 4194304 1
pooled() {
  "$PY" - "$WORK/k.stats" "$WORK/out" <<'PY'
import json, re, sys
out = open(sys.argv[2]).read().splitlines()
tls, plain = map(int, re.search(r"(\d+) TLS, (\d+) plain", out[1]).groups())
second = json.loads(open(sys.argv[1]).read().splitlines()[1])
print("   parked: %d TLS, %d plain; second object: %d connections, %d from the pool"
      % (tls, plain, second["connections"], second["pooled"]))
sys.exit(0 if plain == 0 and second["pooled"] >= min(tls, 1) else 1)
PY
}
check "keep-alive: a parked TLS leg is pooled as TLS and the next split takes it" pooled

# A path lost mid-transfer (lte0 stops forwarding 1.5 s into a 4 s object): its TLS legs stall
# and close, the rest comes over wifi0, every byte exact
F=files/33554432.bin
rm -f "$WORK/f.stats"
tls a.test "/$F" "$CA" "$WORK/f.bin" "$WORK/f.stats" &
tp=$!
sleep 1.5
"$TESTBED_TOOL" set lte0 down >/dev/null
wait $tp; rc=$?
"$TESTBED_TOOL" set lte0 up >/dev/null
cat "$WORK/out"
check "lte0 lost mid-transfer: every byte (rc $rc)" [ "$rc" = 0 ]
check "lte0 lost mid-transfer: bytes exact" [ "$(mh_sha "$WORK/f.bin")" = "$(mh_sum $F)" ]
rm -f "$WORK/f.bin"

# curl_says ARGS...: the error text curl itself prints for the same connection ("curl: (N) TEXT")
curl_says() { curl -sS -o /dev/null "$@" 2>&1 | head -1; }
F=files/1048576.bin

# A certificate for other names: a.test's replica reached under wrong.test
tls wrong.test "/$F" "$CA" "$WORK/w.bin" "$WORK/w.stats"; rc=$?
ours=$(head -1 "$WORK/err")
theirs=$(curl_says --cacert "$CA" --connect-to "wrong.test:$PORT:$TESTBED_ORIGIN_A:$PORT" "https://wrong.test:$PORT/$F")
echo "   ours:   $ours"
echo "   curl's: $theirs"
check "certificate of other names: exit 60 (rc $rc)" [ "$rc" = 60 ]
check "certificate of other names: curl's words" [ "tls_split: ${ours#tls_split: }" = "tls_split: ${theirs#curl: }" ]
check "certificate of other names: nothing written" [ ! -e "$WORK/w.bin" ]

# An untrusted CA: another test CA made now
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=not the testbed CA" -keyout "$WORK/other.key" \
  -out "$WORK/other.pem" 2>/dev/null
tls a.test "/$F" "$WORK/other.pem" "$WORK/u.bin" "$WORK/u.stats"; rc=$?
ours=$(head -1 "$WORK/err")
theirs=$(curl_says --cacert "$WORK/other.pem" "https://a.test:$PORT/$F")
echo "   ours:   $ours"
echo "   curl's: $theirs"
check "untrusted CA: exit 60 (rc $rc)" [ "$rc" = 60 ]
check "untrusted CA: curl's words" [ "tls_split: ${ours#tls_split: }" = "tls_split: ${theirs#curl: }" ]
check "untrusted CA: nothing written" [ ! -e "$WORK/u.bin" ]

# A server that reads the ClientHello and closes (loopback, this namespace only)
"$PY" - "$WORK/port" <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
__import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
s.settimeout(60)
for _ in range(2):  # ours, then curl's
    try:
        c, _ = s.accept()
    except OSError:
        break
    c.recv(512)
    c.close()
PY
MH_BG_PIDS+=($!)
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
HP=$(cat "$WORK/port")
t0=$(date +%s%N)
tls a.test "/$F" "$CA" "$WORK/h.bin" "$WORK/h.stats" 127.0.0.1 "$HP" - wifi0; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "   ours:   $(head -1 "$WORK/err") (${ms} ms)"
echo "   curl's: $(curl_says --cacert "$CA" --connect-to "a.test:$HP:127.0.0.1:$HP" "https://a.test:$HP/$F")"
check "closed mid-handshake: exit 35 (rc $rc)" [ "$rc" = 35 ]
check "closed mid-handshake: nothing written" [ ! -e "$WORK/h.bin" ]
mh_finish
