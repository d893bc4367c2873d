"""Teardown leaves nothing behind: after down, after a failed up, after SIGTERM mid-run or mid-up, after SIGKILL of the runner."""
import json
import os
import random
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tblib import PYTHON, TOOL, check, finish, log, tool  # noqa: E402

STATE = "/run/mhttp-testbed" if os.path.isdir("/run") else "/tmp/mhttp-testbed"
OWNER = "tbtest-%d" % os.getpid()
os.environ["MHTTP_TESTBED_OWNER"] = OWNER
_ids = []


def new_id():
    tid = "tz%05x" % random.SystemRandom().randrange(1 << 20)
    _ids.append(tid)
    return tid


def recorded_pids(tid):
    try:
        with open(os.path.join(STATE, tid, "state.json")) as f:
            st = json.load(f)
    except (OSError, ValueError):
        return []
    out = [(p["pid"], p.get("start")) for p in st.get("procs", [])]
    if st.get("guard"):
        out.append((st["guard"]["pid"], st["guard"].get("start")))
    return out


def starttime(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] in ("Z", "X") else int(fields[19])


def leftovers(tid, pids=()):
    """Everything of run `tid` still present: namespaces, /etc/netns, run dir, devices, processes."""
    left = []
    ns = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, text=True).stdout
    left += ["netns " + ln.split()[0] for ln in ns.splitlines() if ln.startswith(tid + "-")]
    for path in ("/etc/netns/%s-cli" % tid, os.path.join(STATE, tid)):
        if os.path.exists(path):
            left.append("path " + path)
    # veth/TUN/bridge devices the run might have left in the root namespace.
    left += ["dev " + d for d in os.listdir("/sys/class/net") if tid in d]
    for pid, start in pids:
        if start is not None and starttime(pid) == start:
            left.append("pid %d" % pid)
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    cmd = f.read().replace(b"\0", b" ").decode("latin-1")
            except OSError:
                continue
            if ("mhttp-testbed/%s/" % tid) in cmd or (" %s " % tid) in cmd + " " or ("%s-" % tid) in cmd:
                left.append("process %s: %s" % (d, cmd[:100]))
    return left


def wait_for(pred, timeout, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return False


def gone(tid, pids, timeout=15):
    wait_for(lambda: not leftovers(tid, pids), timeout, 0.2)
    return leftovers(tid, pids)


# 1. up then down: the checker sees the testbed while it is up, and nothing after down.
tid = new_id()
tool("up", "demo", "--id", tid)
pids = recorded_pids(tid)
live = leftovers(tid, pids)
check(len(pids) >= 7 and any(x.startswith("netns") for x in live) and any(x.startswith("pid") for x in live),
      "while up: %d processes and %d namespaces visible to the checker" % (len(pids), sum(x.startswith("netns") for x in live)))
p = tool("down", tid, check_rc=False)
left = leftovers(tid, pids)
check(p.returncode == 0 and not left, "down leaves nothing (%s)" % left)

# 2. `run` propagates the command's exit status and tears down.
tid = new_id()
p = subprocess.run([PYTHON, TOOL, "run", "single", "--id", tid, "--", "sh", "-c", "ip netns identify; exit 7"],
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
check(p.returncode == 7 and p.stdout.strip() == tid + "-cli", "run: command ran in %s-cli, exit 7 (%d, %r)"
      % (tid, p.returncode, p.stdout.strip()))
check(not leftovers(tid), "run: nothing left after the command exits")

# 3. SIGTERM to `run` while its command runs.
tid = new_id()
pr = subprocess.Popen([PYTHON, TOOL, "run", "demo", "--id", tid, "--", "sleep", "60"], stderr=subprocess.PIPE)
envf = os.path.join(STATE, tid, "env")
check(wait_for(lambda: os.path.exists(envf), 30), "run: testbed came up")
time.sleep(0.5)
pids = recorded_pids(tid)
sleeper = [int(x) for x in subprocess.run(["ip", "netns", "pids", tid + "-cli"], stdout=subprocess.PIPE,
                                            text=True).stdout.split()]
pids += [(x, starttime(x)) for x in sleeper]
pr.send_signal(signal.SIGTERM)
try:
    rc = pr.wait(timeout=20)
except subprocess.TimeoutExpired:
    pr.kill()
    rc = pr.wait()
check(rc == 128 + signal.SIGTERM, "run: exits 143 on SIGTERM (%d)" % rc)
left = gone(tid, pids, timeout=2)
check(len(sleeper) >= 1 and not left, "SIGTERM mid-run: nothing left, the command too (%s)" % left)

# 4. SIGKILL to `run`: its guard tears the testbed down.
tid = new_id()
pr = subprocess.Popen([PYTHON, TOOL, "run", "lan", "--id", tid, "--", "sleep", "60"], stderr=subprocess.DEVNULL)
check(wait_for(lambda: os.path.exists(os.path.join(STATE, tid, "env")), 30), "run: testbed came up")
pids = recorded_pids(tid)
pr.kill()
pr.wait()
left = gone(tid, pids, timeout=15)
check(not left, "SIGKILL of the runner: the guard removed everything (%s)" % left)

# 5. SIGTERM in the middle of `up` (namespaces exist, processes are starting).
tid = new_id()
pr = subprocess.Popen([PYTHON, TOOL, "up", "demo", "--id", tid], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def some_ns():
    try:
        with open(os.path.join(STATE, tid, "state.json")) as f:
            return len(json.load(f)["created_ns"]) >= 3
    except (OSError, ValueError, KeyError):
        return False


check(wait_for(some_ns, 30, 0.01), "up: namespaces being created")
pr.send_signal(signal.SIGTERM)
rc = pr.wait(timeout=30)
left = gone(tid, [], timeout=2)
check(rc != 0 and not left, "SIGTERM mid-up: up fails (%d) and leaves nothing (%s)" % (rc, left))

# 6. A failure at each later stage of `up` is cleaned up too.
for stage in ("links", "dns", "origins", "ready"):
    tid = new_id()
    env = dict(os.environ, MHTTP_TESTBED_FAIL_AT=stage)
    p = subprocess.run([PYTHON, TOOL, "up", "lan", "--id", tid], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    left = leftovers(tid)
    check(p.returncode != 0 and "injected failure" in p.stderr and not left,
          "up failing at %s: error reported, nothing left (%s)" % (stage, left))
p = subprocess.run([PYTHON, TOOL, "up", "nosuchscenario"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   text=True, timeout=30)
check(p.returncode != 0 and "no scenario" in p.stderr, "unknown scenario: one clear error")

# 7. down --all-mine removes this owner's testbeds only.
mine = [new_id(), new_id()]
for tid in mine:
    tool("up", "single", "--id", tid)
other = new_id()
subprocess.run([PYTHON, TOOL, "up", "single", "--id", other], env=dict(os.environ, MHTTP_TESTBED_OWNER=OWNER + "-x"),
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=True)
tool("down", "--all-mine")
check(all(not leftovers(t) for t in mine), "down --all-mine removed both of this owner's testbeds")
check(os.path.exists(os.path.join(STATE, other, "env")), "down --all-mine left another owner's testbed alone")
tool("down", other)
check(not leftovers(other), "the other owner's testbed goes with an explicit down")

for tid in _ids:  # belt and braces: never leave a failed test's testbed behind
    if leftovers(tid):
        log("cleaning up %s" % tid)
        tool("down", tid, check_rc=False)
finish()
