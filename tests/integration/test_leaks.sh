#!/bin/bash
# Leaks: one process fetches 10,000 objects under the shim (2,000 connections taken over one after another, 50 open at once, 5 keep-alive requests each, 1 in 20 a 1 MiB object split over both paths): all byte-exact, and neither descriptors nor heap nor (Asan tree) unreachable memory left behind.
source "$(dirname "$0")/lib.sh"
mh_in_testbed lan

CONNS=${MH_LEAK_CONNS:-2000}
REQS=5
OPEN=50
# 19 small objects (relayed, some after a probe) to one 1 MiB object (split): connection i asks
# for PATHS[(i + j) % 20] as its j-th request, so every connection meets several kinds.
PATHS="/files/16384.bin /files/32767.bin /files/32768.bin /files/32769.bin /files/65536.bin
/files/16384.bin /files/65536.bin /files/262144.bin /files/32768.bin /files/1048576.bin
/files/16384.bin /files/32767.bin /files/32768.bin /files/32769.bin /files/65536.bin
/files/16384.bin /files/65536.bin /files/32768.bin /files/32768.bin /files/16384.bin"
HOSTS=$TESTBED_HOST_A,$TESTBED_HOST_B
mc_build || { fail "cannot compile manyconn.c"; mh_finish; }

plain=$(env -u LD_PRELOAD "$MC" -n "$CONNS" -c $OPEN -k $REQS -t 300 -s 1000 "$HOSTS" 80 $PATHS 2>"$WORK/plain.err"); prc=$?
echo "   plain: $plain"
head -5 "$WORK/plain.err"
check "plain: $((CONNS * REQS)) objects byte-exact" eval '[ "$prc" = 0 ] && [ "$(mc_field completed "$plain")" = "$CONNS" ]'
plain_ms=$(mc_field wall_ms "$plain")

# The engine's sessions end a moment after the program closes its end; pooled connections
# (at most MH__POOL_MAX = 16, multihttp/paths/mh_path.c) stay 30 s. So after a 2 s settle the process
# may hold what it held a tenth of the way in (50 connections open then, each with the
# program's socket, the engine's socketpair end and an upstream) and no more; one descriptor
# lost per object would leave about 9,000 more.
deadline=$(( ${plain_ms:-60000} * 10 / 1000 + 60 ))
leaks=0
[ -n "$MH_SAN_RT" ] && leaks=1
shim=$(env LD_PRELOAD="$SHIM" MHTTP_LOG=info MHTTP_LOG_FILE="$WORK/shim.log" MHTTP_STATS="$WORK/stats.jsonl" \
  ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=$leaks" \
  "$MC" -n "$CONNS" -c $OPEN -k $REQS -t "$deadline" -s 2000 "$HOSTS" 80 $PATHS 2>"$WORK/shim.err"); src=$?
echo "   shim:  $shim (deadline ${deadline} s)"
head -12 "$WORK/shim.err"
mc_check_shim "$shim" "$src" "$CONNS" "$WORK/shim.log" "$((CONNS * REQS)) objects"
# The split machinery must have run for the leak counts to mean anything: a 1 MiB object opens
# a connection on the second path (whether that path then gets bytes is the scheduler's call
# on unshaped links; test_scale checks that it does on its own).
big=$(grep -c '"size":1048576,"result":"ok"' "$WORK/stats.jsonl")
split=$(grep -cE '"size":1048576,"result":"ok".*"connections":([2-9]|[1-9][0-9])' "$WORK/stats.jsonl")
check "shim: every 1 MiB object split ok ($big of $((CONNS * REQS / 20))), most on two connections or more ($split)" \
  eval '[ "$big" = $((CONNS * REQS / 20)) ] && [ "$split" -ge $((big / 2)) ]' 

fs=$(mc_field fds_start "$shim") fw=$(mc_field fds_warm "$shim") fe=$(mc_field fds_end "$shim")
check "shim: descriptors after $((CONNS * REQS)) objects ($fe) no more than a tenth of the way in ($fw; $fs before)" \
  eval '[ -n "$fe" ] && [ -n "$fw" ] && [ "$fe" -ge 0 ] && [ "$fe" -le "$fw" ]'
# Heap: glibc's in-use bytes (mallinfo2) after the settle, against a tenth of the way in; the
# Asan tree's allocator is ASan's (mallinfo2 does not see it): there LeakSanitizer judges at exit.
if [ -z "$MH_SAN_RT" ]; then
  hw=$(mc_field heap_warm_kib "$shim") he=$(mc_field heap_end_kib "$shim")
  check "shim: heap in use after $((CONNS * REQS)) objects ${he} KiB <= a tenth of the way in (${hw} KiB)" \
    eval '[ -n "$he" ] && [ -n "$hw" ] && [ "$he" -le "$hw" ]'
fi
errs=$(grep -c " error: " "$WORK/shim.log")
check "shim: no error in the engine log ($errs)" [ "$errs" = 0 ]
grep " error: " "$WORK/shim.log" | sort | uniq -c | sort -rn | head -5
[ -n "${LEAKS_KEEP:-}" ] && cp -r "$WORK"/. "$LEAKS_KEEP"/
mh_finish
