#!/usr/bin/python3
"""Front-end-shaped test of an aria2-RPC server (mhttp daemon or aria2c --enable-rpc): replays over
one WebSocket the call sequences AriaNg and Motrix send, taken from their sources (AriaNg
src/scripts/services/aria2RpcService.js, aria2TaskService.js, aria2SettingService.js: task lists
with its keys, tellStopped from the end, multicall of tellStatus and getPeers with a token in each
entry; Motrix src/core/engine/aria2/aria2-rpc-client.ts, polling-scheduler.ts, aria2-adapter.ts:
system.listMethods without a token, the polling multicall of getGlobalStat, tellActive and
tellWaiting, removeDownloadResult by multicall); and AriaNg's HTTP GET mode (aria2HttpRpcService.js).
Each front end adds one download; the test checks
every answer is a result, the download completes byte-exact, and aria2.onDownloadStart and
aria2.onDownloadComplete arrive for its GID. Prints ok/FAIL lines (test_daemon.sh counts them)."""
import argparse, base64, json, os, sys, time, urllib.parse, urllib.request, uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_rpc import Ws, check, sha  # noqa: E402

import daemon_rpc  # noqa: E402

# AriaNg's getFullTaskParams (aria2RpcService.js)
ARIANG_KEYS = ['gid', 'totalLength', 'completedLength', 'uploadSpeed', 'downloadSpeed', 'connections', 'numSeeders',
               'seeder', 'status', 'errorCode', 'verifiedLength', 'verifyIntegrityPending', 'files', 'bittorrent',
               'infoHash']


class WsRpc:
    """JSON-RPC over one WebSocket as a front end uses it: answers matched by id, notifications kept"""

    def __init__(self, port, secret):
        self.ws, self.secret, self.notes, self.errors = Ws(port), secret, [], []

    def call(self, method, *params, token=True):
        rid = str(uuid.uuid4())
        p = ([f"token:{self.secret}"] if token else []) + list(params)
        self.ws.send(1, json.dumps({"jsonrpc": "2.0", "method": method, "id": rid, "params": p}).encode())
        for m in self.ws.messages_until(lambda m: m.get("id") == rid, 15):
            if m.get("id") == rid:
                if "result" not in m:
                    self.errors.append(f"{method}: {m.get('error')}")
                return m.get("result")
            if "method" in m:
                self.notes.append((m["method"], m["params"][0]["gid"]))
        self.errors.append(f"{method}: no answer")
        return None

    def token_entry(self, method, *params):
        """a system.multicall entry with the token in its own params (both front ends do so)"""
        return {"methodName": method, "params": [f"token:{self.secret}"] + list(params)}

    def seen(self, gid):
        return [m for m, g in self.notes if g == gid]


def poll_until_complete(rpc, gid, poll, limit=120):
    """calls poll() about every 0.3 s until onDownloadComplete/onDownloadError for gid (at most limit s)"""
    end = time.time() + limit
    while time.time() < end and not {"aria2.onDownloadComplete", "aria2.onDownloadError"} & set(rpc.seen(gid)):
        poll()
        time.sleep(0.3)


def ariang(args):
    rpc = WsRpc(args.port, args.secret)
    check("AriaNg: getVersion", "version" in (rpc.call("aria2.getVersion") or {}))
    check("AriaNg: getGlobalOption has dir", "dir" in (rpc.call("aria2.getGlobalOption") or {}))
    rpc.call("aria2.getGlobalStat")
    gid = rpc.call("aria2.addUri", [args.url], {"dir": args.dir, "out": "ariang.bin"})
    saw_active = []

    def poll():
        act = rpc.call("aria2.tellActive", ARIANG_KEYS) or []
        saw_active.extend(t["gid"] for t in act if t.get("gid") == gid and t.get("status") == "active")
        rpc.call("aria2.tellWaiting", 0, 1000, ARIANG_KEYS)
        rpc.call("aria2.tellStopped", -1, 1000, ARIANG_KEYS)
        rpc.call("aria2.getGlobalStat")
        rpc.call("system.multicall", [rpc.token_entry("aria2.tellStatus", gid), rpc.token_entry("aria2.getPeers", gid)],
                 token=False)
        rpc.call("aria2.getOption", gid)
    poll_until_complete(rpc, gid, poll)
    stopped = rpc.call("aria2.tellStopped", -1, 1000, ARIANG_KEYS) or []
    done = [t for t in stopped if t.get("gid") == gid]
    check("AriaNg: the task is active in tellActive, then complete in tellStopped",
          bool(saw_active) and bool(done) and done[0]["status"] == "complete", str(done)[:200])
    check("AriaNg: onDownloadStart then onDownloadComplete", rpc.seen(gid) == ["aria2.onDownloadStart", "aria2.onDownloadComplete"],
          str(rpc.seen(gid)))
    check("AriaNg: the file sha256 exact", sha(os.path.join(args.dir, "ariang.bin")) == args.sha)
    check("AriaNg: removeDownloadResult OK", rpc.call("aria2.removeDownloadResult", gid) == "OK")
    check("AriaNg: purgeDownloadResult OK", rpc.call("aria2.purgeDownloadResult") == "OK")
    check("AriaNg: every call answered with a result", not rpc.errors, "; ".join(rpc.errors)[:300])


def ariang_get(args):
    """AriaNg with *Aria2 RPC Http Request Method* GET (aria2HttpRpcService.js): every key of the
    request in the query, objects and lists as base64 of their JSON, URI-encoded"""
    def call(method, *params):
        body = {"jsonrpc": "2.0", "method": method, "id": str(uuid.uuid4()), "params": [f"token:{args.secret}"] + list(params)}
        q = "&".join(f"{k}={urllib.parse.quote(base64.b64encode(json.dumps(v).encode()).decode(), safe='') if isinstance(v, (list, dict)) else v}"
                     for k, v in body.items())
        with urllib.request.urlopen(f"http://127.0.0.1:{args.port}/jsonrpc?{q}", timeout=10) as r:
            return json.loads(r.read()).get("result")
    check("AriaNg over GET: getVersion", "version" in (call("aria2.getVersion") or {}))
    check("AriaNg over GET: tellActive with its keys", isinstance(call("aria2.tellActive", ARIANG_KEYS), list))
    check("AriaNg over GET: tellStopped from the end", isinstance(call("aria2.tellStopped", -1, 1000, ARIANG_KEYS), list))
    check("AriaNg over GET: getGlobalStat", "numActive" in (call("aria2.getGlobalStat") or {}))


def motrix(args):
    rpc = WsRpc(args.port, args.secret)
    methods = rpc.call("system.listMethods", token=False) or []
    check("Motrix: system.listMethods without a token", "aria2.addUri" in methods and "aria2.changeUri" in methods)
    rpc.call("aria2.getVersion")
    rpc.call("aria2.getGlobalOption")
    check("Motrix: changeGlobalOption OK", rpc.call("aria2.changeGlobalOption", {"max-concurrent-downloads": "5"}) == "OK")
    gid = rpc.call("aria2.addUri", [args.url], {"dir": args.dir, "out": "motrix.bin", "split": "16",
                                                "max-connection-per-server": "16"})
    polled = []

    def poll():
        res = rpc.call("system.multicall", [rpc.token_entry("aria2.getGlobalStat"), rpc.token_entry("aria2.tellActive"),
                                            rpc.token_entry("aria2.tellWaiting", 0, 1000)], token=False) or []
        polled.append(all(isinstance(r, list) for r in res) and len(res) == 3)
        rpc.call("aria2.tellStatus", gid)
    poll_until_complete(rpc, gid, poll)
    check(f"Motrix: every polling multicall answered three results ({len(polled)} polls)", polled and all(polled))
    check("Motrix: onDownloadStart then onDownloadComplete", rpc.seen(gid) == ["aria2.onDownloadStart", "aria2.onDownloadComplete"],
          str(rpc.seen(gid)))
    check("Motrix: the file sha256 exact", sha(os.path.join(args.dir, "motrix.bin")) == args.sha)
    stopped = rpc.call("aria2.tellStopped", 0, 1000, ["gid", "infoHash"]) or []
    check("Motrix: tellStopped names the task", any(t.get("gid") == gid for t in stopped))
    res = rpc.call("system.multicall", [rpc.token_entry("aria2.removeDownloadResult", gid)], token=False)
    check("Motrix: removeDownloadResult by multicall", res == [["OK"]], str(res))
    check("Motrix: every call answered with a result", not rpc.errors, "; ".join(rpc.errors)[:300])


def main():
    ap = argparse.ArgumentParser()
    for a in ("--port", "--secret", "--url", "--sha", "--dir"):
        ap.add_argument(a, required=True)
    args = ap.parse_args()
    args.port = int(args.port)
    for part in (ariang, ariang_get, motrix):
        try:
            part(args)
        except Exception as x:  # a server that misbehaves fails the part, not the script
            check(f"{part.__name__} ran", False, repr(x)[:300])
    daemon_rpc.Rpc(args.port, args.secret).ok("aria2.shutdown")
    sys.exit(1 if daemon_rpc.FAILS else 0)


if __name__ == "__main__":
    main()
