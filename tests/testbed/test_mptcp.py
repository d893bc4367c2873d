"""MPTCP origins (`up --mptcp`): every subflow runs the plain origins' congestion control (TESTBED_ORIGIN_CC), one subflow per client interface, exact bytes."""
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tblib import check, finish, manifest, up  # noqa: E402

SIZE = 4 << 20


def origin_conns(ns, port):
    """{client address: congestion control} of the established connections to `port` in origin namespace ns."""
    out = subprocess.run(["ip", "netns", "exec", ns, "ss", "-tinH", "state", "established", "( sport = :%d )" % port],
                         capture_output=True, text=True, timeout=10).stdout
    conns, peer = {}, None
    for line in out.splitlines():
        m = re.search(r"\s(\S+):\d+\s+(\S+):(\d+)\s*$", line)
        if m and not line.startswith(("\t", " ")):
            peer = m.group(2)
        elif peer:
            cc = line.split()[0] if line.split() else "?"
            conns[peer] = cc
            peer = None
    return conns


def during(env, argv, port, want_peers, secs=8):
    """Runs argv (a slowed download) in the client namespace and samples the origin's connections
    until every address of want_peers showed one (or secs pass); returns ({peer: cc}, exit, file)."""
    full = dict(os.environ)
    full.update(env)
    seen = {}
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "f")
        p = subprocess.Popen(["ip", "netns", "exec", env["TESTBED_CLIENT_NS"]] + argv + [out], env=full,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + secs
        while time.monotonic() < deadline and not set(want_peers) <= set(seen):
            seen.update(origin_conns(env["TESTBED_ID"] + "-oa", port))
            time.sleep(0.2)
        rc = p.wait(timeout=60)
        with open(out, "rb") as fh:
            digest = hashlib.sha256(fh.read()).hexdigest()
    return seen, rc, digest


env = up("demo", "--mptcp")
cc = env.get("TESTBED_ORIGIN_CC")
check(cc == "cubic", "the testbed names its origins' congestion control (%s)" % cc)
man = manifest(env)
peers = [env["TESTBED_%s_ADDR" % i.upper()] for i in env["TESTBED_IFACES"].split()]
url = "http://%s:%s/files/%d.bin" % (env["TESTBED_HOST_A"], env["TESTBED_MPTCP_PORT"], SIZE)
# 1 MiB/s: the 4 MiB take about 4 s, long enough to see both subflows established
seen, rc, digest = during(env, ["mptcpize", "run", "wget", "-q", "--limit-rate=1m", url, "-O"], int(env[
    "TESTBED_MPTCP_PORT"]), peers)
check(rc == 0 and digest == man["files/%d.bin" % SIZE], "MPTCP download exact (exit %d)" % rc)
check(set(peers) <= set(seen), "a subflow from each interface (%s)" % seen)
check(seen and set(seen.values()) == {cc}, "every MPTCP subflow runs %s (%s)" % (cc, seen))
seen, rc, digest = during(env, ["curl", "-s", "--limit-rate", "1M", env["TESTBED_URL_A"] + "/files/%d.bin" % SIZE,
                                "-o"], 80, peers[:1])
check(rc == 0 and digest == man["files/%d.bin" % SIZE], "plain download exact (exit %d)" % rc)
check(seen and set(seen.values()) == {cc}, "the plain origin's connection runs %s (%s)" % (cc, seen))
finish()
