#!/usr/bin/python3
"""The daemon's rate limits while a download runs (test_ratelimit.sh):
  daemon_ratelimit.py PORT SECRET URL SHA256 FILE
adds URL with max-download-limit=1M, measures its rate from tellStatus' completedLength over
3 s; then changeGlobalOption max-overall-download-limit=256K (the one active download gets
it all) and measures again; then lifts both (changeOption max-download-limit=0, the global 0)
and measures once more. Checks: each limited rate within [0.6, 1.2] x its limit, the second
under half the first, the lifted one over 1.5 x the first; the file sha256-exact. Exits 1 when
a check failed."""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import daemon_rpc  # noqa: E402
from daemon_rpc import Rpc, check, sha, wait_status  # noqa: E402


def done(rpc, gid):
    return int(rpc.ok("aria2.tellStatus", gid, ["completedLength"])["completedLength"])


def rate(rpc, gid, settle=1.0, span=3.0):
    """bytes/s over span seconds, after settle seconds for a new limit to take hold"""
    time.sleep(settle)
    t0, b0 = time.time(), done(rpc, gid)
    time.sleep(span)
    return (done(rpc, gid) - b0) / (time.time() - t0)


def main():
    port, secret, url, want, path = sys.argv[1:6]
    rpc = Rpc(int(port), secret)
    gid = rpc.ok("aria2.addUri", [url], {"out": os.path.basename(path), "max-download-limit": "1M"})
    r1 = rate(rpc, gid)
    rpc.ok("aria2.changeGlobalOption", {"max-overall-download-limit": "256K"})
    r2 = rate(rpc, gid)
    rpc.ok("aria2.changeOption", gid, {"max-download-limit": "0"})
    rpc.ok("aria2.changeGlobalOption", {"max-overall-download-limit": "0"})
    r3 = rate(rpc, gid, settle=0.5, span=1.0)
    print(f"   daemon: {r1:.0f} B/s at max-download-limit 1M, {r2:.0f} B/s at max-overall 256K, {r3:.0f} B/s lifted")
    check(f"max-download-limit 1M: {r1 / 1048576:.2f} x", 0.6 * 1048576 <= r1 <= 1.2 * 1048576)
    check(f"max-overall-download-limit 256K: {r2 / 262144:.2f} x, under half the first", 0.6 * 262144 <= r2 <= 1.2 * 262144 and r2 < r1 / 2)
    check(f"both lifted: {r3 / max(r1, 1):.2f} x the first", r3 > 1.5 * r1)
    seen = wait_status(rpc, gid, ("complete", "error"), 120)
    check(f"complete ({seen}), sha256-exact", seen[-1] == "complete" and sha(path) == want)
    sys.exit(1 if daemon_rpc.FAILS else 0)


main()
