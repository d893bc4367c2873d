#!/bin/bash
# Traffic the shim must never touch: non-HTTP on port 80, server-speaks-first on 8080, HTTPS on 443 (even with MHTTP_PORTS=*), UDP; an HTTP write is the positive control.
source "$(dirname "$0")/lib.sh"
mh_in_testbed lan

"$PY" "$HERE/origin.py" 80 --echo >"$WORK/echo.log" 2>&1 & MH_BG_PIDS+=($!)
"$PY" "$HERE/origin.py" 8080 --banner >"$WORK/banner.log" 2>&1 & MH_BG_PIDS+=($!)
openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -days 1 \
  -keyout "$WORK/key.pem" -out "$WORK/cert.pem" >/dev/null 2>&1
"$PY" "$HERE/origin.py" 443 --tls "$WORK/cert.pem" "$WORK/key.pem" >"$WORK/tls.log" 2>&1 & MH_BG_PIDS+=($!)
for port in 80 8080 443; do
  for _ in $(seq 50); do
    "$PY" -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.2).close()" 2>/dev/null && break
    sleep 0.1
  done
done

# probe NAME PORT MODE EXPECT_INODE [env...]: run probe.py under the shim
probe() {
  local name=$1 port=$2 mode=$3 expect=$4; shift 4
  local log=$WORK/$name.log
  out=$(env LD_PRELOAD="$SHIM" MHTTP_LOG=debug MHTTP_LOG_FILE="$log" "$@" "$PY" "$HERE/probe.py" "$port" "$mode" 2>&1)
  rc=$?
  taken=$(grep -c "taken over" "$log" 2>/dev/null); taken=${taken:-0}
  if [ $rc = 0 ] && grep -q "data-ok" <<<"$out" && grep -q "$expect" <<<"$out"; then
    if [ "$expect" = inode-same ] && [ "$taken" != 0 ]; then
      fail "$name (log says taken over)"
    else
      pass "$name ($expect, taken $taken)"
    fi
  else
    fail "$name: rc $rc, $(tr '\n' ' ' <<<"$out")"
  fi
}

probe "non-HTTP first write on port 80 untouched" 80 raw inode-same
# (splitting off: the echo server would echo the probe's added Range line, which is right for
# an origin but not what this control compares)
probe "HTTP first write on port 80 is taken over (control)" 80 http inode-changed MHTTP_SPLIT=off
probe "read-before-write on 8080 untouched" 8080 banner inode-same
probe "HTTPS on 443 untouched (MHTTP_PORTS=*)" 443 tls inode-same MHTTP_PORTS='*'
probe "HTTPS on 443 untouched (default ports)" 443 tls inode-same
probe "UDP to port 80 untouched" 80 udp inode-same

# curl over TLS with every port eligible: first bytes decide, the fd is never swapped
mh_pair https-curl curl -sSk https://127.0.0.1:443/
check "curl https, default ports: never swapped" eval 'mh_same_rc && mh_same_stdout && [ "$TAKEN" = 0 ]'
MHTTP_PORTS='*' mh_pair https-curl-all curl -sSk https://127.0.0.1:443/
check "curl https, all ports eligible: sniffed and left alone" eval 'mh_same_rc && mh_same_stdout && [ "$TAKEN" = 0 ]'

mh_finish
