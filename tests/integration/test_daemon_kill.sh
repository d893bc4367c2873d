#!/bin/bash
# kill -9 of mhttp daemon during a queue of 5 downloads (3 x 4 MiB, 2 x 32 MiB, -j 2, --save-session with --input-file of the same file): killed right after each addUri answer, then at >= 20 random points (seeded, the seed printed), restarted each time; no queued download lost, every file sha256-exact with no resume file and no name.1.ext, a completed download never fetched again, and the bytes the origins served again per kill (access logs) quoted and bounded.
source "$(dirname "$0")/lib.sh"
# 2 x 8 Mbit/s: the queue lasts about 45 s uninterrupted. A run killed within about a second
# of its first bytes keeps none of them (the API checkpoints a resume file every second or
# 4 MiB), so the queue advances by what each run held past that, and is still unfinished after
# the kills (run times of 0-3 s after the checks of a restart)
mh_in_testbed demo --set wifi0.rate=8mbit --set lte0.rate=8mbit

SEED=${MH_KILL_SEED:-$((($(date +%s%N) / 1000) % 32768))}
KILLS=${MH_DAEMON_KILLS:-$([ -n "$MH_SAN_RT" ] && echo 6 || echo 20)}
RANDOM=$SEED
echo "   seed $SEED (MH_KILL_SEED=$SEED reproduces the kill points), $KILLS random kills"
PORT=16810
SECRET=k1ll-$$
D=$WORK/dl
SES=$WORK/session.txt
mkdir -p "$D"
BIG=files/33554432.bin
SMALL=files/4194304.bin
# the 5 downloads in queue order (-j 2: the small ones complete during the kills): request
# target (each one distinct, so the logs tell them apart), file, size and sha256; 33554432.bin
# is named from its URI
TARGETS=("/$SMALL?k=1" "/$BIG?k=2" "/$SMALL?k=3" "/$SMALL?k=4" "/$BIG?k=5")
NAMES=(small1.bin 33554432.bin small3.bin small4.bin big5.bin)
SIZES=(4194304 33554432 4194304 4194304 33554432)
SUMS=("$(mh_sum $SMALL)" "$(mh_sum $BIG)" "$(mh_sum $SMALL)" "$(mh_sum $SMALL)" "$(mh_sum $BIG)")
TOTAL=$((2 * 33554432 + 3 * 4194304))
# What one kill may cost, as test_resume_kill.sh bounds a split's (16 MiB), for each of the
# 2 active downloads
BOUND=$((32 * 1024 * 1024))

start() { mh_daemon "$WORK/daemon.log" $PORT --rpc-secret="$SECRET" -d "$D" -j 2 --save-session="$SES" \
  --input-file="$SES" --save-session-interval=1; }
rpc() { "$PY" "$HERE/daemon_kill.py" "$1" $PORT "$SECRET" "${@:2}"; }
held() { "$PY" "$HERE/daemon_kill.py" held "${NAMES[@]/#/$D/}"; }
# kill9: the daemon ends now, whatever it was doing; its origins' connections close
kill9() { kill -9 "$DPID"; wait "$DPID" 2>/dev/null; sleep 0.3; }

# complete I: file I holds every byte, sha256-exact, with no resume file beside it
complete() { [ ! -e "$D/${NAMES[$1]}.mhttp" ] && [ "$(stat -c %s "$D/${NAMES[$1]}" 2>/dev/null)" = "${SIZES[$1]}" ] &&
  [ "$(mh_sha "$D/${NAMES[$1]}")" = "${SUMS[$1]}" ]; }
DONE_AT=()  # per download: the log offsets when it was first seen complete
LOST=0
# after_kill: the download of each GID is in the restarted daemon, or its file is complete
after_kill() {
  local i st
  mapfile -t st < <(rpc present "${GIDS[@]}" | cut -d' ' -f2)
  for i in "${!GIDS[@]}"; do
    [ -z "${DONE_AT[$i]:-}" ] && complete "$i" && DONE_AT[$i]=$(mh_log_offsets)
    if [ "${st[$i]}" = unknown ] && [ -z "${DONE_AT[$i]:-}" ]; then
      LOST=$((LOST + 1)); echo "   download $i (${GIDS[$i]}) lost: unknown after the restart, file incomplete"
    fi
  done
}

H=0; OFF=$(mh_log_offsets); N=0; DURING=0
# one_kill WHY: kill -9, count what the run since the last restart was served again, restart
one_kill() {
  kill9
  local h=$(held) s=$(mh_served "$OFF")
  local w=$((s - (h - H)))
  N=$((N + 1))
  [ "$h" -lt $TOTAL ] && DURING=$((DURING + 1))
  printf '   kill %2d (%s): held %d -> %d of %d, served %d, refetched %d\n' $N "$1" "$H" "$h" $TOTAL "$s" "$w"
  echo "$w" >>"$WORK/refetched"
  H=$h; OFF=$(mh_log_offsets)
  start || { fail "the daemon did not restart after kill $N"; mh_finish; }
  after_kill
}

# add_args I...: URL and out of download I for daemon_kill.py add (replicas A and B in turn)
add_args() {
  local i
  for i; do
    echo "$([ $((i % 2)) = 0 ] && echo "$TESTBED_URL_A" || echo "$TESTBED_URL_B")${TARGETS[$i]}"
    [ "${NAMES[$i]}" = 33554432.bin ] && echo - || echo "${NAMES[$i]}"
  done
}
check "the daemon starts" start
mapfile -t args < <(add_args 0 1)
mapfile -t GIDS < <(rpc add "${args[@]}")
one_kill "right after 2 addUri answers"
mapfile -t args < <(add_args 2 3 4)
mapfile -t -O 2 GIDS < <(rpc add "${args[@]}")
check "5 downloads queued (${#GIDS[@]} GIDs)" [ ${#GIDS[@]} = 5 ]
one_kill "right after 3 addUri answers"
for ((k = 0; k < KILLS; k++)); do
  at=$((RANDOM % 3000))
  sleep "$(printf '%d.%03d' $((at / 1000)) $((at % 1000)))"
  one_kill "$at ms after the checks of the restart"
done
rpc drain 300 | sed 's/^/   stopped: /'
check "the daemon exits 0 at SIGTERM" eval 'kill -TERM $DPID && exits_within $DPID 10'
w=$(($(mh_served "$OFF") - (TOTAL - H)))
echo "$w" >>"$WORK/refetched"
echo "   last run: held $H of $TOTAL, refetched $w"

check "no queued download lost at any of the $N kills ($LOST lost)" [ $LOST = 0 ]
check "at least $KILLS of the $N kills while the queue was unfinished ($DURING)" [ $DURING -ge "$KILLS" ]
for i in "${!NAMES[@]}"; do
  check "${NAMES[$i]}: sha256 exact, no resume file" complete "$i"
done
check "no other file in the download directory (name.1.ext, leftovers): $(ls "$D" | tr '\n' ' ')" \
  eval '[ "$(ls "$D" | sort)" = "$(printf "%s\n" "${NAMES[@]}" | sort)" ]'
check "the session file empty at the end" test ! -s "$SES"
for i in "${!NAMES[@]}"; do
  [ -n "${DONE_AT[$i]:-}" ] || continue
  again=$(mh_served "${DONE_AT[$i]:-}" "${TARGETS[$i]}")
  check "${NAMES[$i]}: complete at a kill, never fetched again ($again bytes)" [ "$again" = 0 ]
done
sort -n "$WORK/refetched" | awk -v t=$TOTAL '{v[NR] = $1; s += $1} END {
  printf "   refetched per kill: min %d median %d max %d, all %d bytes (%.2f x the queue)\n", v[1], v[int((NR + 1) / 2)], v[NR], s, s / t}'
max=$(sort -n "$WORK/refetched" | tail -1)
check "every kill cost at most $BOUND bytes fetched again (max $max)" [ "$max" -le $BOUND ]
check "daemon log: no sanitizer report" eval '! grep -q "ERROR: .*Sanitizer\|runtime error:" "$WORK/daemon.log"'
mh_finish
