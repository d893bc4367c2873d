#!/bin/bash
# mhttp -c after kill -9 at random points: one path (-i wifi0) and split over wifi0 + lte0, HTTP and HTTPS (testbed --tls), each resumed run byte-exact with no resume file left, and the bytes the origins served twice per kill (from their access logs) within the checkpoint bound; a changed validator restarts whole with a message; an origin claiming 1 TiB is refused before anything is written.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo --tls --set wifi0.rate=100mbit --set lte0.rate=100mbit

M=$MHTTP_BUILD_DIR/cli/mhttp
[ -x "$M" ] || { fail "$M is not built"; mh_finish; }
# kills per case (4 cases): the CI default plans 56, spread over 5-85 % of an uninterrupted
# run's time, so that at least 50 land before the end; 4 in the Asan tree (its verdict is the
# sanitizers', and each run is slower)
KILLS=${MH_RESUME_KILLS:-$([ -n "$MH_SAN_RT" ] && echo 4 || echo 14)}
SIZE=33554432
F=files/$SIZE.bin
WANT=$(mh_sum $F)
# What a kill may cost: the bytes since the last checkpoint (MH__RESUME_SAVE_BYTES, 4 MiB, at
# 100 ms ticks), what was in the sockets and on the links, and for a split the probe and the
# object's last byte fetched again, and ranges in flight on every leg
BOUND=$((16 * 1024 * 1024))

# duration ARGS...: seconds (ms) of one whole download, the time the kills are spread over
duration() {
  rm -f "$WORK/o.bin"
  local t0=$(date +%s%N)
  timeout 120 "$M" -q "$@" -o "$WORK/o.bin" >/dev/null 2>&1
  echo $((($(date +%s%N) - t0) / 1000000))
}

# kill_case NAME URL ARGS...: KILLS runs killed at a random point, each resumed with -c
kill_case() {
  local name=$1 url=$2; shift 2
  local ms=$(duration "$@" "$url") k=0 early=0 bad=0 i
  echo "   $name: an uninterrupted run takes $ms ms"
  for ((i = 0; i < KILLS; i++)); do
    rm -f "$WORK/o.bin" "$WORK/o.bin.mhttp"
    local off=$(mh_log_offsets) at=$((ms * (5 + RANDOM % 80) / 100))
    "$M" -q "$@" -o "$WORK/o.bin" "$url" >/dev/null 2>&1 &
    local pid=$!
    sleep "$(printf '%d.%03d' $((at / 1000)) $((at % 1000)))"
    local killed=0
    kill -9 $pid 2>/dev/null && killed=1
    wait $pid 2>/dev/null
    k=$((k + killed)); early=$((early + 1 - killed))
    timeout 120 "$M" -q -c "$@" -o "$WORK/o.bin" "$url" >"$WORK/out" 2>&1; local rc=$?
    local got=$(mh_sha "$WORK/o.bin") w=$(($(mh_served "$off" "/$F") - SIZE))
    if [ "$rc" != 0 ] || [ "$got" != "$WANT" ] || [ -e "$WORK/o.bin.mhttp" ] || [ "$w" -gt "$BOUND" ]; then
      bad=$((bad + 1))
      echo "   $name: kill at $at ms: rc $rc, sha ${got:0:12}, refetched $w, resume file $([ -e "$WORK/o.bin.mhttp" ] && echo left)"
      head -3 "$WORK/out"
    fi
    [ $killed = 1 ] && echo "${name// /-} $at $w" >>"$WORK/kills"  # what the kills cost
  done
  echo "   $name: $k killed, $early ended before the kill; refetched per run: $(awk -v n="${name// /-}" '$1 == n {print $3}' "$WORK/kills" | sort -n | awk '{v[NR] = $1} END {printf "min %d median %d max %d", v[1], v[int((NR + 1) / 2)], v[NR]}')"
  check "$name: every resumed run exact, no resume file left, at most $BOUND bytes refetched ($bad bad)" [ "$bad" = 0 ]
  check "$name: at least $((KILLS * 3 / 4)) of $KILLS runs killed mid-transfer" [ "$k" -ge $((KILLS * 3 / 4)) ]
}

HTTPS=(--cacert "$TESTBED_TLS_CA")
kill_case "one path http" "http://a.test/$F" -i wifi0
kill_case "one path https" "https://a.test/$F" -i wifi0 "${HTTPS[@]}"
kill_case "split http" "http://a.test/$F"
kill_case "split https" "https://a.test/$F" "${HTTPS[@]}"
awk '{print $3}' "$WORK/kills" | sort -n | awk '{v[NR] = $1} END {printf "   all %d kills: refetched min %d median %d max %d bytes\n", NR, v[1], v[int((NR + 1) / 2)], v[NR]}'

# A changed validator: the output holds 8 MiB of another version (zeros) under a resume file
# naming another ETag, so If-Range fails, the origin answers 200 and the output starts over
# whole, with a message
for mode in one split; do
  args=(); [ $mode = one ] && args=(-i wifi0)
  head -c 8388608 /dev/zero >"$WORK/o.bin"
  printf 'mhttp-resume 1\nurl http://a.test/%s\nlength %d\nvalidator "older-version"\nrange 0 8388608\n' \
    "$F" "$SIZE" >"$WORK/o.bin.mhttp"
  "$M" "${args[@]}" -c -o "$WORK/o.bin" "http://a.test/$F" >"$WORK/out" 2>"$WORK/err"; rc=$?
  check "changed validator ($mode path): exit 0, bytes exact" [ "$rc" = 0 ] && [ "$(mh_sha "$WORK/o.bin")" = "$WANT" ]
  check "changed validator ($mode path): says it starts over" grep -q "fetching it whole" "$WORK/err" ||
    head -3 "$WORK/err"
done

# A claim of 1 TiB (fault.test's huge) is refused before a byte is written: exit 23 with the
# reason, and nothing of the claimed size on disk
rm -f "$WORK/h.bin"
"$M" -q -m 3 -o "$WORK/h.bin" "http://fault.test/$F?f=huge" >"$WORK/out" 2>"$WORK/err"; rc=$?
cat "$WORK/err"
check "1 TiB claim: exit 23 (rc $rc)" [ "$rc" = 23 ]
check "1 TiB claim: the message says it does not fit" grep -q "do not fit" "$WORK/err"
du=$(du -k "$WORK/h.bin" 2>/dev/null | cut -f1); app=$(stat -c %s "$WORK/h.bin" 2>/dev/null)
echo "   output: ${du:-none} KiB on disk, apparent size ${app:-none}"
check "1 TiB claim: nothing allocated" [ "${du:-0}" -le 64 ] && [ "${app:-0}" -le 65536 ]
mh_finish
