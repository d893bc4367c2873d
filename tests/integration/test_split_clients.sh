#!/bin/bash
# Everyday clients of issue 19 on two equal links: Connection: close (urllib), HTTP/1.0, resumes and the program's own ranges, segmenting clients: byte-exact, same exit status and head as without the shim, both paths carrying bytes where a split is expected; a 200 (range ignored) or 416 reaches the program unchanged.
source "$(dirname "$0")/lib.sh"
mh_in_testbed sym-high --set wifi0.rate=100mbit --set lte0.rate=100mbit

A=$TESTBED_URL_A
N=33554432
f=files/$N.bin
TRUE=$TESTBED_FILES_DIR/$f
URL=$A/$f

# span_sum FIRST LAST: sha256 of bytes FIRST..LAST of the 32 MiB file
span_sum() { tail -c +$(($1 + 1)) "$TRUE" | head -c $(($2 - $1 + 1)) | sha256sum | cut -d' ' -f1; }
# split_both NAME SIZE [FIRST]: the shim run's MHTTP_STATS has an object of SIZE bytes (its span
# starting at FIRST when given) that ended ok with wifi0 and lte0 each carrying at least an
# eighth of it (equal links; the probe alone, as before issue 19 for urllib, is 32 KiB)
split_both() {
  "$PY" - "$WORK/$1/stats" "$2" "${3:-}" <<'PY'
import json, sys
path, size, first = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    lines = [json.loads(l) for l in open(path)]
except OSError:
    lines = []
for d in lines:
    b = {p["iface"]: p["bytes"] for p in d["paths"]}
    span_ok = (d.get("span", [0])[0] == int(first)) if first else "span" not in d
    if d["result"] == "ok" and d["size"] == size and span_ok and b.get("wifi0", 0) >= size // 8 and \
            b.get("lte0", 0) >= size // 8 and sum(b.values()) == size:
        sys.exit(0)
print("   stats:", [(d["size"], d["result"], d.get("span"), [p["bytes"] for p in d["paths"]]) for d in lines])
sys.exit(1)
PY
}
# run NAME CMD...: mh_pair with MHTTP_STATS in $WORK/NAME/stats (ignored without the shim)
run() { local n=$1; shift; mh_pair "$n" env MHTTP_STATS="$WORK/$n/stats" "$@"; }
# same_head FILE: the response heads (curl -D FILE) agree but for Date and, in a 200 rewritten
# from the probe's 206, Accept-Ranges (nginx sends it in a 200, not in a 206; the rewrite adds
# no line the origin did not send)
same_head() {
  local skip='^(date|accept-ranges):'
  cmp -s <(grep -viE "$skip" "$MH_D/plain/$1") <(grep -viE "$skip" "$MH_D/shim/$1") ||
    { echo "   heads differ:"; diff "$MH_D/plain/$1" "$MH_D/shim/$1" | head -8; return 1; }
}
WHOLE=$(mh_sum "$f")

# -- Connection: close (python3 urllib.request) and HTTP/1.0 (curl --http1.0): the program's
#    connection carries the probe, its path's share goes on the engine's own connections
run urllib timeout 120 "$PY" -c 'import sys, urllib.request as u; open("out.bin", "wb").write(u.urlopen(sys.argv[1]).read())' "$URL"
check "urllib (Connection: close) 32 MiB: exact, both paths" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] &&
  [ "$(mh_sha "$MH_D/shim/out.bin")" = "$WHOLE" ] && split_both urllib $N'
run http10 timeout 120 curl -sS --http1.0 -D head.txt -o out.bin "$URL"
check "curl --http1.0 32 MiB: exact, the origin's head, both paths" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] &&
  [ "$(mh_sha "$MH_D/shim/out.bin")" = "$WHOLE" ] && same_head head.txt && grep -q "^Connection: close" "$MH_D/shim/head.txt" &&
  split_both http10 $N'

# -- resuming: wget -c and curl -C - of a file cut at 7 MB ask bytes=7000000-
run wgetc timeout 120 sh -c 'head -c 7000000 "$0" >'"$N"'.bin && exec wget -q -c "$1"' "$TRUE" "$URL"
check "wget -c from 7 MB: exact, its span on both paths" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] &&
  [ "$(mh_sha "$MH_D/shim/$N.bin")" = "$WHOLE" ] && split_both wgetc $((N - 7000000)) 7000000'

run curlc timeout 120 sh -c 'head -c 7000000 "$0" >out.bin && exec curl -sS -C - -o out.bin "$1"' "$TRUE" "$URL"
check "curl -C - from 7 MB: exact, its span on both paths" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] &&
  [ "$(mh_sha "$MH_D/shim/out.bin")" = "$WHOLE" ] && split_both curlc $((N - 7000000)) 7000000'

# -- the program's own ranges: the origin's 206 for exactly that span, head included
run range timeout 120 curl -sS -r 0-24999999 -D head.txt -o out.bin "$URL"
check "curl -r 0-24999999: exact span and 206 head, both paths" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] &&
  [ "$(mh_sha "$MH_D/shim/out.bin")" = "$(span_sum 0 24999999)" ] && same_head head.txt &&
  grep -q "^Content-Range: bytes 0-24999999/$N" "$MH_D/shim/head.txt" && split_both range 25000000 0'
run range_open timeout 120 curl -sS -r 5000000- -D head.txt -o out.bin "$URL"
check "curl -r 5000000-: exact span and 206 head, both paths" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] &&
  [ "$(mh_sha "$MH_D/shim/out.bin")" = "$(span_sum 5000000 $((N - 1)))" ] && same_head head.txt &&
  split_both range_open $((N - 5000000)) 5000000'
# If-Range: the current ETag gets the span (every range of ours carries it); another one the whole 200
etag=$(curl -sSI "$URL" | tr -d '\r' | sed -n 's/^ETag: //Ip')
run ifr timeout 120 curl -sS -r 1000000-20999999 -H "If-Range: $etag" -D head.txt -o out.bin "$URL"
check "curl -r with the current If-Range: exact span, both paths" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] &&
  [ "$(mh_sha "$MH_D/shim/out.bin")" = "$(span_sum 1000000 20999999)" ] && same_head head.txt && split_both ifr 20000000 1000000'
MH_LOG_LEVEL=debug run ifr_old timeout 120 curl -sS -r 1000000-20999999 -H 'If-Range: "old"' -D head.txt -o out.bin "$URL"
check "curl -r with a stale If-Range: the origin's 200, relayed" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] &&
  [ "$(mh_sha "$MH_D/shim/out.bin")" = "$WHOLE" ] && same_head head.txt && grep -q "probe answered 200" "$MH_D/shim.log"'

# -- segmenting clients: exact (their gain is bench/split's business)
run axel timeout 120 axel -q -n 4 -o out.bin "$URL"
check "axel -n 4: exact" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] && [ "$(mh_sha "$MH_D/shim/out.bin")" = "$WHOLE" ]'
run wget2 timeout 120 wget2 -q --no-robots --chunk-size=4M -O out.bin "$URL"
check "wget2 --chunk-size=4M: exact" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] && [ "$(mh_sha "$MH_D/shim/out.bin")" = "$WHOLE" ]'

# -- what the origin says about a range reaches the program unchanged
MH_LOG_LEVEL=debug run norange timeout 120 curl -sS -r 0-24999999 -D head.txt -o out.bin "http://norange.test/$f"
check "norange.test, curl -r: its 200, relayed unchanged" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] &&
  [ "$(mh_sha "$MH_D/shim/out.bin")" = "$WHOLE" ] && same_head head.txt && grep -q "^HTTP/1.1 200" "$MH_D/shim/head.txt" &&
  grep -q "probe answered 200" "$MH_D/shim.log"'
run past_end timeout 60 curl -sS -r 40000000- -D head.txt -o out.bin "$URL"
check "curl -r past the end: the origin's 416, unchanged" eval 'mh_same_rc && same_head head.txt &&
  grep -q "^HTTP/1.1 416" "$MH_D/shim/head.txt" && mh_same_file out.bin'
run done_c timeout 60 sh -c 'cp "$0" '"$N"'.bin && exec wget -c "$1" 2>&1 | grep -c "fully retrieved"' "$TRUE" "$URL"
check "wget -c of a whole file: the 416, wget says it is complete" eval 'mh_same_rc && mh_same_stdout &&
  [ "$(cat "$MH_D/shim.out")" = 1 ] && [ "$(mh_sha "$MH_D/shim/$N.bin")" = "$WHOLE" ]'

mh_finish
