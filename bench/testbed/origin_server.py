"""Misbehaving HTTP/1.1 origins for the testbed: one process, one listening socket per behaviour."""
# Each behaviour listens on its own address (the testbed gives each one a DNS name), serves
# the same docroot as the nginx replicas, and deviates in exactly one documented way
# (README.md, "Origins"). Standard library only; run with /usr/bin/python3.
#
#   norange       ignores Range: always 200 with the whole body, no Accept-Ranges
#   liar          like nginx (same ETag, Last-Modified, ranges) but every byte XOR 0x5a
#   changing      a new version per request: new ETag/Last-Modified, bytes XOR (n % 255 + 1)
#   novalidators  correct bytes and ranges, but no ETag and no Last-Modified
#   reset         correct headers, then RST (SO_LINGER 0) after N body bytes (?after=N, 65536)
#   stall         correct headers, N body bytes (?after=N, 65536), then silence for
#                 ?stall=S seconds (default 300), then FIN; with ?once=KEY only the first
#                 answer longer than N to a request carrying KEY stalls, and then sends the
#                 rest of its body (a hiccup, as a lost segment's retransmission timeout makes);
#                 ?crumb=C sends C more bytes 0.3 s into that silence (a pacer's last crumb
#                 before its pause: the connection's last byte is younger than its stall)
#   chunked       correct bytes; 200 and 206 bodies in Transfer-Encoding: chunked, no Content-Length
#   gzip          always Content-Encoding: gzip (gzip of the file, mtime 0); ranges are of
#                 the gzip bytes; ETag "gz-<mtime>-<gzsize>"
#   fault         the fault matrix: like nginx, except for the one fault ?f=NAME picks (FAULTS
#                 below lists them: later-range, probe, head, validator, connection, auth,
#                 redirect, size and POST faults); ?size=N serves the file's first N bytes as an
#                 N-byte object; ?t=TAG counts requests (method, status, plain/probe/later) under
#                 TAG, listed by GET /_stats?t=TAG; POST is answered like GET after its body
#   longer        fault f=longer: 4096 bytes longer than the file, with the file's ETag
#   trickle       fault f=trickle: every body at 100 bytes/s (?rate=), after ?after= bytes (0)

import argparse
import email.utils
import gzip
import os
import re
import select
import signal
import socket
import struct
import sys
import threading
import time
import urllib.parse

BEHAVIOURS = ("norange", "liar", "changing", "novalidators", "reset", "stall", "chunked", "gzip",
              "fault", "longer", "trickle")
SIOCOUTQ = 0x5411
MAX_HEADER = 16384
MAX_CONNS = 512
BLOCK = 65536
XOR_LIAR = 0x5A


def xor_table(k):
    return bytes(b ^ k for b in range(256))


class Resource:
    def __init__(self, path, size, mtime, etag, last_modified, xor=0):
        self.path = path
        self.size = size
        self.mtime = mtime
        self.etag = etag
        self.last_modified = last_modified
        self.table = xor_table(xor) if xor else None


def nginx_etag(st):
    return '"%x-%x"' % (int(st.st_mtime), st.st_size)


def http_date(t):
    return email.utils.formatdate(t, usegmt=True)


def parse_range(value, size):
    """Single 'bytes=a-b' / 'a-' / '-n' range -> (start, end) inclusive, 'unsat', or None."""
    if not value or not value.startswith("bytes=") or "," in value:
        return None
    spec = value[6:].strip()
    a, sep, b = spec.partition("-")
    if not sep:
        return None
    try:
        if a == "":
            n = int(b)
            if n <= 0:
                return "unsat"
            return (max(0, size - n), size - 1) if size else "unsat"
        start = int(a)
        end = int(b) if b else size - 1
    except ValueError:
        return None
    if start >= size or end < start:
        return "unsat"
    return (start, min(end, size - 1))


class Conn:
    """One client connection: its socket, the bytes read but not parsed yet, requests so far."""
    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.nreq = 0
        self.answers = 0


class Server:
    def __init__(self, docroot, name, log):
        self.docroot = os.path.realpath(docroot)
        self.name = name
        self.log = log
        self.counter = 0
        self.lock = threading.Lock()
        self.gz_dir = None
        self.conns = threading.BoundedSemaphore(MAX_CONNS)
        self.once_lock = threading.Lock()
        self.once_seen = set()   # ?once=KEY keys whose stall happened (stall only)

    # -- resources --------------------------------------------------------------------
    def resolve(self, target):
        path = urllib.parse.unquote(target.split("?", 1)[0])
        if path.endswith("/"):
            path += "index.html"
        full = os.path.realpath(os.path.join(self.docroot, path.lstrip("/")))
        if not full.startswith(self.docroot + os.sep) or not os.path.isfile(full):
            return None
        st = os.stat(full)
        if self.name == "gzip":
            gz = self.gzipped(full, path)
            gst = os.stat(gz)
            return Resource(gz, gst.st_size, st.st_mtime, '"gz-%x-%x"' % (int(st.st_mtime), gst.st_size),
                            http_date(st.st_mtime))
        if self.name == "changing":
            with self.lock:
                self.counter += 1
                n = self.counter
            return Resource(full, st.st_size, st.st_mtime + n, '"chg-%x-%x"' % (n, st.st_size),
                            http_date(st.st_mtime + n), xor=(n % 255) + 1)
        if self.name == "liar":
            return Resource(full, st.st_size, st.st_mtime, nginx_etag(st), http_date(st.st_mtime), xor=XOR_LIAR)
        return Resource(full, st.st_size, st.st_mtime, nginx_etag(st), http_date(st.st_mtime))

    def gzipped(self, full, path):
        out = os.path.join(self.gz_dir, path.strip("/").replace("/", "__") + ".gz")
        with self.lock:
            if not os.path.exists(out):
                # Another run may compress the same file at the same time: own temp, atomic rename.
                tmp = "%s.tmp.%d" % (out, os.getpid())
                with open(full, "rb") as src, open(tmp, "wb") as raw:
                    # mtime=0 and a fixed level make the gzip bytes (and ETag) reproducible.
                    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as z:
                        while True:
                            b = src.read(1 << 20)
                            if not b:
                                break
                            z.write(b)
                os.rename(tmp, out)
        return out

    # -- connection handling --------------------------------------------------------------
    def serve_conn(self, conn, peer):
        c = Conn(conn)
        try:
            conn.settimeout(60)
            while True:
                while b"\r\n\r\n" not in c.buf:
                    if len(c.buf) > MAX_HEADER:
                        return
                    data = conn.recv(8192)
                    if not data:
                        return
                    c.buf += data
                c.nreq += 1
                head, _, c.buf = c.buf.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                parts = lines[0].split()
                if len(parts) != 3:
                    self.simple(conn, 400, "Bad Request", close=True)
                    return
                method, target, version = parts
                headers = {}
                for ln in lines[1:]:
                    k, _, v = ln.partition(":")
                    headers[k.strip().lower()] = v.strip()
                keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
                if version == "HTTP/1.0" and headers.get("connection", "").lower() == "keep-alive":
                    keep = True
                self.log_line("%s %s %s %s range=%s" % (peer[0], method, target, version, headers.get("range", "-")))
                if not self.handle_request(c, method, target, headers, keep):
                    return
                if not keep:
                    return
        except (OSError, ValueError):
            return
        finally:
            try:
                conn.close()
            except OSError:
                pass
            self.conns.release()

    def log_line(self, msg):
        self.log.write("%s %s %s\n" % (time.strftime("%H:%M:%S"), self.name, msg))
        self.log.flush()

    def simple(self, conn, code, reason, close=False, extra=()):
        body = ("%d %s\n" % (code, reason)).encode()
        hdr = ["HTTP/1.1 %d %s" % (code, reason), "Date: " + http_date(time.time()),
               "Server: mtb-origin/" + self.name, "Content-Type: text/plain",
               "Content-Length: %d" % len(body)] + list(extra)
        if close:
            hdr.append("Connection: close")
        conn.sendall(("\r\n".join(hdr) + "\r\n\r\n").encode() + body)

    def handle_request(self, c, method, target, headers, keep):
        return self.handle(c.sock, method, target, headers, keep)

    def handle(self, conn, method, target, headers, keep):
        """Answers one request; returns False when the connection must end."""
        if method not in ("GET", "HEAD"):
            # A request body we do not read would be parsed as the next request: close.
            self.simple(conn, 405, "Method Not Allowed", close=True, extra=["Allow: GET, HEAD"])
            return False
        res = self.resolve(target)
        if res is None:
            self.simple(conn, 404, "Not Found", close=not keep)
            return keep
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(target).query)
        rng = None if self.name == "norange" else parse_range(headers.get("range"), res.size)
        # If-Range with a validator that does not match means "send it all" (RFC 9110 §13.1.5).
        if rng and headers.get("if-range") and headers["if-range"] not in (res.etag, res.last_modified):
            rng = None
        hdr = []
        if rng == "unsat":
            hdr = ["HTTP/1.1 416 Range Not Satisfiable", "Content-Range: bytes */%d" % res.size]
            start, length = 0, 0
            hdr.append("Content-Length: 0")
        elif rng:
            start, end = rng
            length = end - start + 1
            hdr = ["HTTP/1.1 206 Partial Content", "Content-Range: bytes %d-%d/%d" % (start, end, res.size)]
        else:
            start, length = 0, res.size
            hdr = ["HTTP/1.1 200 OK"]
        hdr += ["Server: mtb-origin/" + self.name, "Date: " + http_date(time.time()),
                "Content-Type: " + ("text/html" if res.path.endswith(".html") else "application/octet-stream")]
        if self.name == "chunked":
            if rng != "unsat":
                hdr.append("Transfer-Encoding: chunked")
        elif rng != "unsat":
            hdr.append("Content-Length: %d" % length)
        if self.name not in ("novalidators",):
            hdr.append("Last-Modified: " + res.last_modified)
            hdr.append("ETag: " + res.etag)
        if self.name == "gzip":
            hdr += ["Content-Encoding: gzip", "Vary: Accept-Encoding"]
        if self.name != "norange":
            hdr.append("Accept-Ranges: bytes")
        hdr.append("X-Testbed-Origin: " + self.name)
        hdr.append("Connection: " + ("keep-alive" if keep else "close"))
        conn.sendall(("\r\n".join(hdr) + "\r\n\r\n").encode())
        if method == "HEAD" or rng == "unsat":
            return keep
        limit = None
        once = query.get("once", [None])[0] if self.name == "stall" else None
        if self.name in ("reset", "stall"):
            after = int(query.get("after", ["65536"])[0])
            # ?once: the first answer long enough to stall does (a short probe does not count)
            if once is None or (length > after and self.first_time(once)):
                limit = after
        sent = self.send_body(conn, res, start, length, limit)
        if limit is not None and sent >= limit and sent < length:
            if self.name == "reset":
                self.reset(conn)
            elif once is not None:
                # a hiccup: silence, then the rest; the connection is not read meanwhile, so a
                # request pipelined behind this one is answered after it
                seconds = min(float(query.get("stall", ["300"])[0]), 3600)
                crumb = min(int(query.get("crumb", ["0"])[0]), length - sent)
                self.drain_sendq(conn)
                self.log_line("hiccup of %.1fs (crumb %d B)" % (seconds, crumb))
                if crumb > 0:
                    time.sleep(min(0.3, seconds))
                    sent += self.send_body(conn, res, start + sent, crumb, None)
                    seconds = max(0.0, seconds - 0.3)
                time.sleep(seconds)
                self.send_body(conn, res, start + sent, length - sent, None)
                return keep
            else:
                self.stall(conn, float(query.get("stall", ["300"])[0]))
            return False
        return keep

    def first_time(self, key):
        """True for the first request carrying key (?once=KEY) this origin sees."""
        with self.once_lock:
            if key in self.once_seen:
                return False
            self.once_seen.add(key)
            return True

    def send_body(self, conn, res, start, length, limit):
        chunked = self.name == "chunked"
        sent = 0
        with open(res.path, "rb") as f:
            f.seek(start)
            while sent < length:
                n = min(BLOCK, length - sent)
                if limit is not None:
                    n = min(n, limit - sent)
                    if n <= 0:
                        break
                block = f.read(n)
                if not block:
                    raise OSError("short file")
                if res.table:
                    block = block.translate(res.table)
                if chunked:
                    conn.sendall(b"%x\r\n" % len(block) + block + b"\r\n")
                else:
                    conn.sendall(block)
                sent += len(block)
        if chunked:
            conn.sendall(b"0\r\n\r\n")
        return sent

    def drain_sendq(self, conn, timeout=10.0):
        """Waits until the peer acknowledged everything sent, so the bytes before an RST arrive."""
        deadline = time.monotonic() + timeout
        import fcntl
        while time.monotonic() < deadline:
            buf = fcntl.ioctl(conn.fileno(), SIOCOUTQ, b"\0\0\0\0")
            if struct.unpack("i", buf)[0] == 0:
                return
            time.sleep(0.005)

    def reset(self, conn):
        self.drain_sendq(conn)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.log_line("RST sent")

    def stall(self, conn, seconds):
        self.drain_sendq(conn)
        self.log_line("stalling %.0fs" % seconds)
        deadline = time.monotonic() + min(seconds, 3600)
        while time.monotonic() < deadline:
            conn.settimeout(max(0.01, min(1.0, deadline - time.monotonic())))
            try:
                if not conn.recv(4096):
                    return   # the client gave up
            except socket.timeout:
                continue


# -- fault.test (and longer.test, trickle.test): one fault per request, chosen by ?f=NAME ------
# "later" = a request with a Range that does not start at 0, or any Range request that is not
# the first request on its connection: plain programs never send one, so only the engine's
# extra ranges (and a keep-alive second object's probe) meet the lr-* faults.
FAULTS = {
    "": "none: behaves like an nginx replica",
    "lr-shift": "later ranges: 206 for the range 1000 bytes further (Content-Range and bytes agree)",
    "lr-total": "later ranges: Content-Range total 4096 bytes too big",
    "lr-round-up": "later ranges: 206 for the range widened to 64 KiB boundaries (framed consistently)",
    "lr-round-down": "later ranges: 206 for a shorter range (end rounded down to 64 KiB, or half)",
    "lr-overlong": "later ranges: right Content-Range, Content-Length and body 1000 bytes longer",
    "lr-short": "later ranges: right head, half the body, then FIN",
    "lr-200": "later ranges: 200 with the whole body",
    "lr-416": "later ranges: 416",
    "lr-429": "later ranges: 429 Too Many Requests (Retry-After: 1)",
    "lr-403": "later ranges: 403",
    "lr-multipart": "later ranges: 206 multipart/byteranges, the range in two parts",
    "lr-trickle": "later ranges: right answer, body at ?rate= bytes/s (100) after its first ?after= bytes (0)",
    "pr-overclaim": "Range bytes=0-N: 206 'bytes 0-N/SIZE', Content-Length N+1, the real bytes, keep-alive "
                    "(GNU wget's test server; with ?size=6)",
    "pr-403": "any Range: 403 (a plain request gets 200)",
    "pr-200cr": "any Range: 200 with a Content-Range and only the range's bytes",
    "hugehead": "every answer: 40 KB of headers (5 lines of 8000 bytes)",
    "manyheads": "every answer: 150 extra header lines",
    "hints": "every answer: a 103 Early Hints first",
    "dupcl": "every answer: Content-Length twice (same value)",
    "chunkedcl": "every answer: chunked and a stray Content-Length",
    "weak": "ETag: W/\"...\" only, no Last-Modified",
    "changing-nv": "no validators, bytes XOR (n % 255 + 1) for the n-th request",
    "longer": "4096 bytes longer than the file (bytes 0x4c), same ETag and Last-Modified as the file",
    "trickle": "every body at ?rate= bytes/s (100) after its first ?after= bytes (0)",
    "close": "Connection: close and a close after every answer",
    "http10": "HTTP/1.0 status lines, no Content-Length, close after every answer",
    "kalimit": "keep-alive, but closes silently after ?n= answers (2) on a connection",
    "kareset": "Connection: close on the ?n=-th answer (4) on a connection; with a request already pipelined "
               "behind it, half of that answer's body, then RST (a keep-alive limit met by a pipelined request: "
               "the closed socket's kernel resets, its send queue lost); /_stats counts 'RST kareset'",
    "close206": "206 bodies without Content-Length, delimited by the close",
    "nopipe": "answers only the first request of each read (pipelined requests vanish)",
    "auth-basic": "401 unless 'Authorization: Basic dXNlcjpwYXNz' (user:pass)",
    "auth-cookie": "401 unless the Cookie header has fault=yes",
    "redir301": "301 to the same path without f= on this name",
    "redir302x": "302 to the same path on a.test",
    "huge": "Content-Length (and range totals) 1 TiB; sends the file's real bytes, then closes",
    "post-reset": "a POST's answer is reset (RST) after ?after= bytes (65536)",
    "reset": "every answer is reset (RST) after ?after= body bytes (1000)",
}
AUTH_BASIC = "Basic dXNlcjpwYXNz"
HUGE = 1 << 40
LONGER_EXTRA = 4096


class Reply:
    """One answer under construction: status, headers, the body span, its framing and its end."""
    def __init__(self, code, reason):
        self.version = "HTTP/1.1"
        self.code, self.reason = code, reason
        self.headers = []
        self.start, self.length = 0, 0     # body: file bytes [start, start+length)
        self.prefix, self.suffix = b"", b""
        self.framing = "cl"                # cl | chunked | close (close-delimited)
        self.cl = None                     # Content-Length value when not the body's length
        self.send_limit = None             # bytes of the body to send before ending
        self.end = "keep"                  # keep | close (FIN) | reset (RST)
        self.rate = None                   # bytes/s (trickle)
        self.rate_after = 0                # body bytes sent at full speed before the trickle
        self.hints = False                 # a 103 Early Hints before it
        self.dup_cl = False                # Content-Length twice
        self.conn_header = "default"       # Connection header: default (as asked), a value, or None
        self.res = None
        self.ka_reset = False              # kareset's last answer: RST when a request is behind it
        self.tag = ""                      # the request's ?t= (its counts in /_stats)

    def body_len(self):
        return len(self.prefix) + self.length + len(self.suffix)


class FaultServer(Server):
    """fault.test / longer.test / trickle.test: the faults of FAULTS; ?f= picks one per request
    (the address's own fault when absent), ?size=N serves the file's first N bytes as an object
    of N bytes, ?t=TAG counts the request under TAG (GET /_stats?t=TAG lists the counts)."""

    def __init__(self, docroot, name, log):
        super().__init__(docroot, name, log)
        self.default_fault = name if name in FAULTS else ""
        self.stats = {}

    def handle_request(self, c, method, target, headers, keep):
        url = urllib.parse.urlsplit(target)
        q = urllib.parse.parse_qs(url.query)
        arg = lambda k, d: q.get(k, [d])[0]  # noqa: E731
        fault, tag = arg("f", self.default_fault), arg("t", "")
        if url.path == "/_stats":
            return self.send_stats(c, tag, keep)
        if fault not in FAULTS:
            self.simple(c.sock, 400, "Bad Request", close=True)
            return False
        if method == "POST":
            if not self.read_body(c, headers):
                return False
        elif method not in ("GET", "HEAD"):
            self.simple(c.sock, 405, "Method Not Allowed", close=True, extra=["Allow: GET, HEAD, POST"])
            return False
        rng_hdr = headers.get("range")
        kind = "plain" if not rng_hdr else ("probe" if rng_hdr.replace(" ", "").startswith("bytes=0-") else "later")
        r = self.fault_reply(c, method, url, arg, fault, headers)
        self.count(tag, "%s %d %s" % (method, r.code, kind))
        self.log_line("-> %d %s f=%s" % (r.code, kind, fault))
        if fault == "nopipe":
            c.buf = b""   # the requests that came in the same read vanish
        c.answers += 1
        r.tag = tag
        return self.send_reply(c, method, r, keep)

    # -- the answer --------------------------------------------------------------------------
    def fault_reply(self, c, method, url, arg, fault, headers):
        path = urllib.parse.unquote(url.path)
        if fault == "auth-basic" and headers.get("authorization") != AUTH_BASIC or \
                fault == "auth-cookie" and "fault=yes" not in headers.get("cookie", "").replace(" ", "").split(";"):
            r = self.small(401, "Unauthorized")
            r.headers.append('WWW-Authenticate: Basic realm="fault"')
            return r
        if fault in ("redir301", "redir302x"):
            rest = [(k, v) for k, v in urllib.parse.parse_qsl(url.query) if k != "f"]
            loc = url.path + ("?" + urllib.parse.urlencode(rest) if rest else "")
            r = self.small(301, "Moved Permanently") if fault == "redir301" else self.small(302, "Found")
            r.headers.append("Location: " + (loc if fault == "redir301" else "http://a.test" + loc))
            return r
        res = self.fault_resource(path, arg, fault)
        if res is None:
            return self.small(404, "Not Found")
        rng = parse_range(headers.get("range"), res.size) if method != "POST" else None
        if rng and rng != "unsat" and headers.get("if-range") and \
                (fault == "weak" or headers["if-range"] not in (res.etag, res.last_modified)):
            rng = None   # a weak validator never matches If-Range (RFC 9110 §13.1.5)
        later = isinstance(rng, tuple) and (rng[0] > 0 or c.nreq > 1)
        r = self.plain_reply(res, rng)
        r.res = res
        self.validators(r, res, fault)
        if later and fault.startswith("lr-"):
            self.later_fault(r, res, rng, fault, arg)
        elif headers.get("range") and fault.startswith("pr-"):
            self.probe_fault(r, res, rng, fault, headers.get("range"))
        self.every_answer_fault(c, r, res, fault, arg, method)
        return r

    def small(self, code, reason):
        r = Reply(code, reason)
        r.prefix = ("%d %s\n" % (code, reason)).encode()
        r.headers.append("Content-Type: text/plain")
        return r

    def fault_resource(self, path, arg, fault):
        res = self.resolve(path)
        if res is None:
            return None
        res.real = res.size
        if arg("size", None) is not None:
            res.size = res.real = min(res.size, int(arg("size", "0")))
            res.etag = '"%x-%x"' % (int(res.mtime), res.size)
        if fault == "longer":
            res.size += LONGER_EXTRA   # the ETag stays the file's: a replica lying about its size
        elif fault == "huge":
            res.size = HUGE
            res.etag = '"%x-%x"' % (int(res.mtime), HUGE)
        elif fault == "changing-nv":
            with self.lock:
                self.counter += 1
                res.table = xor_table(self.counter % 255 + 1)
        return res

    def plain_reply(self, res, rng):
        """What nginx answers: 416, 206 or 200."""
        if rng == "unsat":
            r = Reply(416, "Range Not Satisfiable")
            r.headers.append("Content-Range: bytes */%d" % res.size)
            return r
        if rng:
            r = Reply(206, "Partial Content")
            r.start, r.length = rng[0], rng[1] - rng[0] + 1
            r.headers.append("Content-Range: bytes %d-%d/%d" % (rng[0], rng[1], res.size))
        else:
            r = Reply(200, "OK")
            r.length = res.size
        r.headers.append("Content-Type: application/octet-stream")
        r.headers.append("Accept-Ranges: bytes")
        return r

    def validators(self, r, res, fault):
        if fault == "weak":
            r.headers.append('ETag: W/%s' % res.etag)
        elif fault != "changing-nv":
            r.headers += ["Last-Modified: " + res.last_modified, "ETag: " + res.etag]

    def later_fault(self, r, res, rng, fault, arg):
        s, e = rng
        n = e - s + 1

        def span(a, b, total=res.size):
            r.start, r.length = a, b - a + 1
            set_header(r.headers, "Content-Range", "bytes %d-%d/%d" % (a, b, total))
        if fault == "lr-shift":
            k = 1000 if e + 1000 < res.size else -min(1000, s)
            span(s + k, e + k)
        elif fault == "lr-total":
            span(s, e, res.size + 4096)
        elif fault == "lr-round-up":
            span(s - s % 65536, min(res.size - 1, e | 65535))
        elif fault == "lr-round-down":
            e2 = (e + 1) // 65536 * 65536 - 1
            span(s, e2 if s <= e2 < e else s + (n - 1) // 2)
        elif fault == "lr-overlong":
            r.suffix = b"O" * 1000
        elif fault == "lr-short":
            r.send_limit, r.end = n // 2, "close"
        elif fault == "lr-200":
            r.code, r.reason, r.start, r.length = 200, "OK", 0, res.size
            set_header(r.headers, "Content-Range", None)
        elif fault == "lr-416":
            r.code, r.reason, r.length = 416, "Range Not Satisfiable", 0
            set_header(r.headers, "Content-Range", "bytes */%d" % res.size)
        elif fault in ("lr-429", "lr-403"):
            code = int(fault[3:])
            r.code, r.reason, r.length = code, "Too Many Requests" if code == 429 else "Forbidden", 0
            r.prefix = ("%d %s\n" % (code, r.reason)).encode()
            set_header(r.headers, "Content-Range", None)
            if code == 429:
                r.headers.append("Retry-After: 1")
        elif fault == "lr-multipart":
            self.multipart(r, res, s, e)
        elif fault == "lr-trickle":
            r.rate, r.rate_after = int(arg("rate", "100")), int(arg("after", "0"))

    def multipart(self, r, res, s, e):
        """The range as two parts of a multipart/byteranges body (one part when it is 1 byte)."""
        mid = s + (e - s + 1) // 2
        parts = [(s, mid - 1), (mid, e)] if e > s else [(s, e)]
        body = b""
        with open(res.path, "rb") as f:
            for a, b in parts:
                f.seek(a)
                body += (b"--FAULTBOUNDARY\r\nContent-Type: application/octet-stream\r\n"
                         b"Content-Range: bytes %d-%d/%d\r\n\r\n" % (a, b, res.size)) + f.read(b - a + 1) + b"\r\n"
        r.prefix, r.start, r.length = body + b"--FAULTBOUNDARY--\r\n", 0, 0
        set_header(r.headers, "Content-Range", None)
        set_header(r.headers, "Content-Type", "multipart/byteranges; boundary=FAULTBOUNDARY")

    def probe_fault(self, r, res, rng, fault, raw):
        if fault == "pr-403":
            r.code, r.reason, r.start, r.length = 403, "Forbidden", 0, 0
            r.prefix = b"403 Forbidden\n"
            set_header(r.headers, "Content-Range", None)
        elif fault == "pr-200cr" and isinstance(rng, tuple):
            r.code, r.reason = 200, "OK"
        elif fault == "pr-overclaim":
            m = re.fullmatch(r"bytes=0-(\d+)", raw.replace(" ", ""))
            if m:
                n = int(m.group(1))
                r.code, r.reason, r.start, r.length = 206, "Partial Content", 0, min(n + 1, res.size)
                set_header(r.headers, "Content-Range", "bytes 0-%d/%d" % (n, res.size))
                r.cl = n + 1   # more than will ever come: the connection stays open, silent

    def every_answer_fault(self, c, r, res, fault, arg, method):
        if fault == "hugehead":
            r.headers += ["X-Fault-Pad-%d: %s" % (i, "p" * 8000) for i in range(5)]
        elif fault == "manyheads":
            r.headers += ["X-Fault-Line-%d: %d" % (i, i) for i in range(150)]
        elif fault == "hints":
            r.hints = True
        elif fault == "dupcl":
            r.dup_cl = True
        elif fault == "chunkedcl":
            r.framing = "chunked"
            r.cl = r.body_len()
        elif fault == "close":
            r.end, r.conn_header = "close", "close"
        elif fault == "http10":
            r.version, r.framing, r.end, r.conn_header = "HTTP/1.0", "close", "close", None
        elif fault == "kalimit" and c.answers + 1 >= int(arg("n", "2")):
            r.end = "close"   # silently: the head still says keep-alive
        elif fault == "kareset" and c.answers + 1 >= int(arg("n", "4")):
            r.end, r.conn_header, r.ka_reset = "close", "close", True
        elif fault == "close206" and r.code == 206:
            r.framing, r.end, r.conn_header = "close", "close", None
        elif fault == "trickle":
            r.rate, r.rate_after = int(arg("rate", "100")), int(arg("after", "0"))
        elif fault == "huge" and r.start + r.length > res.real:
            r.send_limit, r.end = max(0, res.real - r.start), "close"   # ends early
        elif fault == "post-reset" and method == "POST":
            r.send_limit, r.end = int(arg("after", "65536")), "reset"
        elif fault == "reset" and r.body_len() > int(arg("after", "1000")):
            r.send_limit, r.end = int(arg("after", "1000")), "reset"

    # -- sending -----------------------------------------------------------------------------
    def send_reply(self, c, method, r, keep):
        """Sends r; returns False when the connection ends."""
        if r.hints:
            c.sock.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </files/1.bin>; rel=preload\r\n\r\n")
        hdr = ["%s %d %s" % (r.version, r.code, r.reason), "Server: mtb-origin/" + self.name,
               "Date: " + http_date(time.time())] + r.headers
        if r.framing == "chunked":
            hdr.append("Transfer-Encoding: chunked")
        if r.framing == "cl" or r.cl is not None:
            hdr += ["Content-Length: %d" % (r.cl if r.cl is not None else r.body_len())] * (2 if r.dup_cl else 1)
        hdr.append("X-Testbed-Origin: " + self.name)
        conn_hdr = r.conn_header if r.conn_header != "default" else ("keep-alive" if keep else "close")
        if conn_hdr:
            hdr.append("Connection: " + conn_hdr)
        c.sock.sendall(("\r\n".join(hdr) + "\r\n\r\n").encode())
        if method != "HEAD" and r.ka_reset:
            self.send_kareset_body(c, r)
        elif method != "HEAD":
            self.send_fault_body(c.sock, r)
        if r.end == "reset":
            self.reset(c.sock)
        return keep and r.end == "keep"

    def send_kareset_body(self, c, r):
        """kareset's last answer: all but its last 64 KiB (or half), and once the client has
        those, the rest when no request of its came behind it, else an RST (counted)."""
        total = r.body_len()
        r.send_limit = total - min(65536, total // 2)
        self.send_fault_body(c.sock, r)
        self.drain_sendq(c.sock)
        if c.buf or select.select([c.sock], [], [], 0)[0]:
            r.end = "reset"
            self.count(r.tag, "RST kareset")
            return
        first = r.send_limit
        r.send_limit = None
        for b in self.fault_blocks(r):
            skip = min(len(b), first)
            first -= skip
            if b[skip:]:
                c.sock.sendall(b[skip:])

    def fault_blocks(self, r):
        """The body's bytes in blocks: prefix, file bytes (past the real file: 0x4c), suffix."""
        if r.prefix:
            yield r.prefix
        res, off, left = r.res, r.start, r.length
        if left:
            with open(res.path, "rb") as f:
                while left > 0:
                    if off < res.real:
                        f.seek(off)
                        b = f.read(min(BLOCK, left, res.real - off))
                        if res.table:
                            b = b.translate(res.table)
                    else:
                        b = b"L" * min(BLOCK, left)
                    yield b
                    off += len(b)
                    left -= len(b)
        if r.suffix:
            yield r.suffix

    def send_fault_body(self, sock, r):
        sent, limit = 0, r.send_limit
        for b in self.fault_blocks(r):
            if limit is not None:
                b = b[:limit - sent]
                if not b:
                    break
            if r.rate:
                fast = max(0, min(len(b), r.rate_after - sent))   # at full speed first
                sock.sendall(b[:fast])
                self.trickle(sock, b[fast:], r.rate)
            elif r.framing == "chunked":
                sock.sendall(b"%x\r\n" % len(b) + b + b"\r\n")
            else:
                sock.sendall(b)
            sent += len(b)
        if r.framing == "chunked" and limit is None:
            sock.sendall(b"0\r\n\r\n")

    def trickle(self, sock, data, rate):
        step = max(1, rate // 10)
        for i in range(0, len(data), step):
            sock.sendall(data[i:i + step])
            time.sleep(0.1)

    def read_body(self, c, headers):
        """Reads a POST's Content-Length body (after a 100 Continue when asked); False: unusable."""
        try:
            n = int(headers.get("content-length", ""))
        except ValueError:
            self.simple(c.sock, 411, "Length Required", close=True)
            return False
        if headers.get("expect", "").lower() == "100-continue":
            c.sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        while len(c.buf) < n:
            data = c.sock.recv(65536)
            if not data:
                return False
            c.buf += data
        c.buf = c.buf[n:]
        return True

    def count(self, tag, key):
        with self.lock:
            per = self.stats.setdefault(tag, {})
            per[key] = per.get(key, 0) + 1

    def send_stats(self, c, tag, keep):
        """GET /_stats?t=TAG: one line per 'METHOD STATUS KIND COUNT' (KIND: plain, probe, later)."""
        with self.lock:
            per = dict(self.stats.get(tag, {}))
        body = "".join("%s %d\n" % (k, v) for k, v in sorted(per.items())).encode()
        c.sock.sendall(("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                        "Connection: %s\r\n\r\n" % (len(body), "keep-alive" if keep else "close")).encode() + body)
        return keep


def set_header(headers, name, value):
    """Replaces (or, with value None, removes) every `name:` line of a header list."""
    low = name.lower() + ":"
    headers[:] = [h for h in headers if not h.lower().startswith(low)]
    if value is not None:
        headers.append("%s: %s" % (name, value))


def listen(addr, port):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # IP_FREEBIND: IPv6 addresses may still be tentative when we start.
    s.setsockopt(socket.SOL_IP, 15, 1)
    s.bind((addr, port))
    s.listen(128)
    return s


def accept_loop(server, sock):
    while True:
        try:
            conn, peer = sock.accept()
        except OSError:
            return
        if not server.conns.acquire(blocking=False):
            conn.close()
            continue
        threading.Thread(target=server.serve_conn, args=(conn, peer), daemon=True).start()


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--docroot", required=True)
    ap.add_argument("--workdir", required=True, help="scratch dir (gzip cache)")
    ap.add_argument("--bind", action="append", default=[], metavar="BEHAVIOUR=ADDR[,ADDR...]")
    ap.add_argument("--ports", default="80,8080")
    ap.add_argument("--log", default="-")
    ap.add_argument("--pidfile")
    a = ap.parse_args()
    log = sys.stdout if a.log == "-" else open(a.log, "a")
    os.makedirs(a.workdir, exist_ok=True)
    socks = []
    for spec in a.bind:
        name, _, addrs = spec.partition("=")
        if name not in BEHAVIOURS:
            sys.exit("origin_server: unknown behaviour %r" % name)
        srv = (FaultServer if name in ("fault", "longer", "trickle") else Server)(a.docroot, name, log)
        srv.gz_dir = a.workdir
        for addr in addrs.split(","):
            for port in a.ports.split(","):
                socks.append((srv, listen(addr, int(port))))
    if a.pidfile:
        with open(a.pidfile, "w") as f:
            f.write("%d\n" % os.getpid())
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    for srv, s in socks:
        threading.Thread(target=accept_loop, args=(srv, s), daemon=True).start()
    log.write("origin_server ready: %s\n" % ", ".join(a.bind))
    log.flush()
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
