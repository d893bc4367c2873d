#!/bin/bash
# Two engines in one process (tests/harness/two_engines.c, no shim): engine A on wifi0+lte0, engine B on dsl0, one 4 MiB object each at the same time; both byte-exact, each engine's stats and metrics name its own interfaces only.
source "$(dirname "$0")/lib.sh"
mh_in_testbed tri

BIN=$MHTTP_BUILD_DIR/tests/harness/mhttp_two_engines
F=files/4194304.bin
SIZE=4194304
[ -x "$BIN" ] || { fail "$BIN is not built"; mh_finish; }

# In the Asan tree the program is ours, so its leaks are judged (mh_san_check reads the report)
SAN_OPTS=${ASAN_OPTIONS:-}
[ -n "$MH_SAN_RT" ] && SAN_OPTS=${ASAN_OPTIONS/detect_leaks=0/detect_leaks=1}

ASAN_OPTIONS=$SAN_OPTS MHTTP_LOG=${MH_TEST_LOG:-} timeout 120 "$BIN" "$TESTBED_ORIGIN_A" "$TESTBED_HOST_A" "/$F" \
  wifi0,lte0 "$TESTBED_WIFI0_ADDR" "$WORK/a.bin" "$WORK/a.stats" \
  dsl0 "$TESTBED_DSL0_ADDR" "$WORK/b.bin" "$WORK/b.stats" >"$WORK/out" 2>"$WORK/err"; rc=$?
cat "$WORK/out"
head -20 "$WORK/err"
check "both engines answered, each one's metrics name its interfaces only (rc $rc)" [ "$rc" = 0 ]
check "engine A: $SIZE bytes exact" [ "$(mh_sha "$WORK/a.bin")" = "$(mh_sum $F)" ]
check "engine B: $SIZE bytes exact" [ "$(mh_sha "$WORK/b.bin")" = "$(mh_sum $F)" ]

# paths IFACES STATS: the one split line of STATS is a whole object over exactly IFACES (a
# comma list), every one of them carrying bytes
paths() {
  "$PY" - "$1" "$2" "$SIZE" <<'PY'
import json, sys
want, lines, size = sys.argv[1].split(","), open(sys.argv[2]).read().splitlines(), int(sys.argv[3])
d = json.loads(lines[-1]) if len(lines) == 1 else {}
b = {p["iface"]: p["bytes"] for p in d.get("paths", [])}
print("   %s: %s" % (sys.argv[2].rsplit("/", 1)[-1], b))
sys.exit(0 if d.get("result") == "ok" and d.get("size") == size and sorted(b) == sorted(want)
         and all(v > 0 for v in b.values()) and sum(b.values()) == size else 1)
PY
}
check "engine A split over wifi0 and lte0 only" paths wifi0,lte0 "$WORK/a.stats"
check "engine B fetched over dsl0 only" paths dsl0 "$WORK/b.stats"
mh_finish
