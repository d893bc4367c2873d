#!/bin/bash
# Capacity of a slow-start-limited path (issue 7): on asym, lte0 (100 ms / 20 Mbit/s) carries only 100 KiB objects, each on a fresh connection in its own process, and its max_rate must still read the link (packet trains), not the slow-start rounds.
#
#   tests/integration/test_metrics_slowstart.sh   (root; MHTTP_BUILD_DIR as for every integration test)
#   MHTTP_SS_RUNS=5  MHTTP_SS_TOL=12  to vary it.
#
# Each run is one `wget --bind-address=<lte0>` of one 100 KiB object under the shim with
# MHTTP_POLICY=single:lte0 and the host-wide store off, so its metrics come from that one
# object alone: rounds of 10, 17 and 33 segments, one per 100 ms (the 100 ms buckets read
# 0.26-0.48 MB/s of it). Expected: goodput = shaped rate × 1448/1500 (linkemu counts L3
# bytes) or × 1448/1514 (netem, tbf). Pass: the median run within MHTTP_SS_TOL % (default
# 12) and no run above it by more than the tolerance (an over-read is the one error a policy
# cannot survive: it sends objects to a link that cannot carry them). A single low run is not
# held against it: a single run read -70.5 % in one CI round (a packet train broken up on a
# loaded 2-core runner); an estimator that read the slow-start rounds puts the median near -80 %.
source "$(dirname "$0")/lib.sh"
if [ -z "${TESTBED_ID:-}" ]; then
  # Rates are timing measurements: wait for other benchmarks (bounded), as metrics_accuracy does.
  [ "$(id -u)" -eq 0 ] || { echo "FAIL: needs root (network namespaces)"; exit 1; }
  [ -f "$SHIM_LIB" ] || { echo "FAIL: $SHIM_LIB is not built"; exit 1; }
  exec 9>/tmp/mhttp-bench.lock
  flock -n 9 || { echo "waiting up to 120 s for /tmp/mhttp-bench.lock (another benchmark is measuring)"
    flock -w 120 9 || echo "warning: measuring without the lock; rates may be off if the other benchmark loads the CPU"; }
  "$PY" "$TESTBED" run asym -- /bin/bash "$0" 9>&-
  exit $?
fi
mh_in_testbed asym

RUNS=${MHTTP_SS_RUNS:-5}
TOL=${MHTTP_SS_TOL:-12}
case $TESTBED_SHAPER in linkemu) WIRE=1500 ;; *) WIRE=1514 ;; esac
mapfile -t OBJS < <(grep 'a\.test/' "$TESTBED_PAGE_MANY100K_OBJECTS" | head -"$RUNS")
[ "${#OBJS[@]}" -eq "$RUNS" ] || { echo "FAIL: fewer than $RUNS a.test objects in many100k"; exit 1; }

rates=()
for k in $(seq 1 "$RUNS"); do
  u=${OBJS[$((k - 1))]}
  want=$(mh_sum "pages/many100k/${u##*/}")
  timeout -k 5 60 env LD_PRELOAD="$SHIM" MHTTP_IFACES="${TESTBED_IFACES// /,}" MHTTP_POLICY=single:lte0 \
    MHTTP_METRICS="$WORK/r$k.metrics" wget -q -O "$WORK/r$k.bin" --bind-address="$TESTBED_LTE0_ADDR" "$u"
  rc=$?
  check "run $k: ${u##*/} (exit $rc), sha256" [ "$rc" = 0 ] && [ -n "$want" ] && [ "$(mh_sha "$WORK/r$k.bin")" = "$want" ]
  r=$("$PY" -c '
import json, sys
v = 0
for line in open(sys.argv[1]):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if o.get("iface") == "lte0":
        v = o.get("max_rate_Bps", 0)
print(int(v))' "$WORK/r$k.metrics" 2>/dev/null)
  rates+=("${r:-0}")
done

"$PY" - "$TOL" "$WIRE" "${rates[@]}" <<'PYEOF'
import os, statistics, sys
tol, wire = float(sys.argv[1]), int(sys.argv[2])
rates = [float(x) for x in sys.argv[3:]]
good = float(os.environ["TESTBED_LTE0_RATE_DOWN"]) / 8 * 1448 / wire
errs = [100.0 * (r - good) / good for r in rates]
med = statistics.median(errs)
print("lte0 expected goodput %.0f B/s (shaper %s); max_rate per run: %s" % (
    good, os.environ.get("TESTBED_SHAPER"), ", ".join("%.0f (%+.1f %%)" % (r, e) for r, e in zip(rates, errs))))
print("median error %+.1f %% (pass within %g %%, no run over +%g %%)" % (med, tol, tol))
ok = abs(med) <= tol and all(e <= tol for e in errs)
sys.exit(0 if ok else 1)
PYEOF
if [ $? -eq 0 ]; then pass "lte0 max_rate of 100 KiB objects within ${TOL} % of the link"; else fail "lte0 max_rate of 100 KiB objects within ${TOL} % of the link"; fi
mh_finish
