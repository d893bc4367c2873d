# Two GETs on one http.client keep-alive connection (http.client reconnects only when the server closed it): prints "status length sha256" per object, or "ERR <exception>" and exits 1.
# Usage: fetch2.py [-H 'Name: value'] [-u USER:PASS]... URL1 URL2   (both on one host and port)
import base64
import hashlib
import http.client
import sys
import urllib.parse

args = sys.argv[1:]
headers = {}
while len(args) > 1 and args[0] in ("-H", "-u"):
    if args[0] == "-u":
        headers["Authorization"] = "Basic " + base64.b64encode(args[1].encode()).decode()
    else:
        k, _, v = args[1].partition(":")
        headers[k.strip()] = v.strip()
    args = args[2:]
first = urllib.parse.urlsplit(args[0])
conn = http.client.HTTPConnection(first.hostname, first.port or 80, timeout=10)
try:
    for url in args:
        u = urllib.parse.urlsplit(url)
        conn.request("GET", u.path + ("?" + u.query if u.query else ""), headers=headers)
        r = conn.getresponse()
        body = r.read()
        print(r.status, len(body), hashlib.sha256(body).hexdigest(), flush=True)
except Exception as e:  # the program's failure is part of what the test compares
    print("ERR %s" % type(e).__name__, flush=True)
    sys.exit(1)
