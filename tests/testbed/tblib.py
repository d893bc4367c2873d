"""Shared helpers of the testbed integration tests: bring a testbed up for one test, run commands in it, collect failures."""
# Each test script calls up() once; the testbed is torn down at exit and, through the
# testbed's guard process, even if the script is killed.

import atexit
import hashlib
import os
import shlex
import subprocess
import sys
import time

SRC = os.environ.get("MHTTP_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(SRC, "bench", "testbed", "testbed")
DNSQ = os.path.join(SRC, "bench", "testbed", "dnsq.py")
PYTHON = "/usr/bin/python3"
_failures = []
_up = []


def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def check(cond, msg):
    """Records a failed expectation (the test goes on, and fails at the end)."""
    if cond:
        log("ok    " + msg)
    else:
        log("FAIL  " + msg)
        _failures.append(msg)
    return cond


def finish():
    if _failures:
        log("%d failure(s):\n  %s" % (len(_failures), "\n  ".join(_failures)))
        sys.exit(1)
    log("all checks passed")
    sys.exit(0)


def read_env(path):
    env = {}
    with open(path) as f:
        for line in f:
            if "=" in line and not line.startswith(("#", "export ")):
                k, v = line.rstrip("\n").split("=", 1)
                env[k] = shlex.split(v)[0] if v else ""
    return env


def tool(*args, check_rc=True, timeout=120):
    p = subprocess.run([PYTHON, TOOL] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    if check_rc and p.returncode != 0:
        raise RuntimeError("testbed %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p


def down(tid):
    if tid in _up:
        _up.remove(tid)
        tool("down", tid, check_rc=False)


def up(scenario, *opts):
    """Brings a testbed up (guarded by this process) and returns its env as a dict."""
    p = tool("up", scenario, "--guard", str(os.getpid()), *opts)
    env = read_env(p.stdout.strip().splitlines()[-1])
    _up.append(env["TESTBED_ID"])
    atexit.register(down, env["TESTBED_ID"])
    log("testbed %s up: scenario %s, shaper %s" % (env["TESTBED_ID"], scenario, env["TESTBED_SHAPER"]))
    return env


def run_in(env, cmd, timeout=60, stdin=None, binary=False):
    """Runs cmd (list) in the client namespace with the testbed env; returns CompletedProcess."""
    full = dict(os.environ)
    full.update(env)
    return subprocess.run(["ip", "netns", "exec", env["TESTBED_CLIENT_NS"]] + cmd, env=full, timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=not binary, input=stdin)


def curl(env, args, timeout=60):
    """curl in the client namespace; returns (exit code, stdout bytes, headers text)."""
    p = run_in(env, ["curl", "-s", "-S", "-D", "/dev/stderr"] + args, timeout=timeout, binary=True)
    return p.returncode, p.stdout, p.stderr.decode("latin-1")


def curl_sha(env, args, timeout=120):
    """Streams a download through SHA-256; returns (exit code, hex digest, size)."""
    full = dict(os.environ)
    full.update(env)
    pr = subprocess.Popen(["ip", "netns", "exec", env["TESTBED_CLIENT_NS"], "curl", "-s", "-S"] + args,
                          stdout=subprocess.PIPE, env=full)
    h = hashlib.sha256()
    n = 0
    deadline = time.monotonic() + timeout
    while True:
        b = pr.stdout.read(1 << 20)
        if not b:
            break
        h.update(b)
        n += len(b)
        if time.monotonic() > deadline:
            pr.kill()
            break
    return pr.wait(), h.hexdigest(), n


def _blocks(headers):
    """Response header blocks of a -D dump (curl's own error line on stderr is not one)."""
    return [b for b in headers.replace("\r\n", "\n").split("\n\n") if b.startswith("HTTP/")]


def header(headers, name):
    """Value of a header in the last response of a -D dump, or None."""
    blocks = _blocks(headers)
    if not blocks:
        return None
    for line in blocks[-1].split("\n")[1:]:
        k, _, v = line.partition(":")
        if k.strip().lower() == name.lower():
            return v.strip()
    return None


def status(headers):
    blocks = _blocks(headers)
    return int(blocks[-1].split()[1]) if blocks else 0


def manifest(env):
    out = {}
    with open(env["TESTBED_SHA256SUMS"]) as f:
        for line in f:
            d, rel = line.rstrip("\n").split("  ", 1)
            out[rel] = d
    return out


def dnsq(env, server, name, bind=None, qtype="A", timeout=1.5):
    """Queries `server` from inside the client namespace; returns (exit code, [answers])."""
    cmd = [PYTHON, DNSQ, "--type", qtype, "--timeout", str(timeout)]
    if bind:
        cmd += ["--bind", bind]
    p = run_in(env, cmd + [server, name], timeout=timeout + 10)
    return p.returncode, sorted(x for x in p.stdout.split() if "." in x or ":" in x)
