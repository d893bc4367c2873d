#!/usr/bin/python3
"""A network that lies, run in one access network's router namespace (test_netlie.sh): a captive
portal answering every plain-HTTP request itself, or a transparent cache serving an older
version of every file.

netlie.py MODE DOCROOT PORT...   MODE: portal302 | portal200 | portal206 | stale
  portal302  every request: 302 to http://portal.test/login (a short HTML body)
  portal200  every request: 200 with a login page
  portal206  a Range request: 206 bytes 0-1535/1536 with the portal's own ETag; else 200, 1536 bytes
  stale      DOCROOT's files with every byte XOR 0x33, ETag "stale-<size hex>", ranges and
             If-Range honoured (another validator gets the whole stale file, as a cache does)
HTTP/1.1 keep-alive; listens on every address of the namespace (the origins' addresses are
added to its loopback, so it answers for them)."""
import os
import re
import socketserver
import sys
from http.server import BaseHTTPRequestHandler

MODE, DOCROOT = sys.argv[1], sys.argv[2]
LOGIN = (b"<html><head><title>Welcome</title></head><body><h1>Hotel Wi-Fi</h1>"
         b"<form method=post action=/login><input name=room><input type=submit value='Log in'>"
         b"</form><p>Please log in to use the Internet.</p></body></html>\n")
PORTAL_OBJ = (LOGIN * 8)[:1536]
XOR = bytes(b ^ 0x33 for b in range(256))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, body, headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self):
        if MODE == "portal302":
            self.reply(302, b"<html><body>Moved: <a href='http://portal.test/login'>login</a></body></html>\n",
                       [("Location", "http://portal.test/login"), ("Content-Type", "text/html")])
        elif MODE == "portal200":
            self.reply(200, LOGIN, [("Content-Type", "text/html"), ("Cache-Control", "no-store")])
        elif MODE == "portal206" and self.headers.get("Range"):
            self.reply(206, PORTAL_OBJ, [("Content-Range", "bytes 0-1535/1536"), ("ETag", '"portal-1"'),
                                         ("Content-Type", "application/octet-stream")])
        elif MODE == "portal206":
            self.reply(200, PORTAL_OBJ, [("ETag", '"portal-1"'), ("Content-Type", "application/octet-stream")])
        else:
            self.stale()

    do_HEAD = do_GET

    def stale(self):
        path = os.path.normpath(self.path.split("?")[0]).lstrip("/")
        full = os.path.join(DOCROOT, path)
        if path.startswith("..") or not os.path.isfile(full):
            self.reply(404, b"not found\n")
            return
        with open(full, "rb") as f:
            data = f.read().translate(XOR)
        size = len(data)
        etag = '"stale-%x"' % size
        hdrs = [("ETag", etag), ("Last-Modified", "Mon, 01 Jan 2018 00:00:00 GMT"), ("Accept-Ranges", "bytes")]
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        ir = self.headers.get("If-Range")
        if not m or (ir is not None and ir != etag) or int(m.group(1)) >= size:
            self.reply(200, data, hdrs)
            return
        a = int(m.group(1))
        b = min(int(m.group(2)) if m.group(2) else size - 1, size - 1)
        self.reply(206, data[a:b + 1], hdrs + [("Content-Range", "bytes %d-%d/%d" % (a, b, size))])


class Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


servers = [Server(("0.0.0.0", int(p)), Handler) for p in sys.argv[3:]]
for s in servers[1:]:
    import threading
    threading.Thread(target=s.serve_forever, daemon=True).start()
servers[0].serve_forever()
