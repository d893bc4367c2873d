"""Table tests of the report's pure parts: medians and ranges, the physical limit, ratios to the best single link, target verdicts, TAP/JUnit/JSON shapes, the chunk-log parser (run: /usr/bin/python3 -m unittest, or bench/run --smoke)."""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import contenders  # noqa: E402
import inner  # noqa: E402
import plots  # noqa: E402
import report  # noqa: E402
import stats as S  # noqa: E402

DEMO = {"ifaces": ["wifi0", "lte0"], "rates_down": [20_000_000, 50_000_000], "rtts_ms": [10, 50]}
MiB = 1 << 20
SMALL = 64 * 1024


def row(exp, contender, param, secs, kind, status="ok", scenario="demo", link=DEMO, **kw):
    return dict(exp=exp, scenario=scenario, param=param, contender=contender, kind=kind, secs=secs, status=status,
                why="", shaper="linkemu", link=link, kernel="k", commit="c", **kw)


def write_run(d, rows, mode):
    """A results directory as bench/run leaves it: rows in raw.jsonl, the run's facts in meta.json."""
    with open(os.path.join(d, "raw.jsonl"), "w") as fh:
        fh.write("".join(json.dumps(r) + "\n" for r in rows))
    with open(os.path.join(d, "meta.json"), "w") as fh:
        json.dump({"mode": mode, "commit": "c", "kernel": "k", "shaper": "linkemu"}, fh)


def summary(rows):
    return S.add_references(S.summarize(rows))


class Arithmetic(unittest.TestCase):
    def test_median_and_range(self):
        g = summary([row("sizes", "wget+eaf", MiB, s, S.MHTTP) for s in (0.5, 0.3, 0.4)] +
                    [row("sizes", "wget+eaf", MiB, None, S.MHTTP, status="timeout")])[0]
        self.assertEqual((g["median"], g["min"], g["max"], g["n"]), (0.4, 0.3, 0.5, 3))
        self.assertEqual(g["bad"], ["timeout: "])

    def test_even_median(self):
        self.assertEqual(S.median([4, 1, 3, 2]), 2.5)

    def test_limit_is_payload_of_summed_rates(self):
        # 70 Mbit/s x 1448/1500 = 67.573 Mbit/s of file bytes: 4 MiB in 0.4966 s
        self.assertAlmostEqual(S.limit_s(4 * MiB, DEMO["rates_down"]), 4 * MiB * 8 / (70e6 * 1448 / 1500))
        self.assertIsNone(S.limit_s(MiB, [20_000_000, 0]))

    def test_ratios_to_best_single_and_limit(self):
        summ = summary([row("sizes", "wget@wifi0", MiB, 0.48, S.SINGLE), row("sizes", "wget@lte0", MiB, 0.47, S.SINGLE),
                        row("sizes", "wget+eaf", MiB, 0.35, S.MHTTP)])
        eaf = S.find(summ, "sizes", "wget+eaf")[0]
        self.assertEqual((eaf["best"], eaf["best_name"]), (0.47, "wget@lte0"))
        self.assertAlmostEqual(eaf["ratio_best"], 0.35 / 0.47)
        self.assertAlmostEqual(eaf["ratio_limit"], 0.35 / S.limit_s(MiB, DEMO["rates_down"]))

    def test_iface_share(self):
        r = [row("sizes", "mptcp", MiB, 1, S.MPTCP, iface_bytes={"wifi0": 300, "lte0": 700})]
        self.assertEqual(S.iface_share(r), {"lte0": 0.7, "wifi0": 0.3})


def verdict(summ, prefix):
    return [v for v in S.verdicts(summ) if v["name"].startswith(prefix)]


class Targets(unittest.TestCase):
    def test_large_object_bound(self):
        lim = S.limit_s(32 * MiB, DEMO["rates_down"])
        for t, want in ((1.05 * lim + 0.099, "pass"), (1.05 * lim + 0.101, "fail")):
            v = verdict(summary([row("sizes", "wget+eaf", 32 * MiB, t, S.MHTTP)]), "two links, objects >= 32")
            self.assertEqual(v[0]["status"], want)

    def test_faster_than_peers_and_not_measured(self):
        summ = summary([row("sizes", "wget+eaf", 4 * MiB, 0.73, S.MHTTP), row("sizes", "aria2", 4 * MiB, 0.93, S.PEER),
                        row("sizes", "mptcp", 4 * MiB, 0.70, S.MPTCP)])
        self.assertEqual(verdict(summ, "two links, objects >= 4 MiB: wget+eaf faster than aria2")[0]["status"], "pass")
        self.assertEqual(verdict(summ, "two links, objects >= 4 MiB: wget+eaf faster than mptcp")[0]["status"], "fail")
        self.assertEqual(verdict(summ, "one link, objects > 64")[0]["status"], "na")

    def test_https_targets(self):
        lim = S.limit_s(32 * MiB, DEMO["rates_down"])
        for t, want in ((1.099 * lim, "pass"), (1.101 * lim, "fail")):
            v = verdict(summary([row("https", "mhttp", 32 * MiB, t, S.MHTTP)]), "HTTPS, two links, objects >= 32")
            self.assertEqual(v[0]["status"], want)
        summ = summary([row("https", "mhttp", 4 * MiB, 0.80, S.MHTTP), row("https", "aria2-tls", 4 * MiB, 0.90, S.PEER),
                        row("https", "mhttp-mirrors", 4 * MiB, 0.95, S.MHTTP),
                        row("https", "aria2-tls-mirrors", 4 * MiB, 0.90, S.PEER)])
        self.assertEqual(verdict(summ, "HTTPS, two links, objects >= 4 MiB: mhttp faster than aria2-tls")[0]["status"],
                         "pass")
        self.assertEqual(verdict(summ, "HTTPS, two links, objects >= 4 MiB: mhttp-mirrors faster")[0]["status"], "fail")
        self.assertEqual(verdict(summ, "HTTPS, two links, objects >= 32")[0]["status"], "na")

    def test_one_link_overhead(self):
        single = {"ifaces": ["wifi0"], "rates_down": [20_000_000], "rtts_ms": [10]}
        for shim, want in ((0.488, "pass"), (0.500, "fail")):
            summ = summary([row("overhead", "wget@wifi0", MiB, 0.48, S.SINGLE, scenario="single", link=single),
                            row("overhead", "wget+shim", MiB, shim, S.MHTTP, scenario="single", link=single)])
            self.assertEqual(verdict(summ, "one link, objects > 64")[0]["status"], want)

    def test_small_objects_against_plain_wget_not_curl(self):
        summ = summary([row("sizes", "curl@wifi0", SMALL, 0.090, S.SINGLE),
                        row("sizes", "wget@wifi0", SMALL, 0.100, S.SINGLE),
                        row("sizes", "wget@lte0", SMALL, 0.200, S.SINGLE),
                        row("sizes", "wget+eaf", SMALL, 0.104, S.MHTTP)])
        v = verdict(summ, "two links, objects <= 64 KiB")[0]
        self.assertEqual(v["status"], "pass")
        self.assertEqual(v["detail"], "worst demo 65536: 1.040 x (0.104 s vs 0.100 s wget@wifi0)")

    def test_pages_speedup(self):
        summ = summary([row("pages", "wifi0", "mixed/wget", 3.0, S.SINGLE, scenario="asym"),
                        row("pages", "lte0", "mixed/wget", 2.6, S.SINGLE, scenario="asym"),
                        row("pages", "eaf", "mixed/wget", 2.0, S.MHTTP, scenario="asym")])
        self.assertEqual(verdict(summ, "pages on asym")[0]["status"], "pass")  # 1.30 x

    def test_memory_growth(self):
        summ = summary([row("memory", "wget@slow", 4 * MiB, 4, S.SINGLE, maxrss_kib=5000),
                        row("memory", "wget+eaf@slow", 4 * MiB, 4, S.MHTTP, maxrss_kib=5000 + 33 * 1024)])
        self.assertEqual(verdict(summ, "slow reader")[0]["status"], "fail")

    def test_mptcp_proof_needs_both_interfaces(self):
        ok = row("sizes", "mptcp", 4 * MiB, 1, S.MPTCP, iface_bytes={"wifi0": 1 << 20, "lte0": 3 << 20})
        one = row("sizes", "mptcp", 4 * MiB, 1, S.MPTCP, iface_bytes={"wifi0": 4 << 20, "lte0": 900})
        self.assertEqual(S.mptcp_proof(summary([ok]))["status"], "pass")
        self.assertEqual(S.mptcp_proof(summary([ok, one]))["status"], "fail")


class Outputs(unittest.TestCase):
    checks = [{"name": "libmhttp: bytes", "status": "pass", "detail": "x"},
              {"name": "two links: a <b> & c", "status": "fail", "detail": "1 > 0"},
              {"name": "one link", "status": "na", "detail": "not measured"}]

    def test_tap(self):
        t = report.tap_lines(self.checks, smoke=False).splitlines()
        self.assertEqual(t[1], "1..3")
        self.assertEqual([x.split(" - ")[0] for x in t[2:]], ["ok 1", "not ok 2", "ok 3"])
        self.assertIn("# SKIP", t[4])
        self.assertIn("# TODO", report.tap_lines(self.checks, smoke=True).splitlines()[3])

    def test_junit_parses(self):
        suite = ET.fromstring(report.junit(self.checks, smoke=False))
        self.assertEqual((suite.get("tests"), suite.get("failures"), suite.get("skipped")), ("3", "1", "1"))
        self.assertEqual(suite.findall("testcase")[1].get("name"), "two links: a <b> & c")
        self.assertEqual(ET.fromstring(report.junit(self.checks, smoke=True)).get("failures"), "0")

    def test_benchmark_action_shape(self):
        js = report.bench_json(summary([row("sizes", "wget+eaf", MiB, 0.35, S.MHTTP)]))
        self.assertEqual(js[0]["name"], "sizes/demo/1048576/wget+eaf [linkemu]")
        self.assertEqual((js[0]["unit"], js[0]["value"], js[0]["range"]), ("s", 0.35, "0.3500-0.3500"))
        self.assertIn("shaper=linkemu", js[0]["extra"])


class ParseBack(unittest.TestCase):
    def test_finish_writes_every_output_and_verify_catches_a_broken_one(self):
        rows = [row("sizes", "wget@wifi0", 16384, 0.05, S.SINGLE), row("sizes", "wget+eaf", 16384, 0.05, S.MHTTP)]
        with tempfile.TemporaryDirectory() as d:
            write_run(d, rows, "smoke")
            with contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(report.finish(d), 0)
                self.assertEqual(report.verify(d, ["sizes-demo.png"]), [])
                with open(os.path.join(d, "results.json"), "w") as fh:
                    fh.write('[{"name": "x"}]')
                os.unlink(os.path.join(d, "sizes-demo.png"))
                self.assertEqual(len(report.verify(d, ["sizes-demo.png"])), 2)
                os.unlink(os.path.join(d, "junit.xml"))
                self.assertEqual(report.verify(d, []), ["junit.xml missing or empty"])

    def test_wrong_bytes_fail_the_run(self):
        rows = [row("sizes", "wget@wifi0", 16384, 0.05, S.SINGLE),
                row("sizes", "wget+eaf", 16384, 0.05, S.MHTTP, status="badbytes")]
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "raw.jsonl"), "w") as fh:
                fh.write("".join(json.dumps(r) + "\n" for r in rows))
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                self.assertEqual(report.finish(d), 1)
            self.assertNotIn("OUTPUT BROKEN", err.getvalue())
            self.assertIn("FAIL: libmhttp: every run's bytes", err.getvalue())


class Plots(unittest.TestCase):
    def test_every_plot_from_a_synthetic_run(self):
        rows = [row("sizes", c, n, t * n / MiB + 0.05, k) for n in (MiB, 4 * MiB)
                for c, k, t in (("wget@wifi0", S.SINGLE, 0.45), ("wget+eaf", S.MHTTP, 0.2), ("mptcp", S.MPTCP, 0.25))]
        rows += [row("overhead", "wget@wifi0", MiB, 0.48, S.SINGLE, scenario="single"),
                 row("overhead", "wget+shim", MiB, 0.49, S.MHTTP, scenario="single"),
                 row("initchunk", "wget+eaf:INIT_CHUNK=16384", MiB, 0.35, S.MHTTP),
                 row("chunks-trace", "wget+eaf", 4 * MiB, 0.8, S.MHTTP, chunks=[[0.0, "wifi0", 0, 24576],
                                                                               [20.0, "lte0", 24576, 65536]]),
                 row("failover-trace", "wget+eaf", 4 * MiB, 1.0, S.MHTTP, cut_s=0.3, cut_done_s=0.4, cut_iface="lte0",
                     columns=["t", "wifi0", "lte0"], samples=[[0.1 * i, 250000 * i, 600000 * min(i, 4)]
                                                              for i in range(10)])]
        for d1, d2 in ((10, 10), (10, 50), (50, 50)):
            scen = "ians-%d-5-%d-20" % (d1, d2)
            rows += [row("pages", "wifi0", "mixed/wget2", 3.0, S.SINGLE, scenario=scen),
                     row("pages", "eaf", "mixed/wget2", 2.0 + d2 / 100, S.MHTTP, scenario=scen)]
        with tempfile.TemporaryDirectory() as d:
            pngs = plots.draw_all(summary(rows), os.environ.get("BENCH_PLOT_DIR", d))
            self.assertEqual(pngs, ["sizes-demo.png", "overhead.png", "initchunk.png", "chunks.png", "failover.png",
                                    "pages-heatmap.png"])
            for p in pngs:
                self.assertEqual(plots.check_png(os.path.join(os.environ.get("BENCH_PLOT_DIR", d), p)), [])


class Plans(unittest.TestCase):
    """Every mode's plan names scenarios the testbed has and contenders that resolve: the full
    mode takes hours, so its configuration is checked here rather than by running it."""
    ENV = {"TESTBED_IFACES": "wifi0 lte0", "TESTBED_SCENARIO": "demo", "TESTBED_URL_A": "http://a.test",
           "TESTBED_URL_B": "http://b.test", "TESTBED_WIFI0_ADDR": "10.201.1.2", "TESTBED_LTE0_ADDR": "10.202.1.2",
           "TESTBED_MPTCP": "1", "TESTBED_MPTCP_PORT": "8081", "TESTBED_HOST_A": "a.test",
           "TESTBED_HOST_B": "b.test", "TESTBED_TLS": "1", "TESTBED_TLS_PORT": "443", "TESTBED_TLS_CA": "/ca.pem"}

    def test_modes(self):
        known = subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(HERE), "testbed", "testbed"),
                                "scenarios", "--all"], capture_output=True, text=True).stdout.split()
        for mode in ("smoke", "quick", "sweep", "full"):
            testbeds, _ = bench.plan(mode)
            for scen, _, jobs in testbeds:
                self.assertIn(scen, known, mode)
                for j in jobs:
                    for c in j.get("contenders", []) + ([j["contender"]] if "contender" in j else []):
                        with mock.patch("shutil.which", return_value="/usr/bin/x"), \
                                mock.patch("os.path.exists", return_value=True), \
                                mock.patch("os.access", return_value=True):
                            argv, env = contenders.command(c, self.ENV, "/files/1.bin", "/tmp/x", "/lib.so")
                        self.assertTrue(argv, c)


class ChunkLog(unittest.TestCase):
    def test_parse(self):
        log = "\n".join([
            "libmhttp[1] debug: split 1: probe 0+24576 on wifi0 for a.test (2 interfaces)",
            "libmhttp[1] debug: split 1: +12.5 ms leg 1 (lte0) connected in 50000 us",
            "libmhttp[1] debug: split 1: leg 1 range 24576+32768 (pipelined after the probe)",
            "libmhttp[1] debug: split 1: +61.0 ms leg 0 (wifi0) range 57344+65536 (alg1, case 2, rate 1 B/s, rtl 1 us, "
            "queued 1)"])
        self.assertEqual(inner.parse_chunks(log), [[0.0, "wifi0", 0, 24576], [0.0, "lte0", 24576, 32768],
                                                   [61.0, "wifi0", 57344, 65536]])


if __name__ == "__main__":
    unittest.main()
