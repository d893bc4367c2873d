#!/bin/bash
# curl, wget, wget2, python3 (urllib) and aria2c download every testbed file with and without the shim: same sha256 (the manifest's), same exit code, connection really taken over.
source "$(dirname "$0")/lib.sh"
mh_in_testbed lan

py_get='import sys, urllib.request; open(sys.argv[2], "wb").write(urllib.request.urlopen(sys.argv[1]).read())'
for size in $TESTBED_FILE_SIZES; do
  url=$TESTBED_URL_A/files/$size.bin
  want=$(mh_sum "files/$size.bin")
  [ -n "$want" ] || { fail "manifest has files/$size.bin"; continue; }
  for prog in curl wget wget2 python3 aria2c; do
    case $prog in
      curl) mh_pair "$prog-$size" curl -sS -o out.bin "$url" ;;
      wget) mh_pair "$prog-$size" wget -q -O out.bin "$url" ;;
      wget2) mh_pair "$prog-$size" wget2 -q -O out.bin "$url" ;;
      python3) mh_pair "$prog-$size" "$PY" -c "$py_get" "$url" out.bin ;;
      aria2c) mh_pair "$prog-$size" aria2c -q --allow-overwrite=true --auto-file-renaming=false -d . -o out.bin "$url" ;;
    esac
    name="$prog $size bytes"
    sp=$(mh_sha "$MH_D/plain/out.bin"); ss=$(mh_sha "$MH_D/shim/out.bin")
    if [ "$PLAIN_RC" = 0 ] && [ "$sp" = "$want" ] && [ "$ss" = "$want" ] && mh_same_rc && mh_taken 1; then
      pass "$name"
    else
      fail "$name (rc $PLAIN_RC/$SHIM_RC, sha plain ${sp:0:12} shim ${ss:0:12} want ${want:0:12}, taken $TAKEN)"
      head -3 "$MH_D/shim.err"
    fi
  done
done
mh_finish
