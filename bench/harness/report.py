"""Turns a results directory's raw.jsonl into report.md, results.json (benchmark-action shape), results.tap, junit.xml and the plots, then parses every one back (a missing or broken output fails the run)."""
import json
import os
import sys
import xml.etree.ElementTree as ET
from xml.sax.saxutils import quoteattr

import contenders
import plots
import stats as S
import sweep

OUTPUTS = ("report.md", "results.json", "results.tap", "junit.xml")


def load(out):
    rows = [json.loads(line) for line in open(os.path.join(out, "raw.jsonl")) if line.strip()]
    mp = os.path.join(out, "meta.json")
    meta = json.load(open(mp)) if os.path.exists(mp) else {}
    return rows, meta


def fmt_size(n):
    if not isinstance(n, int):
        return str(n)
    for unit, f in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= f and n % f == 0:
            return "%d %s" % (n // f, unit)
    return "%d B" % n


def f3(x, suffix=""):
    return "%.3f%s" % (x, suffix) if x is not None else "–"


def share_str(sh):
    return " / ".join("%s %.0f" % (k, 100 * v) for k, v in sh.items()) if sh else ""


def table_head(title, cols):
    """A Markdown section title and table header with these columns."""
    return ["### " + title, "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]


def rng(g):
    return "%.3f–%.3f" % (g["min"], g["max"]) if g["n"] else "–"


def timed(summ):
    return [g for g in summ if not g["exp"].endswith("-trace") and g["exp"] != "harness"]


def md_downloads(summ, exp, scen):
    gs = [g for g in summ if g["exp"] == exp and g["scenario"] == scen]
    sh = gs[0]["shaper"] if gs else ""
    lines = table_head("%s on %s (shaper %s)" % (exp, scen, sh), [
        "size", "contender", "median s", "min–max s", "runs", "× best single", "× limit", "bytes % per interface",
        "note"])
    for size in sorted({g["param"] for g in gs}):
        cell = [g for g in gs if g["param"] == size]
        if cell and cell[0]["limit"]:
            lines.append("| %s | **physical limit** | %s | | | | 1.000 | | size / Σ rates as TCP payload |" % (
                fmt_size(size), f3(cell[0]["limit"])))
        for g in cell:
            note = g["skip"] or "; ".join(g["bad"][:2])
            if g["exp"] == "memory":
                rss = S.median([r["maxrss_kib"] for r in g["rows"] if r["status"] == "ok" and r.get("maxrss_kib")])
                note = ("max RSS %.1f MiB" % (rss / 1024) if rss else "") + (" " + note if note else "")
            star = " (best)" if g["contender"] == g["best_name"] else ""
            lines.append("| %s | %s%s | %s | %s | %d | %s | %s | %s | %s |" % (
                fmt_size(size), g["contender"], star, f3(g["median"]), rng(g), g["n"], f3(g["ratio_best"]),
                f3(g["ratio_limit"]), share_str(g["share"]), note))
    return lines + [""]


def md_headline(summ):
    gs = [g for g in summ if g["exp"] == "sizes" and g["scenario"] == "demo"]
    if not gs:
        return []
    names = {g["contender"] for g in gs}
    cols = [next((c for c in ("wget+eaf", "wget+shim") if c in names), "wget+eaf"), "aria2", "mptcp"]
    lines = ["## Headline: one object on demo (wifi0 10 ms/20 Mbit/s + lte0 50 ms/50 Mbit/s)", "",
             "Median seconds (× the physical limit).", "",
             "| size | " + " | ".join(cols) + " | best single link | physical limit |", "|---" * (len(cols) + 3) + "|"]
    for size in sorted({g["param"] for g in gs}):
        cell = {g["contender"]: g for g in gs if g["param"] == size}
        any_g = next(iter(cell.values()))
        row = ["%s (%s)" % (f3(cell[c]["median"]), f3(cell[c]["ratio_limit"], " ×")) if c in cell and cell[c]["median"]
               else (cell[c]["skip"] or "failed") if c in cell else "–" for c in cols]
        row.append("%s (%s)" % (f3(any_g["best"]), any_g["best_name"]) if any_g["best"] else "–")
        row.append(f3(any_g["limit"]))
        lines.append("| %s | %s |" % (fmt_size(size), " | ".join(row)))
    return lines + [""]


def md_rows(summ, exp, title, cols, cells):
    """A table of one row per group of experiment `exp`; cells(g) gives the row's cells."""
    gs = [g for g in summ if g["exp"] == exp]
    return table_head(title, cols) + ["| " + " | ".join(cells(g)) + " |" for g in gs] + [""] if gs else []


def page_cells(g):
    sp = 1 / g["ratio_best"] if g["ratio_best"] else None
    return [g["scenario"], g["param"], g["contender"], f3(g["median"]), rng(g), str(g["n"]), f3(sp, " ×"),
            g["skip"] or "; ".join(g["bad"][:2])]


def loopback_cells(g):
    ok = [r for r in g["rows"] if r["status"] == "ok"]
    rss = S.median([r["maxrss_kib"] for r in ok])
    return [g["contender"], fmt_size(g["param"]), f3(g["median"]),
            "%.0f" % (g["param"] / (1 << 20) / g["median"]) if g["median"] else "–",
            f3(S.median([r["cpu_s"] for r in ok])), "%.1f" % (rss / 1024) if rss else "–", "; ".join(g["bad"][:1])]


def md_pages(summ):
    return md_rows(summ, "pages", "Page loads (bench/pages/run.sh's loop)", [
        "scenario", "page/client", "config", "median s", "min–max s", "runs", "speedup vs best single", "note"],
        page_cells)


def md_loopback(summ):
    return md_rows(summ, "loopback", "Loopback (bench/loopback/run.sh, unshaped, no shaper)", [
        "contender", "size", "median s", "MiB/s", "CPU s (median)", "max RSS MiB", "note"], loopback_cells)


def md_sweep(entries):
    """The sweep: its worst cells, then per pair and size a grid of libmhttp's median (x best other
    contender) with queue sizes down and loss/jitter across."""
    if not entries:
        return []
    out = ["## Sweep: queue x loss x jitter", "",
           "Cells: bottleneck queue (multiples of each link's BDP, or 500 ms at its rate), random loss both ways, "
           "jitter (uniform ± on each direction's delay). `× peer`: %s's median over the fastest other contender's "
           "(plain wget on each link, aria2c, MPTCP); `× limit`: over size / Σ rates. The grid is in sweep.json." %
           sweep.OURS, ""]
    out += table_head("Worst cells", ["size", "worst × peer", "cell", "worst × limit", "cell"])
    for size in sorted({e["size"] for e in entries}):
        es = [e for e in entries if e["size"] == size]
        wp, wl = sweep.worst(es, "ratio_best_peer"), sweep.worst(es, "ratio_limit")
        out.append("| %s | %s | %s | %s | %s |" % (
            fmt_size(size), f3(wp["ratio_best_peer"]) if wp else "–",
            "%s (best: %s)" % (wp["label"], wp["best_peer"]) if wp else "–",
            f3(wl["ratio_limit"]) if wl else "–", wl["label"] if wl else "–"))
    out.append("")
    for shaper in dict.fromkeys(e["shaper"] for e in entries):
        for pair in dict.fromkeys(e["pair"] for e in entries):
            for size in sorted({e["size"] for e in entries}):
                es = [e for e in entries if (e["shaper"], e["pair"], e["size"]) == (shaper, pair, size)]
                cols = [(lo, j) for lo in sweep.LOSSES for j in sweep.JITTERS
                        if any((e["loss"], e["jitter"]) == (lo, j) for e in es)]
                if not es:
                    continue
                out += table_head("%s, %s (%s): median s (× peer, × limit)" % (pair, fmt_size(size), shaper),
                                  ["queue"] + ["%g %% / %g ms" % c for c in cols])
                for q in [q for q in sweep.QUEUES if any(e["queue"] == q for e in es)]:
                    cells = []
                    for lo, j in cols:
                        e = next((e for e in es if (e["queue"], e["loss"], e["jitter"]) == (q, lo, j)), None)
                        m = e and e["contenders"].get(sweep.OURS, {}).get("median")
                        cells.append("%s (%s, %s)" % (f3(m), f3(e["ratio_best_peer"]), f3(e["ratio_limit"]))
                                     if m else "–")
                    out.append("| %s | %s |" % (sweep.queue_name(q), " | ".join(cells)))
                out.append("")
    return out


def md_report(summ, meta, checks, pngs):
    loaded = meta.get("load") and float(meta["load"][0]) > 0.5 * (meta.get("cpus") or 1)
    out = ["# libmhttp benchmarks: %s run" % meta.get("mode", "?"), "", "`bench/run %s`" % meta.get("argv", ""), "",
           "commit `%s`, kernel `%s`, shaper **%s**, %s CPUs, load %s at the start, %s at the end, %s s, %s." % (
               meta.get("commit"), meta.get("kernel"), meta.get("shaper"), meta.get("cpus"),
               "/".join(meta.get("load", [])), "/".join(meta.get("load_end", [])), meta.get("seconds"),
               meta.get("date")),
           ""]
    if meta.get("merged"):
        out += ["Merged: %s." % meta["merged"], ""]
    if loaded:
        out += ["**The machine was loaded (1-minute load above half its CPUs): these times check the plumbing; "
                "they are not results.**", ""]
    if meta.get("mode") == "smoke":
        out += ["Smoke mode: one tiny experiment; the targets below are not asserted (TAP `# TODO`).", ""]
    out += ["Times are wall-clock seconds of the whole program (process start included), median of the ok runs; "
            "`× best single` = median / the fastest single-link contender's median, `× limit` = median / "
            "(size / Σ link rates as TCP payload); below 1 is faster. Runs were interleaved round by round, "
            "the order rotated every round. Every file's sha256 was checked.", "",
            "## Targets", "", "| | target | detail |", "|---|---|---|"]
    out += ["| %s | %s | %s |" % (c["status"].upper(), c["name"], c["detail"]) for c in checks] + [""]
    out += md_headline(summ)
    out += ["## Experiments", ""]
    for exp in ("sizes", "overhead", "initchunk", "memory", "https"):  # the sweep has its own section
        for scen in dict.fromkeys(g["scenario"] for g in summ if g["exp"] == exp):
            out += md_downloads(summ, exp, scen)
    out += md_pages(summ) + md_loopback(summ) + md_sweep(sweep.grid(summ))
    bad = [g for g in summ if g["exp"] == "harness"]
    if bad:
        out += ["### Harness failures", ""] + ["- %s: %s" % (g["scenario"], "; ".join(g["bad"])) for g in bad] + [""]
    out += ["## Contenders", ""] + ["- `%s`: %s" % kv for kv in contenders.PEERS.items()] + [
        "- `CLIENT@IFACE`: plain wget (`--bind-address`) or curl (`--interface`) on that link alone; "
        "`CLIENT+POLICY`: the client under libmhttp.so with `MHTTP_POLICY` (eaf, rr = round-robin; shim = unset)", ""]
    if pngs:
        out += ["## Plots", ""] + ["![%s](%s)" % (p[:-4], p) for p in pngs] + [""]
    return "\n".join(out) + "\n"


def bench_json(summ):
    """benchmark-action's customSmallerIsBetter shape: one entry per measured group."""
    out = []
    for g in timed(summ):
        if g["median"] is None:
            continue
        r0 = g["rows"][0]
        extra = "shaper=%s kernel=%s commit=%s runs=%d" % (g["shaper"], r0.get("kernel"), r0.get("commit"), g["n"])
        if g["ratio_best"] is not None:
            extra += " x_best=%.3f(%s)" % (g["ratio_best"], g["best_name"])
        if g["ratio_limit"] is not None:
            extra += " x_limit=%.3f" % g["ratio_limit"]
        if g["share"]:
            extra += " bytes=" + ",".join("%s:%.2f" % kv for kv in g["share"].items())
        # the shaper is part of the name: a history must never compare netem with linkemu figures
        out.append({"name": "%s/%s/%s/%s [%s]" % (g["exp"], g["scenario"], g["param"], g["contender"], g["shaper"]),
                    "unit": "s", "value": round(g["median"], 4), "range": "%.4f-%.4f" % (g["min"], g["max"]),
                    "extra": extra})
    return out


def tap_lines(checks, smoke):
    lines = ["TAP version 13", "1..%d" % len(checks)]
    for i, c in enumerate(checks, 1):
        ok = c["status"] != "fail"
        d = " # SKIP %s" % c["detail"] if c["status"] == "na" else " # %s" % c["detail"]
        if smoke and c["name"].startswith(("two ", "one ", "pages", "unshaped", "slow")) and not ok:
            d = " # TODO smoke mode: no timing assertion (%s)" % c["detail"]
        lines.append("%s %d - %s%s" % ("ok" if ok else "not ok", i, c["name"], d))
    return "\n".join(lines) + "\n"


def junit(checks, smoke):
    cases = []
    for c in checks:
        body = ""
        if c["status"] == "na":
            body = "<skipped message=%s/>" % quoteattr(c["detail"])
        elif c["status"] == "fail" and not (smoke and not c["name"].startswith(("libmhttp", "harness"))):
            body = "<failure message=%s/>" % quoteattr(c["detail"])
        cases.append('  <testcase classname="bench" name=%s>%s</testcase>' % (quoteattr(c["name"]), body))
    nf = sum(1 for x in cases if "<failure" in x)
    ns = sum(1 for x in cases if "<skipped" in x)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="libmhttp-bench" tests="%d" failures="%d" '
            'skipped="%d">\n%s\n</testsuite>\n' % (len(cases), nf, ns, "\n".join(cases)))


def correctness(rows, summ):
    """Checks that hold in every mode: libmhttp's bytes exact, the testbeds ran, MPTCP used its subflows."""
    ours = [r for r in rows if r.get("kind") == S.MHTTP]
    bad = [r for r in ours if r["status"] == "badbytes"]
    out = [S._v("libmhttp: every run's bytes are the origin's (sha256)", not bad and bool(ours),
                "%d runs, %d with wrong bytes" % (len(ours), len(bad)))]
    h = [r for r in rows if r["exp"] == "harness"]
    out.append(S._v("harness: every testbed ran", not h, "; ".join(r["why"] for r in h) or "ok"))
    mp = S.mptcp_proof(summ)
    if mp:
        out.append(mp)
    return out


def verify(out, expect_pngs):
    """Parses every output back; returns the problems found."""
    errs = []
    for f in OUTPUTS:
        if not os.path.exists(os.path.join(out, f)) or os.path.getsize(os.path.join(out, f)) == 0:
            errs.append("%s missing or empty" % f)
    if errs:
        return errs
    js = json.load(open(os.path.join(out, "results.json")))
    if not isinstance(js, list) or not all({"name", "unit", "value", "range", "extra"} <= set(e) and
                                           isinstance(e["value"], (int, float)) for e in js):
        errs.append("results.json is not a list of {name, unit, value, range, extra}")
    if not js:
        errs.append("results.json has no entries")
    tap = open(os.path.join(out, "results.tap")).read().splitlines()
    n = int(tap[1].split("..")[1]) if len(tap) > 1 and tap[1].startswith("1..") else -1
    tests = [t for t in tap if t.startswith(("ok ", "not ok "))]
    if n != len(tests) or n <= 0:
        errs.append("results.tap: plan 1..%d but %d test lines" % (n, len(tests)))
    suite = ET.parse(os.path.join(out, "junit.xml")).getroot()
    if suite.tag != "testsuite" or len(suite.findall("testcase")) != len(tests):
        errs.append("junit.xml: %d testcases, TAP has %d" % (len(suite.findall("testcase")), len(tests)))
    md = open(os.path.join(out, "report.md")).read()
    for p in expect_pngs:
        if "(%s)" % p not in md:
            errs.append("report.md does not show %s" % p)
        errs += plots.check_png(os.path.join(out, p))
    if "## Targets" not in md:
        errs.append("report.md has no targets section")
    return errs


def finish(out, strict=False):
    rows, meta = load(out)
    smoke = meta.get("mode") == "smoke"
    summ = S.add_references(S.summarize(rows))
    entries = sweep.grid(summ)
    checks = correctness(rows, summ) + S.verdicts(summ) + (sweep.verdicts(entries) if entries else [])
    pngs = plots.draw_all(summ, out)
    if entries:
        with open(os.path.join(out, "sweep.json"), "w") as fh:
            json.dump({"meta": meta, "cells": entries}, fh, indent=1)
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump(bench_json(summ), fh, indent=1)
    with open(os.path.join(out, "results.tap"), "w") as fh:
        fh.write(tap_lines(checks, smoke))
    with open(os.path.join(out, "junit.xml"), "w") as fh:
        fh.write(junit(checks, smoke))
    with open(os.path.join(out, "report.md"), "w") as fh:
        fh.write(md_report(summ, meta, checks, pngs))
    errs = verify(out, pngs)
    for e in errs:
        print("bench/run: OUTPUT BROKEN: %s" % e, file=sys.stderr)
    print("bench/run: %s" % "\n           ".join(os.path.join(out, f) for f in OUTPUTS + tuple(pngs)), file=sys.stderr)
    hard = [c for c in checks if c["status"] == "fail" and c["name"].startswith(("libmhttp", "harness"))]
    soft = [c for c in checks if c["status"] == "fail" and c not in hard]
    for c in hard + soft:
        what = "FAIL" if c in hard else "target missed" + (" (not asserted: smoke)" if smoke else "")
        print("bench/run: %s: %s (%s)" % (what, c["name"], c["detail"]), file=sys.stderr)
    return 1 if errs or hard or (strict and soft and not smoke) else 0
