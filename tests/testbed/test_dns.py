"""Per-network DNS: each access network's resolver answers with its own CDN replica, only through its own interface."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tblib import check, curl, dnsq, finish, log, run_in, up  # noqa: E402

# Three networks, dual-stack: network 1 and 3 map the CDN names to A, network 2 to B.
env = up("tri", "--ipv6")
ifaces = env["TESTBED_IFACES"].split()
check(ifaces == ["wifi0", "lte0", "dsl0"], "three interfaces in order: %s" % ifaces)
A, B = env["TESTBED_ORIGIN_A"], env["TESTBED_ORIGIN_B"]
A6, B6 = env["TESTBED_ORIGIN_A6"], env["TESTBED_ORIGIN_B6"]
replica = {"A": (A, A6), "B": (B, B6)}
bad = ["norange", "liar", "changing", "novalidators", "reset", "stall", "chunked", "gzip"]

for i, name in enumerate(ifaces):
    src, dns = env["TESTBED_IF%d_ADDR" % i], env["TESTBED_IF%d_DNS" % i]
    want4, want6 = replica[env["TESTBED_IF%d_REPLICA" % i]]
    check(env["TESTBED_IF%d_REPLICA" % i] == ("B" if i == 1 else "A"), "%s maps to replica %s" % (name, env["TESTBED_IF%d_REPLICA" % i]))
    for host in ("cdn.test", "www.test", "static.test"):
        rc, ans = dnsq(env, dns, host, bind=src)
        check(rc == 0 and ans == [want4], "%s resolver: %s -> %s (got rc %d %s)" % (name, host, want4, rc, ans))
    rc, ans = dnsq(env, dns, "cdn.test", bind=src, qtype="AAAA")
    check(rc == 0 and ans == [want6], "%s resolver: cdn.test AAAA -> %s (got %s)" % (name, want6, ans))
    rc, ans = dnsq(env, dns, "multi.test", bind=src)
    check(rc == 0 and ans == sorted([A, B]), "%s resolver: multi.test -> A and B (got %s)" % (name, ans))
    rc, ans = dnsq(env, dns, "a.test", bind=src)
    check(ans == [A], "%s resolver: a.test -> A" % name)
    rc, ans = dnsq(env, dns, "b.test", bind=src)
    check(ans == [B], "%s resolver: b.test -> B" % name)
    for o in bad:
        rc, ans = dnsq(env, dns, o + ".test", bind=src)
        check(ans == [env["TESTBED_ORIGIN_" + o.upper()]], "%s resolver: %s.test -> %s (got %s)"
              % (name, o, env["TESTBED_ORIGIN_" + o.upper()], ans))
    liar = env["TESTBED_ORIGIN_LIAR"]
    rc, ans = dnsq(env, dns, "cdn-liar.test", bind=src)
    check(ans == ([liar] if i == 1 else [A]), "%s resolver: cdn-liar.test -> %s" % (name, ans))
    rc, ans = dnsq(env, dns, "multi-liar.test", bind=src)
    check(ans == sorted([A, liar]), "%s resolver: multi-liar.test -> A and the liar (%s)" % (name, ans))
    rc, ans = dnsq(env, dns, "multi-norange.test", bind=src)
    check(ans == sorted([A, env["TESTBED_ORIGIN_NORANGE"]]), "%s resolver: multi-norange.test -> A and norange" % name)
    rc, ans = dnsq(env, dns, "resolver.test", bind=src)
    check(ans == [dns], "%s resolver identifies itself as %s (got %s)" % (name, dns, ans))
    rc, ans = dnsq(env, dns, "nonexistent.test", bind=src)
    check(rc == 3, "%s resolver: nonexistent.test is NXDOMAIN (rc %d)" % (name, rc))
    rc, ans = dnsq(env, dns, "example.com", bind=src)
    check(rc != 0 and not ans, "%s resolver: no answer outside .test (rc %d %s)" % (name, rc, ans))
    # Reachable only through its own interface: from every other interface's address, silence.
    for j, other in enumerate(ifaces):
        if j != i:
            rc, ans = dnsq(env, dns, "cdn.test", bind=env["TESTBED_IF%d_ADDR" % j], timeout=1.0)
            check(rc == 2, "%s resolver unreachable from %s's address (rc %d %s)" % (name, other, rc, ans))

# The client's libc resolver uses the primary interface's resolver (/etc/netns resolv.conf).
p = run_in(env, ["cat", "/etc/resolv.conf"])
check("nameserver %s" % env["TESTBED_WIFI0_DNS"] in p.stdout, "client resolv.conf names the wifi0 resolver")
p = run_in(env, ["getent", "ahostsv4", "cdn.test"])
check(p.returncode == 0 and p.stdout.split()[0] == A, "getent cdn.test in the client -> replica A (%s)" % p.stdout.split()[:1])
p = run_in(env, ["getent", "ahostsv4", "multi.test"])
check(p.returncode == 0 and {A, B} <= set(p.stdout.split()), "getent multi.test -> both replicas")
# Outside the namespace the names do not exist (nothing leaked into the host's /etc).
import subprocess  # noqa: E402
hp = subprocess.run(["getent", "hosts", "cdn.test"], stdout=subprocess.PIPE, timeout=20)
check(hp.returncode != 0, "cdn.test does not resolve on the host")

# IPv6 end to end: a socket bound to lte0's IPv6 address reaches replica B over lte0.
rc, body, hdrs = curl(env, ["--interface", env["TESTBED_LTE0_ADDR6"], "-g", "http://[%s]/files/1.bin" % B6])
check(rc == 0 and "X-Testbed-Origin: b" in hdrs and len(body) == 1, "IPv6 fetch from B over lte0 (rc %d)" % rc)
log("dns test on %s" % env["TESTBED_ID"])
finish()
