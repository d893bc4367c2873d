#!/bin/bash
# Two sources are two paths: the mhttp command with a loopback URL and a loopback mirror (two nginx on 127.0.0.1, in a network namespace of the test's own) splits over both servers, byte-exact; a mirror that is down leaves the loopback URL's download whole.
if [ -z "${MH_LOOPBACK_NS:-}" ]; then
  [ "$(id -u)" -eq 0 ] || { echo "FAIL: needs root (a network namespace of its own)"; exit 1; }
  # a private loopback: no port another test or program uses, nothing leaves it
  exec unshare -n env MH_LOOPBACK_NS=1 /bin/bash -c 'ip link set lo up && exec /bin/bash "$0"' "$0"
fi
source "$(dirname "$0")/lib.sh"

MHTTP=$MHTTP_BUILD_DIR/cli/mhttp
head -c 33554432 /dev/urandom >"$WORK/big.bin"
sum=$(mh_sha "$WORK/big.bin")
# nginx PORT: one server on 127.0.0.1:PORT over $WORK (the same file, so the same ETag), each
# answer at 16 MB/s: unpaced, loopback brings the 32 MiB in 40 ms, and under CI's load the URL's
# pipelined first ranges once took all of it before the mirror's first answer came (5b8bfa2+1,
# "split":0): a mirror that is not needed is no failure, and no split either
nginx_on() {
  local d=$WORK/n$1
  mkdir -p "$d/tmp"
  cat >"$d/nginx.conf" <<EOF
daemon on; master_process on; worker_processes 1; user root;
pid $d/nginx.pid; error_log $d/error.log;
events { worker_connections 64; }
http {
  access_log $d/access.log;
  client_body_temp_path $d/tmp/b; proxy_temp_path $d/tmp/p; fastcgi_temp_path $d/tmp/f;
  uwsgi_temp_path $d/tmp/u; scgi_temp_path $d/tmp/s;
  default_type application/octet-stream;
  server { listen 127.0.0.1:$1; root $WORK; limit_rate 16m; }
}
EOF
  nginx -p "$d/" -c "$d/nginx.conf" -e "$d/error.log" && MH_BG_PIDS+=("$(cat "$d/nginx.pid")")
}
nginx_on 18081 && nginx_on 18082 || { echo "FAIL: nginx did not start"; exit 1; }
served() { awk '$9 == 206 {n += $10} END {print n + 0}' "$WORK/n$1/access.log"; }

timeout 60 "$MHTTP" -q --stats "$WORK/s.json" -o "$WORK/out.bin" "http://127.0.0.1:18081/big.bin" \
  --mirror "http://127.0.0.1:18082/big.bin"; rc=$?
a=$(served 18081)
b=$(served 18082)
check "loopback URL + loopback mirror: 32 MiB exact, both served ranges ($a + $b bytes)" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $WORK/out.bin)" = "$sum" ] && [ "$a" -gt 0 ] && [ "$b" -gt 0 ]'
check "--stats: both servers carried bytes, adding up ($(head -c 600 "$WORK/s.json"))" "$PY" -c "
import json,sys
d=json.load(open(sys.argv[1])); p=d['paths']
by={m: sum(x['bytes'] for x in p if x['mirror']==m) for m in (0, 1)}
sys.exit(0 if d['event']=='complete' and by[0] > 0 and by[1] > 0 and sum(x['bytes'] for x in p)==33554432 else 1)" "$WORK/s.json"

# a mirror that refuses: the URL alone brings every byte
timeout 60 "$MHTTP" -q -o "$WORK/one.bin" "http://127.0.0.1:18081/big.bin" --mirror "http://127.0.0.1:18099/big.bin"; rc=$?
check "a loopback mirror that refuses: exact from the URL alone ($rc)" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $WORK/one.bin)" = "$sum" ]'
# without a mirror a loopback URL is not split: one request, as written
n0=$(wc -l <"$WORK/n18081/access.log")
timeout 60 "$MHTTP" -q -o "$WORK/solo.bin" "http://127.0.0.1:18081/big.bin"; rc=$?
n1=$(wc -l <"$WORK/n18081/access.log")
check "a loopback URL alone: exact, one request ($((n1 - n0)))" eval \
  '[ $rc = 0 ] && [ "$(mh_sha $WORK/solo.bin)" = "$sum" ] && [ $((n1 - n0)) = 1 ]'
mh_finish
