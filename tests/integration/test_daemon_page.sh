#!/bin/bash
# mhttp daemon's status page: its headers and files over curl (CSP, no framing, no caching, no secret in them), then the page in a real headless Chromium (daemon_page.py): locked without the secret, a URL added from its form completes byte-exact while its per-path rows show wifi0 and lte0, Pause/Resume/Remove act, data shown as text.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo --set wifi0.rate=10mbit --set lte0.rate=10mbit

MHTTP=$MHTTP_BUILD_DIR/cli/mhttp
PORT=16810
SECRET=pg-$$-$RANDOM
BIG=files/33554432.bin
SLOW=files/33554432.bin  # the same file again (saved as 33554432.1.bin), on slowed links
U=http://127.0.0.1:$PORT
mkdir -p "$WORK/dl" "$WORK/home"

for p in /usr/bin/chromium /usr/bin/chromedriver; do
  [ -x "$p" ] || { fail "$p is missing (scripts/setup.sh installs chromium, chromium-driver, python3-selenium)"; mh_finish; }
done

"$MHTTP" daemon --enable-rpc --rpc-listen-port=$PORT --rpc-secret="$SECRET" -d "$WORK/dl" >"$WORK/daemon.log" 2>&1 &
DPID=$!
MH_BG_PIDS+=("$DPID")
check "mhttp daemon listens on $PORT" mh_wait_listen 127.0.0.1 $PORT || mh_finish

echo "== the page's files and headers (curl)"
curl -s -m 5 -D "$WORK/h" -o "$WORK/page.html" "$U/"
check "GET /: 200, text/html" eval 'grep -q "^HTTP/1.1 200" "$WORK/h" && grep -qi "^Content-Type: text/html" "$WORK/h"'
check "GET /: Content-Security-Policy without inline script, frame-ancestors 'none'" eval \
  'grep -i "^Content-Security-Policy:" "$WORK/h" | grep -q "script-src '"'self'"';.*frame-ancestors '"'none'"'" &&
   ! grep -qi "unsafe-inline" "$WORK/h"'
check "GET /: X-Frame-Options DENY, Cache-Control no-store, nosniff" eval \
  'grep -qi "^X-Frame-Options: DENY" "$WORK/h" && grep -qi "^Cache-Control: no-store" "$WORK/h" &&
   grep -qi "^X-Content-Type-Options: nosniff" "$WORK/h"'
check "GET /status is the same page" eval 'curl -s -m 5 "$U/status?x=1" | cmp -s - "$WORK/page.html"'
check "GET /status.js and /status.css: the sources' bytes" eval \
  'curl -s -m 5 "$U/status.js" | cmp -s - "$MHTTP_SOURCE_DIR/cli/daemon/page.js" &&
   curl -s -m 5 "$U/status.css" | cmp -s - "$MHTTP_SOURCE_DIR/cli/daemon/page.css"'
check "the page's files hold no secret" eval '! curl -s -m 5 "$U/" "$U/status.js" | grep -q -- "$SECRET"'
check "GET of another path: 404" eval '[ "$(curl -s -m 5 -o /dev/null -w "%{http_code}" "$U/status.html")" = 404 ]'

echo "== the page in headless Chromium"
# Chromium writes its profile and caches under HOME; the test's own, dropped with $WORK.
# MH_PAGE_SHOT=FILE.png keeps a screenshot of the page while the download runs.
HOME=$WORK/home timeout 240 "$PY" -u "$HERE/daemon_page.py" --port $PORT --secret "$SECRET" \
  --url "$TESTBED_URL_A/$BIG" --sha "$(mh_sum $BIG)" --slow-url "$TESTBED_URL_A/$SLOW" --dir "$WORK/dl" \
  --profile "$WORK/home/chromium" --testbed "$TESTBED" ${MH_PAGE_SHOT:+--shot "$MH_PAGE_SHOT"} >"$WORK/page.out" 2>&1; rc=$?
while read -r l; do
  echo "$l"
  case $l in "ok "*) pass >/dev/null ;; FAIL*) fail >/dev/null ;; esac
done <"$WORK/page.out"
check "the browser test ran to its end (exit $rc)" [ $rc = 0 ] || tail -20 "$WORK/page.out"
check "daemon log: no sanitizer report" eval '! grep -q "ERROR: .*Sanitizer\|runtime error:" "$WORK/daemon.log"'
mh_finish
