#!/bin/bash
# The fault matrix, part 1 (demo): origins that break later ranges, the probe or the response head; curl, wget and python http.client (two objects on one keep-alive connection) without and with the shim.
# Rows and verdicts: faults_lib.sh; the faults: bench/testbed/README.md ("The fault matrix");
# the table of outcomes: tests/README.md. One row by hand: FAULT_ROWS=lr-shift bash THIS.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo
source "$HERE/faults_lib.sh"

U=http://fault.test/$FX_F
# -- later ranges: plain programs never send one, so the shim must end exactly as plain does
for f in lr-shift lr-total lr-round-up lr-round-down lr-overlong lr-short lr-200 lr-416 lr-429 lr-403 \
         lr-multipart lr-trickle; do
  fx_row "$f" "$U?f=$f"
done

# -- the probe (Range: bytes=0-N) answered wrongly
head -c 6 "$TESTBED_FILES_DIR/files/16384.bin" >"$WORK/six.bin"
head -c 6 "$TESTBED_FILES_DIR/files/32768.bin" >"$WORK/six2.bin"
fx_row pr-overclaim "http://fault.test/files/16384.bin?f=pr-overclaim&size=6" path=files/16384.bin \
  path2=files/32768.bin expect="$WORK/six.bin" expect2="$WORK/six2.bin"
for f in pr-403 pr-200cr; do
  fx_row "$f" "$U?f=$f"
done

# -- heads and framing on every answer (plain programs meet these too)
for f in hugehead manyheads dupcl chunkedcl; do
  fx_row "$f" "$U?f=$f" plain=any
done
# python's http.client takes a 103 for the final answer (it skips only 100) and closes its
# buffered reader with it: whether the real answer was in that buffer (lost: the next
# response is garbage, exit 1) or still in the socket (read as the next object's answer,
# exit 0) depends on how the two arrive, so plain python itself ends either way from run to
# run (2 of 8 plain runs in a row exited 1 on a busy machine). curl and wget read 1xx answers
# correctly.
fx_row hints "$U?f=hints" plain=any clients="curl wget"
fx_finish
