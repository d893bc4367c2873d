#!/bin/bash
# Range splitting against the testbed's misbehaving origins (demo): the program gets exactly the bytes, or the error, it gets without the shim; never a foreign byte.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo

f=files/1048576.bin
TRUE=$TESTBED_FILES_DIR/$f
# prefix FILE: FILE is a prefix of the true bytes of $f (a failed download never holds a foreign byte)
prefix() { local n; n=$(stat -c %s "$1" 2>/dev/null || echo 0); cmp -s -n "$n" "$1" "$TRUE"; }

# -- origins whose plain answer is deterministic: wget and curl byte-exact vs without the shim
for h in norange liar novalidators chunked gzip cdn-liar multi-norange multi; do
  MH_LOG_LEVEL=debug mh_pair "wget-$h" timeout 60 wget -q -O out.bin "http://$h.test/$f"
  check "wget $h.test: same bytes as without the shim" eval 'mh_same_rc && [ "$PLAIN_RC" = 0 ] && mh_same_file out.bin && mh_taken 1'
  mh_pair "curl-$h" timeout 60 curl -sS -o out.bin "http://$h.test/$f"
  check "curl $h.test: same bytes as without the shim" eval 'mh_same_rc && [ "$PLAIN_RC" = 0 ] && mh_same_file out.bin'
done
# the probe's answers were handled as DESIGN says: norange relayed, chunked/gzip managed
check "norange.test: probe answer relayed" grep -q "probe answered 200: relay" "$WORK/wget-norange/shim.log"
check "chunked.test: managed (de-chunked, rewritten)" grep -q "probe 206, total 1048576" "$WORK/wget-chunked/shim.log"
check "gzip.test: managed on the gzip bytes" grep -q "VERIFY -> MANAGED" "$WORK/wget-gzip/shim.log"
check "multi.test: the host's other address joined as a replica (strong validator)" grep -q "replica 10.210.[12].10 of multi.test joins" "$WORK/wget-multi/shim.log"
check "novalidators.test: not split without a strong validator (the program's request went out)" eval 'grep -q "no-strong-validator" "$WORK/wget-novalidators/shim.log" && ! grep -q "joins" "$WORK/wget-novalidators/shim.log"'
check "liar.test served alone is consistent (distinct host: nothing mixes)" eval '! cmp -s "$WORK/wget-liar/shim/out.bin" "$TRUE"'

# -- changing.test: every request is a new version; the program must get one whole version
MH_LOG_LEVEL=debug mh_pair changing timeout 60 wget -q -O out.bin "http://changing.test/$f"
one_version() { "$PY" - "$1" "$TRUE" <<'PY'
import sys
a = open(sys.argv[1], 'rb').read(); b = open(sys.argv[2], 'rb').read()
sys.exit(0 if len(a) == len(b) and len({x ^ y for x, y in zip(a, b)}) == 1 else 1)
PY
}
check "changing.test: one whole version, no mixed bytes" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] && one_version "$MH_D/shim/out.bin" &&
  grep -q "inconsistent-restart\|for another representation" "$MH_D/shim.log"'
mh_pair changing-curl timeout 60 curl -sS -o out.bin "http://changing.test/$f"
check "changing.test with curl: one whole version" eval 'mh_same_rc && one_version "$MH_D/shim/out.bin"'

# -- reset.test (RST after 64 KiB of every answer): wget retries until done, with and without
g=files/262144.bin
mh_pair reset timeout 120 wget -q --waitretry=0 --tries=20 -O out.bin "http://reset.test/$g"
check "reset.test: wget ends with the same bytes" eval 'mh_same_rc && [ "$PLAIN_RC" = 0 ] && mh_same_file out.bin'
# curl does not retry: without the shim it fails after 64 KiB; with it the failed range is
# fetched again on a fresh connection. Either way no byte may be foreign.
TRUE=$TESTBED_FILES_DIR/$g
mh_pair reset-curl timeout 120 curl -sS -o out.bin "http://reset.test/$g"
check "reset.test: curl gets the exact file or a true prefix with an error" eval '[ "$PLAIN_RC" != 0 ] && prefix "$MH_D/plain/out.bin" &&
  if [ "$SHIM_RC" = 0 ]; then cmp -s "$MH_D/shim/out.bin" "$TRUE"; else prefix "$MH_D/shim/out.bin"; fi'

# -- stall.test (silence after 64 KiB of every answer): wget times out without the shim; with
# it a stalled range is re-assigned after max(1 s, 8 rtl), so it may finish. Never a foreign byte.
mh_pair stall timeout 120 wget -q --timeout=3 --tries=2 -O out.bin "http://stall.test/$g"
check "stall.test: exact file or a true prefix with an error" eval '[ "$PLAIN_RC" != 0 ] && prefix "$MH_D/plain/out.bin" &&
  if [ "$SHIM_RC" = 0 ]; then cmp -s "$MH_D/shim/out.bin" "$TRUE"; else prefix "$MH_D/shim/out.bin"; fi'

# -- a hiccup (stall.test?once: the first answer longer than 64 KiB falls silent for 3 s, then
# sends the rest, as a lost segment's retransmission timeout does): without the shim wget waits;
# with it the stalled connection's bytes are asked again elsewhere (mh__rescue). Byte-exact.
MH_LOG_LEVEL=debug mh_pair hiccup timeout 60 sh -c 'exec wget -q -O out.bin "http://stall.test/$0?after=65536&stall=3&once=$(basename "$PWD")-$$"' "$f"
check "stall.test?once: the exact file with and without the shim" eval 'mh_same_rc && [ "$PLAIN_RC" = 0 ] &&
  cmp -s "$MH_D/shim/out.bin" "$TESTBED_FILES_DIR/$f" && mh_same_file out.bin'
check "stall.test?once: the stalled bytes were asked again on another connection" grep -q "asked again on" "$MH_D/shim.log"

# -- a pause past the stall limit just after a crumb (stall.test?once&crumb: 1 MiB of an answer,
# 1 byte 0.3 s into 4 s of silence, as a server that meters each answer holds a long range's
# last bytes): that connection ends at its stall, and its path takes part again in the rest of
# 32 MiB (asks ranges, or is re-probed and left to admission). Before, a path whose last byte was younger than 1 s at the stall was left behind
# (nginx limit_rate, 128 MiB: 6.4 MB on that path, 61 s instead of 41 s, 2 of 5 runs).
h=files/33554432.bin
MH_LOG_LEVEL=debug mh_pair pause timeout 120 sh -c \
  'exec wget -q -O out.bin "http://stall.test/$0?after=1048576&stall=4&crumb=1&once=$(basename "$PWD")-$$"' "$h"
check "stall.test?once&crumb: the exact file with and without the shim" eval 'mh_same_rc && [ "$PLAIN_RC" = 0 ] &&
  cmp -s "$MH_D/shim/out.bin" "$TESTBED_FILES_DIR/$h" && mh_same_file out.bin'
check "stall.test?once&crumb: the path of the stalled connection took part again (ranges or a re-probe)" mh_stalled_came_back "$MH_D/shim.log"

mh_finish
