"""Each misbehaving origin misbehaves exactly as README.md documents, and only in that way."""
import gzip
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tblib import check, curl, curl_sha, finish, header, manifest, status, up  # noqa: E402

env = up("lan")
man = manifest(env)
REL = "files/1048576.bin"
SIZE = 1 << 20
with open(os.path.join(env["TESTBED_FILES_DIR"], REL), "rb") as f:
    DATA = f.read()
rc, _b, nginx_hdrs = curl(env, ["-I", env["TESTBED_URL_A"] + "/" + REL])
ETAG = header(nginx_hdrs, "ETag")
LM = header(nginx_hdrs, "Last-Modified")


def url(o, rel=REL):
    return "%s/%s" % (env["TESTBED_URL_" + o.upper()], rel)


# norange: a range request gets 200 and the whole (correct) body.
rc, body, h = curl(env, ["-r", "0-99", url("norange")])
check(rc == 0 and status(h) == 200 and body == DATA, "norange: Range ignored, 200 with all %d bytes" % len(body))
check(header(h, "Accept-Ranges") is None and header(h, "Content-Range") is None, "norange: no Accept-Ranges/Content-Range")
check(header(h, "ETag") == ETAG, "norange: still has the replicas' ETag")

# liar: same validators as the replicas, different bytes.
rc, body, h = curl(env, ["-r", "0-32767", url("liar")])
check(status(h) == 206 and header(h, "ETag") == ETAG and header(h, "Last-Modified") == LM,
      "liar: 206 with the replicas' ETag and Last-Modified")
check(len(body) == 32768 and body != DATA[:32768] and all(a != b for a, b in zip(body[:4096], DATA[:4096])),
      "liar: every byte differs from the real file")
rc, digest, n = curl_sha(env, [url("liar")])
check(rc == 0 and n == SIZE and digest != man[REL], "liar: full body has the right size and the wrong hash")

# changing: a new ETag and new bytes on every request.
seen = []
for _ in range(3):
    rc, body, h = curl(env, [url("changing")])
    seen.append((header(h, "ETag"), hashlib.sha256(body).hexdigest(), header(h, "Last-Modified")))
check(len({s[0] for s in seen}) == 3 and len({s[1] for s in seen}) == 3 and len({s[2] for s in seen}) == 3,
      "changing: 3 requests, 3 ETags, 3 Last-Modified, 3 different bodies")
check(all(s[1] != man[REL] for s in seen), "changing: never the real bytes")
rc, body, h = curl(env, ["-r", "0-9", "-H", "If-Range: " + seen[0][0], url("changing")])
check(status(h) == 200 and len(body) == SIZE, "changing: If-Range with an old ETag gets the whole new version")

# novalidators: correct bytes and ranges, no ETag / Last-Modified.
rc, body, h = curl(env, ["-r", "1000-1999", url("novalidators")])
check(status(h) == 206 and body == DATA[1000:2000], "novalidators: ranges work and bytes are right")
check(header(h, "ETag") is None and header(h, "Last-Modified") is None, "novalidators: no ETag, no Last-Modified")

# reset: exactly N bytes, then a TCP RST (curl: 56 "Recv failure: Connection reset by peer").
rc, body, h = curl(env, [url("reset")])
check(rc == 56 and len(body) == 65536 and body == DATA[:65536] and header(h, "Content-Length") == str(SIZE),
      "reset: 65536 correct bytes of %d, then reset (curl rc %d, %d bytes)" % (SIZE, rc, len(body)))
rc, body, h = curl(env, [url("reset") + "?after=1000"])
check(rc == 56 and len(body) == 1000, "reset ?after=1000: 1000 bytes then reset (rc %d, %d bytes)" % (rc, len(body)))
rc, body, h = curl(env, ["-r", "0-999", url("reset")])
check(rc == 0 and body == DATA[:1000], "reset: a response shorter than N completes normally")

# stall: N bytes then silence (curl: 28 timeout).
t0 = time.monotonic()
rc, body, h = curl(env, ["--max-time", "2", url("stall")])
check(rc == 28 and len(body) == 65536 and body == DATA[:65536] and time.monotonic() - t0 >= 1.9,
      "stall: 65536 bytes then silence until curl's 2 s timeout (rc %d, %d bytes)" % (rc, len(body)))
rc, body, h = curl(env, ["--max-time", "5", url("stall") + "?after=100&stall=1"])
check(rc == 18 and len(body) == 100, "stall ?stall=1: FIN after 1 s, body short (curl rc %d = partial file)" % rc)

# chunked: 206 and 200 bodies in chunked encoding, bytes right after de-chunking.
rc, body, h = curl(env, ["-r", "32767-65535", url("chunked")])
check(status(h) == 206 and header(h, "Transfer-Encoding") == "chunked" and header(h, "Content-Length") is None
      and header(h, "Content-Range") == "bytes 32767-65535/%d" % SIZE and body == DATA[32767:65536],
      "chunked: 206 chunked, no Content-Length, right bytes")
rc, raw, h = curl(env, ["--raw", "-r", "0-9", url("chunked")])
check(raw.startswith(b"a\r\n") and raw.endswith(b"0\r\n\r\n"), "chunked: raw body is chunk-framed")
rc, digest, n = curl_sha(env, [url("chunked")])
check(rc == 0 and digest == man[REL], "chunked: full 200 body de-chunks to the file")

# gzip: Content-Encoding gzip even unasked; ranges are of the gzip bytes.
rc, body, h = curl(env, [url("gzip")])
check(header(h, "Content-Encoding") == "gzip" and gzip.decompress(body) == DATA, "gzip: gzip body of the file, unasked")
check(header(h, "ETag") != ETAG and header(h, "ETag", ).startswith('"gz-'), "gzip: its own strong ETag %s" % header(h, "ETag"))
rc, part, h = curl(env, ["-r", "0-99", url("gzip")])
check(status(h) == 206 and part == body[:100] and header(h, "Content-Encoding") == "gzip",
      "gzip: a range is a slice of the gzip bytes, still labelled gzip")
rc, digest, n = curl_sha(env, ["--compressed", url("gzip")])
check(rc == 0 and digest == man[REL], "gzip: curl --compressed gets the file")

# Control: the nginx replica does none of the above.
rc, body, h = curl(env, ["-r", "0-99", url("a")])
check(status(h) == 206 and body == DATA[:100] and header(h, "Content-Encoding") is None, "replica A: plain 206")
finish()
