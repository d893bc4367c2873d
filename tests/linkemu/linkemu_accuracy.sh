#!/usr/bin/env bash
# Measures mhttp-linkemu on a topology of its own (client ns -- link ns -- server ns): RTT,
# TCP rate, loss, a live `set`, down/up, unshaped throughput and the CLI contract. Prints a
# table and exits non-zero on any miss. Everything it creates is torn down on exit or signal.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${MHTTP_BUILD_DIR:-$top/build/release}
emu=${MHTTP_LINKEMU:-$build/bench/linkemu/mhttp-linkemu}
probe=$(dirname "$emu")/mhttp-linkprobe

say() { echo "linkemu_accuracy: $*"; }
if [ "$(id -u)" -ne 0 ]; then say "needs root (network namespaces)"; exit 1; fi
for b in "$emu" "$probe"; do
  [ -x "$b" ] || { say "missing $b: build the mhttp-linkemu target first"; exit 1; }
done
for t in ip nsenter ping ethtool awk timeout; do
  command -v "$t" >/dev/null || { say "missing tool '$t' (scripts/setup.sh installs it)"; exit 1; }
done

# Unique per run: the pid plus a random tag (two runs in one pid namespace never collide).
id=le$$$(printf '%04x' $((RANDOM)))
ns_c=$id-c ns_s=$id-s ns_l=$id-l
ip_c=10.213.77.1 ip_s=10.213.77.2
tmp=$(mktemp -d /tmp/linkemu-it.XXXXXX)
ctl=$tmp/ctl
pids=()
created=()

cleanup() {
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.2
  done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  # Anything else still inside our namespaces was started by this script (ping, probes).
  for ns in "${created[@]}"; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fails=0
miss() { say "MISS: $*"; fails=$((fails + 1)); }
nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
# Background processes start as `nsenter --net=... -- CMD &` (a plain command, not a
# function): nsenter execs CMD and ip netns exec would fork, so $! is CMD's own pid.
ctlc() { timeout 10 "$emu" ctl "$ctl" "$@"; }
# stat KEY: one counter from a stats line in $stats
stat() { echo "$stats" | tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print $2 }'; }
# within MEASURED EXPECTED REL ABS: |m - e| <= REL*e + ABS
within() { awk -v m="$1" -v e="$2" -v r="$3" -v a="$4" 'BEGIN { d = m - e; if (d < 0) d = -d; exit !(d <= r * e + a) }'; }
mbit() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e6 }'; }

# ---- topology: c0 (client) -- la [link ns, emulator] lb -- s0 (server) ----
for ns in "$ns_c" "$ns_s" "$ns_l"; do
  ip netns add "$ns" || { say "cannot create namespace $ns"; exit 1; }
  created+=("$ns")
  ip -n "$ns" link set lo up
done
ip -n "$ns_c" link add c0 type veth peer name la netns "$ns_l" || exit 1
ip -n "$ns_s" link add s0 type veth peer name lb netns "$ns_l" || exit 1
ip -n "$ns_c" addr add $ip_c/24 dev c0
ip -n "$ns_s" addr add $ip_s/24 dev s0
ip -n "$ns_c" link set c0 up
ip -n "$ns_s" link set s0 up
# The end hosts keep their default offloads (TSO/GSO on): the emulator must cut their GSO
# super-frames into wire-size segments. The unshaped test repeats with offloads off.

# ---- CLI contract ----
out=$("$emu" --if-a la --rate fast 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] || miss "bad option: want exit 1 and one line, got $rc: $out"
out=$(nsx "$ns_l" "$emu" --if-a la --if-b nosuchif0 2>&1); rc=$?
[ $rc -eq 1 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] || miss "missing interface: want exit 1 and one line, got $rc: $out"

# Per-direction options as the testbed passes them; later options override earlier ones.
nsenter --net="/run/netns/$ns_l" -- "$emu" --if-a la --if-b lb --delay 10 --rate 5mbit --seed 7 \
  --delay-ab 12 --rate-ba 7mbit --loss-ba 0.5% --queue-ab 100k \
  --ctl "$ctl" --pidfile "$tmp/pid" --log "$tmp/emu.log" &
emu_pid=$!
pids+=($emu_pid)
for _ in $(seq 50); do ctlc stats >/dev/null 2>&1 && break; sleep 0.1; done
ctlc stats >/dev/null || { say "emulator did not come up"; cat "$tmp/emu.log"; exit 1; }
[ "$(cat "$tmp/pid" 2>/dev/null)" = "$emu_pid" ] || miss "pidfile does not hold the emulator's pid"
grep -q 'ab (la -> lb): delay=12.000ms rate=5000000bit loss=0 queue=102400 ' "$tmp/emu.log" &&
  grep -q 'ba (lb -> la): delay=10.000ms rate=7000000bit loss=0.005 queue=65536 ' "$tmp/emu.log" ||
  miss "per-direction start-up options not applied: $(grep -- '->' "$tmp/emu.log" | tr '\n' ' ')"
out=$(ctlc set ab colour=red); rc=$?
[ $rc -ne 0 ] && [[ "$out" == error:* ]] || miss "bad ctl command: want 'error: ...', got '$out'"

nsenter --net="/run/netns/$ns_s" -- "$probe" serve --port 5001 --lifetime 800 >/dev/null 2>&1 &
pids+=($!)
nsenter --net="/run/netns/$ns_c" -- "$probe" serve --port 5002 --lifetime 800 >/dev/null 2>&1 &
pids+=($!)
nsx "$ns_c" ping -c 3 -i 0.2 -W 2 -q $ip_s >/dev/null 2>&1  # ARP settled before measuring

rows=()
fmt='%-22s %8s %17s %8s %9s %9s %13s %6s  %s'
row() { rows+=("$(printf "$fmt" "$@")"); }

# ping_rtt COUNT INTERVAL -> "median avg loss%". The median is what is checked: one echo
# delayed by a scheduler hiccup on this shared 2-core machine must not move the verdict.
ping_rtt() {
  local o
  o=$(nsx "$ns_c" timeout 120 ping -c "$1" -i "$2" -W 2 -n $ip_s 2>&1)
  local med avg loss
  med=$(echo "$o" | sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p' | sort -g |
        awk '{ v[NR] = $1 } END { if (NR) printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
  avg=$(echo "$o" | awk -F/ '/^rtt/ { print $5 }')
  loss=$(echo "$o" | awk '/packet loss/ { for (i = 1; i <= NF; i++) if ($i ~ /%$/) { sub("%", "", $i); print $i } }')
  echo "${med:-nan} ${avg:-nan} ${loss:-100}"
}

# tcp DIR WARMUP SECONDS [STREAMS] -> "wire_bps l3_bps"; DIR down = server->client (ba),
# up = ab. Several streams keep a long fat link busy whatever one flow's congestion control
# does after a loss (what is measured is the link, not cubic at 200 ms RTT).
tcp() {
  local o
  if [ "$1" = down ]; then
    o=$(nsx "$ns_c" timeout 120 "$probe" get --addr $ip_s --port 5001 --warmup "$2" --seconds "$3" --streams "${4:-1}" 2>&1)
  else
    o=$(nsx "$ns_s" timeout 120 "$probe" get --addr $ip_c --port 5002 --warmup "$2" --seconds "$3" --streams "${4:-1}" 2>&1)
  fi
  local w l
  w=$(echo "$o" | tr ' ' '\n' | awk -F= '$1 == "wire_bps" { print $2 }')
  l=$(echo "$o" | tr ' ' '\n' | awk -F= '$1 == "l3_bps" { print $2 }')
  [ -n "$w" ] || say "probe: $o" >&2
  echo "${w:-0} ${l:-0}"
}

# shaped NAME DELAY_MS RATE_BPS RATE_ARG WARMUP SECONDS STREAMS
# TCP, not the emulator, is what leaves a drop-tail link idle now and then: after synchronised
# losses cubic needs seconds at 200 ms RTT to refill it (the emulator's counters show the
# rate exactly whenever it has a backlog). More parallel streams on a longer, fatter pipe keep
# that below ~2 % of the window.
shaped() {
  local name=$1 delay=$2 rate=$3 rarg=$4 warm=$5 secs=$6 streams=$7
  ctlc set both delay="$delay" rate="$rarg" loss=0 queue=0 >/dev/null || miss "$name: set refused"
  sleep 1  # let the previous test's queue drain: ping measures the idle link
  # Expected RTT: two one-way delays plus serialising a ping (84 IP bytes) each way.
  local exp
  exp=$(awk -v d="$delay" -v r="$rate" 'BEGIN { printf "%.3f", 2 * d + 2 * 84 * 8 / r * 1000 }')
  read -r rtt ravg ploss < <(ping_rtt 20 0.1)
  within "$rtt" "$exp" 0.05 1 || miss "$name: RTT median $rtt ms (avg $ravg), expected $exp ms"
  local verdict
  for dir in down up; do
    verdict=ok
    local try why
    for try in 1 2; do
      why=
      read -r wire l3 < <(tcp $dir "$warm" "$secs" "$streams")
      # The acceptance: the L3 rate the link carried (data segments x (mss + 52)) within 5 %.
      within "$wire" "$rate" 0.05 0 || why="link carried $(mbit "$wire") Mbit/s, set $(mbit "$rate")"
      # Goodput x (mss + 52) / mss says the same, but a loss hole open at a window edge moves
      # up to one receive window of bytes across it (~2 % at 200 ms RTT): checked within 8 %.
      [ -n "$why" ] || within "$l3" "$rate" 0.08 0 ||
        why="goodput-derived L3 rate $(mbit "$l3") Mbit/s, set $(mbit "$rate")"
      [ -n "$why" ] || break
      # One more window when the first misses: what is read here is TCP on a shared 2-core
      # machine, and a CPU stall of the user-space emulator makes the senders retransmit a
      # window spuriously (seen once in CI: wire 48.6, goodput 45.6 of 50 Mbit/s). An emulator
      # that shapes wrong misses both windows.
      if [ $try = 1 ]; then say "$name $dir: first window missed ($why); measuring again"; verdict="ok(2nd)"
      else miss "$name $dir: $why"; verdict=MISS; fi
    done
    row "$name $dir" "$exp" "$rtt/$ravg" "$(mbit "$rate")" "$(mbit "$wire")" "$(mbit "$l3")" "-" "$ploss%" "$verdict"
  done
}

shaped "10ms/5Mbit" 10 5000000 5mbit 3 6 4
shaped "50ms/20Mbit" 50 20000000 20mbit 4 6 4
shaped "100ms/50Mbit" 100 50000000 50mbit 5 10 8

# ---- drop-tail: an 8 KiB queue at 5 Mbit/s under a bulk download ----
ctlc set both delay=10 rate=5mbit loss=0 queue=8k jitter=0 >/dev/null
stats=$(ctlc stats); q0=$(stat ba.drops_queue)
tcp down 1 3 >"$tmp/q" &
bg=$!
qmax=0
for _ in $(seq 20); do
  sleep 0.15
  stats=$(ctlc stats); q=$(stat ba.queue_bytes)
  [ "${q:-0}" -gt $qmax ] && qmax=$q
done
wait $bg
read -r wire l3 <"$tmp/q"
stats=$(ctlc stats); qd=$(( $(stat ba.drops_queue) - q0 ))
verdict=ok
# Backlog never exceeds the limit plus the frame being serialised.
[ $qmax -le $((8192 + 1514)) ] || { miss "queue 8k: backlog reached $qmax bytes"; verdict=MISS; }
[ $qd -gt 0 ] || { miss "queue 8k: no drop-tail drops under a bulk download"; verdict=MISS; }
within "$wire" 5000000 0.10 0 || { miss "queue 8k: carried $(mbit "$wire") Mbit/s"; verdict=MISS; }
row "queue 8k 10ms/5Mbit" - "qmax $qmax" 5.00 "$(mbit "$wire")" "$(mbit "$l3")" "drops $qd" - "$verdict"

# ---- jitter: +-5 ms uniform on 20 ms each way; sparse pings are never held back ----
ctlc set both delay=20 rate=0 loss=0 queue=0 jitter=5 >/dev/null
sleep 0.5
o=$(nsx "$ns_c" timeout 60 ping -c 40 -i 0.05 -W 2 -q $ip_s 2>&1)
javg=$(echo "$o" | awk -F/ '/^rtt/ { print $5 }')
jdev=$(echo "$o" | awk -F/ '/^rtt/ { sub(" ms", "", $7); print $7 }')
verdict=ok
within "${javg:-0}" 40 0.05 1 || { miss "jitter: RTT avg $javg ms, expected 40 ms"; verdict=MISS; }
# The sum of two uniform(-5, 5) has sd 4.1 ms: a spread well above 1 ms shows jitter is applied.
awk -v d="${jdev:-0}" 'BEGIN { exit !(d >= 2 && d <= 7) }' || { miss "jitter: RTT mdev $jdev ms, expected ~3.5"; verdict=MISS; }
row "jitter 20ms+-5ms" 40.000 "mdev $jdev/$javg" unlim - - - - "$verdict"
ctlc set both jitter=0 >/dev/null

# ---- loss: 1 % each way, counted by the emulator and seen by ping ----
ctlc set both delay=10 rate=20mbit loss=0.01 queue=0 >/dev/null
stats=$(ctlc stats); a_rx=$(stat ab.rx_frames) a_l=$(stat ab.drops_loss) b_rx=$(stat ba.rx_frames) b_l=$(stat ba.drops_loss)
read -r rtt ravg ploss < <(ping_rtt 400 0.01)
read -r wire l3 < <(tcp down 1 4)
stats=$(ctlc stats)
ra=$(awk -v l=$(( $(stat ab.drops_loss) - a_l )) -v n=$(( $(stat ab.rx_frames) - a_rx )) 'BEGIN { printf "%.4f", n ? l / n : 0 }')
rb=$(awk -v l=$(( $(stat ba.drops_loss) - b_l )) -v n=$(( $(stat ba.rx_frames) - b_rx )) 'BEGIN { printf "%.4f", n ? l / n : 0 }')
verdict=ok
within "$ra" 0.01 0 0.005 || { miss "loss ab: $ra of frames dropped, set 0.01"; verdict=MISS; }
within "$rb" 0.01 0 0.003 || { miss "loss ba: $rb of frames dropped, set 0.01"; verdict=MISS; }
# Ping crosses the link twice: 1 - 0.99^2 = 1.99 % expected; 400 pings: sd 0.7 %.
awk -v p="$ploss" 'BEGIN { exit !(p > 0 && p <= 6) }' || { miss "loss: ping lost $ploss %, expected ~2 %"; verdict=MISS; }
row "loss 1% 10ms/20Mbit" 20.017 "$rtt/$ravg" 20.00 "$(mbit "$wire")" "$(mbit "$l3")" "$ra/$rb" "$ploss%" "$verdict"

# ---- live set: the rate drops from 20 to 10 Mbit/s during a transfer ----
ctlc set both delay=10 rate=20mbit loss=0 queue=0 >/dev/null
tcp down 4 5 >"$tmp/live" &
live=$!
sleep 1.5
ctlc set ba rate=10mbit >/dev/null || miss "live set refused"
wait $live
read -r wire l3 <"$tmp/live"
verdict=ok
within "$wire" 10000000 0.05 0 || { miss "live set: carried $(mbit "$wire") Mbit/s after set rate=10mbit"; verdict=MISS; }
row "live set 20->10Mbit" - - 10.00 "$(mbit "$wire")" "$(mbit "$l3")" - - "$verdict"

# ---- down / up: frames dropped both ways, queues flushed, forwarding resumes ----
ctlc set both delay=10 rate=5mbit loss=0 queue=0 >/dev/null
tcp down 1 3 >/dev/null &
bg=$!
sleep 1.5
stats=$(ctlc stats); before=$(stat ba.inflight_frames)
ctlc down >/dev/null || miss "down refused"
sleep 0.3
stats=$(ctlc stats)
verdict=ok
for d in ab ba; do
  [ "$(stat $d.inflight_frames)" = 0 ] && [ "$(stat $d.queue_bytes)" = 0 ] || { miss "down: $d queue not flushed: $stats"; verdict=MISS; }
done
[ "$(stat ba.drops_down)" -gt 0 ] || { miss "down: no drops_down counted"; verdict=MISS; }
read -r rtt ravg ploss < <(ping_rtt 3 0.2)
[ "$ploss" = 100 ] || { miss "down: ping got through ($ploss % loss)"; verdict=MISS; }
ctlc up >/dev/null || miss "up refused"
wait $bg
read -r rtt ravg ploss < <(ping_rtt 5 0.1)
[ "$ploss" = 0 ] || { miss "up: ping lost $ploss %"; verdict=MISS; }
row "down/up" - "$rtt/$ravg" - "in flight $before" "-> 0" - "$ploss%" "$verdict"

# ---- unshaped: rate 0, delay 0; with GSO super-frames, then with offloads off ----
ctlc set both delay=0 rate=0 loss=0 queue=0 >/dev/null
max=0
for mode in gso mtu; do
  if [ $mode = mtu ]; then
    for x in "$ns_c c0" "$ns_s s0"; do
      set -- $x
      ip netns exec "$1" ethtool -K "$2" gro off gso off tso off tx off rx off >/dev/null 2>&1
    done
  fi
  read -r rtt ravg ploss < <(ping_rtt 20 0.05)
  awk -v r="$rtt" 'BEGIN { exit !(r < 1) }' || miss "unshaped ($mode): RTT $rtt ms"
  for dir in down up; do
    read -r wire l3 < <(tcp $dir 1 4)
    verdict=ok
    awk -v w="$wire" 'BEGIN { exit !(w >= 200e6) }' || { miss "unshaped ($mode) $dir: only $(mbit "$wire") Mbit/s"; verdict=MISS; }
    max=$(awk -v a="$max" -v b="$wire" 'BEGIN { print (b > a ? b : a) }')
    row "unshaped $mode $dir" "~0" "$rtt/$ravg" "unlim" "$(mbit "$wire")" "$(mbit "$l3")" - "$ploss%" "$verdict"
  done
done

# ---- SIGTERM: exits cleanly, removes its ctl socket and pidfile ----
kill -TERM $emu_pid
for _ in $(seq 50); do kill -0 $emu_pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $emu_pid 2>/dev/null; then miss "emulator still running 5 s after SIGTERM"
else
  wait $emu_pid; rc=$?
  [ $rc -eq 0 ] || miss "emulator exit status $rc after SIGTERM"
  [ ! -e "$ctl" ] && [ ! -e "$tmp/pid" ] || miss "ctl socket or pidfile left after SIGTERM"
fi

# ---- quit on the control socket: same clean exit ----
nsenter --net="/run/netns/$ns_l" -- "$emu" --if-a la --if-b lb --ctl "$ctl" --pidfile "$tmp/pid" \
  --log "$tmp/emu.log" &
emu_pid=$!
pids+=($emu_pid)
for _ in $(seq 50); do ctlc stats >/dev/null 2>&1 && break; sleep 0.1; done
out=$(ctlc quit)
[ "$out" = ok ] || miss "quit: answer '$out'"
for _ in $(seq 50); do kill -0 $emu_pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $emu_pid 2>/dev/null; then miss "emulator still running 5 s after quit"
else
  wait $emu_pid; rc=$?
  [ $rc -eq 0 ] && [ ! -e "$ctl" ] && [ ! -e "$tmp/pid" ] || miss "quit: exit $rc, or ctl socket/pidfile left"
fi

echo
printf "$fmt\n" setting rtt_exp rtt_med/avg_ms rate_set wire_Mbit l3_Mbit loss_ab/ba ping_l verdict
for r in "${rows[@]}"; do echo "$r"; done
echo "max unshaped throughput: $(mbit "$max") Mbit/s (link-carried L3 rate, one TCP flow)"
if [ $fails -ne 0 ]; then
  say "$fails miss(es); emulator log:"
  tail -20 "$tmp/emu.log"
  exit 1
fi
say "all within tolerance"
