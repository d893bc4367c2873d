"""Both nginx replicas serve byte-identical files with identical strong validators; pages load with wget -p and curl --parallel."""
import hashlib
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tblib import check, curl, curl_sha, finish, header, manifest, run_in, status, up  # noqa: E402

env = up("lan")
man = manifest(env)
MTIME = 1700000000
sizes = [int(s) for s in env["TESTBED_FILE_SIZES"].split()]
check(sizes == [0, 1, 16384, 32767, 32768, 32769, 65536, 262144, 1 << 20, 4 << 20, 32 << 20, 128 << 20],
      "file sizes as specified")
p = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=env["TESTBED_FILES_DIR"], timeout=60)
check(p.returncode == 0, "the docroot matches its SHA256SUMS")

# Every file, from each replica through a different interface, by name and by address.
routes = [("A", "wifi0", env["TESTBED_URL_A"]), ("B", "lte0", env["TESTBED_URL_B"]),
          ("A", "lte0", env["TESTBED_URL_A_IP"]), ("B", "wifi0", env["TESTBED_URL_B_IP"])]
for size in sizes:
    rel = "files/%d.bin" % size
    etags = set()
    lms = set()
    for rep, ifc, base in routes:
        rc, digest, n = curl_sha(env, ["--interface", ifc, "%s/%s" % (base, rel)])
        check(rc == 0 and n == size and digest == man[rel],
              "%s via %s: %s sha256 matches manifest (rc %d, %d bytes)" % (rep, ifc, rel, rc, n))
        rc, _b, hdrs = curl(env, ["--interface", ifc, "-I", "%s/%s" % (base, rel)])
        etags.add(header(hdrs, "ETag"))
        lms.add(header(hdrs, "Last-Modified"))
        check(header(hdrs, "X-Testbed-Origin") == rep.lower(), "%s answered as %s" % (base, rep))
    want = '"%x-%x"' % (MTIME, size)
    check(etags == {want}, "%s: one strong ETag %s on both replicas (got %s)" % (rel, want, etags))
    check(len(lms) == 1 and None not in lms, "%s: one Last-Modified on both replicas (%s)" % (rel, lms))

# Ranges across the 32 KiB probe boundary give the same bytes from both replicas.
with open(os.path.join(env["TESTBED_FILES_DIR"], "files/1048576.bin"), "rb") as f:
    data = f.read()
for a, b in ((0, 32767), (32767, 32768), (1048000, 1048575), (524288, 524288)):
    got = []
    for base in (env["TESTBED_URL_A"], env["TESTBED_URL_B"]):
        rc, body, hdrs = curl(env, ["-r", "%d-%d" % (a, b), base + "/files/1048576.bin"])
        got.append(body)
        check(status(hdrs) == 206 and header(hdrs, "Content-Range") == "bytes %d-%d/1048576" % (a, b),
              "%s range %d-%d is a 206 with its Content-Range" % (base, a, b))
    check(got[0] == got[1] == data[a:b + 1], "range %d-%d identical on A and B and equal to the file" % (a, b))

# Pages: wget -p on the page host only, wget -p -H across hosts; every object intact.
for page in env["TESTBED_PAGES"].split():
    url = env["TESTBED_PAGE_" + page.upper()]
    objs = open(env["TESTBED_PAGE_%s_OBJECTS" % page.upper()]).read().split()
    with tempfile.TemporaryDirectory() as d:
        p = run_in(env, ["wget", "-q", "-p", "-H", "-P", d, url], timeout=60)
        got = 0
        for u in objs:
            host, rel = u[len("http://"):].split("/", 1)
            path = os.path.join(d, host, rel)
            if os.path.exists(path):
                ok = hashlib.sha256(open(path, "rb").read()).hexdigest() == man[rel]
                got += ok
        check(p.returncode == 0 and got == len(objs), "wget -p -H %s: %d/%d objects intact" % (page, got, len(objs)))
    with tempfile.TemporaryDirectory() as d:
        p = run_in(env, ["wget", "-q", "-p", "-P", d, url], timeout=60)
        hosts = sorted(os.listdir(d))
        check(p.returncode == 0 and hosts == ["www.test"], "wget -p %s stays on www.test (%s)" % (page, hosts))
    args = ["curl", "--parallel", "--parallel-max", "8", "-s", "-w", "%{http_code}\\n"]
    for u in objs:
        args += [u, "-o", "/dev/null"]
    p = run_in(env, args, timeout=60)
    codes = p.stdout.split()
    check(p.returncode == 0 and codes.count("200") == len(objs), "curl --parallel %s: %d x 200 of %d" % (page, codes.count("200"), len(objs)))
finish()
