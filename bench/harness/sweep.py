"""The sweep experiment (issue 31): its cells (bottleneck queue x random loss x jitter on two link pairs), each cell's testbed settings, the grid of results, the worst cells and the targets' verdicts (pure: no I/O; test_sweep.py tables it)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "testbed"))
import scenario  # noqa: E402
import stats as S  # noqa: E402

MiB = 1 << 20
# The demo pair (10 ms/20 Mbit/s + 50 ms/50 Mbit/s) and two equal links (10 ms/20 Mbit/s each).
PAIRS = ("demo", "sym-high")
# Bottleneck (router -> client) queue: multiples of each link's own BDP (rate x base RTT), and a
# bloated queue holding 500 ms at the link's rate.
QUEUES = (0.5, 1, 2, 8, "500ms")
LOSSES = (0, 0.1, 1)  # random loss, percent, both directions
JITTERS = (0, 5)  # uniform +-ms on each direction's delay (never reordered)
SIZES = (MiB, 4 * MiB, 32 * MiB)
OURS = "wget+eaf"
PEERS = ("aria2", "mptcp")
CONTENDERS = [OURS, "wget@wifi0", "wget@lte0", "aria2", "mptcp"]
# Each cell's own metrics store is warmed by these downloads (contender, size) before it is measured.
WARMUP = ((OURS, MiB), (OURS, 4 * MiB))
# A queue shorter than a few frames is not a queue any link has; 0.5 BDP of 10 ms/20 Mbit/s is 12.5 kB.
MIN_QUEUE = 4 * 1514


def cells(pairs=PAIRS, queues=QUEUES, losses=LOSSES, jitters=JITTERS):
    return [dict(pair=p, queue=q, loss=l, jitter=j) for p in pairs for q in queues for l in losses for j in jitters]


def queue_name(q):
    return q if isinstance(q, str) else "%gbdp" % q


def label(cell, shaper="linkemu"):
    """The cell's name in rows and the report: "demo q=0.5bdp loss=0.1% jitter=5ms" (+ the shaper
    when it is not linkemu, so the two shapers' cells never merge)."""
    s = "%s q=%s loss=%g%% jitter=%gms" % (cell["pair"], queue_name(cell["queue"]), cell["loss"], cell["jitter"])
    return s if shaper == "linkemu" else "%s [%s]" % (s, shaper)


def queue_bytes(q, rate_bps, rtt_ms):
    """Drop-tail bytes of queue setting q on a link of rate_bps and base RTT rtt_ms."""
    secs = float(q[:-2]) / 1000 if isinstance(q, str) else q * rtt_ms / 1000
    return max(MIN_QUEUE, int(rate_bps * secs / 8))


def testbed_sets(cell, sc):
    """(`--set` overrides for `testbed run`, {iface: queue bytes}) of a cell on scenario sc (a
    scenario.Scenario of the cell's pair)."""
    sets, qs = [], {}
    for ifc in sc.ifaces:
        link = sc.links[ifc]
        qs[ifc] = queue_bytes(cell["queue"], link.rate_down, link.rtt)
        sets += ["%s.queue_down=%d" % (ifc, qs[ifc]), "%s.loss=%g%%" % (ifc, cell["loss"]),
                 "%s.jitter=%g" % (ifc, cell["jitter"])]
    return sets, qs


def load_pair(pair):
    return scenario.load(pair)


def matches(cell, filt):
    """Whether a cell passes a --cells filter: "pair=demo,loss=0,queue=1" (a key may repeat: any of its values)."""
    want = {}
    for kv in filter(None, (filt or "").split(",")):
        k, _, v = kv.partition("=")
        want.setdefault(k.strip(), set()).add(v.strip())
    for k, vs in want.items():
        have = queue_name(cell[k]) if k == "queue" else cell.get(k)
        if not any(str(have) == v or (k == "queue" and have == v + "bdp") or _num_eq(have, v) for v in vs):
            return False
    return True


def _num_eq(a, b):
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return False


def timeout_slack(cell):
    """How many times the slower link's transfer time a run may take before it is killed: random loss
    holds a single TCP flow far below the link's rate (1 % on 50 ms: about 3 Mbit/s)."""
    return 4 if cell["loss"] == 0 else 8 if cell["loss"] < 1 else 40


def grid(summ):
    """One entry per (cell, shaper, size): every contender's median/min/max/runs, the limit, the best
    peer (the fastest contender that is not libmhttp) and libmhttp's ratios to it and to the limit."""
    by = {}
    for g in summ:
        if g["exp"] != "sweep" or not g["rows"][0].get("cell"):
            continue
        key = (g["scenario"], g["param"])
        e = by.setdefault(key, dict(g["rows"][0]["cell"], label=g["scenario"], shaper=g["shaper"], size=g["param"],
                                    limit=g["limit"], contenders={}))
        e["contenders"][g["contender"]] = {"median": g["median"], "min": g["min"], "max": g["max"], "runs": g["n"],
                                           "failed": len(g["bad"]), "skip": g["skip"]}
    for e in by.values():
        others = [(v["median"], k) for k, v in e["contenders"].items() if k != OURS and v["median"] is not None]
        ours = e["contenders"].get(OURS, {}).get("median")
        e["best_peer"] = min(others)[1] if others else None
        e["ratio_best_peer"] = S.ratio(ours, min(others)[0]) if others else None
        e["ratio_limit"] = S.ratio(ours, e["limit"])
    return list(by.values())


def worst(entries, key):
    """The entry with the largest value of `key` (None when no entry has one)."""
    have = [e for e in entries if e.get(key) is not None]
    return max(have, key=lambda e: e[key]) if have else None


def _peer_best(e):
    ps = [e["contenders"][p]["median"] for p in PEERS if e["contenders"].get(p, {}).get("median") is not None]
    return min(ps) if ps else None


def _ours(e):
    return e["contenders"].get(OURS, {}).get("median")


def _big_queue(q):
    return isinstance(q, str) or q >= 1


def verdicts(entries):
    """Issue 31's targets over the grid, each pass / fail / na with the worst cell behind it."""
    out = []
    for name, pick, ok in (
            ("sweep: %s ahead of aria2 and MPTCP at 4 and 32 MiB in every cell" % OURS,
             lambda e: e["size"] >= 4 * MiB, lambda o, p: o < p),
            ("sweep: %s not behind aria2 and MPTCP at 1 MiB in any cell" % OURS,
             lambda e: e["size"] < 4 * MiB, lambda o, p: o <= p)):
        pairs = [(e, _ours(e), _peer_best(e)) for e in entries if pick(e)]
        pairs = [x for x in pairs if x[1] is not None and x[2] is not None]
        if not pairs:
            out.append(S._na(name))
            continue
        w = max(pairs, key=lambda x: x[1] / x[2])
        bad = sum(1 for x in pairs if not ok(x[1], x[2]))
        out.append(S._v(name, bad == 0, "%d of %d cells behind; worst %s %s: %.3f s vs %.3f s" % (
            bad, len(pairs), w[0]["label"], _size(w[0]["size"]), w[1], w[2])))
    name = "sweep: %s at 32 MiB <= 1.06 x limit where loss <= 0.1 %% and queue >= 1 BDP" % OURS
    big = [e for e in entries if e["size"] >= 32 * MiB and e["loss"] <= 0.1 and _big_queue(e["queue"]) and
           e["ratio_limit"] is not None]
    w = worst(big, "ratio_limit")
    out.append(S._v(name, w["ratio_limit"] <= 1.06, "worst %s: %.3f x (%.3f s)" % (
        w["label"], w["ratio_limit"], _ours(w))) if w else S._na(name))
    for size, bound in ((MiB, 0.33), (4 * MiB, 0.72)):
        name = "sweep: %s on demo, %s, median over the queue sizes <= %.2f s (no loss, no jitter)" % (
            OURS, _size(size), bound)
        shaper = "linkemu" if any(e["shaper"] == "linkemu" for e in entries) else entries[0]["shaper"]
        xs = [_ours(e) for e in entries if e["pair"] == "demo" and e["size"] == size and e["loss"] == 0 and
              e["jitter"] == 0 and e["shaper"] == shaper and _ours(e) is not None]
        m = S.median(xs)
        out.append(S._v(name, m <= bound, "%.3f s over %d queue sizes" % (m, len(xs))) if xs else S._na(name))
    return out


def _size(n):
    return "%d MiB" % (n // MiB)
