#!/bin/bash
# The fault matrix, part 3 (two equal links): origins that trickle, reset or close every answer; curl, wget and the mhttp command without and with the engine, with a cold and a warm metrics store.
# Rows and verdicts: faults_lib.sh (exact bytes, or plain's exit status and bytes; never a
# hang: every run is bounded by FX_TIMEOUT). The times in the table are figures, not verdicts
# (bench/testbed/README.md, "The fault matrix"). One row by hand: FAULT_ROWS=reset bash THIS.
source "$(dirname "$0")/lib.sh"
mh_in_testbed sym-high
source "$HERE/faults_lib.sh"

F4=files/4194304.bin
U=http://fault.test/$FX_F
C="curl wget mhttp"
# rows SUFFIX: every row once, its name ending in SUFFIX
rows() {
  local w=$1
  # -- trickles: later ranges (from their first byte, or after 64 KiB at full speed), a replica
  fx_row "lr-trickle$w" "$U?f=lr-trickle" clients="$C"
  fx_row "lr-trickle64k$w" "$U?f=lr-trickle&after=65536" clients="$C"
  fx_row "cdn-slow$w" "http://cdn-slow.test/$FX_F" clients="$C" stats=trickle.test
  fx_row "cdn-slow64k$w" "http://cdn-slow.test/$FX_F?after=65536" clients="$C" stats=trickle.test
  # -- every answer reset after 1 000 body bytes: plain's exit status and bytes (curl 56; wget
  # 4 after its tries, which resume with a Range; mhttp as on one interface)
  fx_row "reset$w" "$U?f=reset" clients="$C" expect=none plain=any
  fx_row "reset-tries$w" "$U?f=reset" clients=wget wget="--tries=3 --waitretry=0" expect=none plain=any
  # -- every answer closes its connection (Connection: close; HTTP/1.0): split, one range per
  # connection (4 MiB: ranges large enough to pay for their handshakes)
  fx_row "close$w" "http://fault.test/$F4?f=close" clients="$C" path=$F4 expect="$TESTBED_FILES_DIR/$F4"
  fx_row "http10$w" "http://fault.test/$F4?f=http10" clients="$C" path=$F4 expect="$TESTBED_FILES_DIR/$F4"
}

rows ""
# -- the same with a warm metrics store (the normal state of a machine): two downloads first
export MHTTP_METRICS_STORE=$WORK/mstore
for i in 1 2; do
  env LD_PRELOAD="$SHIM" MHTTP_DNS_lte0="$TESTBED_LTE0_DNS" timeout 30 curl -sS -o /dev/null "http://a.test/$F4" ||
    fail "warm-up download $i"
done
rows "-w"
# a closing origin was split: more than one connection carried its ranges, on both paths
# (the mhttp command logs to its stderr)
for w in "" -w; do
  for c in curl wget mhttp; do
    check "close$w $c: the origin closing every answer was split" \
      grep -qs "the origin closes after every answer" "$WORK/close$w/$c/shim/shim.log" "$WORK/close$w/$c/shim/stderr"
  done
done
# an origin pacing every range answer: its crawl's verdict took the hedge (the program's own
# request, sent when every path went quiet) as the plain fetch, rather than starting one then.
# Any one of the three cold clients suffices: the paths go quiet 100 ms before the verdict,
# the hedge waits 3 round trips (30 ms)
check "lr-trickle: the verdict took the hedge as the plain fetch" \
  grep -qs "the hedge is the plain fetch" "$WORK"/lr-trickle/{curl,wget,mhttp}/shim/shim.log
# the warm store remembers an object whose range answers trickled or were reset (each row's
# URLs are tagged per client, so here one URL twice): the next process asks it whole at once,
# with the first one's bytes and exit status
for f in lr-trickle reset; do
  for i in 1 2; do
    env LD_PRELOAD="$SHIM" MHTTP_LOG=info MHTTP_LOG_FILE="$WORK/again-$f.$i.log" MHTTP_DNS_lte0="$TESTBED_LTE0_DNS" \
      timeout 30 curl -sS -o "$WORK/again-$f.$i.bin" "$U?f=$f&t=again" 2>/dev/null
    echo $? >"$WORK/again-$f.$i.rc"
  done
  check "$f, again: the first download learned that the object's ranges disagree" \
    grep -q "that object's range answers" "$WORK/again-$f.1.log"
  check "$f, again: the second asked it whole at once" grep -q "here before: asked whole" "$WORK/again-$f.2.log"
  check "$f, again: the same exit status and bytes" \
    test "$(cat "$WORK/again-$f.1.rc") $(fx_sha "$WORK/again-$f.1.bin")" = "$(cat "$WORK/again-$f.2.rc") $(fx_sha "$WORK/again-$f.2.bin")"
done
fx_finish
