#!/bin/bash
# getaddrinfo latency with and without the shim while multiDNS harvests and one network's resolver is silent: median per side and the ratio (target <= 1.05).
#
#   bench/dns/run.sh [ROUNDS=4] [LOOKUPS_PER_ROUND=50]     (root; MHTTP_BUILD_DIR, default build/release)
#
# demo scenario; lte0's dnsmasq is stopped (SIGSTOP: its queries vanish, as behind a dead link),
# wifi0's (the primary, in resolv.conf) answers. Each round runs mhttp-dnsbench once plain and
# once under libmhttp.so (alternating, so drift hits both sides): it first GETs 1 MiB from
# cdn.test (a taken-over, split connection: the engine and its resolvers run), then resolves
# LOOKUPS names cycling over eight .test names. dnsmasq's TTL is 30 s but glibc has no cache,
# so every call asks wifi0's resolver; under the shim each call also queues the name for the
# harvest on lte0, whose resolver never answers.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../env.sh"
BENCH=$MHTTP_BUILD_DIR/bench/dns/mhttp-dnsbench
ROUNDS=${1:-4}
LOOKUPS=${2:-50}

if [ -z "${TESTBED_ID:-}" ]; then
  [ -f "$SHIM" ] && [ -x "$BENCH" ] || { echo "$SHIM or $BENCH is not built" >&2; exit 1; }
  echo "# getaddrinfo under libmhttp.so, lte0 resolver silent ($(date -u +%FT%TZ), $(git -C "$SRC" rev-parse --short HEAD))"
  exec flock /tmp/mhttp-bench.lock "$PY" "$SRC/bench/testbed/testbed" run demo -- /bin/bash "$0" "$ROUNDS" "$LOOKUPS"
fi

W=$(mktemp -d /tmp/mhttp-bench-dns.XXXXXX)
DNS1=$(cat "$TESTBED_RUN_DIR/dns1.pid")
trap 'kill -CONT "$DNS1" 2>/dev/null; rm -rf "$W"' EXIT
kill -STOP "$DNS1"
export MHTTP_DNS_lte0=$TESTBED_LTE0_DNS
NAMES="a.test b.test multi.test cdn.test www.test static.test norange.test liar.test"
for r in $(seq "$ROUNDS"); do
  env -u LD_PRELOAD "$BENCH" "$LOOKUPS" $NAMES --fetch cdn.test /files/1048576.bin >>"$W/plain" || { echo "plain run failed" >&2; exit 1; }
  env LD_PRELOAD="$SHIM" MHTTP_LOG=info MHTTP_LOG_FILE="$W/shim-$r.log" \
    "$BENCH" "$LOOKUPS" $NAMES --fetch cdn.test /files/1048576.bin >>"$W/shim" || { echo "shim run failed" >&2; exit 1; }
done
kill -CONT "$DNS1"
silent=$(cat "$W"/shim-*.log | grep -c "lte0: DNS servers .* not answering")
taken=$(cat "$W"/shim-*.log | grep -c "taken over")
"$PY" - "$W/plain" "$W/shim" "$silent" "$taken" "$ROUNDS" <<'PY'
import statistics, sys
p = [int(x) for x in open(sys.argv[1])]
s = [int(x) for x in open(sys.argv[2])]
def q(v, f): v = sorted(v); return v[min(len(v) - 1, int(f * len(v)))]
print("side   lookups  median_us     p10_us     p90_us")
for name, v in (("plain", p), ("shim", s)):
    print("%-6s %7d %10.0f %10d %10d" % (name, len(v), statistics.median(v), q(v, 0.1), q(v, 0.9)))
ratio = statistics.median(s) / statistics.median(p)
print("ratio shim/plain (median): %.3f  (target <= 1.05) -> %s" % (ratio, "PASS" if ratio <= 1.05 else "FAIL"))
print("shim runs: %s connection(s) taken over, lte0 failure logged %s time(s) in %s runs (once per process)" % (sys.argv[4], sys.argv[3], sys.argv[5]))
PY
