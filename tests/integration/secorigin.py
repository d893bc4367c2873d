#!/usr/bin/python3
"""An origin for the shim's security tests: logs every request's credentials, serves ranged objects, and misbehaves on purpose.

Usage: secorigin.py ADDR PORT LOG

Every request head is logged as one line to LOG:
  METHOD PATH host=HOST range=RANGE auth=AUTHORIZATION cookie=COOKIE body=N
Paths:
  GET /obj/N            N deterministic bytes, ranges, strong ETag (a splittable object)
  GET /redirect?URL     302 to URL
  GET /huge             claims Content-Length 1 TiB (or a 206 of it); an answer ends (FIN) after 32 MiB
  POST|PUT /reset       reads the body, sends a head and 1000 of 100000 body bytes, then RST
  POST|PUT /stall       reads the body, sends a head and 1000 of 100000 body bytes, silence 3 s, FIN
  POST|PUT anything     reads the body, answers 200 with its length
"""
import hashlib
import http.server
import socket
import socketserver
import struct
import sys
import threading
import time

TIB = 1 << 40
HUGE_CAP = 32 << 20
_lock = threading.Lock()
_bodies = {}


def body_of(n):
    with _lock:
        if n not in _bodies:
            blocks = (hashlib.sha256(b"%d" % k).digest() for k in range(n // 32 + 1))
            _bodies[n] = b"".join(blocks)[:n]
        return _bodies[n]


def one_range(value, total):
    """(first, last) of a single "bytes=a-b" / "bytes=a-" range within total, else None."""
    if not value or not value.startswith("bytes=") or "," in value:
        return None
    a, _, b = value[6:].partition("-")
    if not a.isdigit():
        return None
    first = int(a)
    last = int(b) if b.isdigit() else total - 1
    last = min(last, total - 1)
    return (first, last) if first <= last else None


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _log(self, nbody):
        h = self.headers
        line = "%s %s host=%s range=%s auth=%s cookie=%s body=%d\n" % (
            self.command, self.path, h.get("Host", "-"), h.get("Range", "-"),
            h.get("Authorization", "-"), h.get("Cookie", "-"), nbody)
        with _lock:
            LOG.write(line)
            LOG.flush()

    def _head(self, code, length, extra=()):
        self.send_response(code)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(length))
        self.end_headers()

    def do_GET(self):
        self._log(0)
        path, _, query = self.path.partition("?")
        if path == "/redirect":
            self._head(302, 0, [("Location", query)])
        elif path.startswith("/obj/"):
            body = body_of(int(path[5:]))
            val = [("ETag", '"sec-%d"' % len(body)), ("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT"),
                   ("Accept-Ranges", "bytes")]
            r = one_range(self.headers.get("Range"), len(body))
            if r:
                val.append(("Content-Range", "bytes %d-%d/%d" % (r[0], r[1], len(body))))
                self._head(206, r[1] - r[0] + 1, val)
                self.wfile.write(body[r[0]:r[1] + 1])
            else:
                self._head(200, len(body), val)
                self.wfile.write(body)
        elif path == "/huge":
            val = [("ETag", '"huge"'), ("Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT"),
                   ("Accept-Ranges", "bytes")]
            r = one_range(self.headers.get("Range"), TIB)
            if r:
                val.append(("Content-Range", "bytes %d-%d/%d" % (r[0], r[1], TIB)))
                n = r[1] - r[0] + 1
                self._head(206, n, val)
            else:
                n = TIB
                self._head(200, n, val)
            # an answer ends early (FIN) after 32 MiB: ranges the size the shim asks are served,
            # the claimed whole never is (a shim that gives up on a server failing every range
            # would not fill its window, which is what the test measures)
            cap = min(n, HUGE_CAP)
            chunk = b"\0" * 65536
            sent = 0
            try:
                while sent < cap:
                    k = min(len(chunk), cap - sent)
                    self.wfile.write(chunk[:k])
                    sent += k
            except OSError:
                pass
            if cap < n:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        else:
            self._head(404, 0)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        self._log(len(body))
        path = self.path.partition("?")[0]
        if path in ("/reset", "/stall"):
            self._head(200, 100000)
            self.wfile.write(b"y" * 1000)
            self.wfile.flush()
            if path == "/stall":
                time.sleep(3)
            else:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
            return
        out = b"%d\n" % len(body)
        self._head(200, len(out))
        self.wfile.write(out)

    do_PUT = do_POST


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


if __name__ == "__main__":
    addr, port, logpath = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    LOG = open(logpath, "a")
    Server((addr, port), Handler).serve_forever()
