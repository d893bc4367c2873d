"""Table tests of the sweep's pure parts: queue sizes per cell, the testbed overrides, --cells filters, the grid and its worst cells, the targets' verdicts, and a whole report with heat maps from a synthetic sweep (run: /usr/bin/python3 -m unittest, or bench/run --smoke)."""
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import report  # noqa: E402
import stats as S  # noqa: E402
import sweep  # noqa: E402
from test_stats import DEMO, MiB, row, summary, write_run  # noqa: E402

SYM = {"ifaces": ["wifi0", "lte0"], "rates_down": [20_000_000, 20_000_000], "rtts_ms": [10, 10]}
KINDS = {"wget+eaf": S.MHTTP, "wget@wifi0": S.SINGLE, "wget@lte0": S.SINGLE, "aria2": S.PEER, "mptcp": S.MPTCP}


def cell_rows(cell, secs, size=MiB, shaper="linkemu", link=DEMO):
    """Rows of one sweep cell: secs maps a contender to its runs' seconds."""
    c = dict(cell, label=sweep.label(cell, shaper))
    out = []
    for name, ts in secs.items():
        for t in ts:
            r = row("sweep", name, size, t, KINDS[name], scenario=c["label"], link=link, cell=c)
            r["shaper"] = shaper
            out.append(r)
    return out


class Cells(unittest.TestCase):
    def test_the_grid_has_every_combination(self):
        cs = sweep.cells()
        self.assertEqual(len(cs), 2 * 5 * 3 * 2)
        self.assertEqual(len({sweep.label(c) for c in cs}), len(cs))
        self.assertNotEqual(sweep.label(cs[0]), sweep.label(cs[0], "netem"))

    def test_queue_bytes(self):
        for q, rate, rtt, want in ((1, 20_000_000, 10, 25_000), (0.5, 20_000_000, 10, 12_500),
                                   (8, 50_000_000, 50, 2_500_000), ("500ms", 20_000_000, 10, 1_250_000),
                                   (0.5, 1_000_000, 10, sweep.MIN_QUEUE)):
            self.assertEqual(sweep.queue_bytes(q, rate, rtt), want, (q, rate, rtt))

    def test_testbed_sets_each_link_its_own_bdp(self):
        sets, qs = sweep.testbed_sets(dict(pair="demo", queue=2, loss=0.1, jitter=5), sweep.load_pair("demo"))
        self.assertEqual(qs, {"wifi0": 50_000, "lte0": 625_000})
        self.assertEqual(sets, ["wifi0.queue_down=50000", "wifi0.loss=0.1%", "wifi0.jitter=5",
                                "lte0.queue_down=625000", "lte0.loss=0.1%", "lte0.jitter=5"])

    def test_cells_filter(self):
        c = dict(pair="demo", queue=0.5, loss=0.1, jitter=0)
        for filt, want in (("", True), ("pair=demo", True), ("pair=sym-high", False), ("queue=0.5", True),
                           ("queue=0.5bdp", True), ("queue=1", False), ("queue=1,queue=0.5", True),
                           ("loss=0.1,jitter=0", True), ("loss=0.10", True), ("loss=1", False)):
            self.assertEqual(sweep.matches(c, filt), want, filt)
        self.assertTrue(sweep.matches(dict(c, queue="500ms"), "queue=500ms"))

    def test_plan_and_tailor(self):
        tbs, loop = bench.plan("sweep", ("linkemu", "netem"))
        self.assertEqual((len(tbs), loop), (120, None))
        args = bench.parse_args(["--sweep", "--cells", "pair=demo,loss=0,jitter=0", "--sizes", "1048576",
                                 "--rounds", "1"])
        kept = bench.tailor(bench.plan("sweep")[0], args)
        self.assertEqual(len(kept), 5)
        j = kept[0][2][0]
        self.assertEqual((j["params"], j["rounds"], j["shaper"], j["slack"]), ([MiB], 1, "linkemu", 4))
        self.assertEqual((j["warmup"], j["cell"]["store"]), ([["wget+eaf", MiB], ["wget+eaf", 4 * MiB]], "own, warmed"))
        self.assertIn("wifi0.queue_down=12500", kept[0][1])


class Grid(unittest.TestCase):
    CELL = dict(pair="demo", queue=1, loss=0, jitter=0)

    def test_ratios_to_the_best_other_contender_and_the_limit(self):
        e = sweep.grid(summary(cell_rows(self.CELL, {"wget+eaf": [0.30, 0.32, 0.31], "wget@wifi0": [0.5],
                                                     "wget@lte0": [0.4], "aria2": [0.36], "mptcp": [0.6]})))
        self.assertEqual(len(e), 1)
        e = e[0]
        self.assertEqual((e["best_peer"], e["contenders"]["wget+eaf"]["runs"]), ("aria2", 3))
        self.assertAlmostEqual(e["ratio_best_peer"], 0.31 / 0.36)
        self.assertAlmostEqual(e["ratio_limit"], 0.31 / S.limit_s(MiB, DEMO["rates_down"]))
        self.assertEqual((e["queue"], e["loss"], e["label"]), (1, 0, "demo q=1bdp loss=0% jitter=0ms"))

    def verdict(self, rows, prefix):
        vs = sweep.verdicts(sweep.grid(summary(rows)))
        return next(v for v in vs if v["name"].startswith(prefix))

    def test_ahead_of_the_peers(self):
        big = dict(self.CELL, queue=8)
        rows = cell_rows(self.CELL, {"wget+eaf": [0.70], "aria2": [0.80], "mptcp": [0.75]}, 4 * MiB)
        self.assertEqual(self.verdict(rows, "sweep: wget+eaf ahead")["status"], "pass")
        rows += cell_rows(big, {"wget+eaf": [0.90], "aria2": [0.80], "mptcp": [0.95]}, 4 * MiB)
        v = self.verdict(rows, "sweep: wget+eaf ahead")
        self.assertEqual(v["status"], "fail")
        self.assertIn("1 of 2 cells behind; worst demo q=8bdp", v["detail"])
        # 1 MiB: a tie is not behind
        rows = cell_rows(self.CELL, {"wget+eaf": [0.30], "aria2": [0.30], "mptcp": [0.40]})
        self.assertEqual(self.verdict(rows, "sweep: wget+eaf not behind")["status"], "pass")
        self.assertEqual(self.verdict(rows, "sweep: wget+eaf ahead")["status"], "na")

    def test_the_limit_holds_only_where_loss_and_queue_allow(self):
        lim = S.limit_s(32 * MiB, DEMO["rates_down"])
        lossy = dict(self.CELL, loss=1)
        small = dict(self.CELL, queue=0.5)
        rows = (cell_rows(self.CELL, {"wget+eaf": [1.05 * lim]}, 32 * MiB) +
                cell_rows(lossy, {"wget+eaf": [3 * lim]}, 32 * MiB) +
                cell_rows(small, {"wget+eaf": [2 * lim]}, 32 * MiB))
        self.assertEqual(self.verdict(rows, "sweep: wget+eaf at 32 MiB")["status"], "pass")
        rows += cell_rows(dict(self.CELL, queue="500ms", loss=0.1), {"wget+eaf": [1.07 * lim]}, 32 * MiB)
        v = self.verdict(rows, "sweep: wget+eaf at 32 MiB")
        self.assertEqual(v["status"], "fail")
        self.assertIn("q=500ms loss=0.1%", v["detail"])

    def test_median_over_the_queue_sizes(self):
        rows = []
        for q, t in zip(sweep.QUEUES, (0.50, 0.31, 0.32, 0.33, 0.34)):
            rows += cell_rows(dict(self.CELL, queue=q), {"wget+eaf": [t]})
        rows += cell_rows(dict(self.CELL, loss=1), {"wget+eaf": [3.0]})  # lossy cells are not in it
        v = self.verdict(rows, "sweep: wget+eaf on demo, 1 MiB")
        self.assertEqual(v["detail"], "0.330 s over 5 queue sizes")
        self.assertEqual(v["status"], "pass")
        rows += cell_rows(dict(self.CELL, queue=0.5), {"wget+eaf": [0.40]})  # one more run of the 0.5 BDP cell
        self.assertEqual(self.verdict(rows, "sweep: wget+eaf on demo, 1 MiB")["status"], "pass")
        rows += cell_rows(dict(self.CELL, queue=1), {"wget+eaf": [0.50, 0.50]})  # 1 BDP's median: 0.50
        v = self.verdict(rows, "sweep: wget+eaf on demo, 1 MiB")
        self.assertEqual((v["status"], v["detail"]), ("fail", "0.340 s over 5 queue sizes"))


class Report(unittest.TestCase):
    def test_a_synthetic_sweep_gives_its_json_heat_maps_and_worst_cell(self):
        rows = []
        for pair, link in (("demo", DEMO), ("sym-high", SYM)):
            for c in sweep.cells(pairs=(pair,), losses=(0, 1), jitters=(0,)):
                for size in (MiB, 32 * MiB):
                    lim = S.limit_s(size, link["rates_down"])
                    slow = 1.5 if (pair, c["queue"], c["loss"]) == ("sym-high", 0.5, 1) else 1.02
                    rows += cell_rows(c, {"wget+eaf": [slow * lim + 0.05], "wget@wifi0": [2.5 * lim],
                                          "aria2": [1.2 * lim], "mptcp": [1.1 * lim]}, size, link=link)
        with tempfile.TemporaryDirectory() as d:
            write_run(d, rows, "sweep")
            with contextlib.redirect_stderr(io.StringIO()):
                report.finish(d)
                self.assertEqual(report.verify(d, ["sweep-1MiB.png", "sweep-32MiB.png"]), [])
            js = json.load(open(os.path.join(d, "sweep.json")))
            self.assertEqual(len(js["cells"]), 2 * 5 * 2 * 2)
            md = open(os.path.join(d, "report.md")).read()
            self.assertIn("| 32 MiB | 1.370 | sym-high q=0.5bdp loss=1% jitter=0ms (best: mptcp)", md)
            self.assertIn("### demo, 1 MiB (linkemu): median s (× peer, × limit)", md)


if __name__ == "__main__":
    unittest.main()
