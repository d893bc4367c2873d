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
#                 rest of its body (a hiccup, as a lost segment's retransmission timeout makes)
#   chunked       correct bytes; 200 and 206 bodies in Transfer-Encoding: chunked, no Content-Length
#   gzip          always Content-Encoding: gzip (gzip of the file, mtime 0); ranges are of
#                 the gzip bytes; ETag "gz-<mtime>-<gzsize>"

import argparse
import email.utils
import gzip
import os
import signal
import socket
import struct
import sys
import threading
import time
import urllib.parse

BEHAVIOURS = ("norange", "liar", "changing", "novalidators", "reset", "stall", "chunked", "gzip")
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
        try:
            conn.settimeout(60)
            buf = b""
            while True:
                while b"\r\n\r\n" not in buf:
                    if len(buf) > MAX_HEADER:
                        return
                    data = conn.recv(8192)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
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
                if not self.handle(conn, method, target, headers, keep):
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
                self.drain_sendq(conn)
                self.log_line("hiccup of %.1fs" % seconds)
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
        srv = Server(a.docroot, name, log)
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
