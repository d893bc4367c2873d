#!/bin/bash
# Scale: one epoll process with 1,000 concurrent taken-over connections (small objects and split 1 MiB ones from both replicas), byte-exact, no stall, bounded RSS.
source "$(dirname "$0")/lib.sh"
mh_in_testbed lan

N=${MH_SCALE_CONNS:-1000}
# Nine small objects to one 1 MiB object: 100 of the 1,000 connections get a body the shim
# splits (1 MiB > MHTTP_MIN_SPLIT_SIZE after the 32 KiB probe), the others are relayed.
PATHS="/files/16384.bin /files/32767.bin /files/32768.bin /files/32769.bin /files/65536.bin
/files/16384.bin /files/65536.bin /files/262144.bin /files/32768.bin /files/1048576.bin"
HOSTS=$TESTBED_HOST_A,$TESTBED_HOST_B
mc_build || { fail "cannot compile manyconn.c"; mh_finish; }

# -- without the shim: the reference time
plain=$(env -u LD_PRELOAD "$MC" -n "$N" -t 60 "$HOSTS" 80 $PATHS 2>"$WORK/plain.err"); prc=$?
echo "   plain: $plain"
head -5 "$WORK/plain.err"
check "plain: $N connections byte-exact" eval '[ "$prc" = 0 ] && [ "$(mc_field completed "$plain")" = "$N" ]'
plain_ms=$(mc_field wall_ms "$plain")
plain_rss=$(mc_field maxrss_kib "$plain")

# -- with the shim: no stall means every connection done within 5x the plain run + 10 s
deadline=$(( ${plain_ms:-60000} * 5 / 1000 + 10 ))
export MHTTP_STATS=$WORK/stats.jsonl
shim=$(env LD_PRELOAD="$SHIM" MHTTP_LOG=info MHTTP_LOG_FILE="$WORK/shim.log" \
  "$MC" -n "$N" -t "$deadline" "$HOSTS" 80 $PATHS 2>"$WORK/shim.err"); src=$?
echo "   shim:  $shim (deadline ${deadline} s)"
head -12 "$WORK/shim.err"
mc_check_shim "$shim" "$src" "$N" "$WORK/shim.log" "$N connections"
# N/10 connections asked for 1 MiB: each is a split object that ended ok, and most of them
# had both interfaces carrying bytes (the stats line lists every interface with its byte
# count). Not all: an extra path that brings nothing before the first path has carried the
# whole object leaves a correct object on one path (CI at 94e762d beside a compile: 97 of 100;
# those 3 were planned over both, lte0 carried all bytes in about 1 s, as if wifi0's connect
# had waited out a SYN retransmission; not reproduced in 3 runs beside two busy loops).
big=$(grep -c '"size":1048576,"result":"ok"' "$WORK/stats.jsonl")
split=$(grep -cE '"size":1048576,"result":"ok".*"bytes":[1-9][0-9]*,.*"bytes":[1-9]' "$WORK/stats.jsonl")
check "shim: every 1 MiB object split and ok ($big, want $((N / 10)))" [ "$big" = $((N / 10)) ]
check "shim: 1 MiB objects over both interfaces ($split of $big, want >= 80 %)" \
  [ $((split * 5)) -ge $((N / 10 * 4)) ]
grep '"size":1048576,' "$WORK/stats.jsonl" | grep -vE '"result":"ok".*"bytes":[1-9][0-9]*,.*"bytes":[1-9]' | head -3
errs=$(grep -c " error: " "$WORK/shim.log")
check "shim: no error in the engine log ($errs)" [ "$errs" = 0 ]
grep " error: " "$WORK/shim.log" | sort | uniq -c | sort -rn | head -5

# -- memory: bytes the program has not read yet wait in the engine: a session holds at most
#    its object (relayed, or split on one path) up to its 256 KiB ceiling (MH__BUF_CAP in
#    multihttp/mh_session.c), and may hold it twice meanwhile (the probe's answer is kept
#    for a relay fallback, MH__RAW_CAP in mh_split.c, while its bytes go on to the program);
#    objects split over several paths share MHTTP_WINDOW (24 MiB for the whole process).
#    Bound: the plain run's peak + the window + 2 x the sum of min(object, 256 KiB) over the
#    connections (the 1 MiB ones count in the window) + 32 MiB for the engine's own state
#    (sessions, splits, parsers, libuv) and allocator slack. Measured on lan with 1,000
#    connections: 80-119 MiB; the bound comes to about 180 MiB.
held=0 np=0
for p in $PATHS; do
  sz=$(stat -c %s "$TESTBED_FILES_DIR/$p")
  np=$((np + 1))
  [ "$sz" -lt 1048576 ] && held=$(( held + (sz < 262144 ? sz : 262144) ))
done
shim_rss=$(mc_field maxrss_kib "$shim")
bound=$(( ${plain_rss:-0} + 24 * 1024 + 2 * held * N / np / 1024 + 32 * 1024 ))
check "shim: peak RSS ${shim_rss} KiB <= ${bound} KiB (plain ${plain_rss} KiB)" mh_rss_in "${shim_rss:-999999999}" 0 "$bound"

# -- a window the split objects fill at once (100 of them, 1 MiB for all): a leg whose next
#    answer is not the program's next bytes waits, and those bytes must still come (the end
#    chunk asked first sat ahead of them on the same connection: at fd53702 this run stalled;
#    a range a rescue had asked elsewhere did: at 22720f0 it stalled under load, and with a 1 MiB
#    window 3 runs in 21; mh__leg_may_read)
small=$(env LD_PRELOAD="$SHIM" MHTTP_WINDOW=1M MHTTP_LOG=info MHTTP_LOG_FILE="$WORK/small.log" \
  "$MC" -n "$N" -t "$deadline" "$HOSTS" 80 $PATHS 2>"$WORK/small.err"); wrc=$?
echo "   shim, MHTTP_WINDOW=1M: $small"
head -5 "$WORK/small.err"
check "shim: $N connections with a 1 MiB window byte-exact, none stalled" eval '[ "$wrc" = 0 ] && [ "$(mc_field completed "$small")" = "$N" ]' ||
  grep -vE 'started|taken over|closing|server closed' "$WORK/small.log" | tail -20  # what the engine saw

# -- keep-alive: three requests on each connection; a connection whose object was split must
#    carry the next request as the origin left it open (before the fix 9-97 of 1,000 got EOF)
ka=$(env LD_PRELOAD="$SHIM" MHTTP_LOG=info MHTTP_LOG_FILE="$WORK/ka.log" \
  "$MC" -n "$N" -k 3 -t $((deadline * 3)) "$HOSTS" 80 $PATHS 2>"$WORK/ka.err"); krc=$?
echo "   shim, 3 requests per connection: $ka"
head -5 "$WORK/ka.err"
check "shim: $N connections x 3 keep-alive requests byte-exact" eval '[ "$krc" = 0 ] && [ "$(mc_field completed "$ka")" = "$N" ] && [ "$(mc_field failed "$ka")" = 0 ]'

mh_finish
