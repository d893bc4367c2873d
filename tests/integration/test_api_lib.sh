#!/bin/bash
# The API library (libmhttp.so.0) interposes nothing and exports only the public API; mhttp_shim_active() from a program linked to it says whether libmhttp.so is active, with and without LD_PRELOAD.
source "$(dirname "$0")/lib.sh"
# No testbed: nothing here touches a network.

API_LIB=$MHTTP_BUILD_DIR/multihttp/libmhttp.so.0
PROBE=$MHTTP_BUILD_DIR/tests/integration/api_probe

# 1. Exports. Every name the API library defines for other objects is public API (mhttp_,
# not the preload library's private mhttp__ marker), and none is a name libmhttp.so
# interposes (read from libmhttp.so itself, so a new hook is covered without editing this).
api_syms=$(nm -D --defined-only "$API_LIB" | awk '{print $3}' | sort)
hooks=$(nm -D --defined-only "$SHIM_LIB" | awk '{print $3}' | grep -v '^mhttp__' | sort)
echo "   API library exports: $(tr '\n' ' ' <<<"$api_syms")"
check "the API library exports mhttp_version and mhttp_shim_active" eval \
  'grep -qx mhttp_version <<<"$api_syms" && grep -qx mhttp_shim_active <<<"$api_syms"'
bad=$(grep -Ev '^mhttp_[a-z0-9]' <<<"$api_syms" | tr '\n' ' ')
check "the API library exports nothing but mhttp_* (extra: ${bad:-none})" test -z "$bad"
both=$(comm -12 <(echo "$api_syms") <(echo "$hooks") | tr '\n' ' ')
check "the API library defines none of libmhttp.so's $(wc -l <<<"$hooks") interposed names (${both:-none})" test -z "$both"
check "libmhttp.so interposes connect, write and close (the list above is real)" eval \
  'grep -qx connect <<<"$hooks" && grep -qx write <<<"$hooks" && grep -qx close <<<"$hooks"'
pub=$(grep '^mhttp_[a-z0-9]' <<<"$hooks" | tr '\n' ' ')
check "libmhttp.so exports no public API name (${pub:-none}): the API library's own are never interposed" test -z "$pub"

# 2. Resolution in a program linked to the API library: each interposed name is libc's own
# (in the Asan tree the ASan runtime intercepts many of them first, as in any program built
# with it); under LD_PRELOAD the same check sees libmhttp.so's (it can tell them apart).
deps=$(ldd "$PROBE")
check "api_probe is linked to the API library's SONAME libmhttp.so.0" eval \
  '[[ "$deps" == *"libmhttp.so.0 => $MHTTP_BUILD_DIR/multihttp/libmhttp.so.0"* ]]'
san=${MH_SAN_RT:+$(basename "$MH_SAN_RT")}
# shellcheck disable=SC2086
out=$("$PROBE" libc $hooks)
notlibc=$(awk -v san="$san" '$2 != "libc" && $2 != san' <<<"$out" | tr '\n' ' ')
check "linked to the API library: every interposable call is libc's (${notlibc:-all libc${san:+ or $san}})" eval \
  '[ -n "$out" ] && [ -z "$notlibc" ]'
out=$(env LD_PRELOAD="$SHIM" "$PROBE" libc connect close)
check "control, LD_PRELOAD=libmhttp.so: connect and close are the shim's ($(tr '\n' ' ' <<<"$out"))" eval \
  '[ "$(grep -c " libmhttp.so$" <<<"$out")" = 2 ]'

# 3. mhttp_shim_active() and mhttp_version() from the API library.
want=$(sed -n 's/^project(libmhttp VERSION \([0-9.]*\).*/\1/p' "$MHTTP_SOURCE_DIR/CMakeLists.txt")
got=$("$PROBE" version)
check "mhttp_version() is the project's version ($got, want $want)" test -n "$want" -a "$got" = "$want"
got=$("$PROBE" active)
check "no preload: mhttp_shim_active() = 0 ($got)" test "$got" = 0
got=$(env LD_PRELOAD="$SHIM" "$PROBE" active)
check "LD_PRELOAD=libmhttp.so: mhttp_shim_active() = 1 ($got)" test "$got" = 1
got=$(env LD_PRELOAD="$SHIM" MHTTP_DISABLE=1 "$PROBE" active)
check "LD_PRELOAD, MHTTP_DISABLE=1: mhttp_shim_active() = 0 ($got)" test "$got" = 0
got=$(env LD_PRELOAD="$SHIM" MHTTP_PORTS=x "$PROBE" active 2>"$WORK/bad.err")
check "LD_PRELOAD, a bad setting: mhttp_shim_active() = 0 and one line on stderr ($got)" eval \
  '[ "$got" = 0 ] && grep -q "libmhttp disabled" "$WORK/bad.err"'
if [ -z "$MH_SAN_RT" ]; then
  got=$("$PROBE" dlopen-local "$SHIM_LIB")
  check "libmhttp.so dlopen'ed RTLD_LOCAL interposes nothing: mhttp_shim_active() = 0 ($got)" \
    test "$got" = "loaded 0"
fi

mh_finish
