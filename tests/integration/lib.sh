# Shared helpers of the shim's integration tests: re-exec inside a testbed, run a program with and without libmhttp.so, compare, count failures.
# Sourced by the test_*.sh scripts; MHTTP_BUILD_DIR / MHTTP_SOURCE_DIR come from ctest.
set -uo pipefail
: "${MHTTP_SOURCE_DIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${MHTTP_BUILD_DIR:=$MHTTP_SOURCE_DIR/build/release}"
export MHTTP_SOURCE_DIR MHTTP_BUILD_DIR
SHIM_LIB=$MHTTP_BUILD_DIR/shim/libmhttp.so
# SHIM is what the tests put in LD_PRELOAD. A shim built with AddressSanitizer (the Asan tree)
# needs the ASan runtime loaded before anything else in a program that is not itself built
# with it, so the runtime it links against goes first, then tests/harness/asan_first.c (which
# starts that runtime before any library's constructor can); every report is written under
# $MH_SAN_DIR and mh_finish fails the test when one appeared. Leaks are judged where the
# program is ours (test_leaks.sh): wget's or python's own would drown the engine's.
SHIM=$SHIM_LIB
MH_SAN_RT=$(ldd "$SHIM_LIB" 2>/dev/null | awk '$1 ~ /^libasan\.so/ {print $3}')
if [ -n "$MH_SAN_RT" ]; then
  SHIM="$MH_SAN_RT $MHTTP_BUILD_DIR/tests/harness/libmhttp_asan_first.so $SHIM_LIB"
  : "${MH_SAN_DIR:=$(mktemp -d /tmp/mhshim-san.XXXXXX)}"
  chmod 755 "$MH_SAN_DIR"
  export MH_SAN_DIR
  export ASAN_OPTIONS="log_path=$MH_SAN_DIR/asan:detect_leaks=${MH_SAN_LEAKS:-0}:halt_on_error=1:abort_on_error=0:print_stacktrace=1"
  export UBSAN_OPTIONS="log_path=$MH_SAN_DIR/ubsan:halt_on_error=1:print_stacktrace=1"
fi
TESTBED=$MHTTP_SOURCE_DIR/bench/testbed/testbed
PY=/usr/bin/python3
HERE=$MHTTP_SOURCE_DIR/tests/integration

# mh_in_testbed SCENARIO [up options]: outside a testbed, re-runs the calling script inside a
# fresh one (torn down by `testbed run` whatever happens); inside, returns.
mh_in_testbed() {
  if [ -n "${TESTBED_ID:-}" ]; then
    return 0
  fi
  if [ "$(id -u)" -ne 0 ]; then
    echo "FAIL: integration tests need root (network namespaces)" >&2
    exit 1
  fi
  if [ ! -f "$SHIM_LIB" ]; then
    echo "FAIL: $SHIM_LIB is not built" >&2
    exit 1
  fi
  exec "$PY" "$TESTBED" run "$@" -- /bin/bash "$0"
}

MH_FAILS=0
MH_PASSES=0
WORK=$(mktemp -d /tmp/mhshim-it.XXXXXX)
chmod 755 "$WORK"
# The host-wide metrics store would carry one test's measurements into the next program (and
# into other test runs on this host): tests expect a cold start unless they set their own
# store (test_metrics_store.sh does, under $WORK).
export MHTTP_METRICS_STORE=off
MH_BG_PIDS=()
mh_cleanup() {
  for p in "${MH_BG_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$WORK"
  # the sanitizer reports' folder is made before the re-exec into the testbed, read inside it
  [ -n "$MH_SAN_RT" ] && [ -n "${TESTBED_ID:-}" ] && rm -rf "$MH_SAN_DIR"
}
trap mh_cleanup EXIT

pass() { MH_PASSES=$((MH_PASSES + 1)); echo "ok   $*"; }
fail() { MH_FAILS=$((MH_FAILS + 1)); echo "FAIL $*"; }
# check NAME COMMAND...: pass when COMMAND succeeds; returns 1 when it failed (`check ... || diagnose`)
check() { local mh_name=$1; shift; if "$@"; then pass "$mh_name"; else fail "$mh_name"; return 1; fi; }

# mh_rss_in VALUE LO HI: an RSS figure (any unit) lies in [LO, HI]. In the Asan tree RSS holds
# ASan's shadow memory and its quarantine of freed blocks (hundreds of MiB), so there only the
# other parts of a check are judged.
mh_rss_in() {
  if [ -n "$MH_SAN_RT" ]; then echo "   (Asan tree: RSS $1 not judged)"; return 0; fi
  [ -n "$1" ] && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]
}

# manyconn (manyconn.c, one epoll process with many connections): mc_build compiles it to $MC;
# mc_field NAME LINE prints the number after NAME in its summary line.
MC=$WORK/manyconn
mc_build() { cc -O2 -Wall -Wextra -Werror -o "$MC" "$HERE/manyconn.c"; }
mc_field() { awk -v k="$1" '{for (i = 1; i < NF; i++) if ($i == k) print $(i + 1)}' <<<"$2"; }
# mc_check_shim OUT RC CONNS LOG WHAT: a run under the shim (summary OUT, exit RC, engine log
# LOG) ended with every connection done byte-exact, none failed, all CONNS taken over
mc_check_shim() {
  local out=$1 rc=$2 n=$3 log=$4 what=$5 taken
  check "shim: $what byte-exact, none stalled" \
    eval '[ "$rc" = 0 ] && [ "$(mc_field completed "$out")" = "$n" ] && [ "$(mc_field failed "$out")" = 0 ]'
  taken=$(grep -c "taken over" "$log")
  check "shim: took over all $n connections ($taken)" [ "$taken" = "$n" ]
}

# mh_san_check: with a sanitized shim, any report written under $MH_SAN_DIR fails the test
# (ASan and UBSan write one file per reporting process and stop that process).
mh_san_check() {
  [ -n "$MH_SAN_RT" ] || return 0
  local f n=0
  for f in "$MH_SAN_DIR"/asan.* "$MH_SAN_DIR"/ubsan.*; do
    [ -e "$f" ] || continue
    n=$((n + 1))
    [ $n -le 3 ] && { echo "--- $f"; head -40 "$f"; }
  done
  check "sanitizers: no report from the shim ($n)" [ $n = 0 ]
}

mh_finish() {
  mh_san_check
  echo "== $MH_PASSES passed, $MH_FAILS failed"
  [ "$MH_FAILS" -eq 0 ] && [ "$MH_PASSES" -gt 0 ]
  exit $?
}

# Expected sha256 of a testbed path (e.g. files/1048576.bin) from the manifest.
mh_sum() { awk -v p="$1" '{f=$2; sub(/^\*/, "", f); sub(/^\.\//, "", f)} f == p {print $1}' "$TESTBED_SHA256SUMS"; }
mh_sha() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }

# mh_pair NAME CMD...: runs CMD in $WORK/NAME/plain and $WORK/NAME/shim (cwd), without and
# with the shim. Leaves rc, stdout, stderr and the shim log in those dirs; sets PLAIN_RC,
# SHIM_RC, and TAKEN (connections the shim took over, from its log).
mh_pair() {
  local name=$1; shift
  local d=$WORK/$name
  mkdir -p "$d/plain" "$d/shim"
  (cd "$d/plain" && env -u LD_PRELOAD "$@" >"$d/plain.out" 2>"$d/plain.err"); PLAIN_RC=$?
  (cd "$d/shim" && env LD_PRELOAD="$SHIM" MHTTP_LOG="${MH_LOG_LEVEL:-info}" MHTTP_LOG_FILE="$d/shim.log" \
     "$@" >"$d/shim.out" 2>"$d/shim.err"); SHIM_RC=$?
  TAKEN=$(grep -c "taken over" "$d/shim.log" 2>/dev/null)
  TAKEN=${TAKEN:-0}
  MH_D=$d
}

# mh_stalled_came_back LOG: a split's connection stalled (a shim log at debug level), and every
# interface where one did took part again while ranges were still being asked: it asked ranges
# after its stall (its own or a rescue's), or it was re-probed (admission then decides; near the
# end a new connection may not be worth it), or no interface asked a range after that stall.
mh_stalled_came_back() {
  local i ifs after
  ifs=$(grep -o '([a-z0-9]*) failed: stalled' "$1" | cut -d' ' -f1 | tr -d '()' | sort -u)
  [ -n "$ifs" ] || { echo "   no connection stalled"; return 1; }
  for i in $ifs; do
    after=$(sed -n "/($i) failed: stalled/,\$p" "$1")
    grep -q "($i) range [0-9]*+\|($i) asks [0-9]*+[0-9]* again" <<<"$after" && continue
    grep -q "$i lost its connections: tried again" <<<"$after" && continue
    grep -q ") range [0-9]*+" <<<"$after" || continue
    echo "   $i neither asked a range nor was tried again after its stall, while others asked ranges"
    return 1
  done
}

# After mh_pair: same exit code, and the shim really served the connection(s).
mh_same_rc() { [ "$PLAIN_RC" = "$SHIM_RC" ] || { echo "   exit codes differ: plain $PLAIN_RC, shim $SHIM_RC"; return 1; }; }
mh_taken() { [ "$TAKEN" -ge "${1:-1}" ] || { echo "   shim took over $TAKEN connection(s), wanted >= ${1:-1}"; return 1; }; }
mh_same_file() { cmp -s "$MH_D/plain/$1" "$MH_D/shim/$1" || { echo "   $1 differs"; return 1; }; }
mh_same_stdout() { cmp -s "$MH_D/plain.out" "$MH_D/shim.out" || { echo "   stdout differs:"; diff "$MH_D/plain.out" "$MH_D/shim.out" | head -5; return 1; }; }
# mh_same_stderr: the same messages; elapsed times in them (curl: "after 4 ms") are not compared
mh_same_stderr() {
  local t='s/after [0-9]+ ms/after N ms/g'
  cmp -s <(sed -E "$t" "$MH_D/plain.err") <(sed -E "$t" "$MH_D/shim.err") ||
    { echo "   stderr differs:"; diff "$MH_D/plain.err" "$MH_D/shim.err" | head -5; return 1; }
}

# mh_wait_listen HOST PORT: waits (at most 5 s) until HOST:PORT accepts a connection; 1 if never.
mh_wait_listen() {
  for _ in $(seq 50); do
    "$PY" -c "import socket; socket.create_connection(('$1', $2), 0.3).close()" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# Starts the helper origin (tests/integration/origin.py) on 127.0.0.1:PORT in the client
# namespace; waits until it listens.
mh_local_origin() {
  local port=$1
  "$PY" "$HERE/origin.py" "$port" >"$WORK/origin-$port.log" 2>&1 &
  MH_BG_PIDS+=($!)
  mh_wait_listen 127.0.0.1 "$port" && return 0
  echo "FAIL: local origin on port $port did not start" >&2
  return 1
}

# mh_daemon LOG PORT ARGS...: `mhttp daemon --enable-rpc --rpc-listen-port=PORT ARGS` in the
# background, output appended to LOG, its pid in $DPID (and MH_BG_PIDS); waits (at most 5 s)
# until /jsonrpc answers; 1 if never.
mh_daemon() {
  local log=$1 port=$2; shift 2
  "$MHTTP_BUILD_DIR/cli/mhttp" daemon --enable-rpc --rpc-listen-port="$port" "$@" >>"$log" 2>&1 &
  DPID=$!
  MH_BG_PIDS+=("$DPID")
  for _ in $(seq 50); do
    curl -s -o /dev/null "http://127.0.0.1:$port/jsonrpc" && return 0
    sleep 0.1
  done
  return 1
}
# exits_within PID SECONDS: the process ended by itself with status 0 (its status in $XRC)
exits_within() {
  for _ in $(seq $(($2 * 10))); do kill -0 "$1" 2>/dev/null || { wait "$1"; XRC=$?; return $XRC; }; sleep 0.1; done
  return 1
}

# The testbed replicas' access logs (combined format: $7 the request target, $10 body bytes).
# mh_log_offsets: their line counts now, for mh_served.
mh_log_offsets() {
  for l in "$TESTBED_RUN_DIR/origin-a/access.log" "$TESTBED_RUN_DIR/origin-b/access.log"; do wc -l <"$l"; done | paste -sd' '
}
# mh_served OFFSETS [TARGET]: body bytes both replicas sent in 2xx answers since OFFSETS (of
# mh_log_offsets), for the request target TARGET (/files/N.bin) or for every one; an error's
# page (a 416 to a complete file's range) carries none of an object's bytes.
mh_served() {
  local i=1 total=0 n l
  for l in "$TESTBED_RUN_DIR/origin-a/access.log" "$TESTBED_RUN_DIR/origin-b/access.log"; do
    n=$(tail -n +$(($(cut -d' ' -f$i <<<"$1") + 1)) "$l" | awk -v p="${2:-}" '$9 ~ /^2/ && (p == "" || $7 == p) {s += $10} END {print s + 0}')
    total=$((total + n)); i=$((i + 1))
  done
  echo $total
}
