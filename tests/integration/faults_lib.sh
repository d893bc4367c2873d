# The fault matrix's row runner (sourced by test_faults*.sh after lib.sh): each row runs its clients without and with the shim, bounded, and judges the pair.
# A row passes for a client when the shim run ends with the same exit status and the same
# bytes as the plain run, or (a fault only the shim's extra ranges met) with exit 0 and the
# exact expected bytes; never different bytes, a hang (timeout), a crash (signal), a
# duplicated POST, or an extra range without the program's credentials.
# By hand: FAULT_ROWS='lr-shift pr-*' bash tests/integration/test_faults.sh (names or globs);
# FAULTS_KEEP=DIR keeps every run's outputs and shim logs; FAULTS_REPORT=FILE appends the table;
# MH_LOG_LEVEL=debug for the shim logs; FX_TIMEOUT=S bounds each run (15).

FX_TIMEOUT=${FX_TIMEOUT:-15}
FX_F=files/1048576.bin
FX_F2=files/262144.bin
FX_TABLE=$WORK/table
printf '%-14s %-5s %8s %8s %-5s %7s %7s %-12s %s\n' row client plain_rc shim_rc same t_plain t_shim met verdict >"$FX_TABLE"
head -c 100000 /dev/urandom >"$WORK/post.bin"

# fx_selected NAME: the row is in $FAULT_ROWS (all rows when unset)
fx_selected() {
  [ -z "${FAULT_ROWS:-}" ] && return 0
  local t
  for t in ${FAULT_ROWS//,/ }; do
    # shellcheck disable=SC2053
    [[ $1 == $t ]] && return 0
  done
  return 1
}

fx_sha() { if [ -f "$1" ]; then sha256sum "$1" | cut -d' ' -f1; else echo none; fi; }
# fx_expect_text FILE1 FILE2: what fetch2.py prints for two exact objects
fx_expect_text() { local f; for f in "$@"; do echo "200 $(stat -c %s "$f") $(fx_sha "$f")"; done; }
fx_stats() { env -u LD_PRELOAD curl -s -m 5 "http://$1/_stats?t=$2"; }

# fx_cut WHEN FILE: takes lte0 down once FILE holds half (middle) / 3/4 (tail) of 4 MiB
fx_cut() {
  local when=$1 file=$2 at sz
  case $when in middle) at=2097152 ;; tail) at=3145728 ;; *) return 0 ;; esac
  for _ in $(seq 1 1000); do
    sz=$(stat -c %s "$file" 2>/dev/null || echo 0)
    [ "$sz" -ge "$at" ] && break
    sleep 0.01
  done
  "$PY" "$TESTBED" set lte0 down >/dev/null 2>&1
}

# fx_client CLIENT MODE DIR URL: one bounded run of a client in DIR; prints its exit code.
# The mhttp command has no run without the engine: its plain run is on the default path's
# interface alone (-i wifi0: not split, the answer read as it comes), its shim run on every path.
fx_client() {
  local client=$1 mode=$2 d=$3 url=$4 pre=() mh_if=()
  # lte0 has its own resolver (CDN-style names map differently there): harvest it too
  [ "$mode" = shim ] && pre=(env LD_PRELOAD="$SHIM" MHTTP_LOG="${MH_LOG_LEVEL:-info}" MHTTP_LOG_FILE="$d/shim.log" MHTTP_DNS_lte0="$TESTBED_LTE0_DNS")
  [ "$mode" = plain ] && pre=(env -u LD_PRELOAD)
  if [ "$client" = mhttp ]; then
    pre=(env -u LD_PRELOAD MHTTP_LOG="${MH_LOG_LEVEL:-info}" MHTTP_LOG_FILE="$d/shim.log" MHTTP_DNS_lte0="$TESTBED_LTE0_DNS")
    [ "$mode" = plain ] && mh_if=(-i wifi0)
  fi
  local cutter=
  if [ -n "$R_cut" ]; then
    [ "$R_cut" = start ] && "$PY" "$TESTBED" set lte0 down >/dev/null 2>&1
    fx_cut "$R_cut" "$d/out.bin" >/dev/null 2>&1 & cutter=$!
  fi
  (
    cd "$d" || exit 99
    # shellcheck disable=SC2086 # R_curl / R_wget / R_py are argument lists
    case $client in
      curl) exec "${pre[@]}" timeout -k 2 "$FX_TIMEOUT" curl -sS $R_curl -o out.bin "$url" ;;
      wget) exec "${pre[@]}" timeout -k 2 "$FX_TIMEOUT" wget -q --tries=1 --timeout=5 $R_wget -O out.bin "$url" ;;
      py) exec "${pre[@]}" timeout -k 2 "$FX_TIMEOUT" "$PY" "$HERE/fetch2.py" $R_py "$url" "${url/$R_path/$R_path2}" >out.txt ;;
      mhttp) exec "${pre[@]}" timeout -k 2 "$FX_TIMEOUT" "$MHTTP_BUILD_DIR/cli/mhttp" -q "${mh_if[@]}" $R_mhttp -o out.bin "$url" ;;
    esac
  ) >"$d/stdout" 2>"$d/stderr"
  local rc=$?
  if [ -n "$cutter" ]; then
    kill "$cutter" 2>/dev/null; wait "$cutter" 2>/dev/null
    "$PY" "$TESTBED" set lte0 up >/dev/null 2>&1
  fi
  echo "$rc"
}

# fx_row NAME URL [key=value]...: runs and judges one row. Keys: clients ("curl wget py"),
# expect (file of the exact bytes; "none" when no run can get them), path2/expect2 (python's
# second object), plain (ok: without the shim the row must succeed exactly; any), kind
# (bytes | version: any one whole XOR version of expect), stats (host counting the requests),
# post=1 (POST counts equal), auth=1 (no later range answered 401), cut (start|middle|tail),
# curl / wget / py / mhttp (extra client arguments; clients may name mhttp, the command).
fx_row() {
  local name=$1 url=$2; shift 2
  fx_selected "$name" || return 0
  local R_clients="curl wget py" R_expect=$TESTBED_FILES_DIR/$FX_F R_path=$FX_F R_path2=$FX_F2
  local R_expect2=$TESTBED_FILES_DIR/$FX_F2 R_plain=ok R_kind=bytes R_stats=fault.test R_post='' R_auth='' R_cut=''
  local R_curl='' R_wget='' R_py='' R_mhttp='' kv
  for kv in "$@"; do local "R_${kv%%=*}=${kv#*=}"; done
  echo "-- $name: $url"
  local client
  for client in $R_clients; do
    fx_judge "$name" "$client" "$url"
  done
}

fx_judge() {
  local name=$1 client=$2 url=$3 mode t0 d
  local -A RC T
  for mode in plain shim; do
    d=$WORK/$name/$client/$mode
    mkdir -p "$d"
    local sep='?'; [[ $url == *\?* ]] && sep='&'
    t0=$EPOCHREALTIME
    RC[$mode]=$(fx_client "$client" "$mode" "$d" "$url${sep}t=$name.$client.$mode")
    T[$mode]=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.2f", b - a}')
  done
  local P=$WORK/$name/$client/plain S=$WORK/$name/$client/shim o=out.bin
  [ "$client" = py ] && o=out.txt
  local same=no healed=no plain_ok=yes why=
  if [ "${RC[plain]}" = "${RC[shim]}" ] && [ "$(fx_sha "$P/$o")" = "$(fx_sha "$S/$o")" ]; then same=yes; fi
  local want=none
  if [ "$R_expect" != none ]; then
    if [ "$client" = py ]; then
      fx_expect_text "$R_expect" "$R_expect2" >"$WORK/$name/$client/expect.txt"
      want=$(fx_sha "$WORK/$name/$client/expect.txt")
    else
      want=$(fx_sha "$R_expect")
    fi
  fi
  [ "$want" != none ] && [ "${RC[shim]}" = 0 ] && [ "$(fx_sha "$S/$o")" = "$want" ] && healed=yes
  if [ "$R_plain" = ok ] && { [ "${RC[plain]}" != 0 ] || [ "$(fx_sha "$P/$o")" != "$want" ]; }; then
    plain_ok=no; why="plain run not exact (testbed?)"
  fi
  if [ "$R_kind" = version ]; then
    same=no; healed=no
    [ "${RC[plain]}" = "${RC[shim]}" ] && fx_one_version "$S/$o" "$R_expect" && same=yes
    fx_one_version "$P/$o" "$R_expect" || { plain_ok=no; why="plain run not one version (testbed?)"; }
  fi
  local ok=no
  { [ "$same" = yes ] || [ "$healed" = yes ]; } && [ "$plain_ok" = yes ] && ok=yes
  if [ "${RC[shim]}" = 124 ] || [ "${RC[shim]}" = 137 ]; then ok=no; why="shim run hung (timeout ${FX_TIMEOUT}s)"; fi
  [ "${RC[shim]}" -gt 128 ] 2>/dev/null && [ "${RC[shim]}" != 137 ] && { ok=no; why="shim run killed by a signal"; }
  local met=-
  # a cut link: how many of the shim's lte0 legs failed or were rescued (0: the cut met none)
  [ -n "$R_cut" ] && met="lte0_hit=$(grep -cE '\(lte0\) (failed|delivered nothing)' "$S/shim.log" 2>/dev/null)"
  if [ -n "$R_stats" ]; then
    local st_plain st_shim
    st_plain=$(fx_stats "$R_stats" "$name.$client.plain")
    st_shim=$(fx_stats "$R_stats" "$name.$client.shim")
    met="later=$(echo "$st_shim" | awk '$3 == "later" {n += $4} END {print n + 0}')"
    if [ -n "$R_post" ]; then
      local pp ps
      pp=$(echo "$st_plain" | awk '$1 == "POST" {n += $4} END {print n + 0}')
      ps=$(echo "$st_shim" | awk '$1 == "POST" {n += $4} END {print n + 0}')
      met="posts=$pp/$ps"
      if [ "$pp" != "$ps" ] || [ "$pp" -lt 1 ]; then ok=no; why="POSTs: $pp without the shim, $ps with it"; fi
    fi
    if [ -n "$R_auth" ] && echo "$st_shim" | grep -q " 401 later"; then
      ok=no; why="an extra range went without the credentials (401)"
    fi
  fi
  [ "$same" = no ] && [ "$healed" = yes ] && same=heal
  printf '%-14s %-5s %8s %8s %-5s %7.2f %7.2f %-12s %s\n' "$name" "$client" "${RC[plain]}" "${RC[shim]}" "$same" \
    "${T[plain]}" "${T[shim]}" "$met" "$([ $ok = yes ] && echo PASS || echo FAIL)" >>"$FX_TABLE"
  local msg="$name $client: plain rc ${RC[plain]} (${T[plain]} s), shim rc ${RC[shim]} (${T[shim]} s), bytes $same, $met"
  if [ "$ok" = yes ]; then
    pass "$msg"
  else
    fail "$msg${why:+ -- $why}"
    [ -f "$S/shim.log" ] && grep -v " debug " "$S/shim.log" | tail -4 | sed 's/^/     shim.log: /'
    [ -s "$S/stderr" ] && tail -2 "$S/stderr" | sed 's/^/     stderr: /'
  fi
}

# fx_one_version FILE TRUE: FILE is TRUE XOR one constant (one whole version of changing-nv)
fx_one_version() {
  "$PY" - "$1" "$2" <<'PY'
import sys
try:
    a = open(sys.argv[1], 'rb').read()
except OSError:
    sys.exit(1)
b = open(sys.argv[2], 'rb').read()
sys.exit(0 if len(a) == len(b) and len({x ^ y for x, y in zip(a, b)}) == 1 else 1)
PY
}

fx_finish() {
  echo "== fault matrix (plain = without the shim; same: same rc and bytes, heal: shim exact where plain failed)"
  cat "$FX_TABLE"
  [ -n "${FAULTS_REPORT:-}" ] && tail -n +2 "$FX_TABLE" >>"$FAULTS_REPORT"
  [ -n "${FAULTS_KEEP:-}" ] && mkdir -p "$FAULTS_KEEP" && cp -r "$WORK"/. "$FAULTS_KEEP"/
  mh_finish
}
