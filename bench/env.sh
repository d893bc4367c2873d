# Sourced by the benchmark scripts: where the source and build trees, the shim, the testbed and Debian's python are.
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${MHTTP_BUILD_DIR:=$SRC/build/release}"
export MHTTP_BUILD_DIR
SHIM=$MHTTP_BUILD_DIR/shim/libmhttp.so
PY=/usr/bin/python3
TESTBED=$SRC/bench/testbed/testbed
