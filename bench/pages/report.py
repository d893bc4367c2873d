#!/usr/bin/python3
"""Turns bench/pages/run.sh's per-run TSV into markdown: medians per scenario × page × client × config, speedups against the better single link, issue 7's targets flagged."""
import argparse
import statistics
import sys

SINGLE = ("wifi0", "lte0")
BROWSER = ("wget2", "curl")
SCEN_DESC = {
    "asym": "wifi0 10 ms/2 Mbit/s + lte0 100 ms/20 Mbit/s",
    "sym-low": "wifi0 10 ms/2 Mbit/s + lte0 10 ms/2 Mbit/s",
    "sym-high": "wifi0 10 ms/20 Mbit/s + lte0 10 ms/20 Mbit/s",
}
# Issue 7 "Done when": (scenario, page or None = every page, clients, minimum speedup vs the better single link)
TARGETS = [
    ("asym", "mixed", ("wget",), 1.3, "sequential mixed >= 1.3x"),
    ("asym", "many100k", BROWSER, 1.2, "browser-like many100k >= 1.2x"),
    ("sym-low", "many100k", BROWSER, 1.6, "browser-like many100k >= 1.6x"),
    ("sym-high", None, ("wget",) + BROWSER, 0.95, "every page/client >= 0.95x"),
]


def load(paths):
    rows = []
    for p in paths:
        for line in open(p):
            f = line.rstrip("\n").split("\t")
            if len(f) < 8:
                continue
            f += [""] * (10 - len(f))
            rows.append(dict(scen=f[0], page=f[1], client=f[2], cfg=f[3], run=f[4],
                             secs=float(f[5]) if f[5] else None, status=f[6], why=f[7],
                             stats=f[8], metrics=f[9]))
    return rows


def ordered(seq):
    out = []
    for x in seq:
        if x not in out:
            out.append(x)
    return out


def median_of(rows):
    """(median or None, cut, number of failed runs): a run cut at c seconds (-x) counts as
    slower than every ok run; when the median lands on one, it is returned as c with cut=True
    (the truth is "> c"). Failed, timed-out and wrong-byte runs are left out and counted."""
    vals = sorted([(r["secs"], 0) for r in rows if r["status"] == "ok"] +
                  [(float("inf"), r["secs"]) for r in rows if r["status"] == "cut"])
    bad = sum(1 for r in rows if r["status"] not in ("ok", "skip", "cut"))
    if not vals:
        return None, False, bad
    n = len(vals)
    mid = vals[(n - 1) // 2: n // 2 + 1]
    if any(v[0] == float("inf") for v in mid):
        return min(v[1] for v in vals if v[0] == float("inf")), True, bad
    return statistics.median(v[0] for v in mid), False, bad


def iface_share(rows):
    """median fraction of MHTTP_STATS bytes per interface over the ok runs"""
    per = {}
    for r in rows:
        if r["status"] != "ok" or not r["stats"] or r["stats"] == "-":
            continue
        kv = dict(x.split("=", 1) for x in r["stats"].split(";") if "=" in x)
        by = {k: int(v) for k, v in kv.items() if k != "objs"}
        tot = sum(by.values())
        if tot:
            for k, v in by.items():
                per.setdefault(k, []).append(v / tot)
    return {k: statistics.median(v) for k, v in per.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("tsv", nargs="+")
    ap.add_argument("--header", default="")
    a = ap.parse_args()
    rows = load(a.tsv)
    if not rows:
        print("no runs recorded", file=sys.stderr)
        return 1
    out = ["# Page loads (bench/pages/run.sh)", ""]
    if a.header:
        out += [a.header, ""]
    out += ["Cells: median wall time in seconds of the ok runs (every object's sha256 checked); "
            "`(k bad)` = runs that failed, timed out or had wrong bytes (listed below); `> c` = the median run "
            "was cut at c s (run.sh -x: c = factor × the best single-link run so far), so its speedup is `< x`; "
            "`×` = better single link / config (> 1 is faster).", ""]
    shim_rows = [r for r in rows if r["metrics"]]
    if shim_rows and all(r["metrics"] == "metrics=0" for r in shim_rows):
        out += ["**The engine wrote no MHTTP_METRICS lines: it does not implement MHTTP_POLICY yet, so "
                "every policy column is the current shim (all eligible objects split over all interfaces).**", ""]
    flags = []
    speed = {}
    for scen in ordered(r["scen"] for r in rows):
        srows = [r for r in rows if r["scen"] == scen]
        cfgs = ordered(r["cfg"] for r in srows)
        singles = [c for c in cfgs if c in SINGLE]
        shims = [c for c in cfgs if c not in SINGLE]
        nruns = len(ordered(r["run"] for r in srows))
        out += ["## %s (%s), %d run(s)" % (scen, SCEN_DESC.get(scen, "see its .conf"), nruns), ""]
        head = ["page", "client"] + cfgs + ["best single"] + ["%s ×" % c for c in shims]
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        share_rows = []
        for page in ordered(r["page"] for r in srows):
            for cl in ordered(r["client"] for r in srows):
                cell = {}
                med = {}
                share = {}
                for c in cfgs:
                    rr = [r for r in srows if r["page"] == page and r["client"] == cl and r["cfg"] == c]
                    m, cut, bad = median_of(rr)
                    med[c] = (m, cut) if m is not None else None
                    if all(r["status"] == "skip" for r in rr) and rr:
                        cell[c] = "–"
                    else:
                        cell[c] = (("> %.2f" if cut else "%.3f") % m if m is not None else "FAIL") + (
                            " (%d bad)" % bad if bad else "")
                    if c in shims:
                        share[c] = iface_share(rr)
                best = [(med[c][0], c) for c in singles if med[c] is not None and not med[c][1]]
                bs = min(best) if best else None
                line = [page, cl] + [cell[c] for c in cfgs]
                line.append("%.3f (%s)" % bs if bs else "n/a")
                for c in shims:
                    if bs and med[c]:
                        x = bs[0] / med[c][0]
                        speed[(scen, page, cl, c)] = x
                        line.append(("< %.2f" if med[c][1] else "%.2f") % x)
                    else:
                        line.append("n/a")
                out.append("| " + " | ".join(line) + " |")
                if any(share.values()):
                    share_rows.append((page, cl, share))
        if share_rows:
            ifs = sorted({k for _, _, sh in share_rows for v in sh.values() for k in v})
            out += ["", "Bytes per interface under the shim, %% %s (median share of the MHTTP_STATS bytes: "
                    "probed/split objects only):" % "/".join(ifs), "",
                    "| page | client | " + " | ".join(shims) + " |", "|" + "---|" * (2 + len(shims))]
            for page, cl, sh in share_rows:
                out.append("| %s | %s | %s |" % (page, cl, " | ".join(
                    "/".join("%.0f" % (100 * sh[c].get(k, 0)) for k in ifs) if sh.get(c) else "–" for c in shims)))
        out.append("")
        for (ts, tpage, tcl, tmin, tname) in TARGETS:
            if ts != scen:
                continue
            for c in shims:
                xs = [(v, k) for k, v in speed.items()
                      if k[0] == scen and k[3] == c and (tpage is None or k[1] == tpage) and k[2] in tcl]
                if not xs:
                    flags.append("| %s | %s | %s | n/a (not measured) |" % (scen, tname, c))
                    continue
                worst = min(xs)
                ok = worst[0] >= tmin
                flags.append("| %s | %s | %s | %s (worst %.2f × %s/%s) |" % (
                    scen, tname, c, "PASS" if ok else "FAIL", worst[0], worst[1][1], worst[1][2]))
    if flags:
        out += ["## Issue 7 targets (speedup vs the better single link)", "",
                "| scenario | target | config | result |", "|---|---|---|---|"] + flags + [""]
    bad = [r for r in rows if r["status"] not in ("ok", "skip", "cut")]
    if bad:
        out += ["## Runs that were not ok", ""]
        out += ["- %s %s %s %s run %s: %s %s" % (r["scen"], r["page"], r["client"], r["cfg"], r["run"],
                                                  r["status"], r["why"]) for r in bad]
        out.append("")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
