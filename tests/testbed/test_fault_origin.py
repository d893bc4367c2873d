"""The fault origins (fault.test, longer.test, trickle.test, cdn-longer/cdn-slow) answer each ?f= fault exactly as origin_server.py documents."""
# Outside the testbed: brings `lan` up and runs itself in the client namespace (--inside),
# where it speaks raw HTTP/1.1 to the origins, so heads, framing and closes are all visible.
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

REL = "/files/1048576.bin"


def inside():
    env = os.environ
    data = open(env["TESTBED_FILES_DIR"] + REL, "rb").read()
    size = len(data)
    fails = []

    def check(cond, msg):
        print(("ok    " if cond else "FAIL  ") + msg, flush=True)
        if not cond:
            fails.append(msg)

    def exchange(reqs, host="fault.test", wait=3.0, apart=False):
        """Sends reqs (pipelined: in one write, so they reach the server in one read even on a
        loaded machine; or 0.2 s apart); reads until EOF, RST, 0.3 s of silence (TIMEOUT) or
        `wait` seconds in all; returns (bytes read, how it ended)."""
        s = socket.create_connection((socket.gethostbyname(host), 80), timeout=5)
        s.settimeout(0.3)
        for r in (reqs if apart else [b"".join(reqs)]):
            s.sendall(r)
            if apart:
                time.sleep(0.2)
        out, end = b"", "TIMEOUT"
        deadline = time.monotonic() + wait
        try:
            while time.monotonic() < deadline:
                d = s.recv(1 << 20)
                if not d:
                    end = "EOF"
                    break
                out += d
        except socket.timeout:
            pass
        except ConnectionResetError:
            end = "RST"
        s.close()
        return out, end

    def req(q, *hdrs, path=REL, host="fault.test", method="GET", body=b""):
        h = "".join(x + "\r\n" for x in hdrs)
        if body:
            h += "Content-Length: %d\r\n" % len(body)
        return ("%s %s?%s HTTP/1.1\r\nHost: %s\r\n%s\r\n" % (method, path, q, host, h)).encode() + body

    def one(q, *hdrs, **kw):
        """One answer: (status, {header: [values]}, body, end)."""
        out, end = exchange([req(q, *hdrs, **{k: v for k, v in kw.items() if k in ("path", "host", "method", "body")})],
                            host=kw.get("host", "fault.test"))
        head, _, body = out.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        hd = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            hd.setdefault(k.strip().lower(), []).append(v.strip())
        return int(lines[0].split()[1]) if lines[0] else 0, hd, body, end

    def cr(hd):
        return hd.get("content-range", [None])[0]

    later = "Range: bytes=100000-199999"
    want = data[100000:200000]
    # -- later ranges; the same request as a probe (bytes=0-) is answered correctly
    st, hd, body, _ = one("f=lr-shift", later)
    check(st == 206 and cr(hd) == "bytes 101000-200999/%d" % size and body == data[101000:201000],
          "lr-shift: the range 1000 bytes further, Content-Range and bytes agree")
    st, hd, body, _ = one("f=lr-shift", "Range: bytes=0-99")
    check(st == 206 and cr(hd) == "bytes 0-99/%d" % size and body == data[:100], "lr-shift: a probe is answered right")
    st, hd, body, _ = one("f=lr-total", later)
    check(st == 206 and cr(hd) == "bytes 100000-199999/%d" % (size + 4096) and body == want, "lr-total: total +4096")
    st, hd, body, _ = one("f=lr-round-up", later)
    check(st == 206 and cr(hd) == "bytes 65536-262143/%d" % size and body == data[65536:262144], "lr-round-up: 64 KiB-aligned")
    st, hd, body, _ = one("f=lr-round-down", later)
    check(st == 206 and cr(hd) == "bytes 100000-196607/%d" % size and body == data[100000:196608], "lr-round-down: shorter")
    st, hd, body, end = one("f=lr-overlong", later)
    check(st == 206 and hd["content-length"] == ["101000"] and body == want + b"O" * 1000 and end == "TIMEOUT",
          "lr-overlong: 1000 bytes more than the range, keep-alive")
    st, hd, body, end = one("f=lr-short", later)
    check(st == 206 and hd["content-length"] == ["100000"] and body == want[:50000] and end == "EOF",
          "lr-short: half the body, then FIN")
    st, hd, body, _ = one("f=lr-200", later)
    check(st == 200 and cr(hd) is None and body == data, "lr-200: 200 with the whole body")
    for f, code in (("lr-416", 416), ("lr-429", 429), ("lr-403", 403)):
        st, hd, body, _ = one("f=" + f, later)
        check(st == code and len(body) < 100, "%s: %d" % (f, code))
    st, hd, body, _ = one("f=lr-multipart", later)
    check(st == 206 and hd["content-type"][0].startswith("multipart/byteranges") and want[:50000] in body
          and want[50000:] in body and body.count(b"Content-Range: bytes ") == 2, "lr-multipart: two parts")
    # a Range starting at 0 is "later" too when it is not the first request on the connection
    out, _ = exchange([req("f=lr-416", "Range: bytes=0-99")] * 2, apart=True)
    check(out.startswith(b"HTTP/1.1 206") and b"HTTP/1.1 416" in out, "lr-*: the 2nd request of a connection is later")
    t0 = time.monotonic()
    out, _ = exchange([req("f=lr-trickle", "Range: bytes=1000-1999")], wait=2.0)
    n = len(out) - out.find(b"\r\n\r\n") - 4
    check(out.startswith(b"HTTP/1.1 206") and 100 < n < 400 and time.monotonic() - t0 < 3, "lr-trickle: ~100 B/s (%d in 2 s)" % n)
    out, _ = exchange([req("f=lr-trickle&after=65536", "Range: bytes=100000-299999")], wait=2.0)
    body = out[out.find(b"\r\n\r\n") + 4:]
    check(65536 + 100 < len(body) < 65536 + 400 and body == data[100000:100000 + len(body)],
          "lr-trickle&after=65536: 64 KiB at once, then ~100 B/s (%d in 2 s)" % len(body))

    # -- the probe
    st, hd, body, end = one("f=pr-overclaim&size=6", "Range: bytes=0-32767")
    check(st == 206 and cr(hd) == "bytes 0-32767/6" and hd["content-length"] == ["32768"] and body == data[:6]
          and end == "TIMEOUT", "pr-overclaim: 206 0-32767/6, 6 bytes, connection left open")
    st, hd, body, _ = one("f=pr-overclaim&size=6")
    check(st == 200 and body == data[:6], "pr-overclaim: a plain request gets the 6 bytes")
    st, _, _, _ = one("f=pr-403", "Range: bytes=0-99")
    st2, _, body, _ = one("f=pr-403")
    check(st == 403 and st2 == 200 and body == data, "pr-403: 403 to a Range, 200 without")
    st, hd, body, _ = one("f=pr-200cr", "Range: bytes=0-99")
    check(st == 200 and cr(hd) == "bytes 0-99/%d" % size and body == data[:100], "pr-200cr: 200 with only the range")

    # -- heads and framing, on every answer
    st, hd, body, _ = one("f=hugehead")
    check(st == 200 and sum(len(v[0]) for k, v in hd.items() if k.startswith("x-fault-pad")) == 40000 and body == data,
          "hugehead: 40 KB of headers")
    st, hd, body, _ = one("f=manyheads")
    check(st == 200 and sum(1 for k in hd if k.startswith("x-fault-line")) == 150 and body == data, "manyheads: 150 lines")
    out, _ = exchange([req("f=hints", "Range: bytes=0-99")])
    check(out.startswith(b"HTTP/1.1 103 Early Hints\r\n") and b"\r\n\r\nHTTP/1.1 206" in out and out.endswith(data[:100]),
          "hints: 103 then the 206")
    st, hd, body, _ = one("f=dupcl")
    check(st == 200 and hd["content-length"] == [str(size)] * 2 and body == data, "dupcl: Content-Length twice")
    st, hd, body, _ = one("f=chunkedcl", "Range: bytes=0-99")
    check(st == 206 and hd["transfer-encoding"] == ["chunked"] and hd["content-length"] == ["100"]
          and body == b"64\r\n" + data[:100] + b"\r\n0\r\n\r\n", "chunkedcl: chunked plus Content-Length")

    # -- validators and versions
    st, hd, body, _ = one("f=weak", "Range: bytes=0-99")
    check(st == 206 and hd["etag"][0].startswith('W/"') and "last-modified" not in hd, "weak: W/ ETag only")
    st, hd, body, _ = one("f=weak", "Range: bytes=0-99", "If-Range: " + hd["etag"][0])
    check(st == 200 and body == data, "weak: If-Range with the weak ETag gets the whole body")
    bodies = [one("f=changing-nv", "Range: bytes=0-99")[2] for _ in range(2)]
    st, hd, _, _ = one("f=changing-nv", "Range: bytes=0-99")
    check(bodies[0] != bodies[1] and "etag" not in hd and "last-modified" not in hd and
          len({a ^ b for a, b in zip(bodies[0], data)}) == 1, "changing-nv: a new XOR version per request, no validators")
    st, hd, body, _ = one("", "Range: bytes=%d-" % (size - 10), host="longer.test")
    st2, hd2, _, _ = one("", "Range: bytes=0-0", host="a.test")
    check(st == 206 and cr(hd) == "bytes %d-%d/%d" % (size - 10, size + 4095, size + 4096) and
          body == data[-10:] + b"L" * 4096 and hd["etag"] == hd2["etag"], "longer.test: +4096 bytes under the file's ETag")
    out, _ = exchange([req("", host="trickle.test")], host="trickle.test", wait=2.0)
    check(100 < len(out) - out.find(b"\r\n\r\n") < 400, "trickle.test: ~100 B/s")
    out, _ = exchange([req("after=32768", host="trickle.test")], host="trickle.test", wait=2.0)
    check(32768 + 100 < len(out) - out.find(b"\r\n\r\n") - 4 < 32768 + 400, "trickle.test?after=32768: 32 KiB, then ~100 B/s")
    dnsq = os.path.join(os.environ["TESTBED_TOOL"].rsplit("/", 1)[0], "dnsq.py")
    for name, bad in (("cdn-longer.test", "LONGER"), ("cdn-slow.test", "TRICKLE")):
        a = [socket.gethostbyname(name)]
        lte = subprocess.run([sys.executable, dnsq, "--bind", env["TESTBED_LTE0_ADDR"], env["TESTBED_LTE0_DNS"], name],
                             stdout=subprocess.PIPE, text=True, timeout=10).stdout.split()
        check(a == [env["TESTBED_ORIGIN_A"]] and lte == [env["TESTBED_ORIGIN_" + bad]],
              "%s: A from the program's resolver (wifi0), %s from lte0's" % (name, bad.lower()))

    # -- connections
    out, end = exchange([req("f=close")])
    check(b"Connection: close" in out and out.endswith(data) and end == "EOF", "close: Connection: close, then FIN")
    out, end = exchange([req("f=close", "Range: bytes=100000-199999"), req("f=close", "Range: bytes=0-99")])
    check(out.count(b"HTTP/1.1 206") == 1 and b"Connection: close" in out and out.endswith(want) and end in ("EOF", "RST"),
          "close: a range's answer ends the connection too (a pipelined request is not answered)")
    for q, n in (("f=reset", 1000), ("f=reset&after=5000", 5000)):
        for rng in ((), ("Range: bytes=0-32767",), (later,)):
            st, hd, body, end = one(q, *rng)
            first = 100000 if rng == (later,) else 0
            check(st in (200, 206) and body == data[first:first + n] and end == "RST",
                  "%s: %d body bytes, then RST (%s)" % (q, n, rng[0] if rng else "no Range"))
    st, _, body, end = one("f=reset", path="/files/1.bin")
    check(st == 200 and len(body) == 1 and end != "RST", "reset: an answer within ?after= ends normally")
    out, end = exchange([req("f=http10", "Range: bytes=0-99")])
    check(out.startswith(b"HTTP/1.0 206") and b"Content-Length" not in out and out.endswith(data[:100]) and end == "EOF",
          "http10: HTTP/1.0, close-delimited")
    out, end = exchange([req("f=kalimit", path="/files/1.bin")] * 3, apart=True)
    check(out.count(b"HTTP/1.1 200") == 2 and out.count(b"Connection: close") == 0 and end == "EOF",
          "kalimit: two answers saying keep-alive, then FIN")
    out, end = exchange([req("f=close206", "Range: bytes=0-99")])
    check(out.startswith(b"HTTP/1.1 206") and b"Content-Length" not in out and out.endswith(data[:100]) and end == "EOF",
          "close206: 206 delimited by the close")
    out, end = exchange([req("f=close206", path="/files/1.bin")] * 2, apart=True)
    check(out.count(b"HTTP/1.1 200") == 2, "close206: 200s keep the connection")
    out, _ = exchange([req("f=nopipe", path="/files/1.bin")] * 3)
    out2, _ = exchange([req("f=nopipe", path="/files/1.bin")] * 3, apart=True)
    check(out.count(b"HTTP/1.1 200") == 1 and out2.count(b"HTTP/1.1 200") == 3,
          "nopipe: 1 answer to 3 pipelined requests, 3 to 3 sent apart")

    # -- credentials, redirects, size, POST, counting
    st, hd, _, _ = one("f=auth-basic")
    st2, _, body, _ = one("f=auth-basic", "Authorization: Basic dXNlcjpwYXNz")
    check(st == 401 and "www-authenticate" in hd and st2 == 200 and body == data, "auth-basic: 401, 200 with user:pass")
    st, _, _, _ = one("f=auth-cookie", "Cookie: x=1")
    st2, _, body, _ = one("f=auth-cookie", "Cookie: x=1; fault=yes")
    check(st == 401 and st2 == 200 and body == data, "auth-cookie: 401, 200 with fault=yes")
    st, hd, _, _ = one("f=redir301&t=r")
    st2, hd2, _, _ = one("f=redir302x")
    check(st == 301 and hd["location"] == [REL + "?t=r"] and st2 == 302 and hd2["location"] == ["http://a.test" + REL],
          "redir301 / redir302x: Location on this name / on a.test")
    st, hd, body, end = one("f=huge")
    check(st == 200 and hd["content-length"] == [str(1 << 40)] and body == data and end == "EOF", "huge: 1 TiB claimed, FIN after the file")
    st, hd, body, end = one("f=huge", "Range: bytes=0-99")
    check(st == 206 and cr(hd) == "bytes 0-99/%d" % (1 << 40) and body == data[:100] and end == "TIMEOUT",
          "huge: a range inside the file is whole and keeps the connection")
    tag = "smoke%d" % os.getpid()
    st, _, body, _ = one("f=post-reset&t=" + tag, method="POST", body=b"x" * 70000)
    st2, _, body2, _ = one("t=" + tag, method="POST", body=b"x" * 70000)
    one("t=" + tag, "Range: bytes=5-9")
    stats = one("t=" + tag, path="/_stats")[2].decode()
    check(st == 200 and body == data[:65536] and st2 == 200 and body2 == data, "POST: answered like GET; post-reset resets after 64 KiB")
    check(stats == "GET 206 later 1\nPOST 200 plain 2\n", "/_stats counts per tag: %r" % stats)
    print("== %d failed" % len(fails))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    if sys.argv[1:] == ["--inside"]:
        inside()
    from tblib import check, finish, run_in, up  # noqa: E402
    env = up("lan")
    p = run_in(env, ["/usr/bin/python3", os.path.abspath(__file__), "--inside"], timeout=90)
    sys.stdout.write(p.stdout + p.stderr)
    check(p.returncode == 0, "every fault as documented")
    finish()
