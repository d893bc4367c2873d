#!/bin/bash
# HTTP behaviours through the shim, each compared with the same program run without it: keep-alive, wget -p, HEAD, POST, 100-continue, redirect, chunked, 304, 404, refused, close and reset mid-body.
source "$(dirname "$0")/lib.sh"
mh_in_testbed lan

mh_local_origin 8080 || exit 1
A=$TESTBED_URL_A
f1=files/16384.bin f2=files/1048576.bin f3=files/65536.bin

# -- several URLs on one keep-alive connection (curl), served as three transfers of one session
MH_LOG_LEVEL=debug mh_pair keepalive curl -sS "$A/$f1" -o 1.bin "$A/$f2" -o 2.bin "$A/$f3" -o 3.bin
done_n=$(grep -c -- "-> DONE" "$MH_D/shim.log")
check "curl 3 URLs, one connection" eval '[ "$(mh_sha $MH_D/shim/1.bin)" = "$(mh_sum $f1)" ] &&
  [ "$(mh_sha $MH_D/shim/2.bin)" = "$(mh_sum $f2)" ] && [ "$(mh_sha $MH_D/shim/3.bin)" = "$(mh_sum $f3)" ] &&
  mh_same_rc && [ "$TAKEN" = 1 ] && [ "$done_n" = 3 ]'

# -- wget -p: a page and its objects, keep-alive per host
MH_LOG_LEVEL=debug mh_pair wget-p wget -q -p "$TESTBED_PAGE_MIXED"
done_n=$(grep -c -- "-> DONE" "$MH_D/shim.log")
check "wget -p page (same tree, $done_n transfers over $TAKEN connections)" eval 'mh_same_rc && [ "$PLAIN_RC" = 0 ] &&
  [ "$(find "$MH_D/shim" -type f | wc -l)" -gt 5 ] &&
  diff -r "$MH_D/plain" "$MH_D/shim" >/dev/null && mh_taken 1 && [ "$done_n" -gt "$TAKEN" ]'

# -- TCP Fast Open (curl --tcp-fastopen; wget2 does it by default): connected first, taken over
mh_pair tfo curl -sS --tcp-fastopen -o out.bin "$A/$f2"
check "curl --tcp-fastopen" eval 'mh_same_rc && [ "$(mh_sha $MH_D/shim/out.bin)" = "$(mh_sum $f2)" ] && mh_taken 1'

# -- pipelined requests (one write, three requests) against nginx
mh_pair pipeline "$PY" "$HERE/forker.py" pipeline a.test /files/16384.bin /files/1048576.bin /files/1.bin
check "pipelined requests (same byte stream)" eval 'mh_same_rc && mh_same_stdout && grep -q "responses 3" "$MH_D/shim.out" && mh_taken 1'

# -- several connections at once: aria2c split download, curl --parallel, wget -p -H
mh_pair aria2-split aria2c -q -x 4 -s 4 -k 1M --allow-overwrite=true -d . -o out.bin "$A/files/33554432.bin"
check "aria2c -x4 -s4 (ranges over 4 connections)" eval 'mh_same_rc && [ "$(mh_sha $MH_D/shim/out.bin)" = "$(mh_sum files/33554432.bin)" ] && mh_taken 2'
nobj=0
while read -r u; do
  nobj=$((nobj + 1))
  printf 'url = "%s"\noutput = "o%03d.bin"\n' "$u" "$nobj"
done < "$TESTBED_PAGE_MIXED2_OBJECTS" > "$WORK/parallel.cfg"
mh_pair curl-parallel curl -sS --parallel --parallel-max 8 -K "$WORK/parallel.cfg"
check "curl --parallel page objects ($nobj)" eval 'mh_same_rc && [ "$PLAIN_RC" = 0 ] && [ "$(ls "$MH_D/shim" | wc -l)" = "$nobj" ] && diff -r "$MH_D/plain" "$MH_D/shim" >/dev/null && mh_taken 4'
mh_pair wget-pH wget -q -p -H "$TESTBED_PAGE_MIXED"
check "wget -p -H (objects on four hosts)" eval 'mh_same_rc && [ "$PLAIN_RC" = 0 ] && [ "$(find "$MH_D/shim" -type f | wc -l)" -gt 20 ] && diff -r "$MH_D/plain" "$MH_D/shim" >/dev/null && mh_taken 4'

# -- HEAD
mh_pair head sh -c "curl -sS -I '$A/$f2' | grep -v '^Date:'"
check "HEAD (same header block)" eval 'mh_same_rc && mh_same_stdout && grep -q "Content-Length: 1048576" "$MH_D/shim.out" && mh_taken 1'

# -- POST with a body, plain and with Expect: 100-continue (to the local origin, which echoes sha256)
head -c 3000000 /dev/urandom > "$WORK/body.bin"
want="3000000 $(mh_sha "$WORK/body.bin")"
mh_pair post curl -sS --data-binary @"$WORK/body.bin" -H 'Expect:' http://127.0.0.1:8080/post
check "POST 3 MB body" eval 'mh_same_rc && mh_same_stdout && [ "$(cat $MH_D/shim.out)" = "$want" ] && mh_taken 1'
mh_pair post100 curl -sS --data-binary @"$WORK/body.bin" -H 'Expect: 100-continue' http://127.0.0.1:8080/post
check "POST with Expect: 100-continue" eval 'mh_same_rc && mh_same_stdout && [ "$(cat $MH_D/shim.out)" = "$want" ] && mh_taken 1'
mh_pair post-py "$PY" -c 'import sys, urllib.request; print(urllib.request.urlopen("http://127.0.0.1:8080/post", data=open(sys.argv[1], "rb").read()).read().decode().strip())' "$WORK/body.bin"
check "POST python urllib" eval 'mh_same_rc && mh_same_stdout && [ "$(cat $MH_D/shim.out)" = "$want" ] && mh_taken 1'

# -- redirect (302 from the local origin to replica A)
mh_pair redirect-curl curl -sSL -o out.bin "http://127.0.0.1:8080/redirect?$A/$f3"
check "redirect (curl -L)" eval 'mh_same_rc && [ "$(mh_sha $MH_D/shim/out.bin)" = "$(mh_sum $f3)" ] && mh_taken 2'
mh_pair redirect-wget wget -q -O out.bin "http://127.0.0.1:8080/redirect?$A/$f3"
check "redirect (wget)" eval 'mh_same_rc && [ "$(mh_sha $MH_D/shim/out.bin)" = "$(mh_sum $f3)" ] && mh_taken 2'

# -- chunked responses
for prog in curl wget; do
  case $prog in
    curl) mh_pair chunked-$prog curl -sS -o out.bin "$TESTBED_URL_CHUNKED/$f2" ;;
    wget) mh_pair chunked-$prog wget -q -O out.bin "$TESTBED_URL_CHUNKED/$f2" ;;
  esac
  check "chunked ($prog)" eval 'mh_same_rc && [ "$(mh_sha $MH_D/shim/out.bin)" = "$(mh_sum $f2)" ] && mh_taken 1'
done

# -- 304 Not Modified (files have mtime 1700000000)
mh_pair 304 curl -sS -z 'Mon, 01 Jan 2035 00:00:00 GMT' -o out.bin -w '%{http_code}\n' "$A/$f2"
check "304 (curl -z)" eval 'mh_same_rc && mh_same_stdout && [ "$(cat $MH_D/shim.out)" = 304 ] && mh_taken 1'

# -- 404
mh_pair 404-curl curl -sS -o out.html -w '%{http_code}\n' "$A/no/such/file"
check "404 (curl)" eval 'mh_same_rc && mh_same_stdout && mh_same_file out.html && [ "$(cat $MH_D/shim.out)" = 404 ] && mh_taken 1'
mh_pair 404-wget wget -q -O out.html "$A/no/such/file"
check "404 (wget exit 8)" eval 'mh_same_rc && [ "$SHIM_RC" = 8 ] && mh_taken 1'

# -- connection refused (nothing listens on 127.0.0.1:80 in the client namespace)
mh_pair refused-curl curl -sS http://127.0.0.1/
check "refused (curl: same exit code and message)" eval 'mh_same_rc && [ "$SHIM_RC" = 7 ] && mh_same_stderr'
mh_pair refused-wget wget -t 1 -q -O out http://127.0.0.1/
check "refused (wget: same exit code)" eval 'mh_same_rc && [ "$SHIM_RC" = 4 ]'
mh_pair refused-py sh -c "$PY -c 'import urllib.request; urllib.request.urlopen(\"http://127.0.0.1/\")' 2>&1 | tail -1"
check "refused (python: same exception)" eval 'mh_same_stdout && grep -q "Connection refused" "$MH_D/shim.out"'

# -- the server closes mid-body (FIN after 1234 of 10000 bytes)
mh_pair closemid-curl curl -sS -o out.bin http://127.0.0.1:8080/closemid
check "close mid-body (curl: same exit code and message)" eval 'mh_same_rc && [ "$SHIM_RC" = 18 ] && mh_same_stderr && mh_same_file out.bin && mh_taken 1'
mh_pair closemid-wget wget -t 1 -q -O out.bin http://127.0.0.1:8080/closemid
check "close mid-body (wget: same exit code, same bytes)" eval 'mh_same_rc && mh_same_file out.bin && mh_taken 1'

# -- the server resets mid-body (RST after 100000 bytes): ECONNRESET, not a clean EOF. This is
# the relay's behaviour (splitting off): a split object re-fetches a reset range on another
# connection instead (test_split_origins.sh covers that)
mh_pair reset-curl env MHTTP_SPLIT=off curl -sS -o out.bin "$TESTBED_URL_RESET/$f2?after=100000"
check "reset mid-body (curl: same exit code and message)" eval 'mh_same_rc && [ "$SHIM_RC" = 56 ] && mh_same_stderr && mh_taken 1'
mh_pair reset-py env MHTTP_SPLIT=off sh -c "$PY -c 'import urllib.request; urllib.request.urlopen(\"$TESTBED_URL_RESET/$f2?after=100000\").read()' 2>&1 | tail -1"
check "reset mid-body (python: same exception)" eval 'mh_same_stdout && grep -q ConnectionResetError "$MH_D/shim.out" && mh_taken 1'
mh_pair reset-wget env MHTTP_SPLIT=off wget -t 1 -q -O out.bin "$TESTBED_URL_RESET/$f2?after=100000"
check "reset mid-body (wget: same exit code)" eval 'mh_same_rc && [ "$SHIM_RC" = 4 ] && mh_taken 1'

mh_finish
