"""A dig-less DNS query (stdlib): asks one server for one name, optionally from a bound source address."""
# Usage: dnsq.py [--bind ADDR] [--type A|AAAA] [--timeout S] SERVER NAME
# Prints one address per line. Exit status: 0 answer (possibly empty: NODATA), 3 NXDOMAIN,
# 4 other rcode (printed as "rcode N"), 2 no reply within the timeout.

import argparse
import os
import socket
import struct
import sys

QTYPES = {"A": 1, "AAAA": 28}


def build_query(name, qtype, qid):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack(">HH", qtype, 1)


def skip_name(msg, off):
    while True:
        n = msg[off]
        if n == 0:
            return off + 1
        if n & 0xC0 == 0xC0:
            return off + 2
        off += 1 + n


def parse_reply(msg, qid, qtype):
    rid, flags, qd, an, _ns, _ar = struct.unpack(">HHHHHH", msg[:12])
    if rid != qid:
        raise ValueError("wrong id")
    off = 12
    for _ in range(qd):
        off = skip_name(msg, off) + 4
    addrs = []
    for _ in range(an):
        off = skip_name(msg, off)
        rtype, _cls, _ttl, rdlen = struct.unpack(">HHIH", msg[off:off + 10])
        off += 10
        rdata = msg[off:off + rdlen]
        off += rdlen
        if rtype == qtype == 1:
            addrs.append(socket.inet_ntop(socket.AF_INET, rdata))
        elif rtype == qtype == 28:
            addrs.append(socket.inet_ntop(socket.AF_INET6, rdata))
    return flags & 0xF, addrs


def query(server, name, qtype="A", bind=None, timeout=2.0):
    """Returns (rcode, [addresses]); raises socket.timeout when no reply arrives."""
    fam = socket.AF_INET6 if ":" in server else socket.AF_INET
    qid = int.from_bytes(os.urandom(2), "big")
    s = socket.socket(fam, socket.SOCK_DGRAM)
    try:
        if bind:
            s.bind((bind, 0))
        s.settimeout(timeout)
        s.sendto(build_query(name, QTYPES[qtype], qid), (server, 53))
        while True:
            msg, _peer = s.recvfrom(4096)
            try:
                return parse_reply(msg, qid, QTYPES[qtype])
            except (ValueError, struct.error, IndexError):
                continue
    finally:
        s.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bind")
    ap.add_argument("--type", default="A", choices=sorted(QTYPES))
    ap.add_argument("--timeout", type=float, default=2.0)
    ap.add_argument("server")
    ap.add_argument("name")
    a = ap.parse_args()
    try:
        rcode, addrs = query(a.server, a.name, a.type, a.bind, a.timeout)
    except socket.timeout:
        print("timeout")
        return 2
    except OSError as e:
        print("error: %s" % e)
        return 2
    for x in addrs:
        print(x)
    if rcode == 3:
        return 3
    if rcode != 0:
        print("rcode %d" % rcode)
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
