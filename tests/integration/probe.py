#!/usr/bin/python3
"""Connects, talks one protocol, and reports whether the socket's kernel object changed under it (the shim swaps it on takeover).

Usage: probe.py PORT MODE   MODE: raw (non-HTTP first write), http (HTTP first write),
       banner (read before write), tls (TLS handshake, then an HTTP request inside), udp.
Prints "inode-same" or "inode-changed" and "data-ok" or "data-bad"; exit 0 if the exchange worked.
"""
import os
import socket
import ssl
import sys

port, mode = int(sys.argv[1]), sys.argv[2]
if mode == "udp":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("127.0.0.1", port))
    before = os.fstat(s.fileno()).st_ino
    s.send(b"GET / HTTP/1.1\r\n\r\n")
    print("inode-same" if os.fstat(s.fileno()).st_ino == before else "inode-changed")
    print("data-ok")
    sys.exit(0)

s = socket.create_connection(("127.0.0.1", port), timeout=10)
before = os.fstat(s.fileno()).st_ino
ok = False
if mode == "raw":
    msg = b"HELLO this is not http\r\n\x00\x01\x02"
    s.sendall(msg)
    got = b""
    while len(got) < len(msg):
        d = s.recv(4096)
        if not d:
            break
        got += d
    ok = got == msg
elif mode == "http":
    msg = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    s.sendall(msg)  # the echo server sends the request back: not a response, relayed raw
    got = b""
    while len(got) < len(msg):
        d = s.recv(4096)
        if not d:
            break
        got += d
    ok = got == msg
elif mode == "banner":
    banner = s.recv(100)
    msg = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
    s.sendall(msg)
    got = b""
    while len(got) < len(msg):
        d = s.recv(4096)
        if not d:
            break
        got += d
    ok = banner.startswith(b"220") and got == msg
elif mode == "tls":
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    t = ctx.wrap_socket(s)  # s is detached: its fd now belongs to t
    s = t
    t.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    got = b""
    while b"hello from the local origin" not in got:
        d = t.recv(4096)
        if not d:
            break
        got += d
    ok = got.startswith(b"HTTP/1.1 200") and b"hello from the local origin" in got
after = os.fstat(s.fileno()).st_ino
print("inode-same" if after == before else "inode-changed")
print("data-ok" if ok else "data-bad")
sys.exit(0 if ok else 1)
