#!/bin/bash
# Range-splitting benchmark, now a thin wrapper of bench/run: wget under the shim vs plain wget on each link, aria2c over both interfaces and the physical limit on demo, and the shim's overhead on single; median of RUNS interleaved runs, every copy's sha256 checked.
#
#   bench/split/run.sh [RUNS=3] [SIZES...]        (root; MHTTP_BUILD_DIR = build tree, default build/release)
#
# Writes bench/results/<date>-<commit>/ (report.md, results.json, TAP, JUnit, plots; see bench/README.md)
# and prints report.md. More contenders (curl, axel, wget2, kernel MPTCP...): bench/run itself.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
RUNS=${1:-3}
shift || true
SIZES=${*:-16384 65536 1048576 4194304 33554432 134217728}
out=$(mktemp -d /tmp/mhttp-bench-split.XXXXXX)
"$HERE/../run" --full --only demo,single --experiments sizes,overhead --rounds "$RUNS" --sizes "${SIZES// /,}" \
  --contenders wget@wifi0,wget@lte0,wget+shim,aria2 --out "$out"
rc=$?
cat "$out/report.md"
echo "# results: $out" >&2
exit $rc
