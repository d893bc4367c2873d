"""bench/run: picks the shaper, runs each mode's experiments in testbeds (inner.py inside), the loopback benchmark outside, and writes bench/results/<date>-<commit>/ through report.py."""
import argparse
import datetime
import fcntl
import json
import os
import platform
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
import report  # noqa: E402
import sweep  # noqa: E402
from contenders import ALL, HTTPS  # noqa: E402

BENCH = os.path.dirname(HERE)
SRC = os.path.dirname(BENCH)
PY = "/usr/bin/python3"
TESTBED = os.path.join(BENCH, "testbed", "testbed")
LOCK = "/tmp/mhttp-bench.lock"
EXIT_SKIP, EXIT_NETEM = 4, 3
KiB, MiB = 1024, 1024 * 1024
INIT = ["wget+eaf:INIT_CHUNK=%d" % (k * KiB) for k in (16, 32, 64)]
# demo's testbed: replica A's MPTCP server (--mptcp) and the replicas' HTTPS (--tls, a test CA)
DEMO = ["--mptcp", "--tls"]
IANS = [(d, r) for d in (10, 50, 100) for r in (2, 5, 10, 20)]


def dl(exp, params, contenders, rounds, **kw):
    return dict(kind="downloads", exp=exp, params=params, contenders=contenders, rounds=rounds, **kw)


def pages(pg, clients, configs, rounds):
    return dict(kind="pages", pages=pg, clients=clients, configs=configs, rounds=rounds)


def plan_sweep(shapers, rounds):
    """One testbed per cell of the sweep and shaper: the pair's scenario with the cell's queue, loss
    and jitter (`testbed run --set`), one downloads job whose rows carry the cell. Each cell has
    a metrics store of its own, warmed by two downloads under the shim first (a user's store is
    warm; the host's would hold the previous cell's links)."""
    out = []
    for shaper in shapers:
        for cell in sweep.cells():
            sets, qs = sweep.testbed_sets(cell, sweep.load_pair(cell["pair"]))
            c = dict(cell, queue_bytes=qs, label=sweep.label(cell, shaper), store="own, warmed")
            job = dl("sweep", list(sweep.SIZES), list(sweep.CONTENDERS), rounds, cell=c, shaper=shaper,
                     slack=sweep.timeout_slack(cell), warmup=[list(w) for w in sweep.WARMUP])
            out.append((cell["pair"], ["--mptcp"] + [a for s in sets for a in ("--set", s)], [job]))
    return out


def plan(mode, shapers=("linkemu",)):
    """[(scenario, testbed flags, jobs)] and the loopback (MiB, rounds) of a mode (shapers: the
    sweep's). Within a testbed the failover job comes last (it cuts a link, then restores it)."""
    if mode == "sweep":
        return plan_sweep(shapers, 3), None
    if mode == "smoke":
        return [("demo", [], [dl("sizes", [16 * KiB], ["wget@wifi0", "wget@lte0", "wget+eaf"], 1)])], None
    if mode == "quick":
        demo = [dl("sizes", [64 * KiB, MiB, 4 * MiB], ALL, 3), dl("initchunk", [MiB], INIT, 3),
                dl("memory", [4 * MiB], ["wget@slow", "wget+eaf@slow"], 1, rate=MiB, rss=True),
                dl("https", [4 * MiB], HTTPS, 3),
                dict(kind="chunks", contender="wget+eaf", size=32 * MiB),
                dict(kind="failover", contenders=["wget+eaf", "mptcp"], size=32 * MiB, cut="lte0", at=0.5)]
        return [("demo", DEMO, demo),
                ("single", [], [dl("overhead", [64 * KiB, MiB], ["wget@wifi0", "wget+shim"], 3)]),
                ("asym", [], [pages(["mixed"], ["wget"], ["wifi0", "lte0", "eaf"], 1)])], (256, 1)
    sizes = [16 * KiB, 64 * KiB, MiB, 4 * MiB, 32 * MiB, 128 * MiB]
    demo = [dl("sizes", sizes, ALL, 5), dl("initchunk", [MiB, 4 * MiB], INIT, 5),
            dl("memory", [128 * MiB], ["wget@slow", "wget+eaf@slow"], 3, rate=4 * MiB, rss=True),
            dl("https", [32 * MiB, 128 * MiB], HTTPS, 5),
            dict(kind="chunks", contender="wget+eaf", size=32 * MiB),
            dict(kind="failover", contenders=["wget+eaf", "mptcp"], size=128 * MiB, cut="lte0", at=0.5)]
    out = [("demo", DEMO, demo),
           ("sym-high", ["--mptcp"], [dl("sizes", [MiB, 4 * MiB, 32 * MiB], ALL, 5)]),
           ("asym", ["--mptcp"], [dl("sizes", [MiB, 4 * MiB], ALL, 5),  # 32 MiB at 2 Mbit/s: 140 s a run
                           pages(["mixed", "many100k", "mixed2"], ["wget", "wget2", "curl"],
                                 ["wifi0", "lte0", "rr", "eaf"], 5)]),
           ("single", [], [dl("overhead", [16 * KiB, 64 * KiB, MiB, 4 * MiB, 32 * MiB],
                                 ["wget@wifi0", "wget+shim"], 5)])]
    for i, (d1, r1) in enumerate(IANS):
        for d2, r2 in IANS[i:]:
            out.append(("ians-%d-%d-%d-%d" % (d1, r1, d2, r2), [],
                        [pages(["mixed"], ["wget2"], ["wifi0", "lte0", "eaf"], 3)]))
    return out + plan_sweep(shapers, 3), (1024, 5)


def tailor(testbeds, args):
    """The plan narrowed and changed by --only, --experiments, --rounds, --sizes, --contenders."""
    only = set(args.only.split(",")) if args.only else None
    exps = set(args.experiments.split(",")) if args.experiments else None
    out = []
    for scen, flags, jobs in testbeds:
        keep = []
        for j in jobs:
            if exps is not None and j.get("exp", j["kind"]) not in exps:
                continue
            j = dict(j)
            if args.rounds and "rounds" in j:
                j["rounds"] = args.rounds
            if j.get("cell") and not sweep.matches(j["cell"], args.cells):
                continue
            if args.sizes and j.get("exp") in ("sizes", "overhead", "sweep"):
                j["params"] = [int(x) for x in args.sizes.replace(" ", ",").split(",") if x]
                if j["exp"] == "overhead":  # one 20 Mbit/s link: 128 MiB would take a minute a run
                    j["params"] = [x for x in j["params"] if x <= 32 * MiB]
            if args.contenders and j.get("exp") in ("sizes", "sweep"):
                j["contenders"] = args.contenders.split(",")
            keep.append(j)
        if keep and (only is None or scen in only):
            out.append((scen, flags, keep))
    return out


def netns_probe():
    """(namespaces permitted, netem available) from a throwaway namespace."""
    ns = "mhb-probe-%d" % os.getpid()
    if subprocess.run(["ip", "netns", "add", ns], capture_output=True).returncode != 0:
        return False, False
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], capture_output=True)
        netem = subprocess.run(["ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem",
                                "delay", "1ms"], capture_output=True).returncode == 0
    finally:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    return True, netem


def sweep_shapers(req, netem):
    """The sweep runs on linkemu, and on netem too where the kernel has it (unless --shaper names one)."""
    if req in ("netem", "linkemu"):
        return (req,)
    return ("linkemu", "netem") if netem else ("linkemu",)


def choose_shaper(req, netem):
    """The shaper every testbed of the run uses, or (None, why)."""
    require = os.environ.get("MHTTP_BENCH_REQUIRE_NETEM") == "1"
    if req == "netem" or require:
        return ("netem", "") if netem else (None, "netem is not available in this kernel" +
                                            (" and MHTTP_BENCH_REQUIRE_NETEM=1" if require else ""))
    if req == "linkemu":
        return "linkemu", ""
    return ("netem", "") if netem else ("linkemu", "")


def git(*args):
    p = subprocess.run(["git", "-C", SRC] + list(args), capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else ""


def meta_of(args, shaper):
    commit = git("rev-parse", "--short", "HEAD") or "nogit"
    if git("status", "--porcelain", "--untracked-files=no"):
        commit += "-dirty"
    return {"commit": commit, "kernel": platform.release(), "mode": args.mode, "shaper": shaper, "argv": args.argv,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "load": open("/proc/loadavg").read().split()[:3], "cpus": os.cpu_count()}


def run_testbed(scen, flags, jobs, shaper, meta, shim, out, raw):
    shaper = jobs[0].get("shaper") or shaper  # a sweep cell names its own
    name = jobs[0]["cell"]["label"] if jobs[0].get("cell") else scen
    p = os.path.join(out, "plan-%s.json" % "".join(c if c.isalnum() or c in "-." else "_" for c in name))
    with open(p, "w") as fh:
        json.dump({"meta": {k: meta[k] for k in ("commit", "kernel")}, "shim": shim, "jobs": jobs}, fh, indent=1)
    cmd = [PY, TESTBED, "run", scen, "--shaper", shaper] + list(flags) + [
        "--", PY, os.path.join(HERE, "inner.py"), p, raw]
    t0 = time.monotonic()
    rc = subprocess.run(cmd, stdin=subprocess.DEVNULL).returncode
    print("# %s: %.0f s (exit %d)" % (name, time.monotonic() - t0, rc), file=sys.stderr, flush=True)
    if rc != 0:
        with open(raw, "a") as fh:
            fh.write(json.dumps(dict(meta, exp="harness", scenario=name, shaper=shaper, contender="testbed", kind="",
                                     param=0, round=0, secs=None, status="fail",
                                     why="testbed run exited %d" % rc)) + "\n")


def run_loopback(mib, rounds, build, meta, raw):
    """bench/loopback/run.sh (its own namespace, unshaped); its per-run lines become rows."""
    p = subprocess.run(["/bin/bash", os.path.join(BENCH, "loopback", "run.sh"), build, str(rounds), str(mib)],
                       capture_output=True, text=True, stdin=subprocess.DEVNULL)
    rows = []
    for who, name, kind in (("direct", "wget", "single"), ("shim", "wget+shim", "mhttp")):
        m = re.search(r"^%s +runs +\(s cpu rss\): (.*)$" % who, p.stdout, re.M)
        vals = m.group(1).split() if m else []
        for i in range(0, len(vals) - 2, 3):
            rows.append(dict(meta, exp="loopback", scenario="loopback", shaper="none", link={}, contender=name,
                             kind=kind, param=mib * MiB, round=i // 3 + 1, secs=float(vals[i]),
                             cpu_s=float(vals[i + 1]), maxrss_kib=int(vals[i + 2]), status="ok", why=""))
    if not rows:
        rows.append(dict(meta, exp="loopback", scenario="loopback", shaper="none", link={}, contender="wget+shim",
                         kind="mhttp", param=mib * MiB, round=0, secs=None, status="fail",
                         why="loopback/run.sh exit %d: %s" % (p.returncode, p.stderr.strip()[-200:])))
    with open(raw, "a") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")


def unit_tests_pass():
    """The report's table tests (test_stats.py), run by --smoke before anything is measured."""
    import unittest
    suite = unittest.defaultTestLoader.discover(HERE, pattern="test_*.py")
    return unittest.TextTestRunner(stream=sys.stderr, verbosity=0).run(suite).wasSuccessful()


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="bench/run", description="libmhttp benchmarks against its peers on the "
                                 "testbed (see bench/README.md). Default: the full mode (hours).")
    m = ap.add_mutually_exclusive_group()
    m.add_argument("--smoke", dest="mode", action="store_const", const="smoke",
                   help="one tiny experiment, every output produced and parsed back (CI; no timing assertion)")
    m.add_argument("--quick", dest="mode", action="store_const", const="quick",
                   help="every experiment, small (<= 5 min)")
    m.add_argument("--sweep", dest="mode", action="store_const", const="sweep",
                   help="queue x loss x jitter on two link pairs (part of --full; hours; --cells narrows it)")
    m.add_argument("--full", dest="mode", action="store_const", const="full", help="every experiment (the default)")
    ap.set_defaults(mode="full")
    ap.add_argument("--shaper", choices=("auto", "netem", "linkemu"), default="auto")
    ap.add_argument("--out", help="results directory (default bench/results/<date>-<commit>[-mode])")
    ap.add_argument("--only", help="comma list of scenarios to run (others are left out)")
    ap.add_argument("--experiments", help="comma list of experiments to keep (sizes, overhead, initchunk, "
                    "memory, https, chunks, failover, pages, loopback)")
    ap.add_argument("--rounds", type=int, help="rounds of every download and page job")
    ap.add_argument("--sizes", help="object sizes (bytes, comma list) of the sizes and overhead jobs")
    ap.add_argument("--contenders", help="contenders of the sizes and sweep jobs (comma list, see bench/README.md)")
    ap.add_argument("--cells", help="the sweep's cells to keep: pair=, queue= (0.5, 1, 2, 8, 500ms), loss= (%%), "
                    "jitter= (ms); a key may repeat (queue=1,queue=8,loss=0)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a target fails (default: only in the TAP/JUnit)")
    ap.add_argument("--report-only", metavar="DIR", help="rewrite the outputs of DIR from its raw.jsonl")
    ap.add_argument("--list", action="store_true", help="print the mode's testbeds and jobs, run nothing")
    return ap.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    args.argv = " ".join(argv)
    if args.report_only:
        return report.finish(args.report_only, strict=args.strict)
    if args.list:
        testbeds, loop = plan(args.mode, sweep_shapers(args.shaper, False))
        for scen, flags, jobs in tailor(testbeds, args):
            print(" ".join([scen] + list(flags)))
            for j in jobs:
                print("    " + json.dumps(j))
        print("loopback: %s" % ("%d MiB x %d" % loop if loop else "no"))
        return 0
    if args.mode == "smoke" and not unit_tests_pass():
        return 1
    if os.geteuid() != 0:
        print("bench/run: skipped: network namespaces need root", file=sys.stderr)
        return EXIT_SKIP
    ok, netem = netns_probe()
    if not ok:
        print("bench/run: skipped: network namespaces are not permitted here", file=sys.stderr)
        return EXIT_SKIP
    shaper, why = choose_shaper(args.shaper, netem)
    if not shaper:
        print("bench/run: %s" % why, file=sys.stderr)
        return EXIT_NETEM
    build = os.environ.get("MHTTP_BUILD_DIR", os.path.join(SRC, "build", "release"))
    os.environ["MHTTP_BUILD_DIR"] = build
    shim = os.path.join(build, "shim", "libmhttp.so")
    meta = meta_of(args, shaper)
    out = args.out or os.path.join(BENCH, "results", "%s-%s%s" % (
        meta["date"][:16].replace(":", ""), meta["commit"], "" if args.mode == "full" else "-" + args.mode))
    os.makedirs(out, exist_ok=True)
    raw = os.path.join(out, "raw.jsonl")
    open(raw, "w").close()
    lock = open(LOCK, "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        print("bench/run: waiting for %s (another benchmark is measuring)" % LOCK, file=sys.stderr)
        fcntl.flock(lock, fcntl.LOCK_EX)
    t0 = time.monotonic()
    testbeds, loop = plan(args.mode, sweep_shapers(args.shaper, netem))
    testbeds = tailor(testbeds, args)
    if (args.only and "loopback" not in args.only.split(",")) or (args.experiments and
                                                                 "loopback" not in args.experiments.split(",")):
        loop = None
    print("# bench/run %s: shaper %s, kernel %s, commit %s, out %s" % (
        args.mode, shaper, meta["kernel"], meta["commit"], out), file=sys.stderr, flush=True)
    for scen, flags, jobs in testbeds:
        run_testbed(scen, flags, jobs, shaper, meta, shim, out, raw)
    if loop:
        run_loopback(loop[0], args.rounds or loop[1], build, meta, raw)
    meta["seconds"] = round(time.monotonic() - t0)
    meta["load_end"] = open("/proc/loadavg").read().split()[:3]
    with open(os.path.join(out, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
    return report.finish(out, strict=args.strict)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
