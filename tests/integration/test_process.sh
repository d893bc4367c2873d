#!/bin/bash
# Process-level behaviour under the shim: the epoll example, fork, threads, exit right after writing, configuration errors and MHTTP_DISABLE.
source "$(dirname "$0")/lib.sh"
mh_in_testbed lan

mh_local_origin 8080 || exit 1
A=$TESTBED_URL_A
EX=$MHTTP_BUILD_DIR/tests/harness/epoll_get

# -- the epoll example (registers before its first write)
for f in files/1.bin files/65536.bin files/4194304.bin; do
  mh_pair "epoll-${f//\//_}" "$EX" "$A/$f" out.bin
  check "epoll_get $f" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] && [ "$(mh_sha $MH_D/shim/out.bin)" = "$(mh_sum $f)" ] && mh_taken 1'
done
mh_pair epoll-404 "$EX" "$A/none" out.bin
check "epoll_get 404" eval 'mh_same_rc && [ "$SHIM_RC" = 1 ] && mh_same_file out.bin && mh_taken 1'
mh_pair epoll-refused "$EX" "http://127.0.0.1:80/"
check "epoll_get refused (same message)" eval 'mh_same_rc && mh_same_stderr'

# -- socket emulation: addresses, options, SO_ERROR, FIONREAD, MSG_PEEK, MSG_WAITALL, half-close
mh_pair sockemu "$PY" "$HERE/sockemu.py" a.test 80 /files/1048576.bin
check "socket emulation identical to a real TCP socket" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] && mh_same_stdout && mh_taken 1'
[ "$SHIM_RC" = 0 ] && mh_same_stdout >/dev/null || { cat "$MH_D/plain.out"; cat "$MH_D/shim.out" "$MH_D/shim.err"; }

# -- fork: both processes keep working; the child holds none of the engine's sockets
mh_pair fork "$PY" "$HERE/forker.py" fork "$A/files/65536.bin" "$A/files/1048576.bin"
check "fork: parent and child work, child inherits only the program's socket" eval 'mh_same_rc && mh_same_stdout &&
  grep -q "child inherited sockets 1" "$MH_D/shim.out" && grep -q "child status 0" "$MH_D/shim.out" && mh_taken 2'

# -- threads: eight concurrent downloads in one process
urls=""
for s in 16384 32768 65536 262144 1048576 4194304 33554432 1; do urls="$urls $A/files/$s.bin"; done
mh_pair threads "$PY" "$HERE/forker.py" threads $urls
check "8 threads at once" eval 'mh_same_rc && mh_same_stdout && ! grep -q None "$MH_D/shim.out" && mh_taken 8'

# -- exit right after writing: the whole request body still reaches the server. The origin
#    reads nothing for 0.5 s, so when the program calls exit() part of the body still sits in
#    the shim's buffers (the small kernel buffers are full): only the exit drain delivers it.
head -c 300000 /dev/urandom > "$WORK/exitbody.bin"
want="POST /slowexit 300000 $(mh_sha "$WORK/exitbody.bin")"
if cc -O1 -o "$WORK/exitw.bin" "$HERE/exitw.c"; then
  mh_pair post-exit "$WORK/exitw.bin" 8080 "$WORK/exitbody.bin" /slowexit
  for _ in $(seq 100); do [ "$(grep -c "^POST /slowexit" "$WORK/origin-8080.log")" -ge 2 ] && break; sleep 0.1; done
  check "exit right after writing: both runs delivered every byte" eval '[ "$(grep -c "^$want" "$WORK/origin-8080.log")" = 2 ] && mh_taken 1'
  grep "^POST /slowexit" "$WORK/origin-8080.log" | cut -c1-40
else
  fail "cannot compile exitw.c"
fi

# -- main thread ends with pthread_exit: the engine thread must not keep the process alive
if cc -O1 -o "$WORK/pexit.bin" "$HERE/pexit.c" -lpthread; then
  mh_pair pexit timeout 10 "$WORK/pexit.bin" 8080 /
  check "pthread_exit in main: the process still exits 0" eval 'mh_same_rc && [ "$SHIM_RC" = 0 ] && mh_same_stdout && mh_taken 1'
else
  fail "cannot compile pexit.c"
fi

# -- configuration: a bad value is one clear line and the program runs unchanged, untouched
for bad in "MHTTP_PORTS=80,http" "MHTTP_LOG=loud" "MHTTP_DISABLE=perhaps" "MHTTP_CONFIG=/nonexistent/mhttp.conf"; do
  out=$(env LD_PRELOAD="$SHIM" "$bad" curl -sS -o "$WORK/cfg.bin" -w '%{http_code}' "$A/files/65536.bin" 2>"$WORK/cfg.err")
  lines=$(wc -l < "$WORK/cfg.err")
  check "bad $bad: one line, program unchanged" eval '[ "$out" = 200 ] && [ "$lines" = 1 ] &&
    grep -q "^libmhttp: .*libmhttp disabled$" "$WORK/cfg.err" && [ "$(mh_sha $WORK/cfg.bin)" = "$(mh_sum files/65536.bin)" ]'
done
printf 'ports = 8080\nlog = info\n' > "$WORK/mhttp.conf"
MHTTP_CONFIG=$WORK/mhttp.conf mh_pair config-file curl -sS -o out.bin "$A/files/65536.bin"
check "config file: port 80 not listed, not taken" eval 'mh_same_rc && [ "$TAKEN" = 0 ] && mh_same_file out.bin'
MHTTP_CONFIG=$WORK/mhttp.conf mh_pair config-file-8080 curl -sS -o out.bin "http://a.test:8080/files/65536.bin"
check "config file: port 8080 listed, taken" eval 'mh_same_rc && mh_taken 1 && mh_same_file out.bin'
MHTTP_DISABLE=1 mh_pair disabled curl -sS -o out.bin "$A/files/65536.bin"
check "MHTTP_DISABLE=1 is a no-op" eval 'mh_same_rc && [ "$TAKEN" = 0 ] && [ ! -s "$MH_D/shim.log" ] && [ ! -s "$MH_D/shim.err" ]'

mh_finish
