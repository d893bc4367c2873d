# Sourced by the benchmark scripts: where the source and build trees, the shim, the testbed and Debian's python are.
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${MHTTP_BUILD_DIR:=$SRC/build/release}"
export MHTTP_BUILD_DIR
SHIM=$MHTTP_BUILD_DIR/shim/libmhttp.so
PY=/usr/bin/python3
TESTBED=$SRC/bench/testbed/testbed
# med / rng: the median, and the range in seconds, of the µs values on stdin (space or newline separated)
med() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
rng() { tr ' ' '\n' | grep . | sort -n | awk 'NR==1 {lo=$1} {hi=$1} END {printf "%.3f-%.3f", lo/1e6, hi/1e6}'; }
