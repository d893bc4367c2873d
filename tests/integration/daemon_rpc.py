#!/usr/bin/python3
"""Drives an aria2-RPC server (mhttp daemon or aria2c --enable-rpc) over HTTP (JSON-RPC by POST and
GET, XML-RPC at /rpc as persepolis sends it) and WebSocket: one
sequence of calls, each answer reduced to its shape (field names and types, error code and
message, status transitions); prints `ok`/`FAIL` lines and, with --shape FILE, writes the shapes
for comparison with another server (tests/integration/test_daemon.sh)."""
import argparse, base64, hashlib, json, os, socket, struct, sys, time, urllib.error, urllib.request, xmlrpc.client

FAILS = 0


def check(name, cond, detail=""):
    global FAILS
    print(("ok   " if cond else "FAIL ") + name + (f" ({detail})" if detail and not cond else ""))
    FAILS += 0 if cond else 1
    return cond


class Rpc:
    def __init__(self, port, secret):
        self.url, self.secret, self.n = f"http://127.0.0.1:{port}/jsonrpc", secret, 0

    def raw(self, body, headers=None):
        """HTTP status, headers and the parsed answer (aria2 answers an error with 400, a parse
        error with 500)"""
        req = urllib.request.Request(self.url, data=body.encode(), headers=headers or {}, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                self.status = r.status
                return r.status, dict(r.headers), json.loads(r.read())
        except urllib.error.HTTPError as e:
            self.status = e.code
            return e.code, dict(e.headers), json.loads(e.read())

    def call(self, method, *params, token=True):
        self.n += 1
        p = ([f"token:{self.secret}"] if token else []) + list(params)
        return self.raw(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": p}))[2]

    def ok(self, method, *params):
        a = self.call(method, *params)
        if "result" not in a:
            raise RuntimeError(f"{method}{params}: {a}")
        return a["result"]


def shape(v):
    """field names and types, recursively; lists by their first element"""
    if isinstance(v, dict):
        return {k: shape(x) for k, x in sorted(v.items())}
    if isinstance(v, list):
        return [shape(v[0])] if v else []
    return type(v).__name__


def err(a, rpc=None):
    """an error's code and message, and the HTTP status it came with when rpc is given"""
    e = a.get("error") or {}
    return [e.get("code"), e.get("message")] + ([rpc.status] if rpc else [])


def wait_status(rpc, gid, want, limit=60):
    """polls tellStatus (every 50 ms, at most limit s) until status is in want; the distinct
    statuses seen in order"""
    seen, end = [], time.time() + limit
    while time.time() < end:
        s = rpc.ok("aria2.tellStatus", gid, ["status", "completedLength"])["status"]
        if not seen or seen[-1] != s:
            seen.append(s)
        if s in want:
            break
        time.sleep(0.05)
    return seen


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


class Ws:
    """a minimal RFC 6455 client: masked text frames out, frames in"""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((f"GET /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            c = self.s.recv(1)
            if not c:
                raise RuntimeError("closed during the handshake")
            head += c
        lines = head.decode().split("\r\n")
        self.status = lines[0]
        hdr = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip() for l in lines[1:] if ":" in l}
        want = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest()).decode()
        self.accept_ok = hdr.get("sec-websocket-accept") == want

    def send(self, op, payload, fin=True):
        mask = os.urandom(4)
        n = len(payload)
        h = bytes([(0x80 if fin else 0) | op])
        h += bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.s.sendall(h + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def recv_exact(self, n):
        b = b""
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                raise EOFError
            b += c
        return b

    def frame(self):
        b0, b1 = self.recv_exact(2)
        n = b1 & 0x7f
        if n == 126:
            n = struct.unpack(">H", self.recv_exact(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self.recv_exact(8))[0]
        return b0 & 0x0f, self.recv_exact(n)

    def messages_until(self, pred, limit=60):
        """text messages (parsed) until pred(message) or limit seconds"""
        got, end = [], time.time() + limit
        while time.time() < end:
            self.s.settimeout(max(0.1, end - time.time()))
            try:
                op, p = self.frame()
            except (socket.timeout, EOFError):
                break
            if op == 1:
                got.append(json.loads(p))
                if pred(got[-1]):
                    break
        return got


def norm(v, *gids):
    """v (a string or a list of them) with each GID written <gid>"""
    if isinstance(v, list):
        return [norm(x, *gids) for x in v]
    for g in gids:
        v = v.replace(g, "<gid>") if isinstance(v, str) else v
    return v


def errors(rpc, url, S):
    S["bad token"] = err(rpc.call("aria2.getVersion", "token:wrong", token=False), rpc)
    S["no token"] = err(rpc.call("aria2.getVersion", token=False), rpc)
    S["unknown method"] = err(rpc.call("aria2.nosuch"), rpc)
    S["unknown gid"] = err(rpc.call("aria2.tellStatus", "0123456789abcdef"), rpc)
    S["invalid gid"] = err(rpc.call("aria2.tellStatus", "zz"), rpc)
    S["pause unknown gid"] = err(rpc.call("aria2.pause", "0123456789abcdef"), rpc)
    S["addUri without params"] = err(rpc.call("aria2.addUri"), rpc)
    S["addUri []"] = err(rpc.call("aria2.addUri", []), rpc)
    S["addUri wrong type"] = err(rpc.call("aria2.addUri", "x"), rpc)
    S["addUri bad split"] = err(rpc.call("aria2.addUri", [url], {"split": "abc"}), rpc)
    S["parse error"] = err(rpc.raw("nonsense")[2], rpc) + [rpc.raw("nonsense")[2].get("id")]
    S["invalid request"] = err(rpc.raw('{"jsonrpc":"2.0","id":1}')[2], rpc)
    batch = rpc.raw(json.dumps([{"jsonrpc": "2.0", "id": 1, "method": "system.listNotifications"},
                                {"jsonrpc": "2.0", "id": 2, "method": "aria2.getVersion", "params": [f"token:{rpc.secret}"]},
                                {"jsonrpc": "2.0", "id": 3, "method": "aria2.getVersion"}]))[2]
    S["batch"] = [sorted(a.keys()) for a in batch] + [batch[0]["result"], err(batch[2]), rpc.status]
    S["multicall with a token"] = err(rpc.call("system.multicall", []), rpc)
    mc = rpc.call("system.multicall", [{"methodName": "aria2.getGlobalStat", "params": [f"token:{rpc.secret}"]},
                                     {"methodName": "aria2.getGlobalStat"}], token=False)["result"]
    S["multicall"] = [shape(mc[0]), mc[1]]
    S["getGlobalStat"] = shape(rpc.ok("aria2.getGlobalStat"))
    S["getSessionInfo"] = shape(rpc.ok("aria2.getSessionInfo"))
    S["getVersion"] = shape(rpc.ok("aria2.getVersion"))


def wait_bytes(rpc, gid, limit=30):
    end = time.time() + limit
    while time.time() < end:
        st = rpc.ok("aria2.tellStatus", gid)
        if st["status"] != "waiting" and int(st["completedLength"]) > 0:
            return st
        time.sleep(0.05)
    return rpc.ok("aria2.tellStatus", gid)


def download(rpc, args, S):
    """add, status while active, pause, unpause, complete byte-exact, then the stopped calls"""
    gid = rpc.ok("aria2.addUri", [args.url], {"dir": args.dir, "out": "big.bin"})
    check("addUri: a GID of 16 hex digits", isinstance(gid, str) and len(gid) == 16 and all(c in "0123456789abcdef" for c in gid), gid)
    st = wait_bytes(rpc, gid)
    check("tellStatus: active with bytes", st["status"] == "active" and int(st["completedLength"]) > 0, str(st)[:200])
    S["tellStatus active"] = shape(st)
    S["tellActive"] = shape(rpc.ok("aria2.tellActive"))
    S["getFiles"] = shape(rpc.ok("aria2.getFiles", gid))
    S["getUris"] = rpc.ok("aria2.getUris", gid)
    servers = rpc.ok("aria2.getServers", gid)
    S["getServers"] = shape(servers)
    opt = rpc.ok("aria2.getOption", gid)
    check("getOption: dir and out as given", opt.get("dir") == args.dir and opt.get("out") == "big.bin", str(opt)[:200])
    S["pause"] = rpc.ok("aria2.pause", gid) == gid
    S["pause: last status"] = wait_status(rpc, gid, {"paused"})[-1]
    S["tellWaiting paused"] = shape(rpc.ok("aria2.tellWaiting", 0, 10))
    S["pause again"] = norm(err(rpc.call("aria2.pause", gid)), gid)
    S["unpause"] = rpc.ok("aria2.unpause", gid) == gid
    S["unpause: last status"] = wait_status(rpc, gid, {"complete", "error", "removed"}, 120)[-1]
    check("download complete, sha256 exact", S["unpause: last status"] == "complete" and sha(os.path.join(args.dir, "big.bin")) == args.sha)
    S["tellStatus complete"] = shape(rpc.ok("aria2.tellStatus", gid))
    S["tellStopped"] = shape(rpc.ok("aria2.tellStopped", 0, 10))
    S["remove complete"] = norm(err(rpc.call("aria2.remove", gid)), gid)
    S["removeDownloadResult"] = rpc.ok("aria2.removeDownloadResult", gid)
    S["tellStatus forgotten"] = norm(err(rpc.call("aria2.tellStatus", gid)), gid)
    return servers


def remove_and_queue(rpc, args, S):
    gid = rpc.ok("aria2.addUri", [args.url], {"dir": args.dir, "out": "removed.bin"})
    wait_bytes(rpc, gid)
    S["remove active"] = rpc.ok("aria2.remove", gid) == gid
    S["remove: last status"] = wait_status(rpc, gid, {"removed", "complete"})[-1]
    S["tellStatus removed"] = shape(rpc.ok("aria2.tellStatus", gid))
    S["purgeDownloadResult"] = rpc.ok("aria2.purgeDownloadResult")
    S["changeGlobalOption"] = rpc.ok("aria2.changeGlobalOption", {"max-concurrent-downloads": "1"})
    g1 = rpc.ok("aria2.addUri", [args.url], {"dir": args.dir, "out": "q1.bin"})
    g2 = rpc.ok("aria2.addUri", [args.url], {"dir": args.dir, "out": "q2.bin"})
    g3 = rpc.ok("aria2.addUri", [args.url], {"dir": args.dir, "out": "q3.bin"}, 0)
    S["queue statuses"] = [rpc.ok("aria2.tellStatus", g, ["status"])["status"] for g in (g1, g2, g3)]
    S["tellWaiting order"] = [[g1, g2, g3].index(x["gid"]) for x in rpc.ok("aria2.tellWaiting", 0, 10, ["gid"])]
    S["changePosition"] = rpc.ok("aria2.changePosition", g2, 0, "POS_SET")
    S["changePosition active"] = norm(err(rpc.call("aria2.changePosition", g1, 0, "POS_SET")), g1)
    S["getGlobalOption max-concurrent-downloads"] = rpc.ok("aria2.getGlobalOption")["max-concurrent-downloads"]
    for g in (g1, g2, g3):
        rpc.ok("aria2.forceRemove", g)
    S["forceRemove: last statuses"] = [wait_status(rpc, g, {"removed"})[-1] for g in (g1, g2, g3)]
    rpc.ok("aria2.changeGlobalOption", {"max-concurrent-downloads": "5"})
    rpc.ok("aria2.purgeDownloadResult")


def websocket(rpc, args, S):
    ws = Ws(args.port)
    check("WebSocket handshake: 101 and the right Sec-WebSocket-Accept", ws.status.startswith("HTTP/1.1 101") and ws.accept_ok, ws.status)
    ws.send(1, json.dumps({"jsonrpc": "2.0", "id": "w1", "method": "aria2.getVersion", "params": [f"token:{rpc.secret}"]}).encode())
    a = ws.messages_until(lambda m: m.get("id") == "w1", 10)
    S["ws getVersion"] = shape(a[-1]) if a else None
    ws.send(9, b"hi")
    op, p = ws.frame()
    S["ws ping"] = [op, p.decode()]
    ws.send(1, json.dumps({"jsonrpc": "2.0", "id": "w2", "method": "aria2.addUri",
                           "params": [f"token:{rpc.secret}", [args.small_url], {"dir": args.dir, "out": "ws.bin"}]}).encode())
    gid = []
    def ended(m):
        if m.get("id") == "w2":
            gid.append(m.get("result"))
        return bool(gid) and m.get("method") in ("aria2.onDownloadComplete", "aria2.onDownloadError") and m["params"][0]["gid"] == gid[0]
    msgs = ws.messages_until(ended, 60)
    gid = gid[0] if gid else None
    notes = [m["method"] for m in msgs if m.get("params") and m["params"][0].get("gid") == gid]
    S["ws notifications"] = notes
    S["ws notification shape"] = next((shape(m) for m in msgs if "method" in m), None)
    check("WebSocket: onDownloadStart then onDownloadComplete for the added GID", notes == ["aria2.onDownloadStart", "aria2.onDownloadComplete"], str(msgs)[:300])
    check("WebSocket download sha256 exact", sha(os.path.join(args.dir, "ws.bin")) == args.small_sha)
    ws.send(8, struct.pack(">H", 1000))
    op, p = ws.frame()
    S["ws close"] = [op, p[:2].hex()]


def fault(f, *args):
    """the fault of an XML-RPC call: [faultCode, faultString], or the result when it did not fail"""
    try:
        return f(*args)
    except xmlrpc.client.Fault as x:
        return [x.faultCode, x.faultString]


def xml_rpc(rpc, args, S):
    """persepolis' sequence over XML-RPC (its scripts/download.py before 5.0: its own gid and
    options, ints among them, tellStatus/tellActive with its keys, pause/unpause, changeOption,
    remove, removeDownloadResult), faults, multicall, and a body that does not parse"""
    x = xmlrpc.client.ServerProxy(f"http://127.0.0.1:{args.port}/rpc", allow_none=True)
    tok = f"token:{rpc.secret}"
    S["xml getVersion"] = shape(x.aria2.getVersion(tok))
    gid = "feed" + os.urandom(6).hex()
    keys = ['status', 'connections', 'errorCode', 'errorMessage', 'downloadSpeed', 'connections', 'dir',
            'totalLength', 'completedLength', 'files']
    opts = {'gid': gid, 'max-tries': '5', 'retry-wait': 0, 'timeout': 60, 'header': ['X-From: persepolis'],
            'out': 'xml.bin', 'user-agent': 'PersepolisDM/3.2.0', 'max-download-limit': '0', 'split': '16',
            'max-connection-per-server': '16', 'min-split-size': '1M', 'continue': 'true', 'dir': args.dir}
    S["xml addUri: its own gid"] = x.aria2.addUri(tok, [args.url], opts) == gid
    S["xml addUri same gid"] = fault(x.aria2.addUri, tok, [args.url], opts)
    S["xml addUri bad gid"] = fault(x.aria2.addUri, tok, [args.url], {'gid': 'xyz'})
    end = time.time() + 30
    while time.time() < end and int(x.aria2.tellStatus(tok, gid, keys)["completedLength"]) == 0:
        time.sleep(0.05)
    st = x.aria2.tellStatus(tok, gid, keys)
    S["xml tellStatus"] = shape(st)
    S["xml tellActive"] = shape(x.aria2.tellActive(tok, ['gid'] + keys))
    S["xml getGlobalStat"] = shape(x.aria2.getGlobalStat(tok))
    S["xml pause"] = x.aria2.pause(tok, gid) == gid
    S["xml pause: last status"] = wait_status(rpc, gid, {"paused"})[-1]
    S["xml changeOption"] = x.aria2.changeOption(tok, gid, {'max-download-limit': '0'})  # persepolis' "no limit"
    S["xml unpause"] = x.aria2.unpause(tok, gid) == gid
    S["xml unpause: last status"] = wait_status(rpc, gid, {"complete", "error", "removed"}, 120)[-1]
    check("XML-RPC download complete, sha256 exact", S["xml unpause: last status"] == "complete" and
          sha(os.path.join(args.dir, "xml.bin")) == args.sha)
    S["xml remove complete"] = norm(fault(x.aria2.remove, tok, gid), gid)
    S["xml removeDownloadResult"] = x.aria2.removeDownloadResult(tok, gid)
    S["xml bad token"] = fault(x.aria2.getVersion, "token:wrong")
    S["xml unknown gid"] = fault(x.aria2.tellStatus, tok, "0123456789abcdef")
    S["xml unknown method"] = fault(x.aria2.nosuch, tok)
    S["xml addUri wrong type"] = fault(x.aria2.addUri, tok, "x")
    mc = xmlrpc.client.MultiCall(x)
    mc.aria2.getGlobalStat(tok)
    mc.aria2.getVersion("token:wrong")
    raw = mc()
    S["xml multicall"] = [shape(raw.results[0]), raw.results[1]]
    for name, body in (("xml not well-formed", b"<methodCall><methodName>aria2.getVersion"),
                       ("xml entity bomb", b'<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaaaaaaaa">'
                        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><methodCall><methodName>&b;</methodName></methodCall>')):
        req = urllib.request.Request(f"http://127.0.0.1:{args.port}/rpc", data=body, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                S[name] = [r.status, r.read()[:60].decode(errors="replace")]
        except urllib.error.HTTPError as e:
            S[name] = [e.code]


def change_uri(rpc, args, S):
    """changeUri on a paused download's list: delete, add at the end and at a position, errors"""
    gid = rpc.ok("aria2.addUri", [args.url], {"dir": args.dir, "out": "curi.bin", "pause": "true"})
    m1, m2, m3 = (f"{args.url}?m={i}" for i in (1, 2, 3))  # the same file: nginx ignores the query
    S["changeUri"] = rpc.ok("aria2.changeUri", gid, 1, [args.url, "http://no.such/uri"], [m1, m2])
    S["changeUri at 1"] = rpc.ok("aria2.changeUri", gid, 1, [], [m3, args.url], 1)
    S["changeUri: getUris"] = [u["uri"].replace(args.url, "U").replace(m1, "M1").replace(m2, "M2").replace(m3, "M3")
                               for u in rpc.ok("aria2.getUris", gid)]
    S["changeUri fileIndex 2"] = norm(err(rpc.call("aria2.changeUri", gid, 2, [], [])), gid)
    S["changeUri fileIndex 0"] = norm(err(rpc.call("aria2.changeUri", gid, 0, [], [])), gid)
    S["changeUri position -1"] = norm(err(rpc.call("aria2.changeUri", gid, 1, [], [m1], -1)), gid)
    S["changeUri missing"] = norm(err(rpc.call("aria2.changeUri", gid, 1, [])), gid)
    S["changeUri: unpause, last status"] = (rpc.ok("aria2.unpause", gid) == gid and
                                            wait_status(rpc, gid, {"complete", "error", "removed"}, 120)[-1])
    check("changeUri: the download over the changed list complete, sha256 exact",
          sha(os.path.join(args.dir, "curi.bin")) == args.sha)
    S["changeUri stopped"] = norm(err(rpc.call("aria2.changeUri", gid, 1, [], [m1])), gid)
    rpc.ok("aria2.removeDownloadResult", gid)


def get_call(rpc, query):
    """GET /jsonrpc?query: HTTP status, Content-Type, the body's text"""
    try:
        with urllib.request.urlopen(rpc.url + query, timeout=10) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode()


def json_get(rpc, args, S):
    """JSON-RPC over GET (base64 params) and JSONP (jsoncallback) as aria2 answers them"""
    b64 = lambda v: urllib.request.quote(base64.b64encode(json.dumps(v).encode()).decode())
    st, ct, body = get_call(rpc, f"?method=aria2.getVersion&id=1&params={b64([f'token:{rpc.secret}'])}")
    S["GET getVersion"] = {"status": st, "type": ct, "answer": shape(json.loads(body))}
    st, ct, body = get_call(rpc, f"?method=aria2.getGlobalStat&id=x&params={b64([f'token:{rpc.secret}'])}&jsoncallback=cb_1")
    S["JSONP getGlobalStat"] = [st, ct, body.startswith("cb_1(") and body.endswith(")") and shape(json.loads(body[5:-1]))]
    st, ct, body = get_call(rpc, f"?method=aria2.getVersion&id=2&params={b64(['token:wrong'])}")
    S["GET bad token"] = [st, json.loads(body)["error"]]
    st, ct, body = get_call(rpc, f"?params={b64([{'jsonrpc': '2.0', 'id': 3, 'method': 'aria2.getVersion', 'params': [f'token:{rpc.secret}']}])}")
    S["GET batch"] = {"status": st, "answer": shape(json.loads(body))}
    for name, q in (("GET without query", ""), ("GET id without method", "?id=1"), ("GET bad params", "?method=aria2.getVersion&params=Ww%3D%3D")):
        st, ct, body = get_call(rpc, q)
        S[name] = [st, json.loads(body)["error"]]


def gid_prefix(rpc, args, S):
    """GIDs set with the gid option, then named by a unique prefix, an ambiguous one, none"""
    g1, g2 = "aaaa000000000001", "aaab000000000002"
    for g in (g1, g2):
        rpc.ok("aria2.addUri", [args.url], {"dir": args.dir, "out": f"p{g[-1]}.bin", "pause": "true", "gid": g})
    S["gid prefix unique"] = [rpc.ok("aria2.tellStatus", "aaab", ["gid"])["gid"] == g2,
                              rpc.ok("aria2.tellStatus", "aaaa0", ["gid"])["gid"] == g1]
    S["gid prefix ambiguous"] = err(rpc.call("aria2.tellStatus", "aaa"))
    S["gid prefix none"] = err(rpc.call("aria2.remove", "bbbb"))
    S["gid prefix: unpause"] = rpc.ok("aria2.unpause", "aaab0") == g2
    for g in (g1, g2):
        rpc.ok("aria2.forceRemove", g)
    S["gid prefix: forceRemove active, last status"] = wait_status(rpc, g2, {"removed", "complete"})[-1]
    rpc.ok("aria2.purgeDownloadResult")


def names(rpc, args, S):
    """file names from URIs (no out): a '/' and bytes that are not UTF-8 kept percent-encoded,
    ".." renamed "..1." as a taken name, and failed with errorCode 16 where its directory did not
    exist (nginx resolves each path to a file it has: x/../16384.bin, /)"""
    files = args.small_url.rsplit("/", 1)[0]
    fresh = os.path.join(args.dir, "fresh")
    for key, uri, d, want in (("name %2F", f"{files}/x%2F..%2F16384.bin", args.dir, ["complete", "0", "", "x%2F..%2F16384.bin"]),
                              ("name not UTF-8", f"{files}/%FF%2F..%2F16384.bin", args.dir, ["complete", "0", "", "%FF%2F..%2F16384.bin"]),
                              ("name ..", f"{files}/..", args.dir, ["complete", "0", "", "..1."]),
                              ("name .. in a new dir", f"{files}/%2E%2E", fresh, ["error", "16", "Download aborted.", ".."])):
        gid = rpc.ok("aria2.addUri", [uri], {"dir": d})
        wait_status(rpc, gid, {"complete", "error", "removed"})
        st = rpc.ok("aria2.tellStatus", gid, ["status", "errorCode", "errorMessage", "files"])
        path = st["files"][0]["path"]
        S[key] = [st["status"], st.get("errorCode"), st.get("errorMessage"), path[len(d) + 1:] if path.startswith(d + "/") else path]
        check(f"{key}: {S[key]}", S[key] == want and (want[0] != "complete" or os.path.isfile(os.path.join(d, want[3]))), str(want))
        rpc.ok("aria2.removeDownloadResult", gid)


def mhttp_only(rpc, args):
    """what aria2 does not have or does otherwise: per-path servers, refusals, bounds, CORS"""
    gid = rpc.ok("aria2.addUri", [args.url], {"dir": args.dir, "out": "paths.bin"})
    wait_bytes(rpc, gid)
    ifaces, end = set(), time.time() + 20
    while len(ifaces) < 2 and time.time() < end:
        try:
            ifaces |= {s["interface"] for s in rpc.ok("aria2.getServers", gid)[0]["servers"]}
        except RuntimeError:
            break  # no longer active
        time.sleep(0.05)
    check(f"getServers: one entry per (interface, server) path, {sorted(ifaces)}", ifaces >= {"wifi0", "lte0"})
    wait_status(rpc, gid, {"complete", "error"}, 120)
    check("paths.bin sha256 exact", sha(os.path.join(args.dir, "paths.bin")) == args.sha)
    e = err(rpc.call("aria2.addUri", [args.url], {"out": "../escape.bin"}))
    check("out with .. refused", e == [1, "We encountered a problem while processing the option '--out'."], str(e))
    e = err(rpc.call("aria2.addUri", [args.url], {"out": "/tmp/abs.bin"}))
    check("absolute out refused", e[0] == 1, str(e))
    st, hdr, _ = rpc.raw(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "aria2.getVersion", "params": [f"token:{rpc.secret}"]}))
    check("CORS: Access-Control-Allow-Origin: * (--rpc-allow-origin-all)", hdr.get("Access-Control-Allow-Origin") == "*", str(hdr))
    check("answer head: Content-Type application/json-rpc and Content-Length, each on its line",
          hdr.get("Content-Type") == "application/json-rpc" and hdr.get("Content-Length", "").isdigit(), str(hdr))
    # curl reads the answer by its Content-Length on a kept-alive connection: a head that lost a
    # line ending leaves curl waiting for the close
    import subprocess
    t0 = time.time()
    out = subprocess.run(["curl", "-s", "-m", "5", "-d", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "aria2.getVersion",
                          "params": [f"token:{rpc.secret}"]}), rpc.url], capture_output=True, text=True).stdout
    check("curl gets the answer at once (Content-Length honoured)", '"1.36.0"' in out and time.time() - t0 < 3, out[:100])
    s = socket.create_connection(("127.0.0.1", args.port), timeout=10)
    s.sendall(b"OPTIONS /jsonrpc HTTP/1.1\r\nHost: x\r\nOrigin: http://ui\r\nAccess-Control-Request-Method: POST\r\n"
              b"Access-Control-Request-Headers: content-type\r\n\r\n")
    a = s.recv(4096).decode()
    check("OPTIONS preflight: 200 with the methods and the asked headers", a.startswith("HTTP/1.1 200") and
          "Access-Control-Allow-Methods: POST, GET, OPTIONS" in a and "Access-Control-Allow-Headers: content-type" in a, a[:200])
    s.close()
    for what, req, want in (("a body over --rpc-max-request-size", b"POST /jsonrpc HTTP/1.1\r\nHost: x\r\nContent-Length: 70000\r\n\r\n" + b" " * 70000, "413"),
                            ("a 20 KiB header", b"GET /jsonrpc HTTP/1.1\r\nX: " + b"a" * 20000 + b"\r\n\r\n", "431"),
                            ("a request that does not parse", b"BREW /x HTCPCP/1.0\r\n\r\n", "400")):
        s = socket.create_connection(("127.0.0.1", args.port), timeout=10)
        try:
            s.sendall(req)
            a = s.recv(4096).decode(errors="replace")
        except OSError as x:
            a = str(x)
        check(f"{what}: {want}", a.startswith(f"HTTP/1.1 {want}"), a[:80])
        s.close()
    ws = Ws(args.port)
    body = json.dumps({"jsonrpc": "2.0", "id": "frag", "method": "aria2.getVersion", "params": [f"token:{rpc.secret}"]}).encode()
    ws.send(1, body[:10], fin=False)
    ws.send(0, body[10:])
    a = ws.messages_until(lambda m: m.get("id") == "frag", 10)
    check("WebSocket: a message in two fragments answered", bool(a) and a[-1].get("id") == "frag", str(a)[:100])
    ws.send(2, b"x")
    op, p = ws.frame()
    check("WebSocket: a binary frame closes with 1003", op == 8 and p[:2] == struct.pack(">H", 1003), f"{op} {p!r}")
    ws = Ws(args.port)
    ws.s.sendall(b"\x81\x01a")  # unmasked: a client must mask
    op, p = ws.frame()
    check("WebSocket: an unmasked frame closes with 1002", op == 8 and p[:2] == struct.pack(">H", 1002), f"{op} {p!r}")
    socks = [socket.create_connection(("127.0.0.1", args.port), timeout=10) for _ in range(80)]
    time.sleep(0.3)
    closed = 0
    for s in socks:
        s.settimeout(0.05)
        try:
            closed += s.recv(1) == b""
        except (socket.timeout, ConnectionResetError):
            closed += isinstance(sys.exc_info()[1], ConnectionResetError)
    check(f"80 idle connections: those over 64 closed at once ({closed})", closed == 16)
    for s in socks:
        s.close()
    time.sleep(0.2)
    check("the server still answers", rpc.ok("aria2.getVersion")["version"] == "1.36.0")


def main():
    ap = argparse.ArgumentParser()
    for a in ("--port", "--secret", "--url", "--sha", "--small-url", "--small-sha", "--dir", "--shape"):
        ap.add_argument(a, required=a != "--shape")
    ap.add_argument("--mhttp", action="store_true")
    args = ap.parse_args()
    args.port = int(args.port)
    rpc, S = Rpc(args.port, args.secret), {}
    for part in (errors, download, remove_and_queue, websocket, xml_rpc, change_uri, json_get, gid_prefix, names):
        try:
            part(rpc, args, S) if part is not errors else errors(rpc, args.url, S)
        except Exception as x:  # a server that misbehaves fails the part, not the script
            check(f"{part.__name__} ran", False, repr(x)[:300])
    if args.mhttp:
        try:
            mhttp_only(rpc, args)
        except Exception as x:
            check("mhttp_only ran", False, repr(x)[:300])
    if args.shape:
        with open(args.shape, "w") as f:
            json.dump(S, f, indent=1, sort_keys=True)
    rpc.ok("aria2.shutdown")
    sys.exit(1 if FAILS else 0)


def session_save(port, secret, url, small_url, out):
    """phase 1: one download active (with bytes), one waiting, one paused; then shutdown"""
    rpc = Rpc(port, secret)
    g = [rpc.ok("aria2.addUri", [u], {"out": o}) for u, o in ((url, "s1.bin"), (small_url, "s2.bin"), (small_url, "s3.bin"))]
    rpc.ok("aria2.pause", g[2])
    st = wait_bytes(rpc, g[0])
    check("session: the first active with bytes before shutdown", st["status"] == "active", st["status"])
    with open(out, "w") as f:
        f.write(" ".join(g))
    rpc.ok("aria2.shutdown")


def session_restore(port, secret, gids, sha_big, sha_small, d):
    """phase 2: the same GIDs back, statuses kept (paused stays paused), all complete exact"""
    rpc = Rpc(port, secret)
    g = open(gids).read().split()
    st = [rpc.ok("aria2.tellStatus", x, ["status"])["status"] for x in g]
    check(f"session: the 3 GIDs restored, the paused one paused ({st})", st[2] == "paused" and st[0] in ("active", "complete"))
    rpc.ok("aria2.unpause", g[2])
    ends = [wait_status(rpc, x, {"complete", "error", "removed"}, 120)[-1] for x in g]
    check(f"session: all complete after the restart ({ends})", ends == ["complete"] * 3)
    check("session: the files sha256 exact", [sha(os.path.join(d, f)) for f in ("s1.bin", "s2.bin", "s3.bin")] == [sha_big, sha_small, sha_small])
    rpc.ok("aria2.shutdown")


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] in ("session-save", "session-restore"):
    (session_save if sys.argv[1] == "session-save" else session_restore)(int(sys.argv[2]), *sys.argv[3:])
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
