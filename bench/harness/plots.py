"""The report's PNG plots (Debian's python3-matplotlib, Agg backend): times against the physical limit per object size, overhead on one link, initial chunk sizes, chunk sizes over time, failover throughput per interface, page-load speedup heat map, the sweep's heat maps."""
import re

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

import stats as S  # noqa: E402
import sweep  # noqa: E402
from contenders import ALL  # noqa: E402

STYLE = {S.MHTTP: dict(lw=2.4, ls="-"), S.SINGLE: dict(lw=1.2, ls="--"), S.PEER: dict(lw=1.4, ls=":"),
         S.MPTCP: dict(lw=2.0, ls="-.")}


def size_label(n):
    return "%d MiB" % (n >> 20) if n >= 1 << 20 else "%d KiB" % (n >> 10)


def _save(fig, out, name, pngs):
    fig.tight_layout()
    fig.savefig("%s/%s" % (out, name), dpi=110)
    plt.close(fig)
    pngs.append(name)


def sizes_plot(summ, scen, out, pngs):
    gs = [g for g in summ if g["exp"] == "sizes" and g["scenario"] == scen and g["median"] is not None]
    sizes = sorted({g["param"] for g in gs})
    if not gs:
        return
    limited = all(g["limit"] for g in gs)
    fig, ax = plt.subplots(figsize=(9, 5.2))
    names = list(dict.fromkeys(g["contender"] for g in gs))
    colors = plt.get_cmap("tab20").colors  # 13 contenders: the default cycle repeats after 10
    for n, name in enumerate(names):
        k = ALL.index(name) if name in ALL else len(ALL) + n  # a contender keeps its colour in every run
        pts = sorted((g["param"], g) for g in gs if g["contender"] == name)
        x = [sizes.index(p) for p, _ in pts]
        ref = [(g["limit"] if limited else 1) for _, g in pts]
        y = [g["median"] / r for (_, g), r in zip(pts, ref)]
        lo = [yy - g["min"] / r for yy, (_, g), r in zip(y, pts, ref)]
        hi = [g["max"] / r - yy for yy, (_, g), r in zip(y, pts, ref)]
        ax.errorbar(x, y, yerr=[lo, hi], marker="o", ms=4, capsize=3, label=name, color=colors[k % len(colors)],
                    **STYLE.get(pts[0][1]["kind"], {}))
    if limited:
        ax.axhline(1, color="black", lw=0.8)
        ax.set_ylabel("time / physical limit (1 = size / Σ rates)")
    else:
        ax.set_ylabel("seconds")
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: "%g" % v if str(v)[0] in "235" else ""))
    ax.set_xticks(range(len(sizes)), [size_label(s) for s in sizes])
    ax.set_xlabel("object size")
    ax.set_title("One object on %s (%s): median, bars = min–max" % (scen, gs[0]["shaper"]))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    _save(fig, out, "sizes-%s.png" % scen, pngs)


def overhead_plot(summ, out, pngs):
    """Fig. 9: the shim's time over plain wget's on one link, per size, against the targets."""
    gs = sorted([g for g in summ if g["exp"] == "overhead" and g["kind"] == S.MHTTP and g["ratio_best"]],
                key=lambda g: g["param"])
    if not gs:
        return
    fig, ax = plt.subplots(figsize=(8, 4.5))
    x = range(len(gs))
    bars = ax.bar(x, [g["ratio_best"] for g in gs], 0.6,
                  color=["C1" if g["ratio_best"] > _bound(g) else "C2" for g in gs])
    for b, g in zip(bars, gs):
        ax.text(b.get_x() + b.get_width() / 2, b.get_height(), "%.3f" % g["ratio_best"], ha="center", va="bottom")
    ax.axhline(1.0, color="black", lw=0.8)
    ax.axhline(1.02, color="C3", ls="--", lw=1, label="target > 64 KiB: 1.02")
    ax.axhline(1.05, color="C3", ls=":", lw=1, label="target <= 64 KiB: 1.05")
    ax.set_xticks(list(x), [size_label(g["param"]) for g in gs])
    ax.set_ylim(0.9, max(1.1, max(g["ratio_best"] for g in gs) * 1.05))
    ax.set_ylabel("%s / %s (median times)" % (gs[0]["contender"], gs[0]["best_name"]))
    ax.set_title("Overhead on one link (%s, %s): green meets its target" % (gs[0]["scenario"], gs[0]["shaper"]))
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(True, axis="y", alpha=0.3)
    _save(fig, out, "overhead.png", pngs)


def _bound(g):
    return 1.05 if g["param"] <= S.SMALL else 1.02


def initchunk_plot(summ, out, pngs):
    """Fig. 12: median time (bars: min–max) per initial chunk size, one group per object size."""
    gs = [g for g in summ if g["exp"] == "initchunk" and g["median"] is not None]
    if not gs:
        return
    params = sorted({g["param"] for g in gs})
    names = list(dict.fromkeys(g["contender"] for g in gs))
    fig, ax = plt.subplots(figsize=(8, 4.5))
    w = 0.8 / len(names)
    for i, name in enumerate(names):
        for j, p in enumerate(params):
            for g in [g for g in gs if g["contender"] == name and g["param"] == p]:
                ax.bar(j + i * w, g["median"], w, yerr=[[g["median"] - g["min"]], [g["max"] - g["median"]]],
                       capsize=3, color="C%d" % i, label=name.partition(":")[2] if j == 0 else None)
    ax.set_xticks([j + w * (len(names) - 1) / 2 for j in range(len(params))], [size_label(p) for p in params])
    ax.set_ylabel("seconds (median, bars = min–max)")
    ax.set_title("Initial chunk size, %s under the shim (%s, %s)" % (
        names[0].partition("+")[0], gs[0]["scenario"], gs[0]["shaper"]))
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.grid(True, axis="y", alpha=0.3)
    _save(fig, out, "initchunk.png", pngs)


def chunks_plot(summ, out, pngs):
    rows = [r for g in summ if g["exp"] == "chunks-trace" for r in g["rows"] if r.get("chunks")]
    if not rows:
        return
    r = rows[0]
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for i, ifc in enumerate(r["link"]["ifaces"]):  # the same colour per interface as failover.png
        pts = [c for c in r["chunks"] if c[1] == ifc]
        ax.scatter([c[0] / 1000 for c in pts], [c[3] / 1024 for c in pts], s=18, color="C%d" % i,
                   label="%s (%d ranges)" % (ifc, len(pts)))
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
    ax.set_xlabel("seconds since the probe")
    ax.set_ylabel("range asked (KiB)")
    ax.set_title("Chunk sizes of one %s download by %s on %s (%s)" % (size_label(r["param"]), r["contender"],
                                                                      r["scenario"], r["shaper"]))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    _save(fig, out, "chunks.png", pngs)


def failover_plot(summ, out, pngs):
    rows = [r for g in summ if g["exp"] == "failover-trace" for r in g["rows"] if r.get("samples")]
    if not rows:
        return
    fig, axes = plt.subplots(len(rows), 1, figsize=(9, 3.6 * len(rows)), squeeze=False)
    for ax, r in zip(axes[:, 0], rows):
        s = r["samples"]
        for k, ifc in enumerate(r["columns"][1:], 1):
            t = [(s[i][0] + s[i - 1][0]) / 2 for i in range(1, len(s))]
            mbit = [(s[i][k] - s[i - 1][k]) * 8 / 1e6 / max(s[i][0] - s[i - 1][0], 1e-3) for i in range(1, len(s))]
            ax.plot(t, mbit, label=ifc, color="C%d" % (k - 1))
            rate = r["link"]["rates_down"][k - 1] / 1e6
            ax.axhline(rate * S.PAYLOAD, color="C%d" % (k - 1), ls=":", lw=0.8)
        if r.get("cut_s") is not None:
            done = r.get("cut_done_s") or r["cut_s"]
            ax.axvspan(r["cut_s"], done, color="red", alpha=0.15,
                       label="`testbed set %s down` running" % r["cut_iface"])
            ax.axvline(done, color="red", lw=1.2, label="%s down" % r["cut_iface"])
        ax.set_ylabel("Mbit/s received")
        ax.set_title("%s, %s, %s: %s (%s)" % (r["contender"], size_label(r["param"]), r["scenario"],
                                              "%.2f s" % r["secs"] if r.get("secs") else r["status"], r["shaper"]))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="center right")  # below the fast link, above the slow one
    axes[-1, 0].set_xlabel("seconds (dotted: each link's rate as TCP payload)")
    _save(fig, out, "failover.png", pngs)


def heatmap_plot(summ, out, pngs):
    cells, what = {}, None
    for g in summ:
        m = re.fullmatch(r"ians-(\d+)-(\d+)-(\d+)-(\d+)", g["scenario"])
        if g["exp"] == "pages" and m and g["contender"] == "eaf" and g["ratio_best"] and what in (None, g["param"]):
            what = g["param"]
            cells[("%s ms/%s Mbit" % m.groups()[:2], "%s ms/%s Mbit" % m.groups()[2:])] = 1 / g["ratio_best"]
    if not cells:
        return
    key = lambda s: (int(s.split()[0]), int(s.split("/")[1].split()[0]))  # noqa: E731
    ys = sorted({k[0] for k in cells}, key=key)
    xs = sorted({k[1] for k in cells}, key=key)
    grid = [[cells.get((y, x), float("nan")) for x in xs] for y in ys]
    fig, ax = plt.subplots(figsize=(max(6.5, 2.5 + 0.75 * len(xs)), max(4.5, 2 + 0.5 * len(ys))))
    im = ax.imshow(grid, cmap="RdYlGn", norm=TwoSlopeNorm(vmin=0.5, vcenter=1.0, vmax=2.0))  # 1 = no gain: yellow
    for i in range(len(ys)):
        for j in range(len(xs)):
            if grid[i][j] == grid[i][j]:
                ax.text(j, i, "%.2f" % grid[i][j], ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(xs)), xs, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(len(ys)), ys, fontsize=8)
    ax.set_xlabel("lte0 (RTT / rate)")
    ax.set_ylabel("wifi0 (RTT / rate)")
    ax.set_title("Page load (%s): eaf's speedup over the\nbest single link (IANS grid, %s)" % (
        what, next(g["shaper"] for g in summ if g["exp"] == "pages")), fontsize=10)
    fig.colorbar(im, ax=ax, shrink=0.8)
    _save(fig, out, "pages-heatmap.png", pngs)


def _sweep_panel(ax, es, key, title, norm):
    ys = [q for q in sweep.QUEUES if any(e["queue"] == q for e in es)]
    xs = [(lo, j) for lo in sweep.LOSSES for j in sweep.JITTERS
          if any(e["loss"] == lo and e["jitter"] == j for e in es)]
    val = {(e["queue"], e["loss"], e["jitter"]): e[key] for e in es}
    grid = [[val.get((q, lo, j)) or float("nan") for lo, j in xs] for q in ys]
    im = ax.imshow(grid, cmap="RdYlGn_r", norm=norm)  # 1 = even: yellow; green below (faster)
    for i in range(len(ys)):
        for j in range(len(xs)):
            if grid[i][j] == grid[i][j]:
                ax.text(j, i, "%.2f" % grid[i][j], ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(xs)), ["%g%%/%gms" % x for x in xs], rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(ys)), [sweep.queue_name(q) for q in ys], fontsize=8)
    ax.set_xlabel("loss / jitter", fontsize=8)
    ax.set_ylabel("bottleneck queue", fontsize=8)
    ax.set_title(title, fontsize=9)
    return im


def sweep_plots(entries, out, pngs):
    """Per object size (and shaper): libmhttp's time over the best other contender's and over the
    physical limit, one panel per link pair."""
    for shaper in dict.fromkeys(e["shaper"] for e in entries):
        for size in sorted({e["size"] for e in entries if e["shaper"] == shaper}):
            es = [e for e in entries if e["shaper"] == shaper and e["size"] == size]
            pairs = list(dict.fromkeys(e["pair"] for e in es))
            fig, axes = plt.subplots(2, len(pairs), figsize=(4.6 * len(pairs) + 1, 8.4), squeeze=False)
            for c, pair in enumerate(pairs):
                pe = [e for e in es if e["pair"] == pair]
                for r, (key, what, norm) in enumerate((
                        ("ratio_best_peer", "÷ best other contender", TwoSlopeNorm(vmin=0.5, vcenter=1.0, vmax=1.5)),
                        ("ratio_limit", "÷ physical limit", TwoSlopeNorm(vmin=0.9, vcenter=1.06, vmax=2.0)))):
                    im = _sweep_panel(axes[r, c], pe, key, "%s, %s: %s %s" % (pair, size_label(size), sweep.OURS, what),
                                      norm)
                    fig.colorbar(im, ax=axes[r, c], shrink=0.7)
            fig.suptitle("Sweep (%s): libmhttp's median time as a ratio; red = slower" % shaper, fontsize=10)
            _save(fig, out, "sweep-%s%s.png" % (size_label(size).replace(" ", ""),
                                               "" if shaper == "linkemu" else "-" + shaper), pngs)


def draw_all(summ, out):
    """Every plot the measured experiments allow; returns their file names."""
    pngs = []
    for scen in dict.fromkeys(g["scenario"] for g in summ if g["exp"] == "sizes"):
        sizes_plot(summ, scen, out, pngs)
    overhead_plot(summ, out, pngs)
    initchunk_plot(summ, out, pngs)
    chunks_plot(summ, out, pngs)
    failover_plot(summ, out, pngs)
    heatmap_plot(summ, out, pngs)
    sweep_plots(sweep.grid(summ), out, pngs)
    return pngs


def check_png(path):
    """Problems with a written plot: missing, not a PNG, or too small to show anything."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(24)
    except OSError:
        return ["%s missing" % path]
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return ["%s is not a PNG" % path]
    w, h = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    return [] if w >= 200 and h >= 150 else ["%s is only %dx%d" % (path, w, h)]
