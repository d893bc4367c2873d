#!/usr/bin/env bash
# Installs what is missing, builds the trees and runs the whole suite: unit tests under
# ASan+UBSan (Debug tree), fuzzing, integration tests with real programs on the testbed with the
# Release shim, then again with the shim built with ASan+UBSan (Asan tree: no timing verdicts).
# Integration tests run MHTTP_TEST_JOBS at a time (default 3: each waits on its own testbed's
# shaped links more than it computes); those whose verdict is a rate or a time run alone
# (tests/CMakeLists.txt, TIMING and SERIAL).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
"$top/scripts/build.sh" debug
"$top/scripts/build.sh" release
"$top/scripts/build.sh" asan
jobs=${MHTTP_TEST_JOBS:-3}
status=0
echo "== unit tests (ASan+UBSan) =="
ctest --test-dir "$top/build/debug" -L unit --output-on-failure -j"$(nproc)" || status=1
echo "== fuzzing (10 s per target, libFuzzer) =="
"$top/scripts/fuzz.sh" 10 || status=1
if [ -n "$(ctest --test-dir "$top/build/release" -L integration -N 2>/dev/null | grep -E '^ *Test +#')" ]; then
  echo "== integration tests (Release shim, testbed) =="
  if [ "$(id -u)" -ne 0 ]; then
    echo "integration tests need root (network namespaces); skipped" >&2
    status=1
  else
    ctest --test-dir "$top/build/release" -L integration -j"$jobs" --output-on-failure || status=1
    echo "== integration tests (Asan shim: ASan+UBSan inside the programs, leaks of test_leaks) =="
    ctest --test-dir "$top/build/asan" -L integration -j"$jobs" --output-on-failure || status=1
  fi
fi
echo "== benchmark smoke (bench/run --smoke: every output format written and parsed back; exit 4 = no namespaces) =="
"$top/bench/run" --smoke --out "$top/build/bench-smoke" || [ $? -eq 4 ] || status=1
exit $status
