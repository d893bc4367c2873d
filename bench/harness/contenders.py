"""The contenders: for a name (wget@wifi0, curl+eaf, aria2, mptcp...) and a testbed environment, the argv and variables of one download, or the reason it cannot run."""
import os
import shutil

from stats import SINGLE, MHTTP, PEER, MPTCP

# Every contender of the sizes experiment, in the order of the report and the plots' colours
# (tab20: a dark and a light shade per pair, so wget@wifi0 / wget@lte0 and eaf / rr pair up).
ALL = ["wget@wifi0", "wget@lte0", "curl@wifi0", "curl@lte0", "wget+eaf", "wget+rr", "curl+eaf", "curl+rr",
       "aria2", "aria2-mirrors", "axel", "wget2", "mptcp"]
# The https experiment (testbed --tls): the same objects over HTTPS from the replicas' TLS port.
HTTPS = ["curl-tls@wifi0", "curl-tls@lte0", "mhttp", "mhttp-mirrors", "aria2-tls", "aria2-tls-mirrors"]
POLICIES = {"eaf": "eaf", "rr": "round-robin", "shim": None}
# Peers, each with what it is tuned to (bench/README.md says why).
PEERS = {
    "aria2": "aria2c -x2 -s2 -k1M --multiple-interface=<every interface's address> (aria2/N: -xN -sN)",
    "aria2-mirrors": "aria2 with replicas A and B as mirrors",
    "axel": "axel -n 4, replicas A and B as mirrors (no per-interface binding: the default route)",
    "wget2": "wget2 --max-threads=4 --chunk-size=1M (one interface: the default route)",
    "mptcp": "wget under mptcpize run, kernel MPTCP, one subflow per interface",
    "aria2-tls": "aria2 over HTTPS (--ca-certificate: the testbed's test CA), same tuning",
    "aria2-tls-mirrors": "aria2-tls with replicas A and B as mirrors",
}


class Skip(Exception):
    """The contender cannot run here; the message says why (it becomes the row's reason)."""


def kind(name):
    """single, mhttp, peer or mptcp: how the report groups and references a contender."""
    if "@" in name and "+" not in name:
        return SINGLE
    if "+" in name or name.startswith("mhttp"):
        return MHTTP
    return MPTCP if name == "mptcp" else PEER


def _need(prog):
    if not shutil.which(prog):
        raise Skip("%s is not installed (scripts/setup.sh installs it)" % prog)


def _ifaces(env):
    return env["TESTBED_IFACES"].split()


def _addr(env, ifc):
    a = env.get("TESTBED_%s_ADDR" % ifc.upper())
    if not a:
        raise Skip("no interface %s in scenario %s" % (ifc, env["TESTBED_SCENARIO"]))
    return a


def _https(env, path, key="A"):
    """The HTTPS URL of path on replica key (testbed --tls: the replicas' TLS port, a test CA)."""
    if env.get("TESTBED_TLS") != "1":
        raise Skip("the testbed runs without --tls")
    return "https://%s:%s%s" % (env["TESTBED_HOST_" + key], env["TESTBED_TLS_PORT"], path)


def _client(prog, url, out, rate=None, ifc_args=()):
    """One plain download with wget or curl into `out` (rate: --limit-rate, bytes/s)."""
    _need(prog)
    if prog == "wget":
        return ["wget", "-q", "-O", out] + (["--limit-rate=%d" % rate] if rate else []) + list(ifc_args) + [url]
    return ["curl", "-s", "--fail", "-o", out] + (["--limit-rate", str(rate)] if rate else []) + list(ifc_args) + [url]


def command(name, env, path, out, shim, rate=None):
    """(argv, extra environment) for contender `name` fetching `path` (/files/N.bin) into `out`.
    Names: CLIENT@IFACE (plain, bound to that interface; curl-tls: curl over HTTPS),
    CLIENT+POLICY[:VAR=VAL,...] (under the shim with MHTTP_POLICY and those MHTTP_VAR settings;
    BUILD=DIR preloads DIR/shim/libmhttp.so instead),
    mhttp[-mirrors] (the command over HTTPS), a peer of PEERS. `@slow` on a name is a
    label only (the job sets rate). Raises Skip."""
    url = _https(env, path) if name.startswith("curl-tls") else env["TESTBED_URL_A"] + path
    base = name.split("@slow")[0] if name.endswith("@slow") else name
    if kind(name) == SINGLE or name.endswith("@slow") and "+" not in name:
        prog, _, ifc = base.partition("@")
        tls = ["--cacert", env["TESTBED_TLS_CA"]] if prog == "curl-tls" else []
        prog = prog.replace("-tls", "")
        if not ifc:
            return _client(prog, url, out, rate, tls), {}
        a = _addr(env, ifc)
        return _client(prog, url, out, rate, ["--bind-address=" + a] if prog == "wget" else ["--interface", ifc] + tls), {}
    if "+" in base:
        prog, _, spec = base.partition("+")
        pol, _, sets = spec.partition(":")
        if pol not in POLICIES:
            raise Skip("unknown policy %s" % pol)
        kvs = [kv.partition("=") for kv in filter(None, sets.split(","))]
        # BUILD=DIR: that build tree's libmhttp.so instead of MHTTP_BUILD_DIR's (an A/B of two
        # commits in one interleaved run: wget+shim,wget+shim:BUILD=/path/to/other/build/release)
        for k, _, v in kvs:
            if k == "BUILD":
                shim = os.path.join(v, "shim", "libmhttp.so")
        if not os.path.exists(shim):
            raise Skip("%s is not built (bash scripts/build.sh release)" % shim)
        e = {"LD_PRELOAD": shim, "MHTTP_IFACES": ",".join(_ifaces(env))}
        if POLICIES[pol]:
            e["MHTTP_POLICY"] = POLICIES[pol]
        for k, _, v in kvs:
            if k != "BUILD":
                e["MHTTP_" + k] = v
        return _client(prog, url, out, rate), e
    if name.startswith("mhttp"):
        return _mhttp(name, env, path, out, shim), {}
    return _peer(name, env, path, out), {}


def _mhttp(name, env, path, out, shim):
    """The mhttp command over HTTPS on every interface (mhttp-mirrors: replica B as a mirror)."""
    prog = os.path.join(os.path.dirname(os.path.dirname(shim)), "cli", "mhttp")
    if not os.access(prog, os.X_OK):
        raise Skip("%s is not built (bash scripts/build.sh release)" % prog)
    urls = [_https(env, path)] + (["--mirror", _https(env, path, "B")] if name == "mhttp-mirrors" else [])
    ifs = [a for i in _ifaces(env) for a in ("-i", i)]
    return [prog, "-q", "--cacert", env["TESTBED_TLS_CA"], "-o", out] + ifs + urls


def _peer(name, env, path, out):
    tls = name.startswith("aria2-tls")
    urls = [_https(env, path), _https(env, path, "B")] if tls else [env["TESTBED_URL_A"] + path,
                                                                   env["TESTBED_URL_B"] + path]
    d, f = os.path.split(out)
    addrs = ",".join(_addr(env, i) for i in _ifaces(env))
    base, _, conns = name.partition("/")
    if tls:
        base = base.replace("-tls", "")
    if base in ("aria2", "aria2-mirrors"):
        _need("aria2c")
        n = conns or "2"
        if not n.isdigit() or not 1 <= int(n) <= 16:
            raise Skip("aria2/N wants N in 1..16 (aria2c's -x limit), got %s" % n)
        return (["aria2c", "-q", "--allow-overwrite=true", "--auto-file-renaming=false", "-x" + n, "-s" + n, "-k1M",
                 "--multiple-interface=" + addrs, "-d", d, "-o", f] +
                (["--ca-certificate=" + env["TESTBED_TLS_CA"]] if tls else []) +
                (urls if base == "aria2-mirrors" else urls[:1]))
    if name == "axel":
        _need("axel")
        return ["axel", "-q", "-n", "4", "-o", out] + urls
    if name == "wget2":
        _need("wget2")
        return ["wget2", "-q", "--max-threads=4", "--chunk-size=1M", "-O", out, urls[0]]
    if name == "mptcp":
        _need("mptcpize")
        if env.get("TESTBED_MPTCP") != "1":
            raise Skip("the testbed runs without --mptcp")
        if len(_ifaces(env)) < 2:
            raise Skip("one interface: nothing for MPTCP to add")
        port = env["TESTBED_MPTCP_PORT"]
        return ["mptcpize", "run", "wget", "-q", "-O", out, "http://%s:%s%s" % (env["TESTBED_HOST_A"], port, path)]
    raise Skip("unknown contender %s" % name)
