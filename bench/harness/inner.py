"""Runs one testbed's jobs inside its client namespace (bench.py starts it under `testbed run`): every contender's downloads interleaved round by round, timed, byte-checked and counted per interface, one JSON line per run."""
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import contenders as C  # noqa: E402

HERE = os.path.dirname(os.path.realpath(__file__))
PAGES_RUN = os.path.join(os.path.dirname(HERE), "pages", "run.sh")


def ifbytes(ifaces):
    """Received bytes per interface of this namespace (/proc/net/dev is per network namespace)."""
    out = {}
    with open("/proc/net/dev") as fh:
        for line in fh:
            name, _, rest = line.partition(":")
            if name.strip() in ifaces:
                out[name.strip()] = int(rest.split()[0])
    return out


def run_timed(argv, env, timeout, errpath):
    """(seconds, exit status or 'timeout', rusage) of argv in its own process group, killed (by
    its group id, which is its pid) after `timeout` s."""
    with open(errpath, "wb") as err:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                             start_new_session=True)
        fired = []

        def kill():
            fired.append(1)
            try:
                os.killpg(p.pid, 9)
            except ProcessLookupError:
                pass
        timer = threading.Timer(timeout, kill)
        timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        t1 = time.monotonic()
        timer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    return t1 - t0, ("timeout" if fired else p.returncode), ru


class Runner:
    def __init__(self, plan, out):
        self.env = dict(os.environ)
        self.meta = plan["meta"]
        self.shim = plan["shim"]
        self.out = out
        self.ifaces = self.env["TESTBED_IFACES"].split()
        self.link = {"ifaces": self.ifaces,
                     "rates_down": [int(self.env["TESTBED_%s_RATE_DOWN" % i.upper()]) for i in self.ifaces],
                     "rtts_ms": [float(self.env["TESTBED_%s_RTT_MS" % i.upper()]) for i in self.ifaces]}
        self.cell = None  # the sweep's cell of the job being run: its label names the rows' scenario
        self.work = tempfile.mkdtemp(prefix="mhttp-bench-run.")
        os.chmod(self.work, 0o755)
        self.sums = {}
        with open(self.env["TESTBED_SHA256SUMS"]) as fh:
            for line in fh:
                h, _, p = line.strip().partition("  ")
                self.sums[p.lstrip("*").removeprefix("./")] = h

    def emit(self, exp, contender, param, rnd, **kw):
        row = dict(self.meta, exp=exp, scenario=self.cell["label"] if self.cell else self.env["TESTBED_SCENARIO"],
                   shaper=self.env["TESTBED_SHAPER"], link=self.link, contender=contender, kind=C.kind(contender),
                   param=param, round=rnd)
        if self.cell:
            row["cell"] = self.cell
        row.update(kw)
        with open(self.out, "a") as fh:
            fh.write(json.dumps(row) + "\n")
        print("  %-9s %-8s %-10s r%-2s %-22s %8s %s %s" % (exp, row["scenario"], param, rnd, contender,
              "%.3f" % row["secs"] if row.get("secs") is not None else "-", row["status"], row.get("why", "")),
              file=sys.stderr, flush=True)
        return row

    def check(self, path, size):
        want = self.sums.get("files/%d.bin" % size)
        h = hashlib.sha256()
        try:
            with open(path, "rb") as fh:
                for b in iter(lambda: fh.read(1 << 20), b""):
                    h.update(b)
        except OSError as e:
            return "no output (%s)" % e.strerror
        return None if h.hexdigest() == want else "sha256 %s, manifest %s" % (h.hexdigest()[:12], (want or "?")[:12])

    def download(self, exp, name, size, rnd, timeout, rate=None, extra_env=None, rss=False):
        """One timed download of /files/SIZE.bin by contender `name`; emits and returns its row.
        rss: the program's peak RSS through /usr/bin/time (a child of this Python inherits
        Python's own peak in its rusage, so wait4's ru_maxrss cannot tell a small program's)."""
        out = os.path.join(self.work, "dl")
        for f in os.listdir(self.work):
            os.unlink(os.path.join(self.work, f))
        try:
            argv, e = C.command(name, self.env, "/files/%d.bin" % size, out, self.shim, rate)
        except C.Skip as s:
            return self.emit(exp, name, size, rnd, secs=None, status="skip", why=str(s))
        env = dict(self.env, **e, **(extra_env or {}))
        if rss:
            argv = ["/usr/bin/time", "-f", "%M", "-o", out + ".rss"] + argv
        before = ifbytes(self.ifaces)
        secs, rc, ru = run_timed(argv, env, timeout, out + ".err")
        after = ifbytes(self.ifaces)
        by = {i: after.get(i, 0) - before.get(i, 0) for i in self.ifaces}
        kw = dict(iface_bytes=by, cpu_s=round(ru.ru_utime + ru.ru_stime, 4))
        if rss and os.path.exists(out + ".rss"):
            kw["maxrss_kib"] = int(open(out + ".rss").read().split()[-1])
        if rc == "timeout":
            return self.emit(exp, name, size, rnd, secs=timeout, status="timeout", why=">%gs" % timeout, **kw)
        if rc != 0:
            with open(out + ".err", "rb") as fh:
                msg = fh.read(160).decode(errors="replace").replace("\n", " ")
            return self.emit(exp, name, size, rnd, secs=secs, status="fail", why="exit %s: %s" % (rc, msg), **kw)
        bad = self.check(out, size)
        return self.emit(exp, name, size, rnd, secs=secs, status="badbytes" if bad else "ok", why=bad or "", **kw)

    def timeout_for(self, size, slack=4):
        slow = min([r for r in self.link["rates_down"] if r > 0] or [1e9])
        return 15 + slack * size * 8 / slow

    def job_downloads(self, job):
        """Every contender once per round and size, in an order rotated every round."""
        names = job["contenders"]
        self.cell = job.get("cell")
        host_store = self.env.get("MHTTP_METRICS_STORE")
        if job.get("warmup"):
            self.warm_store(job["warmup"])
        for rnd in range(1, job["rounds"] + 1):
            for size in job["params"]:
                k = (rnd - 1) % len(names)
                for name in names[k:] + names[:k]:
                    timeout = job.get("timeout") or self.timeout_for(size, job.get("slack", 4))
                    self.download(job["exp"], name, size, rnd, timeout, job.get("rate"), rss=job.get("rss", False))
        self.cell = None
        self.env.pop("MHTTP_METRICS_STORE", None)
        if host_store is not None:
            self.env["MHTTP_METRICS_STORE"] = host_store

    def warm_store(self, warmup):
        """Gives the job a metrics store of its own, warmed by the downloads `warmup` names
        ([contender, size] pairs, not measured): the host's store keeps what the last 5 minutes
        measured, which in a sweep is another cell's links, so each cell's first download would
        plan with them."""
        self.env["MHTTP_METRICS_STORE"] = os.path.join(tempfile.mkdtemp(prefix="mhttp-bench-store."), "metrics")
        for name, size in warmup:
            out = os.path.join(self.work, "warm")
            try:
                argv, e = C.command(name, self.env, "/files/%d.bin" % size, out, self.shim)
            except C.Skip:
                continue
            secs, rc, _ = run_timed(argv, dict(self.env, **e), self.timeout_for(size, 40), out + ".err")
            print("  warm-up   %-8s %-10s %-26s %8.3f exit %s (not measured)" % (
                self.env["TESTBED_SCENARIO"], size, name, secs, rc), file=sys.stderr, flush=True)

    def job_chunks(self, job):
        """One download under the shim with MHTTP_LOG=debug: the ranges it asked, when and where."""
        log = os.path.join(tempfile.mkdtemp(prefix="mhttp-bench-log."), "engine.log")
        size, name = job["size"], job["contender"]
        row = self.download("chunks", name, size, 1, self.timeout_for(size),
                            extra_env={"MHTTP_LOG": "debug", "MHTTP_LOG_FILE": log})
        chunks = parse_chunks(open(log, errors="replace").read()) if os.path.exists(log) else []
        self.emit("chunks-trace", name, size, 1, secs=row.get("secs"), status=row["status"],
                  why="" if chunks else "no range lines in the engine log", chunks=chunks)

    def job_failover(self, job):
        """MIC Fig. 11: `cut` goes down once `at` of the object arrived; received bytes per interface
        sampled every 100 ms."""
        size = job["size"]
        for name in job["contenders"]:
            samples, state = [], {"cut": None}
            stop = threading.Event()
            t0 = time.monotonic()

            def sample():
                base = ifbytes(self.ifaces)
                while not stop.is_set():
                    now = ifbytes(self.ifaces)
                    t = time.monotonic() - t0
                    samples.append([round(t, 3)] + [now[i] - base[i] for i in self.ifaces])
                    if state["cut"] is None and sum(now[i] - base[i] for i in self.ifaces) >= job["at"] * size:
                        state["cut"] = t
                        threading.Thread(target=cut).start()  # `testbed set` takes a while: keep sampling
                    stop.wait(0.1)

            def cut():
                subprocess.run([sys.executable, self.env["TESTBED_TOOL"], "set", "--id", self.env["TESTBED_ID"],
                                job["cut"], "down"], check=False)
                state["cut_done"] = time.monotonic() - t0
            th = threading.Thread(target=sample)
            th.start()
            row = self.download("failover", name, size, 1, self.timeout_for(size, slack=8))
            stop.set()
            th.join()
            while state["cut"] is not None and "cut_done" not in state and time.monotonic() - t0 < 60:
                time.sleep(0.1)
            subprocess.run([sys.executable, self.env["TESTBED_TOOL"], "set", "--id", self.env["TESTBED_ID"],
                            job["cut"], "up"], check=False)
            self.emit("failover-trace", name, size, 1, secs=row.get("secs"), status=row["status"],
                      why=row.get("why", ""), samples=samples, cut_s=state["cut"], cut_done_s=state.get("cut_done"),
                      cut_iface=job["cut"],
                      columns=["t"] + self.ifaces)
            time.sleep(2)  # lets the link's queue and the endpoints settle before the next contender

    def job_pages(self, job):
        """Page loads: bench/pages/run.sh's inner loop (interleaved, every object checked), its
        per-run TSV turned into rows."""
        tsv = os.path.join(self.work, "pages.tsv")
        if os.path.exists(tsv):
            os.unlink(tsv)
        subprocess.run(["/bin/bash", PAGES_RUN, "--inner", tsv, "-p", " ".join(job["pages"]), "-c",
                        " ".join(job["clients"]), "-C", " ".join(job["configs"]), "-n", str(job["rounds"]),
                        "-t", str(job.get("timeout", 40)), "-x", str(job.get("cut", 2))], env=self.env, check=False)
        for f in (open(tsv).read().splitlines() if os.path.exists(tsv) else []):
            f = f.split("\t") + [""] * 10
            status = {"cut": "timeout"}.get(f[6], f[6])
            kind = C.SINGLE if f[3] in self.ifaces else C.MHTTP
            row = dict(self.meta, exp="pages", scenario=f[0], shaper=self.env["TESTBED_SHAPER"], link=self.link,
                       contender=f[3], kind=kind, param="%s/%s" % (f[1], f[2]), round=int(f[4] or 0),
                       secs=float(f[5]) if f[5] else None, status=status, why=f[7], stats=f[8])
            with open(self.out, "a") as fh:
                fh.write(json.dumps(row) + "\n")


RANGE_RE = re.compile(r"split \d+: \+([\d.]+) ms leg (\d+) \((\S+)\) range (\d+)\+(\d+)")
PROBE_RE = re.compile(r"split \d+: probe (\d+)\+(\d+) on (\S+) ")
PIPE_RE = re.compile(r"split \d+: leg (\d+) range (\d+)\+(\d+) \(pipelined after the probe\)")
LEG_RE = re.compile(r"split \d+: (?:\+[\d.]+ ms )?leg (\d+) \((\S+)\)")


def parse_chunks(text):
    """[t_ms, iface, offset, length] of every range the engine asked (the probe at 0 ms; a range
    pipelined after the probe at the time of the last timed line, on its leg's interface)."""
    legs = {m.group(1): m.group(2) for m in LEG_RE.finditer(text)}  # a leg is named after its first range
    out, t = [], 0.0
    for line in text.splitlines():
        m = RANGE_RE.search(line)
        if m:
            t = float(m.group(1))
            out.append([t, m.group(3), int(m.group(4)), int(m.group(5))])
            continue
        m = PROBE_RE.search(line)
        if m:
            out.append([0.0, m.group(3), int(m.group(1)), int(m.group(2))])
            continue
        m = PIPE_RE.search(line)
        if m:
            out.append([t, legs.get(m.group(1), "?"), int(m.group(2)), int(m.group(3))])
    return out


def main():
    plan = json.load(open(sys.argv[1]))
    r = Runner(plan, sys.argv[2])
    random.seed(0)
    for job in plan["jobs"]:
        getattr(r, "job_" + job["kind"])(job)
    return 0


if __name__ == "__main__":
    sys.exit(main())
