"""Scenario files and generated grids parse to the papers' settings; --ifnames/--set reach the running testbed."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tblib import PYTHON, SRC, TOOL, check, finish, run_in, up  # noqa: E402

sys.path.insert(0, os.path.join(SRC, "bench", "testbed"))
import scenario as scen  # noqa: E402

M = 1000000


def links(name):
    sc = scen.load(name)
    return [(i, sc.links[i].delay_up, sc.links[i].delay_down, sc.links[i].rate_down, sc.links[i].rate_up)
            for i in sc.ifaces]


expect = {
    "demo": [("wifi0", 5, 5, 20 * M, 20 * M), ("lte0", 25, 25, 50 * M, 50 * M)],
    "asym": [("wifi0", 5, 5, 2 * M, 2 * M), ("lte0", 50, 50, 20 * M, 20 * M)],
    "sym-low": [("wifi0", 5, 5, 2 * M, 2 * M), ("lte0", 5, 5, 2 * M, 2 * M)],
    "sym-high": [("wifi0", 5, 5, 20 * M, 20 * M), ("lte0", 5, 5, 20 * M, 20 * M)],
    "single": [("wifi0", 5, 5, 20 * M, 20 * M)],
    "met-good": [("wifi0", 10, 10, 20 * M, 6 * M), ("lte0", 30, 30, 15 * M, 5 * M)],
    "met-bad": [("wifi0", 100, 100, 2 * M, M // 2), ("lte0", 175, 175, 1 * M, 700000)],
    "met-asym": [("wifi0", 25, 25, 2 * M, M // 2), ("lte0", 175, 175, 15 * M, 5 * M)],
    "si-sym": [("wifi0", 25, 25, 6 * M, 6 * M), ("lte0", 25, 25, 5 * M, 5 * M)],
    "ians-10-2-100-20": [("wifi0", 5, 5, 2 * M, 0), ("lte0", 50, 50, 20 * M, 0)],
    "si-10-0.5-200-50": [("wifi0", 5, 5, M // 2, M // 2), ("lte0", 100, 100, 50 * M, 50 * M)],
}
for name, want in expect.items():
    got = links(name)
    check(got == want, "%s: %s" % (name, got))
names = scen.file_names()
for n in names:
    try:
        scen.load(n)
        ok = True
    except scen.ScenarioError as e:
        ok = str(e)
    check(ok is True, "scenarios/%s.conf loads (%s)" % (n, ok))
gen = scen.generated_names()
check(sum(g.startswith("ians-") for g in gen) == 144 and sum(g.startswith("si-") for g in gen) == 384,
      "generated grids: 12x12 IANS, 24x16 socket-intents")
for bad in ("ians-15-2-10-2", "si-10-3-20-5", "nosuch"):
    try:
        scen.load(bad)
        check(False, "%s rejected" % bad)
    except scen.ScenarioError:
        check(True, "%s rejected" % bad)
for bad_ov in ("wifi0.rate=fast", "wifi0.rtt=-1", "wlan9.rtt=3", "wifi0.loss=200%"):
    try:
        scen.load("demo", overrides=[bad_ov])
        check(False, "override %s rejected" % bad_ov)
    except scen.ScenarioError:
        check(True, "override %s rejected" % bad_ov)
p = subprocess.run([PYTHON, TOOL, "scenarios"], stdout=subprocess.PIPE, text=True, timeout=30)
check(p.returncode == 0 and "ERROR" not in p.stdout and "demo" in p.stdout, "testbed scenarios lists them")

# Renamed interfaces and an override, on a live testbed.
env = up("lan", "--ifnames", "eth1,eth2", "--set", "eth2.rtt=40")
check(env["TESTBED_IFACES"] == "eth1 eth2" and env["TESTBED_ETH2_RTT_MS"] == "40", "env: renamed interfaces, override")
p = run_in(env, ["ip", "-o", "link", "show"])
check("eth1" in p.stdout and "eth2" in p.stdout and "wifi0" not in p.stdout, "client namespace has eth1 and eth2")
p = run_in(env, ["curl", "-s", "-o", "/dev/null", "-w", "%{time_connect}", "--interface", "eth2",
                 env["TESTBED_URL_A_IP"] + "/files/0.bin"])
check(p.returncode == 0 and 0.038 <= float(p.stdout or 0) <= 0.08, "eth2 has the 40 ms override (%s s)" % p.stdout)
finish()
