"""Scenario files: parse bench/testbed/scenarios/*.conf (INI) and the generated paper grids into link settings."""
# A scenario describes only the access links; the rest of the topology (routers, origins,
# resolvers) is the same for every scenario. Values are validated here so that `up` fails
# with one clear line before any namespace exists.

import configparser
import os
import re

SCENARIO_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios")

# Table I of the IANS paper (additional latency x downstream capacity), used as RTT/rate.
IANS_DELAYS = (10, 50, 100)
IANS_RATES = (2, 5, 10, 20)
# Table IV of the Socket Intents paper (factorial simulator design).
SI_IF1_RTTS = (10, 20, 30, 50)
SI_IF1_RATES = ("0.5", "2", "6", "12", "20", "50")
SI_IF2_RTTS = (20, 50, 100, 200)
SI_IF2_RATES = ("0.5", "5", "20", "50")

LINK_KEYS = ("rtt", "delay", "delay_up", "delay_down", "rate", "rate_up", "rate_down",
             "loss", "loss_up", "loss_down", "queue", "queue_up", "queue_down", "jitter")


class ScenarioError(Exception):
    pass


def parse_rate(s):
    """'20mbit', '500kbit', '1gbit', '20' (Mbit/s), '0'/'none' (unlimited) -> bit/s (int)."""
    s = str(s).strip().lower()
    if s in ("", "0", "none", "unlimited", "inf"):
        return 0
    m = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*(gbit|mbit|kbit|bit|g|m|k)?(/s|ps)?", s)
    if not m:
        raise ScenarioError("bad rate %r (use e.g. 20mbit, 500kbit)" % s)
    mult = {"gbit": 1e9, "g": 1e9, "mbit": 1e6, "m": 1e6, "kbit": 1e3, "k": 1e3,
            "bit": 1, None: 1e6}[m.group(2)]
    v = int(round(float(m.group(1)) * mult))
    if v < 8000:
        raise ScenarioError("rate %r below 8 kbit/s" % s)
    return v


def parse_ms(s):
    s = str(s).strip().lower()
    if s.endswith("ms"):
        s = s[:-2]
    try:
        v = float(s)
    except ValueError:
        raise ScenarioError("bad time %r (milliseconds)" % s) from None
    if not 0 <= v <= 10000:
        raise ScenarioError("time %r out of range 0..10000 ms" % s)
    return v


def parse_loss(s):
    """'0.5%' or '0.005' -> percent as float."""
    s = str(s).strip()
    try:
        v = float(s[:-1]) if s.endswith("%") else float(s) * 100.0
    except ValueError:
        raise ScenarioError("bad loss %r (use 0.5%% or 0.005)" % s) from None
    if not 0 <= v <= 100:
        raise ScenarioError("loss %r out of range" % s)
    return v


def parse_size(s):
    s = str(s).strip().lower()
    if s in ("", "auto", "0"):
        return 0
    m = re.fullmatch(r"([0-9]+)\s*(kib|mib|k|m|b)?", s)
    if not m:
        raise ScenarioError("bad queue size %r (bytes, e.g. 64k)" % s)
    return int(m.group(1)) * {"kib": 1024, "k": 1024, "mib": 1 << 20, "m": 1 << 20, "b": 1, None: 1}[m.group(2)]


def fmt_rate(bps):
    if bps == 0:
        return "0"
    if bps % 1000000 == 0:
        return "%dmbit" % (bps // 1000000)
    if bps % 1000 == 0:
        return "%dkbit" % (bps // 1000)
    return "%dbit" % bps


def fmt_num(v):
    return ("%.3f" % v).rstrip("0").rstrip(".")


class Link:
    """Per-direction settings of one access link; 'up' = client -> router, 'down' = router -> client."""

    def __init__(self):
        self.delay_up = 0.0      # one-way ms
        self.delay_down = 0.0
        self.rate_up = 0         # bit/s, 0 = unlimited
        self.rate_down = 0
        self.loss_up = 0.0       # percent
        self.loss_down = 0.0
        self.queue_up = 0        # bytes, 0 = default (one BDP, >= 64 KiB)
        self.queue_down = 0
        self.jitter = 0.0

    def apply(self, key, val):
        """Applies one key=value (scenario file, --set, or live `set`); raises ScenarioError."""
        key = key.strip().lower().replace("-", "_")
        if key == "rtt":
            self.delay_up = self.delay_down = parse_ms(val) / 2.0
        elif key == "delay":
            self.delay_up = self.delay_down = parse_ms(val)
        elif key in ("delay_up", "delay_down"):
            setattr(self, key, parse_ms(val))
        elif key == "rate":
            self.rate_up = self.rate_down = parse_rate(val)
        elif key in ("rate_up", "rate_down"):
            setattr(self, key, parse_rate(val))
        elif key == "loss":
            self.loss_up = self.loss_down = parse_loss(val)
        elif key in ("loss_up", "loss_down"):
            setattr(self, key, parse_loss(val))
        elif key == "queue":
            self.queue_up = self.queue_down = parse_size(val)
        elif key in ("queue_up", "queue_down"):
            setattr(self, key, parse_size(val))
        elif key == "jitter":
            self.jitter = parse_ms(val)
        else:
            raise ScenarioError("unknown link key %r (known: %s)" % (key, ", ".join(LINK_KEYS)))

    @property
    def rtt(self):
        return self.delay_up + self.delay_down

    def to_dict(self):
        return dict(self.__dict__)

    @classmethod
    def from_dict(cls, d):
        link = cls()
        link.__dict__.update(d)
        return link

    def describe(self):
        return "rtt=%sms down=%s up=%s loss=%s%%/%s%%" % (
            fmt_num(self.rtt), fmt_rate(self.rate_down) if self.rate_down else "unlimited",
            fmt_rate(self.rate_up) if self.rate_up else "unlimited",
            fmt_num(self.loss_down), fmt_num(self.loss_up))


class Scenario:
    def __init__(self, name):
        self.name = name
        self.description = ""
        self.ifaces = []         # names, primary first
        self.links = {}          # name -> Link
        self.ipv6 = False

    def to_dict(self):
        return {"name": self.name, "description": self.description, "ifaces": self.ifaces,
                "ipv6": self.ipv6, "links": {k: v.to_dict() for k, v in self.links.items()}}


def _two_links(name, desc, l1, l2):
    sc = Scenario(name)
    sc.description = desc
    for ifname, kv in (("wifi0", l1), ("lte0", l2)):
        link = Link()
        for k, v in kv.items():
            link.apply(k, v)
        sc.ifaces.append(ifname)
        sc.links[ifname] = link
    return sc


def generated(name):
    """Scenarios computed from the papers' grids, or None if `name` is not one of them.

    ians-D1-R1-D2-R2     IANS Table I: RTT D in {10,50,100} ms, rate R in {2,5,10,20} Mbit/s
    si-R1-B1-R2-B2       Socket Intents Table IV: if1 RTT {10,20,30,50} x {0.5,2,6,12,20,50}
                         Mbit/s, if2 RTT {20,50,100,200} x {0.5,5,20,50} Mbit/s
    """
    m = re.fullmatch(r"ians-(\d+)-(\d+)-(\d+)-(\d+)", name)
    if m:
        d1, r1, d2, r2 = (int(x) for x in m.groups())
        if d1 not in IANS_DELAYS or d2 not in IANS_DELAYS or r1 not in IANS_RATES or r2 not in IANS_RATES:
            raise ScenarioError("%s: IANS levels are RTT %s ms and rate %s Mbit/s" % (name, IANS_DELAYS, IANS_RATES))
        # IANS shapes the downstream only ("we do not restrict upstream capacity").
        return _two_links(name, "IANS Table I grid point", {"rtt": d1, "rate_down": "%dmbit" % r1},
                          {"rtt": d2, "rate_down": "%dmbit" % r2})
    m = re.fullmatch(r"si-(\d+)-([0-9.]+)-(\d+)-([0-9.]+)", name)
    if m:
        t1, b1, t2, b2 = m.groups()
        if int(t1) not in SI_IF1_RTTS or b1 not in SI_IF1_RATES or int(t2) not in SI_IF2_RTTS or b2 not in SI_IF2_RATES:
            raise ScenarioError("%s: Socket Intents Table IV levels are if1 %s ms x %s Mbit/s, if2 %s ms x %s Mbit/s"
                                % (name, SI_IF1_RTTS, SI_IF1_RATES, SI_IF2_RTTS, SI_IF2_RATES))
        return _two_links(name, "Socket Intents Table IV grid point", {"rtt": t1, "rate": b1 + "mbit"},
                          {"rtt": t2, "rate": b2 + "mbit"})
    return None


def generated_names():
    out = []
    for d1 in IANS_DELAYS:
        for r1 in IANS_RATES:
            for d2 in IANS_DELAYS:
                for r2 in IANS_RATES:
                    out.append("ians-%d-%d-%d-%d" % (d1, r1, d2, r2))
    for t1 in SI_IF1_RTTS:
        for b1 in SI_IF1_RATES:
            for t2 in SI_IF2_RTTS:
                for b2 in SI_IF2_RATES:
                    out.append("si-%d-%s-%d-%s" % (t1, b1, t2, b2))
    return out


def file_names():
    try:
        return sorted(f[:-5] for f in os.listdir(SCENARIO_DIR) if f.endswith(".conf"))
    except FileNotFoundError:
        return []


def load(name_or_path, ifnames=None, overrides=()):
    """Loads a scenario by name (scenarios/NAME.conf or a generated grid name) or by path.

    ifnames: optional list renaming the interfaces positionally (e.g. ['eth1', 'eth2']).
    overrides: iterable of 'IFACE.key=value' (IFACE by name, new name or index 0..2).
    """
    path = name_or_path
    if os.sep not in name_or_path and not name_or_path.endswith(".conf"):
        path = os.path.join(SCENARIO_DIR, name_or_path + ".conf")
    if os.path.exists(path):
        sc = _load_file(path)
    else:
        sc = generated(name_or_path)
        if sc is None:
            raise ScenarioError("no scenario %r (see `testbed scenarios`)" % name_or_path)
    if ifnames:
        if len(ifnames) != len(sc.ifaces):
            raise ScenarioError("scenario %s has %d interfaces, %d names given"
                                % (sc.name, len(sc.ifaces), len(ifnames)))
        sc.links = {new: sc.links[old] for old, new in zip(sc.ifaces, ifnames)}
        sc.ifaces = list(ifnames)
    for ov in overrides:
        m = re.fullmatch(r"([^.=]+)\.([a-z_]+)=(.*)", ov.strip())
        if not m:
            raise ScenarioError("bad override %r (use IFACE.key=value)" % ov)
        iface = m.group(1)
        if iface.isdigit() and int(iface) < len(sc.ifaces):
            iface = sc.ifaces[int(iface)]
        if iface not in sc.links:
            raise ScenarioError("override %r: no interface %s in %s" % (ov, iface, sc.ifaces))
        sc.links[iface].apply(m.group(2), m.group(3))
    for n in sc.ifaces:
        if not re.fullmatch(r"[a-zA-Z][a-zA-Z0-9_]{0,14}", n):
            raise ScenarioError("bad interface name %r (letters, digits, _; <= 15 chars)" % n)
    return sc


def _load_file(path):
    cp = configparser.ConfigParser(inline_comment_prefixes=("#", ";"), interpolation=None)
    try:
        with open(path) as f:
            cp.read_file(f)
    except (configparser.Error, OSError) as e:
        raise ScenarioError("%s: %s" % (path, e)) from None
    sc = Scenario(os.path.basename(path)[:-5] if path.endswith(".conf") else os.path.basename(path))
    if cp.has_section("scenario"):
        top = cp["scenario"]
        sc.description = top.get("description", "")
        sc.ipv6 = top.get("ipv6", "no").lower() in ("yes", "true", "1", "on")
        ifaces = top.get("ifaces", "").split()
    else:
        ifaces = []
    if not ifaces:
        ifaces = [s for s in cp.sections() if s != "scenario"]
    if not 1 <= len(ifaces) <= 3:
        raise ScenarioError("%s: 1 to 3 interfaces needed, got %s" % (path, ifaces))
    for ifname in ifaces:
        if not cp.has_section(ifname):
            raise ScenarioError("%s: no [%s] section" % (path, ifname))
        link = Link()
        for k, v in cp[ifname].items():
            try:
                link.apply(k, v)
            except ScenarioError as e:
                raise ScenarioError("%s [%s]: %s" % (path, ifname, e)) from None
        sc.ifaces.append(ifname)
        sc.links[ifname] = link
    return sc
