#!/usr/bin/env bash
# Loopback benchmark: wget downloads a file (1 GiB unless told) from nginx in a private network namespace, directly and under libmhttp.so; prints throughput and CPU-time ratios.
# Usage: bench/loopback/run.sh [BUILD_DIR] [ROUNDS] [MIB]   (root: creates and always removes a namespace)
# Targets (issue 4): throughput(shim)/throughput(direct) >= 0.9, cpu(shim)/cpu(direct) <= 1.2,
# where cpu is user+system time of the wget process (its engine thread included). Medians of ROUNDS.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$top/build/release}
rounds=${2:-5}
mib=${3:-1024}
so=$build/shim/libmhttp.so
[ -f "$so" ] || { echo "bench: $so not built" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (network namespace)" >&2; exit 2; }

ns=mhbench-$$
dir=$(mktemp -d /tmp/mhbench.XXXXXX)
cleanup() {
  [ -f "$dir/nginx.pid" ] && kill "$(cat "$dir/nginx.pid")" 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

chmod 755 "$dir"   # nginx workers run unprivileged
mkdir -p "$dir/www"
head -c $((mib * 1024 * 1024)) /dev/urandom > "$dir/www/1g.bin"
cat > "$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $dir/t1; proxy_temp_path $dir/t2; fastcgi_temp_path $dir/t3;
  uwsgi_temp_path $dir/t4; scgi_temp_path $dir/t5;
  sendfile on;
  server { listen 127.0.0.1:80; root $dir/www; }
}
CONF
ip netns add "$ns"
ip netns exec "$ns" ip link set lo up
ip netns exec "$ns" nginx -c "$dir/nginx.conf"
for _ in $(seq 50); do [ -s "$dir/nginx.pid" ] && break; sleep 0.1; done
url=http://127.0.0.1/1g.bin

# one run: prints "elapsed cpu maxrss" (seconds, seconds, KiB)
run() {
  local tf=$dir/time.txt
  /usr/bin/time -o "$tf" -f "%e %U %S %M" ip netns exec "$ns" env "$@" wget -q -O /dev/null "$url"
  awk '{printf "%.3f %.3f %d\n", $1, $2 + $3, $4}' "$tf"
}

run X=1 >/dev/null   # warm the page cache
: > "$dir/direct"; : > "$dir/shim"
for i in $(seq "$rounds"); do   # interleaved, so drift in machine load hits both sides alike
  run X=1 >> "$dir/direct"
  run LD_PRELOAD="$so" >> "$dir/shim"
done

echo "direct runs (s cpu rss):" $(tr "\n" " " < "$dir/direct")
echo "shim runs   (s cpu rss):" $(tr "\n" " " < "$dir/shim")
median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
de=$(cut -d' ' -f1 "$dir/direct" | median); dc=$(cut -d' ' -f2 "$dir/direct" | median)
se=$(cut -d' ' -f1 "$dir/shim" | median);   sc=$(cut -d' ' -f2 "$dir/shim" | median)
dm=$(cut -d' ' -f3 "$dir/direct" | median); sm=$(cut -d' ' -f3 "$dir/shim" | median)
awk -v mib="$mib" -v de="$de" -v dc="$dc" -v se="$se" -v sc="$sc" -v dm="$dm" -v sm="$sm" 'BEGIN {
  printf "direct: %.3f s  %.0f MiB/s  cpu %.3f s\n", de, mib / de, dc
  printf "shim:   %.3f s  %.0f MiB/s  cpu %.3f s\n", se, mib / se, sc
  printf "throughput ratio (shim/direct): %.3f  (target >= 0.9)\n", de / se
  printf "cpu-time ratio   (shim/direct): %.3f  (target <= 1.2)\n", sc / dc
  printf "max RSS: direct %.1f MiB, shim %.1f MiB (growth %.1f MiB, target <= 32)\n", dm / 1024, sm / 1024, (sm - dm) / 1024
}'
