#!/bin/bash
# Page-load benchmark (issue 7): wget -p / wget2 / curl --parallel, plain on each single link vs under libmhttp.so per MHTTP_POLICY, median of N interleaved runs per testbed scenario, every object's sha256 checked.
#
#   bench/pages/run.sh [options]          (root; see bench/pages/README.md)
#     -s SCENARIOS   space/comma list (default "asym sym-low sym-high")
#     -p PAGES       default "mixed many100k mixed2"
#     -c CLIENTS     wget (sequential), wget2 (6 threads), curl (--parallel-max 6); default "wget wget2"
#     -C CONFIGS     wifi0 lte0 (plain client bound to that link, DNS from that link's resolver),
#                    shim (no MHTTP_POLICY), rr|round-robin, eaf, threshold, biased, single:IF;
#                    default "wifi0 lte0 rr eaf threshold"; CONFIG@LIB preloads another
#                    build's libmhttp.so (A/B of builds, interleaved like the rest)
#     -n RUNS        default 5          -t SECONDS   timeout per run (default 40)
#     -x FACTOR      cut a run at FACTOR × the fastest single-link run so far of the same page and
#                    client (default 2; 0 = never): it only proves speedup < 1/FACTOR, and
#                    saves minutes where a configuration is far slower than the better link
#     -o FILE        markdown report (default bench/pages/results/pages-<UTC time>.md; the raw
#                    per-run table goes next to it as .tsv)
#     --no-lock      do not take /tmp/mhttp-bench.lock (the caller holds it)
#
# Re-runs itself inside one `testbed run SCENARIO` per scenario (--inner). Why interleaved:
# link emulation and CPU contention drift over minutes, so run r of every configuration
# happens before run r+1 of any, and the order of the configurations rotates every round.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../env.sh"

SCENARIOS="asym sym-low sym-high" PAGES="mixed many100k mixed2" CLIENTS="wget wget2"
CONFIGS="wifi0 lte0 rr eaf threshold" RUNS=5 TMO=40 CUT=2 OUT="" LOCK=1 INNER=""
usage() { sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    -s) SCENARIOS=${2//,/ }; shift 2 ;;
    -p) PAGES=${2//,/ }; shift 2 ;;
    -c) CLIENTS=${2//,/ }; shift 2 ;;
    -C) CONFIGS=${2//,/ }; shift 2 ;;
    -n) RUNS=$2; shift 2 ;;
    -t) TMO=$2; shift 2 ;;
    -x) CUT=$2; shift 2 ;;
    -o) OUT=$2; shift 2 ;;
    --no-lock) LOCK=0; shift ;;
    --inner) INNER=$2; shift 2 ;;
    -h|--help) usage ;;
    *) echo "run.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: -n wants a positive integer, got '$RUNS'" >&2; exit 2; }
[[ $TMO =~ ^[1-9][0-9]*$ ]] || { echo "run.sh: -t wants seconds, got '$TMO'" >&2; exit 2; }
[[ $CUT =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "run.sh: -x wants a factor (2, 1.5, 0), got '$CUT'" >&2; exit 2; }
for c in $CLIENTS; do
  case $c in wget|wget2|curl) command -v "$c" >/dev/null || { echo "run.sh: $c is not installed" >&2; exit 2; } ;;
    *) echo "run.sh: unknown client '$c' (wget, wget2, curl)" >&2; exit 2 ;; esac
done
for c in $CONFIGS; do
  case $c in *@*) [ -f "${c#*@}" ] || { echo "run.sh: no library ${c#*@} (config '$c')" >&2; exit 2; } ;; esac
  case ${c%%@*} in wifi0|lte0) [ "$c" = "${c%%@*}" ] || { echo "run.sh: a plain client takes no library ('$c')" >&2; exit 2; } ;;
    shim|rr|round-robin|eaf|threshold|biased|single:*) ;;
    *) echo "run.sh: unknown config '$c'" >&2; exit 2 ;; esac
done

# ---------------------------------------------------------------- outside: one testbed per scenario
if [ -z "$INNER" ]; then
  [ "$(id -u)" -eq 0 ] || { echo "run.sh: needs root (network namespaces)" >&2; exit 1; }
  [ -f "$SHIM" ] || { echo "run.sh: $SHIM is not built (bash scripts/build.sh release)" >&2; exit 1; }
  [ -n "$OUT" ] || { mkdir -p "$HERE/results"; OUT=$HERE/results/pages-$(date -u +%Y%m%dT%H%M%SZ).md; }
  RAW=${OUT%.md}.tsv
  : >"$RAW" || exit 1
  if [ "$LOCK" = 1 ]; then
    # This shell holds the lock; children get 9>&- so no testbed daemon can keep it after us.
    exec 9>/tmp/mhttp-bench.lock
    flock -n 9 || { echo "run.sh: waiting for /tmp/mhttp-bench.lock (another benchmark is measuring)" >&2; flock 9; }
  fi
  start=$(date +%s)
  echo "# pages: scenarios [$SCENARIOS] pages [$PAGES] clients [$CLIENTS] configs [$CONFIGS], $RUNS runs, timeout ${TMO}s" >&2
  rc=0
  for s in $SCENARIOS; do
    t0=$(date +%s)
    "$PY" "$TESTBED" run "$s" -- /bin/bash "$0" --inner "$RAW" -p "$PAGES" -c "$CLIENTS" -C "$CONFIGS" \
      -n "$RUNS" -t "$TMO" -x "$CUT" 9>&- || { echo "run.sh: scenario $s failed (exit $?)" >&2; rc=1; }
    echo "# scenario $s: $(( $(date +%s) - t0 )) s" >&2
  done
  echo "# total: $(( $(date +%s) - start )) s" >&2
  "$PY" "$HERE/report.py" --header "$(date -u +%FT%TZ), $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null), $RUNS runs, timeout ${TMO}s, cut at ${CUT}× the best single link, total $(( $(date +%s) - start )) s" \
    "$RAW" >"$OUT" || rc=1
  cat "$OUT"
  echo "# report: $OUT  raw: $RAW" >&2
  exit $rc
fi

# ---------------------------------------------------------------- inside the client namespace
RAW=$INNER
W=$(mktemp -d /tmp/mhttp-bench-pages.XXXXXX)
chmod 755 "$W"
trap 'rm -rf "$W"' EXIT
HOSTS=www.test,a.test,b.test,static.test   # every host the pages reference (bench/testbed content.py)

# One resolv.conf per link: a single-link baseline must also resolve over that link (its
# resolver answers that network's replica), as on a machine that only has that link.
for i in $TESTBED_IFACES; do
  v=TESTBED_${i^^}_DNS
  printf 'nameserver %s\noptions timeout:2 attempts:2\n' "${!v}" >"$W/resolv.$i"
done

# client_cmd CLIENT PAGE DIR [BIND_IFACE]: the client's argv (one line per argument) to fetch PAGE into DIR.
client_cmd() {
  local cl=$1 page=$2 dir=$3 ifc=${4:-} url objs addr=""
  local v=TESTBED_PAGE_${page^^} o=TESTBED_PAGE_${page^^}_OBJECTS a=TESTBED_${ifc^^}_ADDR
  url=${!v} objs=${!o}
  [ -n "$ifc" ] && addr=${!a}
  case $cl in
    wget)   # one keep-alive connection at a time; -H -D: the pages spread objects over four hosts
      printf '%s\n' wget -q -e robots=off -p -H -D "$HOSTS" -nd -P "$dir" ${addr:+--bind-address=$addr} "$url" ;;
    wget2)
      printf '%s\n' wget2 -q --robots=off --max-threads=6 -p -H -D "$HOSTS" -nd -P "$dir" ${addr:+--bind-address=$addr} "$url" ;;
    curl)   # the object list, six transfers at a time
      printf '%s\n' curl -s --fail --parallel --parallel-max 6 ${ifc:+--interface $ifc}
      while read -r u; do [ -n "$u" ] && printf '%s\n' -o "$dir/${u##*/}" "$u"; done <"$objs" ;;
  esac
}

# verify PAGE DIR: every object of objects.txt present once with its manifest sha256; prints a reason on failure
verify() {
  local page=$1 dir=$2 objs want got n=0 bad=0 extra
  local o=TESTBED_PAGE_${page^^}_OBJECTS
  objs=${!o}
  while read -r u; do
    [ -n "$u" ] || continue
    n=$((n + 1))
    want=$(awk -v p="pages/$page/${u##*/}" '{f=$2; sub(/^\*/, "", f); sub(/^\.\//, "", f)} f == p {print $1}' "$TESTBED_SHA256SUMS")
    got=$(sha256sum "$dir/${u##*/}" 2>/dev/null | cut -d' ' -f1)
    [ -n "$want" ] && [ "$want" = "$got" ] || { bad=$((bad + 1)); [ $bad -le 3 ] && printf '%s ' "${u##*/}:${got:-missing}" | cut -c1-40; }
  done <"$objs"
  extra=$(( $(ls -A "$dir" | wc -l) - n ))
  [ $bad -eq 0 ] && [ $extra -eq 0 ] && return 0
  echo "$bad/$n objects wrong or missing, $extra extra files"
  return 1
}

# stats_summary FILE: bytes per interface over every split/probed object of the run (MHTTP_STATS lines)
stats_summary() {
  [ -s "$1" ] || { echo "-"; return; }
  "$PY" - "$1" <<'PYEOF'
import json, sys
by, n = {}, 0
for line in open(sys.argv[1]):
    try: o = json.loads(line)
    except ValueError: continue
    n += 1
    for p in o.get("paths") or []:
        by[p.get("iface", "?")] = by.get(p.get("iface", "?"), 0) + int(p.get("bytes") or 0)
print("objs=%d;" % n + ";".join("%s=%d" % kv for kv in sorted(by.items())))
PYEOF
}

# rotate LIST R: LIST shifted left by R-1 (the order changes every round)
rotate() { local r=$1; shift; local a=("$@") n=$# k; for k in $(seq 0 $((n - 1))); do echo "${a[$(( (k + r - 1) % n ))]}"; done; }
singles=() shims=()
for c in $CONFIGS; do case $c in wifi0|lte0) singles+=("$c") ;; *) shims+=("$c") ;; esac; done
declare -A BEST   # fastest ok single-link run so far per page/client, in µs
for r in $(seq 1 "$RUNS"); do
  for page in $PAGES; do
    for cl in $CLIENTS; do
      # Single links first, so the cut (-x) of this round already knows this round's best link.
      for cfg in $( ((${#singles[@]})) && rotate "$r" "${singles[@]}") $( ((${#shims[@]})) && rotate "$r" "${shims[@]}"); do
        lim=$TMO
        b=${BEST[$page/$cl]:-}
        if [ -n "$b" ] && [ "$CUT" != 0 ]; then
          lim=$(awk -v c="$CUT" -v b="$b" -v t="$TMO" 'BEGIN { l = c * b / 1e6; if (l < t) printf "%.2f", l; else print t }')
        fi
        d=$W/run; rm -rf "$d" "$W/stats" "$W/metrics" "$W/time"; mkdir -p "$d"
        pre=() ifc="" shimrun=0
        case $cfg in
          wifi0|lte0) ifc=$cfg
            [ -f "$W/resolv.$ifc" ] || { printf '%s\t%s\t%s\t%s\t%s\t\tskip\tno %s in this scenario\t\t\n' "$TESTBED_SCENARIO" "$page" "$cl" "$cfg" "$r" "$cfg" >>"$RAW"; continue; }
            pre=(unshare -m /bin/sh -c 'mount --bind "$0" /etc/resolv.conf && exec "$@"' "$W/resolv.$ifc") ;;
          *) pol=${cfg%%@*} lib=$SHIM shimrun=1
            [ "$cfg" = "$pol" ] || lib=${cfg#*@}
            [ "$pol" = rr ] && pol=round-robin
            pre=(env LD_PRELOAD="$lib" MHTTP_IFACES="${TESTBED_IFACES// /,}" MHTTP_STATS="$W/stats" MHTTP_METRICS="$W/metrics")
            [ "$pol" = shim ] || pre+=(MHTTP_POLICY="$pol") ;;
        esac
        mapfile -t cmd < <(client_cmd "$cl" "$page" "$d" "$ifc")
        # The clock runs inside the wrapper (after unshare/mount), around the client alone.
        timeout -k 5 "$lim" "${pre[@]}" /bin/sh -c 's=$(date +%s%N); "$@" >/dev/null 2>"$0.err"; rc=$?; e=$(date +%s%N); echo "$rc $(( (e - s) / 1000 ))" >"$0"' "$W/time" "${cmd[@]}"
        trc=$?
        if [ -s "$W/time" ]; then read -r crc us <"$W/time"; else crc=timeout us=""; fi
        secs=""; [ -n "$us" ] && secs=$(printf '%d.%06d' $((us / 1000000)) $((us % 1000000)))
        if [ "$crc" = timeout ] || [ "$trc" = 124 ] || [ "$trc" = 137 ]; then
          secs=$lim st=timeout why=">${lim}s"
          [ "$lim" != "$TMO" ] && st=cut why=">${lim}s (${CUT}× the best single link so far)"
        elif [ "$crc" != 0 ]; then st=fail why="exit $crc: $(head -c 120 "$W/time.err" 2>/dev/null | tr '\t\n' '  ')"
        elif why=$(verify "$page" "$d"); then st=ok why=""
          if [ -n "$ifc" ] && { [ -z "$b" ] || [ "$us" -lt "$b" ]; }; then BEST[$page/$cl]=$us; fi
        else st=badbytes
        fi
        # metrics=N: lines the engine wrote to MHTTP_METRICS; 0 means it ignores MHTTP_POLICY too
        # (both arrive with the policy engine), so the policy columns are then the plain shim.
        sum="" ms=""
        if [ $shimrun = 1 ]; then
          sum=$(stats_summary "$W/stats")
          ms=metrics=$(grep -c '"metrics"' "$W/metrics" 2>/dev/null || true); [ "$ms" = metrics= ] && ms=metrics=0
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$TESTBED_SCENARIO" "$page" "$cl" "$cfg" "$r" "$secs" "$st" "$why" "$sum" "$ms" >>"$RAW"
        printf '  %-8s r%-2s %-9s %-6s %-10s %8s %s %s\n' "$TESTBED_SCENARIO" "$r" "$page" "$cl" "$cfg" "${secs:0:6}" "$st" "$why" >&2
      done
    done
  done
done
