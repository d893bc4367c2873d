#!/bin/bash
# multiDNS on the testbed (demo): each network's own replica serves ranges only over that network, the program's answers are unchanged, and a silent resolver leaves both links serving the program's replica.
source "$(dirname "$0")/lib.sh"
mh_in_testbed demo

# wifi0 holds the default route: its servers come from resolv.conf; lte0's must be named
export MHTTP_DNS_lte0=$TESTBED_LTE0_DNS
A_LOG=$TESTBED_RUN_DIR/origin-a/access.log
B_LOG=$TESTBED_RUN_DIR/origin-b/access.log
WIFI=$TESTBED_WIFI0_ADDR
LTE=$TESTBED_LTE0_ADDR

# run NAME URL-PATH: wget under the shim (debug log), from cdn.test; records where the origins'
# access logs stood before, and whether the bytes match the manifest
run() {
  local name=$1 path=$2
  mkdir -p "$WORK/$name"
  A0=$(wc -l <"$A_LOG"); B0=$(wc -l <"$B_LOG")
  (cd "$WORK/$name" && env LD_PRELOAD="$SHIM" MHTTP_LOG=debug MHTTP_LOG_FILE="$WORK/$name/shim.log" \
     timeout 60 wget -q -O out.bin "http://cdn.test/$path" 2>"$WORK/$name/err"); RC=$?
  SUM_OK=0
  [ "$RC" = 0 ] && [ "$(mh_sha "$WORK/$name/out.bin")" = "$(mh_sum "$path")" ] && SUM_OK=1
}
# clients LOG FROM: "addr count" of the 206 answers logged after line FROM (nginx combined format)
clients() { tail -n +"$(($2 + 1))" "$1" | awk '$9 == 206 {print $1}' | sort | uniq -c | awk '{print $2, $1}'; }
# only LOG FROM ADDR: at least one 206 after FROM, and every one of them to ADDR
only() { local c; c=$(clients "$1" "$2"); [ -n "$c" ] && [ "$(echo "$c" | awk '{print $1}' | sort -u)" = "$3" ]; }

# -- the program's answers are the real resolver's, byte for byte
mh_pair getent getent ahosts cdn.test
check "getaddrinfo answer unchanged under the shim" eval 'mh_same_rc && [ "$PLAIN_RC" = 0 ] && mh_same_stdout'
mh_pair perl-ghbn perl -e '@a = gethostbyname("cdn.test"); print join(".", unpack("C4", $a[4])), "\n"; @b = gethostbyname("b.test"); print join(".", unpack("C4", $b[4])), "\n"'
check "gethostbyname answer unchanged under the shim" eval 'mh_same_rc && [ "$PLAIN_RC" = 0 ] && mh_same_stdout && grep -qx "$TESTBED_ORIGIN_A" "$MH_D/shim.out"'

# -- a gethostbyname program: its lookup feeds the harvest too (perl's builtins are libc's)
mkdir -p "$WORK/ghbn"
(cd "$WORK/ghbn" && env LD_PRELOAD="$SHIM" MHTTP_LOG=debug MHTTP_LOG_FILE="$WORK/ghbn/shim.log" timeout 30 perl -MSocket -e '
  my $a = (gethostbyname("cdn.test"))[4] or die "no address";
  socket(S, PF_INET, SOCK_STREAM, 0) or die; connect(S, sockaddr_in(80, $a)) or die "connect: $!";
  syswrite(S, "GET /files/4194304.bin HTTP/1.1\r\nHost: cdn.test\r\nConnection: close\r\n\r\n");
  my ($buf, $all) = ("", ""); while (sysread(S, $buf, 65536)) { $all .= $buf }
  $all =~ s/^.*?\r\n\r\n//s; open(O, ">", "out.bin") or die; binmode O; print O $all;' 2>"$WORK/ghbn/err")
check "gethostbyname program: exact bytes, and lte0 named its own replica" eval '[ "$(mh_sha "$WORK/ghbn/out.bin")" = "$(mh_sum files/4194304.bin)" ] &&
  grep -q "cdn.test resolved by the program" "$WORK/ghbn/shim.log" && grep -q "replica $TESTBED_ORIGIN_B of cdn.test joins on lte0" "$WORK/ghbn/shim.log"'

# -- (a) both resolvers answer: wifi0's names replica A, lte0's names replica B
F=files/134217728.bin
run both "$F"
echo "   srv-A 206s: $(clients "$A_LOG" "$A0" | tr '\n' ' ')   srv-B 206s: $(clients "$B_LOG" "$B0" | tr '\n' ' ')"
check "wget cdn.test 128 MiB under the shim is sha256-exact" [ "$SUM_OK" = 1 ]
check "srv-A served ranges only to wifi0 ($WIFI)" only "$A_LOG" "$A0" "$WIFI"
check "srv-B served ranges only to lte0 ($LTE)" only "$B_LOG" "$B0" "$LTE"
check "lte0's replica joined through lte0 (log)" grep -q "replica $TESTBED_ORIGIN_B of cdn.test joins on lte0" "$WORK/both/shim.log"

# -- (b) lte0's resolver silent (dnsmasq stopped: queries vanish, as behind a dead link)
DNS1=$(cat "$TESTBED_RUN_DIR/dns1.pid")
kill -STOP "$DNS1"
trap 'kill -CONT "$DNS1" 2>/dev/null; mh_cleanup' EXIT
G=files/33554432.bin
run silent "$G"
kill -CONT "$DNS1"
echo "   srv-A 206s: $(clients "$A_LOG" "$A0" | tr '\n' ' ')   srv-B 206s: $(clients "$B_LOG" "$B0" | tr '\n' ' ')"
check "lte0 resolver silent: 32 MiB sha256-exact" [ "$SUM_OK" = 1 ]
check "lte0 resolver silent: srv-A served ranges over both links" eval '[ "$(clients "$A_LOG" "$A0" | awk "{print \$1}" | sort | tr "\n" " ")" = "$(printf "%s\n%s\n" "$WIFI" "$LTE" | sort | tr "\n" " ")" ]'
check "lte0 resolver silent: srv-B served nothing" [ -z "$(clients "$B_LOG" "$B0")" ]
check "lte0 resolver silent: held, then the program's server on lte0 (log)" grep -q "lte0: no replica of its own for cdn.test" "$WORK/silent/shim.log"

# -- (c) a network that appears gets its own resolver: lte0 has no address when wget starts
#    (one interface: no resolver of lte0's, the first object relayed); it appears during the
#    first object, and the second object, in the same process, splits with lte0's own replica
"$PY" "$TESTBED" set lte0 addr=off >/dev/null
trap '"$PY" "$TESTBED" set lte0 addr=on >/dev/null 2>&1; mh_cleanup' EXIT
mkdir -p "$WORK/appear"
A0=$(wc -l <"$A_LOG"); B0=$(wc -l <"$B_LOG")
(cd "$WORK/appear" && env LD_PRELOAD="$SHIM" MHTTP_LOG=debug MHTTP_LOG_FILE="$WORK/appear/shim.log" \
   timeout 60 wget -q -O out.bin "http://cdn.test/files/4194304.bin" "http://cdn.test/$G" 2>"$WORK/appear/err") &
wpid=$!
sleep 0.5
"$PY" "$TESTBED" set lte0 addr=on >/dev/null
wait $wpid; RC=$?
echo "   srv-A 206s: $(clients "$A_LOG" "$A0" | tr '\n' ' ')   srv-B 206s: $(clients "$B_LOG" "$B0" | tr '\n' ' ')"
check "lte0 appears: both objects exact ($RC)" eval '[ $RC = 0 ] &&
  [ "$(head -c 4194304 "$WORK/appear/out.bin" | sha256sum | cut -d" " -f1)" = "$(mh_sum files/4194304.bin)" ] &&
  [ "$(tail -c +4194305 "$WORK/appear/out.bin" | sha256sum | cut -d" " -f1)" = "$(mh_sum "$G")" ]'
check "lte0 appears: multiDNS made again with it (log)" eval 'grep -q "multidns: one interface" "$WORK/appear/shim.log" &&
  grep -q "multidns: the interfaces changed" "$WORK/appear/shim.log" && grep -q "multidns: lte0: DNS servers" "$WORK/appear/shim.log"'
check "lte0 appears: the second object's lte0 ranges came from lte0's own replica" only "$B_LOG" "$B0" "$LTE"

mh_finish
