#!/usr/bin/python3
"""An origin for the integrity tests: ranged objects with digest headers (RFC 9530, RFC 3230), one version of their bytes per process, and framing curl tolerates.

Usage: digestorigin.py ADDR PORT VERSION [TLSPORT CERT KEY]

GET /obj/N?d=KINDS&dv=V&f=FAULT serves N bytes of version VERSION (random.Random(VERSION)),
with a strong ETag that does not depend on the version ("obj-N": a cache serving another
version under the same tag) and the digest headers KINDS names (comma-separated):
  repr256, repr512     Repr-Digest: sha-256=:b64:, sha-512=:b64: of version V's whole object
  content256           Content-Digest: sha-256 of this answer's body (a 206: its range)
  digest256, digest512 Digest: SHA-256=b64 / SHA-512=b64 (RFC 3230) of version V's object
  odd                  Repr-Digest with an unknown algorithm and a malformed member first
V (dv) is a number (default 1: every process names version 1's digest, as a cache that kept
the origin's headers over other bytes would) or "own". FAULT: dupcl (Content-Length
twice, same value), dupcl2 (twice, the second one more), chunkedcl (chunked and a stray
Content-Length). Ranges: one bytes=A-B / A- / -S; If-Range other than the ETag gets a 200.
"""
import base64
import hashlib
import http.server
import random
import socketserver
import ssl
import sys
import threading
import urllib.parse

ADDR, PORT, VERSION = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
CACHE = {}
LOCK = threading.Lock()


def body(n, version):
    with LOCK:
        if (n, version) not in CACHE:
            CACHE[(n, version)] = random.Random(version).randbytes(n)
        return CACHE[(n, version)]


def b64(alg, data):
    return base64.b64encode(hashlib.new(alg, data).digest()).decode()


def digest_headers(kinds, whole, part):
    h = []
    for k in kinds:
        if k == "repr256":
            h.append(("Repr-Digest", "sha-256=:%s:" % b64("sha256", whole)))
        elif k == "repr512":
            h.append(("Repr-Digest", "sha-512=:%s:" % b64("sha512", whole)))
        elif k == "content256":
            h.append(("Content-Digest", "sha-256=:%s:" % b64("sha256", part)))
        elif k == "digest256":
            h.append(("Digest", "SHA-256=%s" % b64("sha256", whole)))
        elif k == "digest512":
            h.append(("Digest", "SHA-512=%s" % b64("sha512", whole)))
        elif k == "odd":
            h.append(("Repr-Digest", "md5=:AAAA:, sha-256=:not base64!:, sha-256=:%s:" % b64("sha256", whole)))
    return h


def parse_range(v, size):
    if not v or not v.startswith("bytes=") or "," in v:
        return None
    a, _, b = v[6:].strip().partition("-")
    if not a:
        return (max(0, size - int(b)), size - 1) if b else None
    a, b = int(a), (int(b) if b else size - 1)
    return (a, min(b, size - 1)) if a < size and a <= b else "unsat"


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stderr.write("%s %s\n" % (self.requestline, self.headers.get("Range", "-")))

    def do_GET(self):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        if not u.path.startswith("/obj/"):
            self.send_error(404)
            return
        n = int(u.path[5:])
        data = body(n, VERSION)
        dv = q.get("dv", "1")
        whole = data if dv == "own" else body(n, int(dv))
        rng = parse_range(self.headers.get("Range"), n)
        ir = self.headers.get("If-Range")
        etag = '"obj-%d"' % n
        if rng and ir and ir != etag:
            rng = None
        if rng == "unsat":
            self.send_response(416)
            self.send_header("Content-Range", "bytes */%d" % n)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        code, part = (206, data[rng[0]:rng[1] + 1]) if rng else (200, data)
        self.send_response(code)
        self.send_header("ETag", etag)
        self.send_header("Accept-Ranges", "bytes")
        if rng:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (rng[0], rng[1], n))
        for k, v in digest_headers([k for k in q.get("d", "").split(",") if k], whole, part):
            self.send_header(k, v)
        self.frame(q.get("f", ""), part)

    def frame(self, fault, part):
        if fault == "chunkedcl":
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Content-Length", str(len(part)))
            self.end_headers()
            for i in range(0, len(part), 65536):
                c = part[i:i + 65536]
                self.wfile.write(b"%x\r\n" % len(c) + c + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(part)))
        if fault in ("dupcl", "dupcl2"):
            self.send_header("Content-Length", str(len(part) + (fault == "dupcl2")))
        self.end_headers()
        self.wfile.write(part)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    servers = [Server((ADDR, PORT), Handler)]
    if len(sys.argv) > 6:
        s = Server((ADDR, int(sys.argv[4])), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[5], sys.argv[6])
        s.socket = ctx.wrap_socket(s.socket, server_side=True)
        servers.append(s)
    for s in servers[1:]:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    servers[0].serve_forever()


if __name__ == "__main__":
    main()
