#!/usr/bin/env bash
# The main job: installs what is missing, builds the Release tree, prints the scheduler's
# simulation report, then (as root) downloads over the built-in two-link testbed with plain
# wget and with wget under libmhttp.so and prints the comparison.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/scripts/setup.sh"
"$top/scripts/build.sh" release
rel="$top/build/release"

echo
echo "== chunk scheduler on modelled links (bench/simulate) =="
"$rel/bench/simulate/mhttp-simulate"

shim="$rel/shim/libmhttp.so"
testbed="$top/bench/testbed/testbed"
if [ ! -e "$shim" ] || [ ! -x "$testbed" ]; then
  echo "demo: the shim or the testbed is not built yet; only the simulation ran" >&2
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "demo: the testbed needs root (network namespaces); only the simulation ran" >&2
  exit 0
fi
echo
echo "== wget with and without libmhttp.so on the demo testbed (wifi0 10 ms/20 Mbit/s, lte0 50 ms/50 Mbit/s) =="
MHTTP_BUILD_DIR="$rel" /usr/bin/python3 "$testbed" run demo -- \
  bash "$top/bench/demo/compare.sh" "$shim"
