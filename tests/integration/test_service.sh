#!/bin/bash
# mhttpd's systemd units (packaging/systemd) without systemd as PID 1: systemd-analyze verify and security on both; each unit's ExecStart run as systemd would run it (its specifiers, $MHTTPD_OPTIONS, Environment=, a user without privileges, NOTIFY_SOCKET bound by notify_sock.py): READY=1 only once the RPC port answers, a download split over both links byte-exact, STOPPING=1 and exit 0 on SIGTERM and on aria2.shutdown, the session written and restored; the journal's log form under JOURNAL_STREAM; every system call inside the unit's SystemCallFilter and every socket inside RestrictAddressFamilies (strace).
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo --set wifi0.rate=20mbit --set lte0.rate=20mbit

MHTTPD=$MHTTP_BUILD_DIR/cli/mhttpd
UNITS=$MHTTP_SOURCE_DIR/packaging/systemd
NOTIFY=$HERE/notify_sock.py
SECRET=svc-$$
RUNAS=nobody   # as DynamicUser: no capability, no supplementary group
F=files/4194304.bin

# 1. the unit files, checked offline (the machine may have no systemd as PID 1)
mkdir -p "$WORK/units/user" "$WORK/xdg"
chmod 700 "$WORK/xdg"
sed "s|/usr/bin/mhttpd|$MHTTPD|" "$UNITS/mhttpd.service" >"$WORK/units/mhttpd.service"
sed "s|/usr/bin/mhttpd|$MHTTPD|" "$UNITS/user/mhttpd.service" >"$WORK/units/user/mhttpd.service"
verify() { systemd-analyze "$@" verify --man=no "$WORK/units/$u" 2>&1; }
out=$(u=mhttpd.service verify; XDG_RUNTIME_DIR=$WORK/xdg u=user/mhttpd.service verify --user)
check "systemd-analyze verify: the system and the user unit, nothing reported${out:+: $out}" test -z "$out"
sed 's/^Type=notify/Typ=notify/' "$WORK/units/mhttpd.service" >"$WORK/units/bad.service"
check "(the check can fail: a misspelt key in a copy is reported)" eval 'u=bad.service verify | grep -q "Unknown key"'
exposure=$(systemd-analyze security --offline=yes --man=no "$WORK/units/mhttpd.service" 2>&1 |
           sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
check "systemd-analyze security: the system unit's exposure $exposure (below 2.0)" \
  awk -v e="$exposure" 'BEGIN { exit !(e != "" && e + 0 < 2.0) }'

# unit_exec UNIT STATE HOME CONFIG RUNTIME: the unit's ExecStart as systemd runs it (specifiers
# %S %h %E %t replaced, $MHTTPD_OPTIONS split into words), one word per line
unit_exec() {
  local line w
  line=$(sed -n 's/^ExecStart=//p' "$1")
  line=${line//%S/$2}; line=${line//%h/$3}; line=${line//%E/$4}; line=${line//%t/$5}
  for w in $line; do
    if [ "$w" = '$MHTTPD_OPTIONS' ]; then printf '%s\n' $MHTTPD_OPTIONS; else printf '%s\n' "$w"; fi
  done
}
# unit_env UNIT RUNTIME: its Environment= assignments
unit_env() { sed -n 's/^Environment=//p' "$1" | sed "s|%t|$2|g"; }

# start_unit NAME UNIT STATE HOME CONFIG RUNTIME SOCKET [strace]: NAME's ExecStart in the
# background as $RUNAS, in systemd's environment, stderr to $WORK/NAME.err, notifications to
# $WORK/NAME.notify; sets DPID (the daemon) and WPID (what to wait for: the daemon or strace)
start_unit() {
  local name=$1 unit=$2 state=$3 home=$4 conf=$5 run=$6 sock=$7 tracer=() argv envv
  [ "${8:-}" = strace ] && tracer=(strace -f -qq -o "$WORK/$name.trace" -u "$RUNAS")
  rm -f "$WORK/$name.notify"*
  "$PY" "$NOTIFY" listen "$sock" "$PORT" "$SECRET" "$WORK/$name.notify" &
  MH_BG_PIDS+=($!)
  for _ in $(seq 50); do [ -e "$WORK/$name.notify.bound" ] && break; sleep 0.1; done
  mapfile -t argv < <(unit_exec "$unit" "$state" "$home" "$conf" "$run")
  mapfile -t envv < <(unit_env "$unit" "$run")
  [ ${#tracer[@]} = 0 ] && tracer=(setpriv --reuid="$RUNAS" --regid=nogroup --clear-groups --no-new-privs --inh-caps=-all)
  ( umask 077; cd / && exec env -i PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 HOME="$home" USER="$RUNAS" \
      NOTIFY_SOCKET="$sock" JOURNAL_STREAM="${JSTREAM:-}" MHTTP_STATS="$state/mhttpd/stats.json" "${envv[@]}" \
      "${tracer[@]}" "${argv[@]}" 2>>"$WORK/$name.err" ) &
  WPID=$!
  MH_BG_PIDS+=("$WPID")
  DPID=$WPID
  for _ in $(seq 200); do grep -q "^rpc-at-ready\|^msg STOPPING" "$WORK/$name.notify" 2>/dev/null && break; sleep 0.1; done
  if [ "${8:-}" = strace ]; then  # the daemon is strace's child (strace forks test children first)
    DPID=$(for c in $(cat /proc/$WPID/task/$WPID/children 2>/dev/null); do [ "$(cat /proc/$c/comm 2>/dev/null)" = mhttpd ] && echo "$c"; done)
  fi
  grep -q "^rpc-at-ready\|^msg STOPPING" "$WORK/$name.notify" 2>/dev/null && [ -n "$DPID" ]
}
rpc() { "$PY" "$NOTIFY" call "$PORT" "$SECRET" "$@"; }
field() { "$PY" -c 'import json,sys; d=json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }
notified() { grep -q "^msg $2" "$WORK/$1.notify"; }
ready_checks() {  # ready_checks NAME: READY=1 first, with a STATUS, and the port answered at once
  local n=$1
  check "$n: READY=1 is the first notification, with STATUS= ($(head -1 "$WORK/$n.notify"))" \
    eval 'head -1 "$WORK/$n.notify" | grep -q "^msg READY=1|STATUS=aria2 RPC on localhost port $PORT"'
  check "$n: aria2.getVersion answered the moment READY=1 arrived ($(grep rpc-at-ready "$WORK/$n.notify"))" \
    grep -q "^rpc-at-ready ok " "$WORK/$n.notify"
}

echo "== the system unit's ExecStart, as $RUNAS, traced; stderr as the journal's stream"
PORT=16871
S=$WORK/sys/state R=$WORK/sys/run
mkdir -p "$S/mhttpd/downloads" "$R/mhttpd"   # StateDirectory=, RuntimeDirectory= (0700)
chown -R "$RUNAS":nogroup "$WORK/sys"
chmod 700 "$R/mhttpd"
: >"$WORK/sys.err"
JSTREAM=$(stat -c %d:%i "$WORK/sys.err")
MHTTPD_OPTIONS="--rpc-listen-port=$PORT --rpc-secret=$SECRET"
check "system unit: started" start_unit sys "$WORK/units/mhttpd.service" "$S" / "$S" "$R" "@mhttpd-test-$$" strace
ready_checks sys
a=$(rpc aria2.addUri "[\"$TESTBED_URL_A/$F\"]")
gid=$(field "$a" 'd["result"]')
st=""
for _ in $(seq 600); do
  st=$(field "$(rpc aria2.tellStatus "\"$gid\"" '["status"]')" 'd["result"]["status"]')
  [ "$st" = active ] || [ "$st" = waiting ] || break
  sleep 0.1
done
check "system unit: a 4 MiB download completes ($st), byte-exact in StateDirectory's downloads/" \
  eval '[ "$st" = complete ] && [ "$(mh_sha "$S/mhttpd/downloads/4194304.bin")" = "$(mh_sum $F)" ]'
line=$(grep '"size":4194304' "$S/mhttpd/stats.json" 2>/dev/null | tail -1)
check "system unit: split over wifi0 and lte0 without any capability (MHTTP_STATS: ${line:0:160})" eval "$PY"' -c "
import json,sys
d=json.loads(sys.argv[1]); b={p[\"iface\"]: p[\"bytes\"] for p in d[\"paths\"]}
sys.exit(0 if b.get(\"wifi0\",0)>0 and b.get(\"lte0\",0)>0 else 1)" "$line"'
pgid=$(field "$(rpc aria2.addUri '["http://127.0.0.1:1/never"]' '{"pause":"true"}')" 'd["result"]')
kill -TERM "$DPID"
check "system unit: SIGTERM: exit 0 (traced) within 15 s" eval 'exits_within "$WPID" 15 && [ "$XRC" = 0 ]' ||
  { echo "   daemon $DPID, strace $WPID: $(ps -o pid,stat,wchan:20,cmd -p "$DPID" | tail -1)"; grep "^$DPID " "$WORK/sys.trace" | tail -5; }
sed 's/^/   notify: /' "$WORK/sys.notify"
check "system unit: STATUS= with the lists' sizes after the download ended" notified sys "STATUS=active: 0, waiting: 0, stopped: 1"
check "system unit: STOPPING=1 sent" notified sys "STOPPING=1|STATUS="
check "system unit: metrics store in RuntimeDirectory= (MHTTP_METRICS_STORE from Environment=)" test -s "$R/mhttpd/metrics"
check "system unit: session written in StateDirectory with the paused download ($pgid)" eval \
  'grep -q "^ gid=$pgid\$" "$S/mhttpd/session" && grep -q "^ pause=true\$" "$S/mhttpd/session"'
sed 's/^/   stderr: /' "$WORK/sys.err"
check "journal form: each daemon line starts with its <priority>, no name, no time" eval \
  '! grep -v "^libmhttp\[" "$WORK/sys.err" | grep -qv "^<[0-7]>" && ! grep -q "mhttp daemon:\|[0-9][0-9]:[0-9][0-9]:[0-9][0-9]" "$WORK/sys.err"'
check "journal form: <5> first start without a session, <6> ready and the download's end" eval \
  'grep -q "^<5>cannot read .*/session: No such file" "$WORK/sys.err" && grep -q "^<6>aria2 RPC on localhost port $PORT" "$WORK/sys.err" &&
   grep -q "^<6>$gid complete: .*4194304.bin" "$WORK/sys.err"'

# the unit's SystemCallFilter= and RestrictAddressFamilies= against what the daemon did
# syscalls GROUP...: the calls of the groups, nested groups expanded
syscalls() {
  local g
  for g in "$@"; do
    systemd-analyze syscall-filter "$g" | awk 'NR > 1 && $1 !~ /^#/ {print $1}' | while read -r c; do
      case $c in @*) syscalls "$c" ;; *) echo "$c" ;; esac
    done
  done
}
allowed=$(syscalls @system-service | sort -u)
denied=$(syscalls @privileged @resources | sort -u)
used=$(sed -E 's/^[0-9]+ +//; s/^<\.\.\. ([a-z0-9_]+) resumed>.*/\1/; s/^([a-z0-9_]+)\(.*/\1/' "$WORK/sys.trace" |
       grep -E '^[a-z0-9_]+$' | sort -u)
outside=$(comm -23 <(echo "$used") <(comm -23 <(echo "$allowed") <(echo "$denied")) | tr '\n' ' ')
check "SystemCallFilter=@system-service ~@privileged @resources: all $(wc -w <<<"$used") calls the daemon made are allowed${outside:+ (not: $outside)}" \
  eval '[ -n "$used" ] && [ -z "$outside" ]'
fams=$(grep -oE '(^|[ ])socket\(AF_[A-Z0-9]+' "$WORK/sys.trace" | sed 's/.*(//' | sort -u | tr '\n' ' ')
check "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK: sockets made: $fams" \
  eval '[ -n "$fams" ] && [ -z "$(tr " " "\n" <<<"$fams" | grep -vxE "AF_(UNIX|INET|INET6|NETLINK)|")" ]'

# ProtectSystem=strict, ProtectHome=, PrivateTmp=: what it wrote (calls that did not fail) is
# in StateDirectory= and RuntimeDirectory=
writes=$(grep -E '(open|openat)\(.*O_(WRONLY|RDWR|CREAT)|(mkdir|rename|unlink)\(' "$WORK/sys.trace" | grep -v '= -1 ' |
         grep -oE '"[^"]*"' | tr -d '"' | sort -u)
outside=$(grep -vE "^($S|$R)/" <<<"$writes" | tr '\n' ' ')
check "ProtectSystem=strict: the $(wc -l <<<"$writes") files written, made or renamed are in StateDirectory= or RuntimeDirectory=${outside:+ (not: $outside)}" \
  eval '[ -n "$writes" ] && [ -z "$outside" ]'

echo "== the system unit again: the session restored from StateDirectory"
check "system unit, restart: started" start_unit sys2 "$WORK/units/mhttpd.service" "$S" / "$S" "$R" "@mhttpd-test2-$$"
check "system unit, restart: READY=1 counts the restored download" notified sys2 "READY=1|STATUS=aria2 RPC on localhost port $PORT; queued: 1"
w=$(rpc aria2.tellWaiting 0 10 '["gid","status"]')
check "system unit, restart: $pgid waiting again, paused ($w)" eval '[ "$(field "$w" "d[\"result\"][0][\"gid\"]+d[\"result\"][0][\"status\"]")" = "${pgid}paused" ]'
kill -TERM "$DPID"
check "system unit, restart: exit 0 after SIGTERM, STOPPING=1" eval 'exits_within "$WPID" 15 && [ "$XRC" = 0 ] && notified sys2 STOPPING=1'

echo "== the user unit's ExecStart; JOURNAL_STREAM left from elsewhere"
PORT=16872
MHTTPD_OPTIONS="--rpc-listen-port=$PORT --rpc-secret=$SECRET"
H=$WORK/home
mkdir -p "$H/.local/state/mhttpd" "$H/.config"   # %S/mhttpd: StateDirectory= of a user unit
chown -R "$RUNAS":nogroup "$H"
check "user unit: started (NOTIFY_SOCKET a path)" start_unit user "$WORK/units/user/mhttpd.service" "$H/.local/state" "$H" "$H/.config" "$WORK/xdg" "$WORK/notify.sock"
ready_checks user
out=$(rpc aria2.shutdown)
check "user unit: aria2.shutdown: exit 0 within 15 s, STOPPING=1" eval 'exits_within "$WPID" 15 && [ "$XRC" = 0 ] && notified user STOPPING=1'
check "user unit: session written in \$XDG_STATE_HOME/mhttpd (empty queue)" test -f "$H/.local/state/mhttpd/session"
sed 's/^/   stderr: /' "$WORK/user.err"
check "not the journal (stderr is another file): lines 'mhttp daemon: ...', no <N>" eval \
  'grep -q "^mhttp daemon: aria2 RPC on localhost port $PORT" "$WORK/user.err" && ! grep -q "^<[0-7]>" "$WORK/user.err"'
mh_finish
