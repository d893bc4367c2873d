# Two GETs on one keep-alive connection from a given source address, with a pause between them that the test uses to change the network: writes each body to OUT.1 / OUT.2 and prints each status line.
# Usage: ka2.py SRC HOST PORT PATH OUT   (after the first body: creates OUT.ready, then waits up to 20 s for OUT.go)
import os, socket, sys, time

src, host, port, path, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.settimeout(30)
s.bind((src, 0))
s.connect((socket.gethostbyname(host), port))
buf = b""


def response():
    """One response (Content-Length framed, as the testbed origins send): (status line, body)."""
    global buf
    while b"\r\n\r\n" not in buf:
        d = s.recv(65536)
        if not d:
            sys.exit("connection closed in a head")
        buf += d
    head, buf = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    n = [int(l.split(":", 1)[1]) for l in lines if l.lower().startswith("content-length:")]
    if not n:
        sys.exit("no Content-Length")
    while len(buf) < n[0]:
        d = s.recv(65536)
        if not d:
            sys.exit("connection closed in a body")
        buf += d
    body, buf = buf[: n[0]], buf[n[0]:]
    return lines[0], body


req = ("GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: ka2\r\n\r\n" % (path, host)).encode()
for k in (1, 2):
    if k == 2:
        open(out + ".ready", "w").close()
        for _ in range(200):
            if os.path.exists(out + ".go"):
                break
            time.sleep(0.1)
    s.sendall(req)
    status, body = response()
    with open("%s.%d" % (out, k), "wb") as f:
        f.write(body)
    print(status)
