"""Pure arithmetic of the benchmark report: medians and ranges of the runs, the physical limit, ratios, and the stated targets' verdicts (no I/O; test_stats.py tables it)."""
import statistics

# TCP payload per L3 byte on a 1500-byte MTU with timestamps (MSS 1448): what a shaped link's
# rate can carry as file bytes (linkemu and netem count L3 bytes; see bench/linkemu/README.md).
PAYLOAD = 1448 / 1500
SINGLE, MHTTP, PEER, MPTCP = "single", "mhttp", "peer", "mptcp"
SMALL = 64 * 1024
LARGE = 32 * 1024 * 1024


def median(xs):
    return statistics.median(xs) if xs else None


def limit_s(size, rates_bps):
    """Seconds the object's bytes need at the sum of the links' rates as TCP payload (None: a link
    is unshaped)."""
    if not rates_bps or any(r <= 0 for r in rates_bps):
        return None
    return size * 8 / (sum(rates_bps) * PAYLOAD)


def ratio(a, b):
    return a / b if a is not None and b else None


def summarize(rows):
    """Groups the raw rows by (exp, scenario, param, contender): median, min, max of the ok runs,
    how many runs were not ok and why, median bytes share per interface. Keeps first-seen order."""
    groups = {}
    for r in rows:
        k = (r["exp"], r["scenario"], r["param"], r["contender"])
        g = groups.setdefault(k, {"exp": k[0], "scenario": k[1], "param": k[2], "contender": k[3],
                                  "kind": r.get("kind", ""), "secs": [], "bad": [], "skip": None,
                                  "rows": [], "shaper": r.get("shaper"), "link": r.get("link") or {}})
        g["rows"].append(r)
        if r["status"] == "ok":
            g["secs"].append(r["secs"])
        elif r["status"] == "skip":
            g["skip"] = r.get("why") or "skipped"
        else:
            g["bad"].append("%s: %s" % (r["status"], r.get("why", "")))
    for g in groups.values():
        s = g["secs"]
        g["median"] = median(s)
        g["min"] = min(s) if s else None
        g["max"] = max(s) if s else None
        g["n"] = len(s)
        g["share"] = iface_share(g["rows"])
    return list(groups.values())


def iface_share(rows):
    """Median fraction of the received bytes per interface over the ok runs."""
    per = {}
    for r in rows:
        by = r.get("iface_bytes") or {}
        tot = sum(by.values())
        if r["status"] == "ok" and tot:
            for k, v in by.items():
                per.setdefault(k, []).append(v / tot)
    return {k: median(v) for k, v in sorted(per.items())}


def add_references(summ):
    """Adds, per (exp, scenario, param) with single-link runs, `best` (the fastest single-link
    contender's median) and `limit` (physical limit) to every group, and a `ratio_best` /
    `ratio_limit` (time over reference: < 1 is faster than it)."""
    cells = {}
    for g in summ:
        cells.setdefault((g["exp"], g["scenario"], g["param"]), []).append(g)
    for gs in cells.values():
        singles = [g for g in gs if g["kind"] == SINGLE and g["median"] is not None]
        best = min(singles, key=lambda g: g["median"]) if singles else None
        for g in gs:
            g["best"] = best["median"] if best else None
            g["best_name"] = best["contender"] if best else None
            size = g["param"] if isinstance(g["param"], int) else None
            g["limit"] = limit_s(size, g["link"].get("rates_down")) if size else None
            g["ratio_best"] = ratio(g["median"], g["best"])
            g["ratio_limit"] = ratio(g["median"], g["limit"])
    return summ


def find(summ, exp, contender, scenario=None, param=None):
    return [g for g in summ if g["exp"] == exp and g["contender"] == contender and
            (scenario is None or g["scenario"] == scenario) and (param is None or g["param"] == param)]


def _v(name, ok, detail):
    return {"name": name, "status": "pass" if ok else "fail", "detail": detail}


def _na(name, why="not measured in this run"):
    return {"name": name, "status": "na", "detail": why}


def verdicts(summ, ours="wget+eaf"):
    """The DESIGN.md performance targets, each pass / fail / na with the numbers behind it."""
    out = []
    two = [g for g in find(summ, "sizes", ours) if len(g["link"].get("rates_down") or []) >= 2]
    name = "two links, objects >= 32 MiB: %s <= 1.05 x limit + setup (2 x max RTT)" % ours
    big = [g for g in two if g["param"] >= LARGE and g["median"] is not None and g["limit"]]
    if big:
        worst = max(big, key=lambda g: g["median"] / (1.05 * g["limit"] + _setup(g)))
        bound = 1.05 * worst["limit"] + _setup(worst)
        out.append(_v(name, worst["median"] <= bound, "%s %d: %.3f s, bound %.3f s" % (
            worst["scenario"], worst["param"], worst["median"], bound)))
    else:
        out.append(_na(name))
    for peer in ("aria2", MPTCP):
        out.append(_faster(summ, "sizes", two, peer, "two links, objects >= 4 MiB: %s faster than %s" % (ours, peer)))
    out.append(_ratio_target(summ, "sizes", ours, lambda g: g["param"] <= SMALL and len(g["link"].get(
        "rates_down") or []) >= 2, 1.05,
        "two links, objects <= 64 KiB: %s <= 1.05 x plain wget on the best link" % ours))
    out.append(_ratio_target(summ, "overhead", "wget+shim", lambda g: g["param"] > SMALL, 1.02,
                             "one link, objects > 64 KiB: wget+shim <= 1.02 x plain wget"))
    out.append(_ratio_target(summ, "overhead", "wget+shim", lambda g: g["param"] <= SMALL, 1.05,
                             "one link, objects <= 64 KiB: wget+shim <= 1.05 x plain wget"))
    name = "pages on asym (mixed, wget): eaf >= 1.3 x faster than the best single link"
    g = [g for g in find(summ, "pages", "eaf", "asym", "mixed/wget") if g["ratio_best"]]
    out.append(_v(name, 1 / g[0]["ratio_best"] >= 1.3, "%.2f x" % (1 / g[0]["ratio_best"])) if g else _na(name))
    out += https_verdicts(summ) + loopback_verdicts(summ) + memory_verdicts(summ)
    return out


def https_verdicts(summ):
    """Issue 18's HTTPS targets: the mhttp command within 1.10 x the limit at >= 32 MiB, and
    faster than aria2 over HTTPS at >= 4 MiB (one URL each, and with replica B as a mirror)."""
    name = "HTTPS, two links, objects >= 32 MiB: mhttp <= 1.10 x limit"
    big = [g for g in find(summ, "https", "mhttp") if g["param"] >= LARGE and g["median"] is not None and g["limit"]]
    if big:
        worst = max(big, key=lambda g: g["ratio_limit"])
        out = [_v(name, worst["ratio_limit"] <= 1.10, "worst %s %d: %.3f x (%.3f s, limit %.3f s)" % (
            worst["scenario"], worst["param"], worst["ratio_limit"], worst["median"], worst["limit"]))]
    else:
        out = [_na(name)]
    for ours, peer in (("mhttp", "aria2-tls"), ("mhttp-mirrors", "aria2-tls-mirrors")):
        out.append(_faster(summ, "https", find(summ, "https", ours), peer,
                           "HTTPS, two links, objects >= 4 MiB: %s faster than %s" % (ours, peer)))
    return out


def _faster(summ, exp, ours, peer, name):
    """Target `name`: every group of `ours` (summary groups of one contender) of 4 MiB or more is
    faster than `peer` on the same scenario and size."""
    pairs = [(g, find(summ, exp, peer, g["scenario"], g["param"])) for g in ours
             if g["param"] >= 4 * 1024 * 1024 and g["median"] is not None]
    pairs = [(g, p[0]) for g, p in pairs if p and p[0]["median"] is not None]
    if not pairs:
        return _na(name)
    worst = max(pairs, key=lambda gp: gp[0]["median"] / gp[1]["median"])
    return _v(name, all(g["median"] < p["median"] for g, p in pairs), "worst %s %d: %.3f s vs %.3f s" % (
        worst[0]["scenario"], worst[0]["param"], worst[0]["median"], worst[1]["median"]))


def _setup(g):
    return 2 * max(g["link"].get("rtts_ms") or [0]) / 1000


def _ratio_target(summ, exp, contender, pick, bound, name, client="wget@"):
    """`contender`'s median over the fastest single-link run of `client` (the targets speak of
    plain wget; curl may be the report's best single link) in every picked cell, worst first."""
    cells = []
    for g in find(summ, exp, contender):
        refs = [r for r in summ if (r["exp"], r["scenario"], r["param"]) == (exp, g["scenario"], g["param"]) and
                r["kind"] == SINGLE and r["contender"].startswith(client) and r["median"] is not None]
        if pick(g) and refs and g["median"] is not None:
            ref = min(refs, key=lambda r: r["median"])
            cells.append((g["median"] / ref["median"], g, ref))
    if not cells:
        return _na(name)
    x, g, ref = max(cells, key=lambda c: c[0])
    return _v(name, x <= bound, "worst %s %s: %.3f x (%.3f s vs %.3f s %s)" % (
        g["scenario"], g["param"], x, g["median"], ref["median"], ref["contender"]))


def loopback_verdicts(summ):
    plain, shim = find(summ, "loopback", "wget"), find(summ, "loopback", "wget+shim")
    names = ("unshaped loopback: wget+shim throughput >= 0.9 x plain wget",
             "unshaped loopback: wget+shim CPU time <= 1.2 x plain wget")
    if not (plain and shim and plain[0]["median"] and shim[0]["median"]):
        return [_na(n) for n in names]
    p, s = plain[0], shim[0]
    thr = p["median"] / s["median"]
    cpu = ratio(median([r["cpu_s"] for r in s["rows"] if r["status"] == "ok"]),
                median([r["cpu_s"] for r in p["rows"] if r["status"] == "ok"]))
    return [_v(names[0], thr >= 0.9, "%.3f x" % thr),
            _v(names[1], cpu is not None and cpu <= 1.2, "%.3f x" % cpu) if cpu else _na(names[1], "no CPU times")]


def rss_growth_kib(summ):
    """Median max RSS of the slow reader under the shim minus without it (KiB), or None."""
    plain, shim = find(summ, "memory", "wget@slow"), find(summ, "memory", "wget+eaf@slow")
    if not (plain and shim):
        return None
    m = [median([r["maxrss_kib"] for r in g[0]["rows"] if r["status"] == "ok" and r.get("maxrss_kib")])
         for g in (plain, shim)]
    return m[1] - m[0] if None not in m else None


def memory_verdicts(summ):
    name = "slow reader: max RSS growth under the shim <= 32 MiB"
    d = rss_growth_kib(summ)
    return [_v(name, d <= 32 * 1024, "%.1f MiB" % (d / 1024)) if d is not None else _na(name)]


def mptcp_proof(summ, min_share=0.05):
    """Harness check: every MPTCP run of >= 1 MiB received >= min_share of its bytes on each
    interface (both subflows carried data). None when MPTCP did not run."""
    gs = [g for g in summ if g["kind"] == MPTCP and g["exp"] == "sizes" and g["param"] >= 1 << 20]
    runs = [r for g in gs for r in g["rows"] if r["status"] == "ok"]
    if not runs:
        return None
    low = [r for r in runs if len(r.get("iface_bytes") or {}) < 2 or
           min(r["iface_bytes"].values()) < min_share * sum(r["iface_bytes"].values())]
    return _v("harness: every MPTCP run >= 1 MiB carried >= %d %% of its bytes on each interface" % (100 * min_share),
              not low, "%d of %d runs" % (len(runs) - len(low), len(runs)))
