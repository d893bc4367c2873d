#!/usr/bin/python3
"""Where a download's wall time goes, from its packets: per client, the phases of one object (process start to its DNS query, DNS, connect, request, first and last body byte, exit), median (min-max) of interleaved rounds.

Runs inside a testbed (root), e.g.
  flock /tmp/mhttp-bench.lock bench/testbed/testbed run demo -- /usr/bin/python3 bench/split/timeline.py 15 16384 wget@wifi0 curl@wifi0 wget+shim curl+shim

A CLIENT is wget or curl; @IF binds it to that interface (plain), +shim preloads $MHTTP_BUILD_DIR's
libmhttp.so (default build/release), +shim=PATH another one. Packets are timestamped by the kernel
(AF_PACKET, SO_TIMESTAMPNS) on every client interface, so the client pays nothing for being
watched; "the connection" is the first one the client opens to port 80 (the program's own under
the shim: the probe's). Under the shim each run also reports the split's own duration
(MHTTP_STATS duration_ms) and the bytes per interface.
"""
import json
import os
import socket
import statistics as st
import struct
import subprocess
import sys
import tempfile
import threading
import time

SO_TIMESTAMPNS = 35
HERE = os.path.dirname(os.path.realpath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
PHASES = [("start>dns", None, "dnsq"), ("dns", "dnsq", "dnsa"), ("dns>syn", "dnsa", "syn"), ("handshake", "syn", "synack"),
          ("syn>req", "synack", "req"), ("req>1st", "req", "first"), ("1st>last", "first", "last"),
          ("last>exit", "last", "exit"), ("TOTAL", None, "exit")]


class Sniffer(threading.Thread):
    """(ns, ifname, outgoing, sport, dport, flags, payload) of every IPv4 TCP/UDP packet until stop()."""

    def __init__(self):
        super().__init__(daemon=True)
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        self.s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.s.settimeout(0.02)
        self.pkts, self.done = [], False

    def run(self):
        while not self.done:
            try:
                data, anc, _, addr = self.s.recvmsg(128, 64)
            except (socket.timeout, InterruptedError):
                continue
            if addr[0] == "lo" or addr[1] != 0x0800 or len(data) < 14 + 20:
                continue
            ts = next((sum(a * b for a, b in zip(struct.unpack("qq", d[:16]), (10**9, 1)))
                       for lvl, typ, d in anc if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS), time.time_ns())
            ip = data[14:]
            ihl, tot, proto = (ip[0] & 15) * 4, struct.unpack("!H", ip[2:4])[0], ip[9]
            l4 = ip[ihl:]
            if proto not in (6, 17) or len(l4) < 14:
                continue
            sp, dp = struct.unpack("!HH", l4[:4])
            out = addr[2] == socket.PACKET_OUTGOING
            if proto == 6:
                self.pkts.append((ts, addr[0], out, sp, dp, l4[13], tot - ihl - (l4[12] >> 4) * 4))
            else:
                self.pkts.append((ts, addr[0], out, sp, dp, -1, tot - ihl - 8))

    def stop(self):
        self.done = True
        self.join()


def phases(pkts, t0, t1):
    """ms since t0 of each event (see PHASES), from the packets of [t0, t1]."""
    ms = lambda t: (t - t0) / 1e6
    kv, conns, order = {"exit": ms(t1)}, {}, []
    for ts, ifn, out, sp, dp, fl, n in pkts:
        if not t0 <= ts <= t1 + 10**6:
            continue
        if fl < 0:
            if out and dp == 53:
                kv.setdefault("dnsq", ms(ts))
            if not out and sp == 53:
                kv.setdefault("dnsa", ms(ts))
            continue
        if (dp if out else sp) not in (80, 8080):
            continue
        k = (ifn, sp if out else dp)
        if k not in conns:
            order.append(k)
        c = conns.setdefault(k, {})
        if fl & 2:
            c.setdefault("syn" if out else "synack", ts)
        if out and n:
            c.setdefault("req", ts)
        if not out and n:
            c.setdefault("first", ts)
            c["last"] = ts
    main = next((k for k in order if "syn" in conns[k]), None)
    for x in ("syn", "synack", "req", "first"):
        if main and x in conns[main]:
            kv[x] = ms(conns[main][x])
    lasts = [c["last"] for c in conns.values() if "last" in c]
    if lasts:
        kv["last"] = ms(max(lasts))
    return kv


def command(name, url, out, stats):
    """argv and extra environment of contender `name`."""
    prog, shim = name.split("+")[0].split("@")[0], None
    if "+shim" in name:
        shim = name.split("=", 1)[1] if "=" in name else os.path.join(
            os.environ.get("MHTTP_BUILD_DIR", os.path.join(TOP, "build", "release")), "shim", "libmhttp.so")
    ifc = name.split("@")[1] if "@" in name else None
    if prog == "wget":
        argv = ["wget", "-q", "-O", out] + (["--bind-address=" + os.environ["TESTBED_%s_ADDR" % ifc.upper()]] if ifc else [])
    else:
        argv = ["curl", "-s", "--fail", "-o", out] + (["--interface", ifc] if ifc else [])
    env = {"LD_PRELOAD": shim, "MHTTP_IFACES": ",".join(os.environ["TESTBED_IFACES"].split()),
           "MHTTP_STATS": stats} if shim else {}
    return argv + [url], env


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rounds, size, names = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    url = os.environ["TESTBED_URL_A"] + "/files/%d.bin" % size
    work = tempfile.mkdtemp(prefix="mhttp-timeline.")
    rows = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            stats = os.path.join(work, "stats")
            argv, extra = command(name, url, os.path.join(work, "o"), stats)
            sn = Sniffer()
            sn.start()
            time.sleep(0.05)
            t0 = time.time_ns()
            subprocess.run(argv, env=dict(os.environ, **extra), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t1 = time.time_ns()
            time.sleep(0.05)
            sn.stop()
            kv = phases(sn.pkts, t0, t1)
            if extra and os.path.exists(stats):
                with open(stats) as fh:
                    s = json.loads(fh.read().splitlines()[-1])
                os.unlink(stats)
                kv["split"] = s["duration_ms"]
                kv["paths"] = {p["iface"]: p["bytes"] for p in s["paths"]}
            rows[name].append(kv)
    print("%-22s %3s " % ("client", "n") + " ".join("%17s" % p[0] for p in PHASES) + " %17s" % "split (stats)")
    for name, rs in rows.items():
        cells = []
        for _, a, b in PHASES + [("split", None, "split")]:
            xs = [x[b] - (x[a] if a else 0) for x in rs if b in x and (a is None or a in x)]
            cells.append("%7.2f(%4.1f-%4.1f)" % (st.median(xs), min(xs), max(xs)) if xs else "-")
        print("%-22s %3d " % (name, len(rs)) + " ".join("%17s" % c for c in cells))


if __name__ == "__main__":
    main()
