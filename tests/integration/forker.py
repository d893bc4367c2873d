#!/usr/bin/python3
"""fork/threads/exit behaviours for the shim's integration tests; prints lines that must be identical with and without the shim.

Usage: forker.py fork URL1 URL2      keep-alive request, fork; child counts inherited sockets
                                     and downloads URL2 fresh; parent reuses its connection
       forker.py threads URL...      one thread per URL, prints each sha256
       forker.py pipeline HOST PATH...  all requests in one write (the last one closes), reads to
                                     EOF; prints the sha256 of the stream without Date lines
       forker.py post-exit PORT FILE PATH  writes a POST of FILE to PATH and exits without
                                     reading or closing (bytes must still reach the server)
"""
import hashlib
import http.client
import os
import socket
import sys
import threading
import urllib.parse
import urllib.request


def sha(b):
    return hashlib.sha256(b).hexdigest()


def sockets():
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + fd).startswith("socket:"):
                n += 1
        except OSError:
            pass
    return n


def main():
    mode = sys.argv[1]
    if mode == "fork":
        u1, u2 = urllib.parse.urlsplit(sys.argv[2]), sys.argv[3]
        c = http.client.HTTPConnection(u1.netloc, timeout=30)
        c.request("GET", u1.path)
        d1 = c.getresponse().read()
        print("parent first", sha(d1))
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            print("child inherited sockets", sockets())
            print("child", sha(urllib.request.urlopen(u2, timeout=30).read()))
            sys.stdout.flush()
            os._exit(0)
        c.request("GET", u1.path)
        d3 = c.getresponse().read()
        _, st = os.waitpid(pid, 0)
        print("parent again", sha(d3), "child status", st)
    elif mode == "threads":
        out = {}

        def get(u):
            out[u] = sha(urllib.request.urlopen(u, timeout=60).read())

        ts = [threading.Thread(target=get, args=(u,)) for u in sys.argv[2:]]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for u in sys.argv[2:]:
            print(u.rsplit("/", 1)[-1], out.get(u))
    elif mode == "pipeline":
        host, paths = sys.argv[2], sys.argv[3:]
        reqs = b"".join(b"GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (
            p.encode(), host.encode(), b"Connection: close\r\n" if i == len(paths) - 1 else b"")
            for i, p in enumerate(paths))
        s = socket.create_connection((host, 80), timeout=30)
        s.sendall(reqs)
        data = b""
        while True:
            d = s.recv(1 << 20)
            if not d:
                break
            data += d
        kept = b"\n".join(l for l in data.split(b"\n") if not l.startswith(b"Date: "))
        print("responses", data.count(b"HTTP/1.1 200 OK"), "bytes", len(data), "sha", sha(kept))
    elif mode == "post-exit":
        body = open(sys.argv[3], "rb").read()
        s = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
        path = sys.argv[4].encode()
        s.sendall(b"POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (path, len(body)) + body)
        global keep
        keep = s  # never closed by us: exit() must still deliver every byte
        sys.exit(0)


main()
