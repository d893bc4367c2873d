#!/bin/bash
# mhttp daemon on demo: the same RPC sequence (daemon_rpc.py: errors, batch, multicall, add/pause/unpause/complete byte-exact, remove, queue and positions, WebSocket with notifications, XML-RPC as persepolis sends it, changeUri, JSON-RPC over GET and JSONP, GID prefixes, file names from URIs: %2F, bytes not UTF-8, ".." renamed or failed with 16) sent to `mhttp daemon` and to Debian's `aria2c --enable-rpc`, the answers' shapes compared field by field (accepted differences listed, as in cli/daemon/README.md); the AriaNg and Motrix call sequences over WebSocket (daemon_frontends.py: byte-exact, notifications); mhttp only: getServers names both paths, out refused outside dir, CORS and preflight, request/header/connection bounds; the session saved at shutdown and restored, byte-exact.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo --set wifi0.rate=20mbit --set lte0.rate=20mbit

MHTTP=$MHTTP_BUILD_DIR/cli/mhttp
BIG=files/33554432.bin
SMALL=files/1048576.bin
SECRET=s3cr3t-$$
mkdir -p "$WORK/m" "$WORK/a"

# start_mhttp PORT ARGS...: the daemon with this run's secret (mh_daemon), $DPID
start_mhttp() { local port=$1; shift; mh_daemon "$WORK/daemon.log" "$port" --rpc-secret="$SECRET" "$@"; }
# the ok/FAIL lines of a Python part counted as this script's (read in this shell, not a pipe's)
count() { while read -r l; do echo "$l"; case $l in "ok "*) pass >/dev/null ;; FAIL*) fail >/dev/null ;; esac; done; }
rpc_args() {
  echo --secret "$SECRET" --url "$TESTBED_URL_A/$BIG" --sha "$(mh_sum $BIG)" \
    --small-url "$TESTBED_URL_A/$SMALL" --small-sha "$(mh_sum $SMALL)"
}

check "mhttp daemon --help names the RPC options" eval '"$MHTTP" daemon --help | grep -q -- --rpc-secret'
"$MHTTP" daemon --rpc-listen-port=80 >/dev/null 2>"$WORK/bad.err"; rc=$?
check "a bad option value: exit 2 with its name ($(head -1 "$WORK/bad.err"))" eval '[ $rc = 2 ] && grep -q -- "--rpc-listen-port" "$WORK/bad.err"'

echo "== mhttp daemon"
start_mhttp 16800 --rpc-allow-origin-all --rpc-max-request-size=64K --bt-max-peers=3 -d "$WORK/m"
check "unsupported option reported by name, not fatal" grep -q -- "--bt-max-peers is not supported" "$WORK/daemon.log"
count < <($PY "$HERE/daemon_rpc.py" --port 16800 $(rpc_args) --dir "$WORK/m" --shape "$WORK/mhttp.json" --mhttp 2>&1)
check "mhttp daemon exits 0 after aria2.shutdown" exits_within "$DPID" 10

echo "== front ends: the call sequences of AriaNg and Motrix over WebSocket (daemon_frontends.py)"
mkdir -p "$WORK/f"
start_mhttp 16804 -d "$WORK/f"
count < <($PY "$HERE/daemon_frontends.py" --port 16804 --secret "$SECRET" --url "$TESTBED_URL_A/$BIG" \
  --sha "$(mh_sum $BIG)" --dir "$WORK/f" 2>&1)
check "front ends: the daemon exits 0 after aria2.shutdown" exits_within "$DPID" 10

echo "== session: saved at shutdown, restored at start with the same GIDs"
SES=$WORK/session.txt
mkdir -p "$WORK/s"
start_mhttp 16802 -d "$WORK/s" --save-session="$SES" --input-file="$SES" -j 1
count < <($PY "$HERE/daemon_rpc.py" session-save 16802 "$SECRET" "$TESTBED_URL_A/$BIG" "$TESTBED_URL_A/$SMALL" "$WORK/gids" 2>&1)
check "session: the daemon exits 0 after shutdown" exits_within "$DPID" 10
sed 's/^/   /' "$SES"
check "session file: 3 downloads with their gid, the paused one pause=true" eval \
  '[ "$(grep -c "^ gid=" "$SES")" = 3 ] && [ "$(grep -c "^ pause=true" "$SES")" = 1 ] && grep -q "^$TESTBED_URL_A/$BIG\$" "$SES"'
start_mhttp 16802 -d "$WORK/s" --save-session="$SES" --input-file="$SES" -j 1
count < <($PY "$HERE/daemon_rpc.py" session-restore 16802 "$SECRET" "$WORK/gids" "$(mh_sum $BIG)" "$(mh_sum $SMALL)" "$WORK/s" 2>&1)
check "session: the daemon exits 0 again" exits_within "$DPID" 10
check "session file after everything completed: empty" test ! -s "$SES"
check "daemon log: no sanitizer report" eval '! grep -q "ERROR: .*Sanitizer\|runtime error:" "$WORK/daemon.log"'

echo "== -D (background) and --save-session-interval"
B=http://127.0.0.1:16803/jsonrpc
"$MHTTP" daemon --rpc-listen-port=16803 --rpc-secret="$SECRET" -D -d "$WORK/b" --save-session="$WORK/b.session" \
  --save-session-interval=1 >"$WORK/bg.out" 2>&1; rc=$?
up=1; for _ in $(seq 50); do curl -s -o /dev/null "$B" && { up=0; break; }; sleep 0.1; done
check "-D: the command returns 0 at once and the daemon in the background answers" eval '[ $rc = 0 ] && [ $up = 0 ]'
BGPID=$(ss -ltnpH 'sport = :16803' | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1)
curl -s -m 5 -d '{"jsonrpc":"2.0","id":1,"method":"aria2.addUri","params":["token:'"$SECRET"'",["'"$TESTBED_URL_A/$SMALL"'"],{"pause":"true"}]}' "$B" >/dev/null
sleep 2.5
check "--save-session-interval=1: the paused download is in the session file while running" eval \
  'grep -q "^$TESTBED_URL_A/$SMALL\$" "$WORK/b.session" && grep -q "^ pause=true" "$WORK/b.session"'
curl -s -m 5 -d '{"jsonrpc":"2.0","id":1,"method":"aria2.forceShutdown","params":["token:'"$SECRET"'"]}' "$B" >/dev/null
gone=1; for _ in $(seq 50); do kill -0 "$BGPID" 2>/dev/null || { gone=0; break; }; sleep 0.1; done
check "forceShutdown ends the background daemon (pid $BGPID)" eval '[ -n "$BGPID" ] && [ $gone = 0 ]'
[ $gone = 0 ] || [ -z "$BGPID" ] || kill "$BGPID" 2>/dev/null

# The reference's answers do not depend on how the daemon was built: the Asan tree checks the
# daemon's memory on the same sequence and leaves the comparison to the Release tree.
if [ -n "$MH_SAN_RT" ]; then
  echo "== Asan tree: aria2c (the reference) and the comparison are the Release tree's"
  mh_finish
fi
echo "== aria2c --enable-rpc (the reference)"
aria2c --enable-rpc --rpc-listen-port=16801 --rpc-secret="$SECRET" --rpc-allow-origin-all -d "$WORK/a" \
  --quiet >"$WORK/aria2.log" 2>&1 &
APID=$!
MH_BG_PIDS+=("$APID")
sleep 1
$PY "$HERE/daemon_rpc.py" --port 16801 $(rpc_args) --dir "$WORK/a" --shape "$WORK/aria2.json" 2>&1 | sed 's/^/   aria2c: /'
exits_within "$APID" 10
# the front-end replay against aria2c too: shows the replay is what aria2c answers (not counted)
aria2c --enable-rpc --rpc-listen-port=16805 --rpc-secret="$SECRET" -d "$WORK/a" --quiet >>"$WORK/aria2.log" 2>&1 &
APID=$!
MH_BG_PIDS+=("$APID")
sleep 1
$PY "$HERE/daemon_frontends.py" --port 16805 --secret "$SECRET" --url "$TESTBED_URL_A/$BIG" --sha "$(mh_sum $BIG)" \
  --dir "$WORK/a" 2>&1 | sed 's/^/   aria2c: /'
exits_within "$APID" 10

echo "== differences (aria2c -> mhttp daemon)"
count < <($PY - "$WORK/aria2.json" "$WORK/mhttp.json" <<'PYEOF'
import json, sys
a, m = (json.load(open(p)) for p in sys.argv[1:3])
# differences accepted, each justified in cli/daemon/README.md ("Differences from aria2c")
accepted = {
  "getVersion": "mhttpVersion added; enabledFeatures lists only what the daemon has",
  "ws getVersion": "mhttpVersion added",
  "getServers": "one entry per (interface, server) path with interface, address, srttUs added",
  "tellStatus active": "bitfield is not sent (no piece map)",
  "tellStatus complete": "bitfield is not sent (no piece map)",
  "tellStatus removed": "bitfield is not sent (no piece map)",
  "tellActive": "bitfield is not sent (no piece map)",
  "tellStopped": "bitfield is not sent (no piece map)",
  "tellWaiting paused": "bitfield is not sent (no piece map)",
  "xml getVersion": "mhttpVersion added; enabledFeatures lists only what the daemon has",
  "GET getVersion": "mhttpVersion added",
  "GET batch": "mhttpVersion added",
}
def flat(v, p=""):
    if isinstance(v, dict):
        for k, x in v.items():
            yield from flat(x, f"{p}.{k}")
    elif isinstance(v, list) and v and isinstance(v[0], (dict, list)):
        yield from flat(v[0], p + "[]")
    else:
        yield p, json.dumps(v)
for k in sorted(set(a) | set(m)):
    fa, fm = dict(flat(a.get(k))), dict(flat(m.get(k)))
    missing = [x for x in fa if x not in fm]
    extra = [x for x in fm if x not in fa]
    differ = [f"{x}: {fa[x]} vs {fm[x]}" for x in fa if x in fm and fa[x] != fm[x]]
    if not (missing or extra or differ):
        print(f"ok   {k}: same")
    elif k in accepted and not differ:
        print(f"ok   {k}: accepted ({accepted[k]}): missing {missing} extra {extra}")
    else:
        print(f"FAIL {k}: missing {missing} extra {extra} differ {differ}")
PYEOF
)

mh_finish
