# Keep-alive under a split: python's http.client fetches each PATH in turn on ONE connection (it raises RemoteDisconnected if the connection was closed) and prints "sha256 size" per body.
# Usage: kaseq.py HOST PATH [PATH...]
import hashlib, http.client, sys

conn = http.client.HTTPConnection(sys.argv[1], 80, timeout=60)
for path in sys.argv[2:]:
    conn.request("GET", path)
    r = conn.getresponse()
    h = hashlib.sha256()
    n = 0
    while True:
        b = r.read(1 << 16)
        if not b:
            break
        h.update(b)
        n += len(b)
    print(r.status, h.hexdigest(), n)
conn.close()
