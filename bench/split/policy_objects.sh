#!/bin/bash
# Per-object path choice on one testbed scenario: one wget process fetches 1 MiB (metrics warm up), 100 KiB, 1 KiB, 100 KiB under each policy; prints MHTTP_STATS per object.
# Usage (root, from the repo): flock /tmp/mhttp-bench.lock bench/testbed/testbed run asym -- bash bench/split/policy_objects.sh [RUNS=2] [POLICIES...]
set -uo pipefail
: "${MHTTP_BUILD_DIR:=$(cd "$(dirname "$0")/../.." && pwd)/build/release}"
SHIM=$MHTTP_BUILD_DIR/shim/libmhttp.so
RUNS=${1:-2}
shift || true
POLS=${*:-eaf single:wifi0 single:lte0}
W=$(mktemp -d /tmp/mhttp-polobj.XXXXXX)
trap 'rm -rf "$W"' EXIT
A=$TESTBED_URL_A
for pol in $POLS; do
  for run in $(seq "$RUNS"); do
    rm -f "$W/s.json"
    LD_PRELOAD=$SHIM MHTTP_POLICY=$pol MHTTP_STATS=$W/s.json timeout 120 wget -q -O /dev/null \
      "$A/files/1048576.bin" "$A/pages/mixed/o24-102400.bin" "$A/pages/mixed/o01-1024.bin" "$A/pages/mixed/o25-102400.bin"
    /usr/bin/python3 - "$pol" "$run" "$W/s.json" <<'PY'
import json, sys
pol, run, f = sys.argv[1:4]
for l in open(f):
    s = json.loads(l)
    b = {p["iface"]: p["bytes"] for p in s["paths"]}
    plan = s.get("plan")
    where = f"{plan['primary']} {'+'.join(plan['paths'])}" if plan else "-"
    print(f"{pol:13s} run{run} size={s['size']:8d} {s['duration_ms']:7.1f} ms  " +
          " ".join(f"{k}={v}" for k, v in b.items()) + f"  plan: {where}")
PY
  done
done
