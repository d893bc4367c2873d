#!/usr/bin/python3
"""The RPC calls and disk readings of test_daemon_kill.sh (kill -9 of mhttp daemon during a queue):
  add PORT SECRET URL OUT [URL OUT]...   queues each (OUT - = the URI's name), prints the GIDs
  present PORT SECRET GID...             prints "GID STATUS" per GID, STATUS "unknown" when the daemon has none
  drain PORT SECRET SECONDS              waits until nothing is active or waiting; prints the stopped statuses
  held FILE...                           bytes the files hold for a resume: the ranges of FILE.mhttp, else FILE's size"""
import os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_rpc import Rpc  # noqa: E402


def add(rpc, pairs):
    for url, out in zip(pairs[::2], pairs[1::2]):
        print(rpc.ok("aria2.addUri", [url], {} if out == "-" else {"out": out}))


def present(rpc, gids):
    for g in gids:
        a = rpc.call("aria2.tellStatus", g, ["status"])
        print(g, a["result"]["status"] if "result" in a else "unknown")


def drain(rpc, limit):
    end = time.time() + limit
    while time.time() < end:
        st = rpc.ok("aria2.getGlobalStat")
        if st["numActive"] == "0" and st["numWaiting"] == "0":
            break
        time.sleep(0.2)
    for s in rpc.ok("aria2.tellStopped", 0, 100, ["gid", "status", "errorMessage"]):
        print(s["gid"], s["status"], s.get("errorMessage", ""))


def held(path):
    """a resume file's "range START LENGTH" lines summed; without one the file's size (a download
    without a resume file goes on at its end)"""
    try:
        with open(path + ".mhttp") as f:
            return sum(int(l.split()[2]) for l in f if l.startswith("range "))
    except FileNotFoundError:
        return os.path.getsize(path) if os.path.exists(path) else 0


def main():
    cmd, a = sys.argv[1], sys.argv[2:]
    if cmd == "held":
        print(sum(held(p) for p in a))
        return
    rpc = Rpc(int(a[0]), a[1])
    if cmd == "add":
        add(rpc, a[2:])
    elif cmd == "present":
        present(rpc, a[2:])
    elif cmd == "drain":
        drain(rpc, float(a[2]))


if __name__ == "__main__":
    main()
