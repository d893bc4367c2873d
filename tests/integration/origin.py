#!/usr/bin/python3
"""A tiny origin for the shim's integration tests: echo of POST bodies, redirects, mid-body close, non-HTTP and TLS listeners.

Usage: origin.py PORT            HTTP/1.1 on 127.0.0.1:PORT
       origin.py PORT --banner   speaks first ("220 hello\r\n"), then echoes lines (not HTTP)
       origin.py PORT --echo     echoes whatever arrives (not HTTP)
       origin.py PORT --tls CERT KEY   TLS, then answers one HTTP/1.1 request per connection
"""
import hashlib
import http.server
import socket
import socketserver
import ssl
import sys
import threading
import time


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def _send(self, code, body, headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        if self.path.startswith("/slow"):
            # reads nothing for 0.5 s: a client that exits meanwhile still has bytes in flight
            # beyond the (small) kernel buffers
            time.sleep(0.5)
        body = self.rfile.read(n)
        # the exit-drain test reads this line: what arrived, even if the client is gone
        sys.stderr.write("POST %s %d %s\n" % (self.path, len(body), hashlib.sha256(body).hexdigest()))
        sys.stderr.flush()
        self._send(200, ("%d %s\n" % (len(body), hashlib.sha256(body).hexdigest())).encode())

    do_PUT = do_POST

    def do_GET(self):
        path, _, query = self.path.partition("?")
        if path == "/redirect":
            self._send(302, b"moved\n", [("Location", query)])
        elif path == "/closemid":
            # announces 10000 bytes, sends 1234, then closes (FIN): a truncated body
            self.send_response(200)
            self.send_header("Content-Length", "10000")
            self.end_headers()
            self.wfile.write(b"x" * 1234)
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
        else:
            self._send(200, b"hello from the local origin\n")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def raw_server(port, banner):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(16)

    def serve(c):
        with c:
            if banner:
                c.sendall(b"220 hello\r\n")
            while True:
                d = c.recv(65536)
                if not d:
                    return
                c.sendall(d)

    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


def main():
    port = int(sys.argv[1])
    mode = sys.argv[2] if len(sys.argv) > 2 else ""
    if mode in ("--banner", "--echo"):
        raw_server(port, mode == "--banner")
    srv = Server(("127.0.0.1", port), Handler, bind_and_activate=False)
    # small receive buffers (inherited by accepted sockets): the kernel holds little in flight
    srv.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    srv.server_bind()
    srv.server_activate()
    if mode == "--tls":
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[3], sys.argv[4])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
