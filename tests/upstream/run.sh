#!/usr/bin/env bash
# Runs GNU wget's and curl's own test suites (Debian's sources) without and with the shim and reports every test whose outcome differs from the plain run.
#
#   tests/upstream/run.sh [--build DIR] [--work DIR] [--suites wget,curl] [--modes shim,relay]
#
# plain: no preload. shim: LD_PRELOAD=libmhttp.so, defaults. relay: every TCP connection taken
# over, splitting off (MHTTP_SPLIT=off MHTTP_PORTS=*). The whole harness runs under the setting
# (servers, perl, python, curl, wget, curl's libtest programs), as a user would run `make check`
# with the shim exported. Root: installs the suites' Debian test dependencies and fetches the
# two source packages from the Debian archive (a deb-src list of its own; the system's apt
# configuration is not touched). Not part of CI: it takes about 20 minutes and needs the archive.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$ROOT/build/release
WORK=/var/tmp/mhttp-upstream
SUITES=wget,curl
MODES=shim,relay
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=$(cd "$2" && pwd); shift 2 ;;
    --work) WORK=$2; shift 2 ;;
    --suites) SUITES=$2; shift 2 ;;
    --modes) MODES=$2; shift 2 ;;
    *) echo "usage: $0 [--build DIR] [--work DIR] [--suites wget,curl] [--modes shim,relay]" >&2; exit 2 ;;
  esac
done
SHIM=$BUILD/shim/libmhttp.so
[ -f "$SHIM" ] || { echo "no $SHIM: build first (scripts/build.sh release)" >&2; exit 2; }
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)

# The environment of one mode, as env(1) arguments in MODE_ENV.
set_mode() {
  case $1 in
    plain) MODE_ENV=() ;;
    shim) MODE_ENV=("LD_PRELOAD=$SHIM") ;;
    relay) MODE_ENV=("LD_PRELOAD=$SHIM" MHTTP_SPLIT=off "MHTTP_PORTS=*") ;;
    *) echo "unknown mode $1" >&2; exit 2 ;;
  esac
}

# Debian's source of one package, unpacked once into $WORK/src/PKG-VERSION.
fetch_source() {
  local pkg=$1 apt=(-o "Dir::Etc::sourcelist=$WORK/apt/src.list" -o Dir::Etc::sourceparts=/nonexistent
                    -o "Dir::State::lists=$WORK/apt/lists" -o APT::Get::List-Cleanup=0)
  if ! ls -d "$WORK/src/$pkg-"*/ >/dev/null 2>&1; then
    mkdir -p "$WORK/apt/lists/partial" "$WORK/src"
    local suite; suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
    echo "deb-src http://deb.debian.org/debian $suite main" > "$WORK/apt/src.list"
    [ -f "$WORK/apt/lists/.updated" ] || { apt-get -q "${apt[@]}" update >/dev/null && touch "$WORK/apt/lists/.updated"; }
    (cd "$WORK/src" && apt-get -q "${apt[@]}" source --download-only "$pkg" >/dev/null 2>&1 &&
       tar xzf "$pkg"_*.orig.tar.gz)
  fi
  ls -d "$WORK/src/$pkg-"*/ | head -1
}

deps() {
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    libhttp-daemon-perl libio-socket-ssl-perl libssl-dev zlib1g-dev make gcc perl >/dev/null
}

# wget: each Perl test (tests/) and Python test (testenv/) against the system's /usr/bin/wget;
# outcome = the test's exit status (0 pass, 77 skip).
run_wget() {
  local mode=$1 src=$2 out=$WORK/wget-$mode.tsv t rc
  set_mode "$mode"; : > "$out"
  for t in "$src"/tests/Test*.px "$src"/testenv/Test*.py; do
    (cd "$(dirname "$t")" && case $t in
       *.px) env "${MODE_ENV[@]}" WGET_PATH=/usr/bin/wget timeout 120 perl -I. "$(basename "$t")" ;;
       *.py) env "${MODE_ENV[@]}" WGET_PATH=/usr/bin/wget timeout 120 /usr/bin/python3 "$(basename "$t")" ;;
     esac) > "$WORK/log/wget-$mode-$(basename "$t").log" 2>&1 && rc=0 || rc=$?
    printf '%s\t%s\n' "$(basename "$t")" "$rc" >> "$out"
  done
}

# curl: the test servers and libtest programs built from the source, curl itself is the
# system's /usr/bin/curl; every test with the HTTP keyword; outcome = PASS/FAIL/SKIP per test.
build_curl() {
  local src=$1
  [ -x "$src/tests/libtest/lib500" ] && return 0
  (cd "$src" && ./configure --with-openssl --disable-ldap --without-libpsl --without-brotli \
     --without-zstd --without-nghttp2 --without-libidn2 &&
   make -C tests/server && make -j2 -C lib && make -j2 -C tests/libtest) > "$WORK/log/curl-build.log" 2>&1 ||
    { echo "curl's test programs did not build: $WORK/log/curl-build.log" >&2; return 1; }
}

run_curl() {
  local mode=$1 src=$2 out=$WORK/curl-$mode.tsv
  set_mode "$mode"
  (cd "$src/tests" && env "${MODE_ENV[@]}" USER="${USER:-root}" timeout 3600 \
     perl runtests.pl -a -n -am -vc /usr/bin/curl -c /usr/bin/curl HTTP) \
     > "$WORK/log/curl-$mode.log" 2>&1 || true
  curl_outcomes "$WORK/log/curl-$mode.log" > "$out"
}

# One line per test from a runtests.pl log: its PASS/FAIL/SKIP line, and every test its
# closing TESTFAIL list names (a test that fails before its verdict, e.g. "165: protocol
# FAILED!", has no FAIL line and would otherwise be left out of the comparison).
curl_outcomes() {
  { sed -n 's/^\(PASS\|FAIL\|SKIP\): \([0-9]*\) .*/\2\t\1/p' "$1"
    sed -n 's/^TESTFAIL: These test cases failed: //p' "$1" | tr -s ' ' '\n' | sed -n 's/^\([0-9][0-9]*\)$/\1\tFAIL/p'
  } | sort -u -k1,1
}

# Tests whose outcome under MODE differs from plain (and the counts), for one suite.
compare() {
  local suite=$1 mode=$2 p=$WORK/$1-plain.tsv m=$WORK/$1-$2.tsv diffs
  diffs=$(join -t$'\t' -a1 -a2 -e missing -o 0,1.2,2.2 <(sort -k1,1 "$p") <(sort -k1,1 "$m") | awk -F'\t' '$2 != $3')
  printf '%-5s %-6s %4d tests, %4d pass plain, %4d pass %s, %d differ\n' "$suite" "$mode" \
    "$(wc -l < "$p")" "$(grep -cP '\t(0|PASS)$' "$p")" "$(grep -cP '\t(0|PASS)$' "$m")" "$mode" \
    "$(printf '%s' "$diffs" | grep -c . || true)"
  [ -z "$diffs" ] || { printf '  differs (test, plain, %s): %s\n' "$mode" "$(echo "$diffs" | tr '\t\n' ' ;')"; return 1; }
}

deps
mkdir -p "$WORK/log"
fail=0
for suite in ${SUITES//,/ }; do
  src=$(fetch_source "$suite")
  [ "$suite" = curl ] && build_curl "$src"
  for mode in plain ${MODES//,/ }; do "run_$suite" "$mode" "$src"; done
  for mode in ${MODES//,/ }; do compare "$suite" "$mode" || fail=1; done
done
echo "per-test outcomes and logs: $WORK"
exit $fail
