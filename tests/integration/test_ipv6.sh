#!/bin/bash
# IPv6: the five programs download over the dual-stack testbed's v6 origin address through the shim, byte-identical, connection taken over.
source "$(dirname "$0")/lib.sh"
mh_in_testbed lan --ipv6

[ -n "${TESTBED_ORIGIN_A6:-}" ] || { fail "testbed has no IPv6 origin address (TESTBED_ORIGIN_A6)"; mh_finish; }
base="http://[$TESTBED_ORIGIN_A6]"
py_get='import sys, urllib.request; open(sys.argv[2], "wb").write(urllib.request.urlopen(sys.argv[1]).read())'
for size in 1 65536 4194304; do
  url=$base/files/$size.bin
  want=$(mh_sum "files/$size.bin")
  for prog in curl wget wget2 python3 aria2c; do
    case $prog in
      curl) mh_pair "$prog-$size" curl -sS -g -o out.bin "$url" ;;
      wget) mh_pair "$prog-$size" wget -q -O out.bin "$url" ;;
      wget2) mh_pair "$prog-$size" wget2 -q -O out.bin "$url" ;;
      python3) mh_pair "$prog-$size" "$PY" -c "$py_get" "$url" out.bin ;;
      aria2c) mh_pair "$prog-$size" aria2c -q --allow-overwrite=true -d . -o out.bin "$url" ;;
    esac
    check "IPv6 $prog $size bytes" eval '[ "$PLAIN_RC" = 0 ] && mh_same_rc && [ "$(mh_sha $MH_D/plain/out.bin)" = "$want" ] &&
      [ "$(mh_sha $MH_D/shim/out.bin)" = "$want" ] && mh_taken 1'
  done
done
# getpeername on a taken-over v6 socket gives the real TCP peer
mh_pair v6-peer curl -sS -g -o /dev/null -w '%{remote_ip} %{remote_port}\n' "$base/files/1.bin"
check "IPv6 curl sees the real peer address" eval 'mh_same_stdout && grep -q "$TESTBED_ORIGIN_A6 80" "$MH_D/shim.out"'
mh_finish
