#!/bin/bash
# The Debian packages (packaging/debs.sh, debhelper) pass lintian without an error or a warning, install with dpkg -i (ldconfig by trigger, man pages indexed), `mhttpd` and the systemd units are in place (systemd-analyze verify, not enabled), `mhttp` and `mhttp run -- wget` work from the installed files on the testbed, programs and the examples build against them (CMake and pkg-config; also against a temporary prefix), and dpkg --purge leaves no file behind. Refuses to run where any of them is installed already; puts the machine back as it found it even when it fails.
source "$(dirname "$0")/lib.sh"
# No mh_in_testbed: dpkg runs on the host; only the wget run enters a testbed (section 3).

PKGS=(mhttp libmhttp-dev libmhttp0)   # removal order: dependants first
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
ML=/usr/lib/$MULTIARCH
installed() { dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null | grep -q '^.i'; }
if [ "$(id -u)" -ne 0 ]; then echo "FAIL: dpkg -i needs root"; exit 1; fi
for p in "${PKGS[@]}"; do
  if installed "$p" || dpkg-query -W "$p" >/dev/null 2>&1; then
    echo "FAIL: the package $p is already known to dpkg on this machine: not touching it (dpkg --purge $p first)"
    exit 1
  fi
done
for f in /usr/bin/mhttp /usr/bin/mhttpd /lib/systemd/system/mhttpd.service /usr/lib/systemd/user/mhttpd.service /usr/lib/libmhttp.so.0 /usr/lib/libmhttp "$ML/libmhttp.so.0" "$ML/libmhttp" /usr/include/mhttp.h; do
  if [ -e "$f" ]; then echo "FAIL: $f exists (installed from elsewhere): not clobbering it"; exit 1; fi
done

# From here on the packages may get installed: whatever happens, purge what this run installed.
WE_INSTALLED=0
pkg_cleanup() {
  if [ "$WE_INSTALLED" = 1 ]; then
    for p in "${PKGS[@]}"; do installed "$p" && dpkg --purge "$p" >/dev/null 2>&1; done
  fi
  mh_cleanup
}
trap pkg_cleanup EXIT
# bash runs no EXIT trap when a signal kills it: turn the usual ones into an exit
trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 143' TERM

# 1. build the three packages (and their -dbgsym) from this build tree; lintian
D=$WORK/debs
"$MHTTP_SOURCE_DIR/packaging/debs.sh" "$MHTTP_BUILD_DIR" "$D" >"$WORK/debs.log" 2>&1; rc=$?
V=$(sed -n 's/^project(libmhttp VERSION \([0-9.]*\).*/\1/p' "$MHTTP_SOURCE_DIR/CMakeLists.txt")
ARCH=$(dpkg --print-architecture)
deb() { echo "$D/${1}_${V}_${ARCH}.deb"; }
check "debs.sh made libmhttp0, libmhttp-dev, mhttp and the -dbgsym of libmhttp0 and mhttp" eval \
  '[ $rc = 0 ] && for p in libmhttp0 libmhttp-dev mhttp libmhttp0-dbgsym mhttp-dbgsym; do [ -f "$(deb $p)" ] || exit 1; done' ||
  { tail -20 "$WORK/debs.log"; mh_finish; }
# E: and W: fail (--fail-on); I: lines are printed, each explained in packaging/README.md
lintian -I --fail-on error,warning "$D"/*.deb >"$WORK/lintian.log" 2>&1; rc=$?
sed 's/^/   lintian: /' "$WORK/lintian.log" | grep -v 'running with root privileges'
check "lintian: no error, no warning on the five packages" eval '[ $rc = 0 ] && ! grep -q "^[EW]: " "$WORK/lintian.log"'
for p in libmhttp0 libmhttp-dev mhttp; do
  echo "   $p: $(dpkg-deb -f "$(deb $p)" Depends)"
done
check "libmhttp0's Depends come from dpkg-shlibdeps (libc6, libuv1)" eval \
  'dpkg-deb -f "$(deb libmhttp0)" Depends | grep -q "libc6 (>=" && dpkg-deb -f "$(deb libmhttp0)" Depends | grep -q "libuv1"'
check "mhttp depends on libmhttp0 of its version and on jemalloc" eval \
  'dpkg-deb -f "$(deb mhttp)" Depends | grep -q "libmhttp0 (= $V)" && dpkg-deb -f "$(deb mhttp)" Depends | grep -q "libjemalloc2"'
check "libmhttp-dev depends on libmhttp0 of its version" eval 'dpkg-deb -f "$(deb libmhttp-dev)" Depends | grep -q "libmhttp0 (= $V)"'
synopses=$(for p in libmhttp0 libmhttp-dev mhttp; do dpkg-deb -f "$(deb $p)" Description | head -1; done | sort -u | wc -l)
check "three distinct synopses; Homepage and a Maintainer off localhost" eval \
  '[ "$synopses" = 3 ] && dpkg-deb -f "$(deb mhttp)" Homepage | grep -q "^https://" && ! dpkg-deb -f "$(deb mhttp)" Maintainer | grep -q localhost'
mkdir "$WORK/ctl"
dpkg-deb -e "$(deb libmhttp0)" "$WORK/ctl"
check "libmhttp0: ldconfig by trigger, no maintainer script; shlibs and symbols files" eval \
  'grep -qx "activate-noawait ldconfig" "$WORK/ctl/triggers" && ! ls "$WORK/ctl" | grep -q "inst\|rm" &&
   grep -q "^libmhttp 0 libmhttp0" "$WORK/ctl/shlibs" && grep -q "^ mhttp_xfer_start@Base" "$WORK/ctl/symbols"'

# 2. install; the files are where they belong
WE_INSTALLED=1
# man-db keeps formatted pages (/var/cache/man) and shows them while they are newer than the page:
# the packages' pages carry the changelog's date (SOURCE_DATE_EPOCH), so an earlier run's cached
# copy of a page would stand for this build's. They are this package's own pages, formatted by
# earlier runs of this test.
rm -f /var/cache/man/cat3/mhttp_*.3* /var/cache/man/cat3/libmhttp.3* /var/cache/man/cat1/mhttp.1* /var/cache/man/cat1/mhttpd.1*
dpkg -i "$(deb libmhttp0)" "$(deb libmhttp-dev)" "$(deb mhttp)" >"$WORK/dpkg.log" 2>&1; rc=$?
check "dpkg -i of the three packages" eval '[ $rc = 0 ]' || { tail -20 "$WORK/dpkg.log"; mh_finish; }
: >"$WORK/files"
for p in "${PKGS[@]}"; do
  # files and links to files: /lib (the system unit's directory) is the host's link to usr/lib
  dpkg -L "$p" | while read -r f; do [ -f "$f" ] || { [ -L "$f" ] && [ ! -d "$f" ]; } && echo "$f"; done >>"$WORK/files"
done
echo "   installed: $(tr '\n' ' ' <"$WORK/files")"
LIBDIR=$(dirname "$(grep '/libmhttp\.so\.0$' "$WORK/files")")
check "the API library as $LIBDIR/libmhttp.so.0 (SONAME libmhttp.so.0) and the dev link" eval \
  '[ -n "$LIBDIR" ] && grep -q "SONAME *libmhttp.so.0" <<<"$(objdump -p "$LIBDIR/libmhttp.so.0")" && [ -L "$LIBDIR/libmhttp.so" ]'
check "the API library in the multiarch directory $ML" test "$LIBDIR" = "$ML"
check "the preload library in the private $LIBDIR/libmhttp/, without a SONAME" eval \
  '[ -f "$LIBDIR/libmhttp/libmhttp.so" ] && ! grep -q SONAME <<<"$(objdump -p "$LIBDIR/libmhttp/libmhttp.so")"'
# (pipefail: a grep -q that stops reading early would fail the pipe; outputs are read whole first)
check "ldconfig -p finds libmhttp.so.0 in $ML (the trigger ran; /lib is /usr/lib)" eval \
  'grep -Eq "libmhttp\.so\.0 \(.*\) => (/usr)?/lib/$MULTIARCH/libmhttp\.so\.0$" <<<"$(ldconfig -p)"'
dbg=$(for p in libmhttp0-dbgsym mhttp-dbgsym; do dpkg-deb -c "$(deb $p)"; done | grep -o "usr/lib/debug/.build-id/.*\.debug")
stripped=1
for b in "$LIBDIR/libmhttp.so.0" "$LIBDIR/libmhttp/libmhttp.so" /usr/bin/mhttp; do
  id=$(readelf -n "$b" | sed -n 's/.*Build ID: \(..\)\(.*\)/\1\/\2/p')
  sections=$(readelf -S "$b")
  if grep -q "\.symtab\|\.debug_info" <<<"$sections" || ! grep -q "\.gnu_debuglink" <<<"$sections" ||
     ! grep -qx "usr/lib/debug/.build-id/$id.debug" <<<"$dbg"; then stripped=0; echo "   not stripped or no debug file: $b ($id)"; fi
done
check "the three binaries stripped, each with a .gnu_debuglink and its build-id's file in a -dbgsym" test $stripped = 1
docs=1
for p in "${PKGS[@]}"; do
  [ -f "/usr/share/doc/$p/copyright" ] && grep -q "^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/" "/usr/share/doc/$p/copyright" &&
    gzip -t "/usr/share/doc/$p/changelog.gz" || docs=0
done
check "each package: a DEP-5 copyright and a changelog.gz" test $docs = 1
check "every man page gzip-compressed (or a link to one)" eval '[ -z "$(grep "/share/man/" "$WORK/files" | grep -v "\.gz$")" ]'
check "libmhttp.pc: prefix=/usr and paths from \${prefix}" eval \
  'grep -qx "prefix=/usr" "$LIBDIR/pkgconfig/libmhttp.pc" && grep -qx "libdir=\${prefix}/lib/$MULTIARCH" "$LIBDIR/pkgconfig/libmhttp.pc"'
out=$(echo $(pkg-config --cflags --libs libmhttp))   # echo: without pkg-config's trailing blank
check "pkg-config --cflags --libs libmhttp: '$out'" test "$out" = "-lmhttp"
check "header, pkg-config, CMake config, man pages, command" eval \
  'grep -qx /usr/include/mhttp.h "$WORK/files" && grep -qx "$LIBDIR/pkgconfig/libmhttp.pc" "$WORK/files" &&
   grep -qx "$LIBDIR/cmake/libmhttp/libmhttpConfig.cmake" "$WORK/files" && grep -q "/man1/mhttp.1" "$WORK/files" &&
   grep -q "/man3/libmhttp.3" "$WORK/files" && grep -qx /usr/bin/mhttp "$WORK/files"'
out=$(/usr/bin/mhttp --version 2>&1)
check "installed mhttp --version: $out" test "$out" = "mhttp $V (libmhttp $V)"
got=$(ldd /usr/bin/mhttp | awk '$1 == "libmhttp.so.0" {print $3}')
check "the installed command uses the installed library ($got)" eval \
  '[ -n "$got" ] && [ "$(realpath "$got")" = "$(realpath "$LIBDIR/libmhttp.so.0")" ]'
out=$(env -u MHTTP_PRELOAD /usr/bin/mhttp run -- sh -c 'echo "$LD_PRELOAD"')
check "installed mhttp run preloads the installed library ($out)" test "$out" = "$LIBDIR/libmhttp/libmhttp.so"
check "man -l mhttp(1) and libmhttp(3) from the package, warning-free" eval \
  '[ -z "$(MANWIDTH=80 man --warnings=w -l "$(grep /man1/mhttp.1 "$WORK/files")" 2>&1 >/dev/null)" ] &&
   [ -z "$(MANWIDTH=80 man --warnings=w -l "$(grep /man3/libmhttp.3 "$WORK/files")" 2>&1 >/dev/null)" ]'
# every public function: man 3 NAME renders its page (a link to its group's page), warning-free
funcs=$(sed -n 's/^MHTTP_API .*[ *]\(mhttp_[a-z0-9_]*\)(.*/\1/p' /usr/include/mhttp.h)
noman=""
for f in $funcs; do
  w=$(MANWIDTH=80 man --warnings=w 3 "$f" 2>&1 >"$WORK/man.out")
  [ $? = 0 ] && [ -z "$w" ] && grep -q "$f" "$WORK/man.out" || noman="$noman $f"
done
check "man 3 NAME for the $(wc -w <<<"$funcs") functions of the installed mhttp.h (missing:${noman:- none})" test -z "$noman"
check "man 3 mhttp_xfer_pause shows mhttp_xfer_start(3)" eval 'grep -q "MHTTP_XFER_START(3)" <<<"$(MANWIDTH=80 man 3 mhttp_xfer_pause 2>/dev/null)"'
# mhttpd: the daemon's name, its man page, the systemd units (installed, verified, not enabled)
check "/usr/bin/mhttpd links to mhttp and runs the daemon (mhttpd --help)" eval \
  '[ "$(readlink /usr/bin/mhttpd)" = mhttp ] && /usr/bin/mhttpd --help | grep -q -- --rpc-listen-port'
check "man mhttpd shows mhttp(1); whatis mhttpd" eval \
  'grep -q "^MHTTP(1)" <<<"$(MANWIDTH=80 man mhttpd 2>/dev/null)" && grep -q "^mhttpd (1)" <<<"$(whatis mhttpd)"'
SU=/lib/systemd/system/mhttpd.service UU=/usr/lib/systemd/user/mhttpd.service
check "the system unit in /lib/systemd/system, the user unit in /usr/lib/systemd/user, as in packaging/systemd" eval \
  'cmp -s $SU "$MHTTP_SOURCE_DIR/packaging/systemd/mhttpd.service" && cmp -s $UU "$MHTTP_SOURCE_DIR/packaging/systemd/user/mhttpd.service"'
mkdir -p "$WORK/xdg"; chmod 700 "$WORK/xdg"
out=$(systemd-analyze verify $SU 2>&1; XDG_RUNTIME_DIR=$WORK/xdg systemd-analyze --user verify $UU 2>&1)
check "systemd-analyze verify: both installed units clean (ExecStart, man:mhttp(1))${out:+: $out}" test -z "$out"
check "neither unit enabled by the package (no .wants link)" eval \
  '[ -z "$(ls /etc/systemd/system/*.wants/mhttpd.service /etc/systemd/user/*.wants/mhttpd.service 2>/dev/null)" ]'
check "whatis and apropos know them (mandb indexed the NAME lines)" eval \
  'grep -q "^mhttp_xfer_cancel (3) *- start, pause and cancel" <<<"$(whatis mhttp_xfer_cancel)" && [ "$(apropos -s 3 libmhttp | wc -l)" -ge 27 ]'

# 3. programs against the installed package: one compiled with pkg-config, the examples with
#    CMake find_package and pkg-config
printf '#include <mhttp.h>\n#include <stdio.h>\nint main(void) { puts(mhttp_version()); return mhttp_shim_active(); }\n' >"$WORK/v.c"
out=$(cc -o "$WORK/v" "$WORK/v.c" $(pkg-config --cflags --libs libmhttp) 2>&1 && "$WORK/v" 2>&1)
check "cc \$(pkg-config --cflags --libs libmhttp) links, and the program runs: '$out'" test "$out" = "$V"
EX=/usr/share/doc/libmhttp-dev/examples
build_examples() {  # build_examples NAME [cmake args...]: configure + build (or compile only)
  local name=$1; shift
  cp -r "$EX" "$WORK/$name"
  cmake -S "$WORK/$name" -B "$WORK/$name/b" "$@" >"$WORK/$name.log" 2>&1 || return 1
  cmake --build "$WORK/$name/b" >>"$WORK/$name.log" 2>&1 && [ -x "$WORK/$name/b/download" ] && [ -x "$WORK/$name/b/epoll_loop" ]
}
pc_examples() {  # pc_examples DIR: the Makefile (pkg-config) build
  make -C "$1" >>"$1.log" 2>&1 && [ -x "$1/download" ] && [ -x "$1/epoll_loop" ]
}
check "examples: CMake find_package(libmhttp) from /usr" build_examples excmake || tail -5 "$WORK/excmake.log"
check "pkg-config libmhttp: -lmhttp, version $V" eval \
  '[ "$(pkg-config --modversion libmhttp)" = "$V" ] && pkg-config --libs libmhttp | grep -q -- "-lmhttp"'
cp -r "$EX" "$WORK/expc"
check "examples: the Makefile with pkg-config from /usr" pc_examples "$WORK/expc" || tail -5 "$WORK/expc.log"

# 4. from the installed files, on the testbed: mhttp run -- wget (split over both links,
#    exact), mhttp itself and the two examples built above
export -f mh_sum
"$PY" "$TESTBED" run demo -- /bin/bash -c '
  cd '"$WORK"' || exit 1
  U=$TESTBED_URL_A/files/4194304.bin
  mh_sum files/4194304.bin >w.want
  MHTTP_STATS=stats.json timeout 120 /usr/bin/mhttp run -- wget -q -O w.bin "$U"; echo $? >w.rc
  timeout 120 /usr/bin/mhttp -o m.bin "$U"; echo $? >m.rc
  timeout 120 excmake/b/download "$U" d.bin 2>d.err; echo $? >d.rc
  timeout 120 excmake/b/epoll_loop "$U" e.bin </dev/null 2>e.err; echo $? >e.rc' >"$WORK/tb.log" 2>&1
line=$(grep '"size":4194304' "$WORK/stats.json" 2>/dev/null | tail -1)
want=$(cat "$WORK/w.want" 2>/dev/null)
check "installed: mhttp run -- wget 4 MiB exact" eval \
  '[ "$(cat $WORK/w.rc 2>/dev/null)" = 0 ] && [ -n "$want" ] && [ "$(mh_sha $WORK/w.bin)" = "$want" ]' ||
  tail -5 "$WORK/tb.log"
check "installed: the shim split it over wifi0 and lte0 ($line)" eval "$PY"' -c "
import json,sys
d=json.loads(sys.argv[1]); b={p[\"iface\"]: p[\"bytes\"] for p in d[\"paths\"]}
sys.exit(0 if d[\"result\"]==\"ok\" and b.get(\"wifi0\",0)>0 and b.get(\"lte0\",0)>0 else 1)" "$line"'
check "installed: mhttp -o 4 MiB exact" eval '[ "$(cat $WORK/m.rc)" = 0 ] && [ "$(mh_sha $WORK/m.bin)" = "$want" ]'
check "example download (progress callback): exact, progress printed" eval \
  '[ "$(cat $WORK/d.rc)" = 0 ] && [ "$(mh_sha $WORK/d.bin)" = "$want" ] && grep -q "done: 4194304 bytes" $WORK/d.err'
check "example epoll_loop (embedded session): exact" eval '[ "$(cat $WORK/e.rc)" = 0 ] && [ "$(mh_sha $WORK/e.bin)" = "$want" ]'

# 5. remove: every file the packages listed is gone, and dpkg knows none of them any more
for p in "${PKGS[@]}"; do dpkg --purge "$p" >>"$WORK/dpkg.log" 2>&1; done
left=$(while read -r f; do [ -e "$f" ] || [ -L "$f" ] && echo "$f"; done <"$WORK/files" | tr '\n' ' ')
check "dpkg --purge removed every installed file (left: ${left:-none})" test -z "$left"
check "dpkg --purge: no package left, no private directory, ldconfig forgot libmhttp.so.0" eval \
  '! installed mhttp && ! installed libmhttp-dev && ! installed libmhttp0 && [ ! -e "$LIBDIR/libmhttp" ] && [ ! -e /usr/share/doc/libmhttp-dev ] &&
   ! grep -q "libmhttp.so.0 " <<<"$(ldconfig -p)"'
WE_INSTALLED=0

# 6. the same examples against a temporary prefix (no root needed): cmake --install --prefix
P=$WORK/prefix
cmake --install "$MHTTP_BUILD_DIR" --prefix "$P" >"$WORK/install.log" 2>&1; rc=$?
check "cmake --install --prefix $P" eval '[ $rc = 0 ] && [ -x "$P/bin/mhttp" ]'
check "the prefix's mhttpd link and units naming it (ExecStart=$P/bin/mhttpd)" eval \
  '[ "$(readlink "$P/bin/mhttpd")" = mhttp ] && grep -q "^ExecStart=$P/bin/mhttpd " "$P/lib/systemd/system/mhttpd.service" &&
   grep -q "^ExecStart=$P/bin/mhttpd " "$P/lib/systemd/user/mhttpd.service"'
EX=$(echo "$P"/share/doc/*/examples)
check "examples: CMake against the prefix (CMAKE_PREFIX_PATH)" build_examples exprefix -DCMAKE_PREFIX_PATH="$P" || tail -5 "$WORK/exprefix.log"
cp -r "$EX" "$WORK/expcp"
check "examples: pkg-config against the prefix (PKG_CONFIG_PATH; prefix=$P)" eval \
  'PKG_CONFIG_PATH=$(dirname "$(find "$P" -name libmhttp.pc)") pc_examples "$WORK/expcp" &&
   grep -qx "prefix=$P" "$(find "$P" -name libmhttp.pc)"'
out=$(LD_LIBRARY_PATH=$(dirname "$(find "$P" -name libmhttp.so.0)") "$P/bin/mhttp" run -- sh -c 'echo "$LD_PRELOAD"')
check "mhttp run from the prefix preloads the prefix's library ($out)" eval '[ "$out" = "$(find "$P" -path "*/libmhttp/libmhttp.so")" ]'
mh_finish
