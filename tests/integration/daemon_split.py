#!/usr/bin/python3
"""One download added to mhttp daemon over JSON-RPC (test_daemon_split.sh):
  daemon_split.py PORT SECRET http|ws URL SHA256 FILE
adds URL (out = FILE's name; the daemon's dir is FILE's folder) over HTTP POST or over the
WebSocket, polls tellStatus and getServers every 100 ms until the WebSocket brings onDownloadComplete, and
checks: the file sha256-exact; each client interface received >= 10 % of its bytes
(/proc/net/dev) and getServers named both with a rate; completedLength never falls nor
passes totalLength; the downloadSpeed reported over the middle of the transfer (20-80 % of the
bytes) averages within 25 % of the bytes' own rate there. Prints the figures and the line
"elapsed S" (addUri sent to onDownloadComplete received); exits 1 when a check failed."""
import hashlib, json, os, socket, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_rpc import Rpc, Ws  # noqa: E402

IFACES = ("wifi0", "lte0")
RATE_TOL = 0.25


def rx_bytes():
    """bytes received per interface of this namespace"""
    rx = {}
    with open("/proc/net/dev") as f:
        for line in f.readlines()[2:]:
            name, rest = line.split(":", 1)
            rx[name.strip()] = int(rest.split()[0])
    return rx


def add(mode, rpc, ws, url, out):
    """addUri over HTTP or over the WebSocket; the GID"""
    if mode == "http":
        return rpc.ok("aria2.addUri", [url], {"out": out})
    req = {"jsonrpc": "2.0", "id": "add", "method": "aria2.addUri", "params": [f"token:{rpc.secret}", [url], {"out": out}]}
    ws.send(1, json.dumps(req).encode())
    got = ws.messages_until(lambda m: m.get("id") == "add", 10)
    return got[-1]["result"]


def completed(ws, gid):
    """True once onDownloadComplete (or Error) of gid arrived; waits at most 0.1 s"""
    for m in ws.messages_until(lambda m: "method" in m, 0.1):
        if m.get("params", [{}])[0].get("gid") == gid and m["method"] in ("aria2.onDownloadComplete", "aria2.onDownloadError"):
            return m["method"]
    return None


def watch(rpc, ws, gid, t0, limit=120):
    """samples (t, completedLength, totalLength, downloadSpeed, {iface: speed}) until the end"""
    samples, end = [], None
    while end is None and time.time() - t0 < limit:
        st = rpc.ok("aria2.tellStatus", gid, ["completedLength", "totalLength", "downloadSpeed", "status"])
        paths = {}
        for f in rpc.call("aria2.getServers", gid).get("result", []) if st["status"] == "active" else []:
            for p in f["servers"]:
                paths[p["interface"]] = paths.get(p["interface"], 0) + int(p["downloadSpeed"])
        samples.append((time.time() - t0, int(st["completedLength"]), int(st["totalLength"]), int(st["downloadSpeed"]), paths))
        end = completed(ws, gid)
    return samples, end, time.time() - t0


def rates_match(samples, size):
    """reported mean speed and the bytes' rate over 20-80 % of size"""
    mid = [s for s in samples if 0.2 * size <= s[1] <= 0.8 * size]
    if len(mid) < 3:
        return None, None
    span = mid[-1][0] - mid[0][0]
    own = (mid[-1][1] - mid[0][1]) / span if span > 0 else 0
    return sum(s[3] for s in mid[1:]) / (len(mid) - 1), own


def main():
    port, secret, mode, url, want, path = sys.argv[1:7]
    rpc, ws = Rpc(int(port), secret), Ws(int(port))
    rx0 = rx_bytes()
    t0 = time.time()
    gid = add(mode, rpc, ws, url, os.path.basename(path))
    samples, end, elapsed = watch(rpc, ws, gid, t0)
    rx = {i: rx_bytes().get(i, 0) - rx0.get(i, 0) for i in IFACES}
    with open(path, "rb") as f:
        exact = hashlib.sha256(f.read()).hexdigest() == want
    size = os.path.getsize(path)
    seen = {i for s in samples for i, v in s[4].items() if v > 0}
    mono = all(b[1] >= a[1] for a, b in zip(samples, samples[1:])) and all(s[1] <= s[2] or s[2] == 0 for s in samples)
    rep, own = rates_match(samples, size)
    print(f"   {mode}: {end} after {elapsed:.3f} s, {len(samples)} samples; received "
          + ", ".join(f"{i} {rx[i]} B" for i in IFACES) + f"; servers with a rate: {sorted(seen)}; "
          + (f"downloadSpeed {rep:.0f} B/s vs bytes {own:.0f} B/s over 20-80 %" if own else "too few samples mid-transfer"))
    fails = [why for ok, why in (
        (end == "aria2.onDownloadComplete", "no onDownloadComplete"),
        (exact, "sha256 differs"),
        (all(rx[i] >= size // 10 for i in IFACES), "an interface received < 10 % of the bytes"),
        (set(IFACES) <= seen, "getServers did not name both interfaces with a rate"),
        (mono, "completedLength fell or passed totalLength"),
        (own and abs(rep - own) <= RATE_TOL * own, "downloadSpeed off the bytes' rate by more than 25 %"),
    ) if not ok]
    for why in fails:
        print(f"   {mode}: {why}")
    print(f"elapsed {elapsed:.3f}")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
