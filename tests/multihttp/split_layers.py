#!/usr/bin/python3
"""The split's modules call one way (docs/split.md): a file includes the private headers of its own module and of the modules below it, never above; nothing outside multihttp/split/ includes them, and delivery's state (deliver/private/deliver_int.h) is included by deliver/'s files only.

Usage: split_layers.py SOURCE_DIR   exit 0 when every include keeps the order, 1 with each offence named

The headers declare every function the split's files share (mh_split_int.h holds only the
types), and the build treats an undeclared call as an error, so the includes are the calls.
"""
import os
import re
import sys

# lowest first; a module's files (basenames) and its level
MODULES = [
    ("split_core.h", 0, ["mh_split_core.c", "mh_split_stats.c", "mh_split_plan.c", "mh_split_servers.c",
                         "mh_split_resume.c", "mh_split_probe_state.c"]),
    ("split_deliver.h", 1, ["mh_split_deliver.c", "mh_split_digest.c"]),
    ("split_leg.h", 2, ["mh_split_leg.c", "mh_split_answer.c", "mh_split_origin.c"]),
    ("split_legs.h", 3, ["mh_split_view.c", "mh_split_hedge.c", "mh_split_plain.c", "mh_split_legs.c",
                         "mh_split_net.c"]),
    ("split_assign.h", 4, ["mh_split_drive.c"]),
    ("split_start.h", 5, ["mh_split_probe.c", "mh_split.c", "mh_split_adopt.c"]),
    ("split_events.h", 6, ["mh_split_events.c"]),
]
# the one upward reference: the object installs its events handler at the start (a callback,
# the way a leg reports up without calling up)
ALLOWED = {("mh_split.c", "split_events.h")}
# a module's own state, seen by its folder's files only
PRIVATE_STATE = ("deliver_int.h", "deliver")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main(src):
    level = {h: lv for h, lv, _ in MODULES}
    file_level = {f: lv for _, lv, fs in MODULES for f in fs}
    split = os.path.join(src, "multihttp", "split")
    bad, seen = [], set()
    for top in ("multihttp", "shim", "cli", "tests"):
        for d, _, names in os.walk(os.path.join(src, top)):
            for n in names:
                if not n.endswith((".c", ".h")):
                    continue
                path = os.path.join(d, n)
                with open(path, encoding="utf-8") as f:
                    incs = INCLUDE.findall(f.read())
                inside = path.startswith(split + os.sep)
                for h in incs:
                    if os.path.basename(h) == PRIVATE_STATE[0]:
                        if os.path.dirname(path) != os.path.join(split, PRIVATE_STATE[1]):
                            bad.append("%s includes %s, private to %s/" % (path, h, PRIVATE_STATE[1]))
                        continue
                    if h not in level and h != "mh_split_int.h":
                        continue
                    if not inside:
                        if not path.startswith(os.path.join(src, "tests") + os.sep):
                            bad.append("%s includes the split's private %s" % (path, h))
                        continue
                    if n.endswith(".c") and n not in file_level:
                        bad.append("%s includes %s but belongs to no module (MODULES)" % (n, h))
                    if n in file_level:
                        seen.add(n)
                        if h in level and level[h] > file_level[n] and (n, h) not in ALLOWED:
                            bad.append("%s (level %d) includes %s (level %d)" % (n, file_level[n], h, level[h]))
    missing = sorted(set(file_level) - seen)
    if missing:
        bad.append("no module header included by: " + ", ".join(missing))
    for b in bad:
        print("split_layers: " + b)
    print("split_layers: %d files in %d modules, %s" % (len(file_level), len(MODULES), "ok" if not bad else "FAILED"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
