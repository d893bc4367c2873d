"""Deterministic test content: the sized files, the handcrafted pages, and their SHA256SUMS manifest."""
# Every byte is pseudo-random from a seed derived from the file's path, so a byte served at
# the wrong offset (or from the wrong file) changes the SHA-256; nothing is all zeros. All
# files get the same fixed mtime, so every nginx replica derives the same strong ETag
# ("mtime-size" in hex) and the same Last-Modified.

import fcntl
import hashlib
import os
import random
import shutil

GEN_VERSION = "mtb-content-v1"
MTIME = 1700000000            # 2023-11-14T22:13:20Z, identical on every replica and machine
CACHE_ROOT = "/var/tmp/mhttp-testbed-files"

# Sizes of issue 3: around the 32 KiB probe boundary, then growing.
FILE_SIZES = (0, 1, 16384, 32767, 32768, 32769, 65536, 262144, 1 << 20, 4 << 20, 32 << 20, 128 << 20)

# Page hosts: objects are spread over these names (www.test pages refer to their own host
# with relative URLs, so `wget -p` alone fetches only those and `wget -p -H` fetches all).
PAGE_HOSTS = ("www.test", "a.test", "b.test", "static.test")
KIB = 1024
PAGES = {
    # socket-intents §VIII-A (Fig. 4) mixed workload
    "mixed": [(16, 1 * KIB), (8, 10 * KIB), (4, 100 * KIB)],
    # socket-intents §VIII-A: 32 objects of 100 KB
    "many100k": [(32, 100 * KIB)],
    # socket-intents §VIII-B (Fig. 5) mixed workload
    "mixed2": [(32, 1 * KIB), (16, 10 * KIB), (2, 100 * KIB), (2, 200 * KIB)],
}


def file_path(size):
    return "files/%d.bin" % size


def _write_random(path, rel, size, manifest):
    """Writes `size` pseudo-random bytes seeded by `rel`; records the digest in manifest."""
    rng = random.Random("%s:%s" % (GEN_VERSION, rel))
    h = hashlib.sha256()
    left = size
    with open(path, "wb") as f:
        while left > 0:
            n = min(left, 1 << 20)
            block = rng.randbytes(n)
            h.update(block)
            f.write(block)
            left -= n
    manifest[rel] = h.hexdigest()


def page_objects(page):
    """[(relpath, size, host)] for a page, in document order."""
    out = []
    i = 0
    for count, size in PAGES[page]:
        for _ in range(count):
            host = PAGE_HOSTS[i % len(PAGE_HOSTS)]
            out.append(("pages/%s/o%02d-%d.bin" % (page, i, size), size, host))
            i += 1
    return out


def object_url(rel, host):
    return "http://%s/%s" % (host, rel)


def _page_html(page):
    lines = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\"><title>mhttp testbed page %s</title></head>" % page,
             "<body>", "<h1>%s</h1>" % page]
    for rel, size, host in page_objects(page):
        name = os.path.basename(rel)
        # Objects on the page's own host are relative; the others are absolute on their host.
        src = name if host == PAGE_HOSTS[0] else object_url(rel, host)
        lines.append('<img src="%s" width="1" height="1" alt="%d">' % (src, size))
    lines += ["</body></html>", ""]
    return "\n".join(lines).encode()


def _generate(root):
    manifest = {}
    os.makedirs(os.path.join(root, "files"))
    for size in FILE_SIZES:
        rel = file_path(size)
        _write_random(os.path.join(root, rel), rel, size, manifest)
    for page in PAGES:
        pdir = os.path.join(root, "pages", page)
        os.makedirs(pdir)
        for rel, size, _host in page_objects(page):
            _write_random(os.path.join(root, rel), rel, size, manifest)
        html = _page_html(page)
        rel = "pages/%s/index.html" % page
        with open(os.path.join(root, rel), "wb") as f:
            f.write(html)
        manifest[rel] = hashlib.sha256(html).hexdigest()
        urls = ["http://%s/%s" % (PAGE_HOSTS[0], rel)] + [object_url(r, h) for r, _s, h in page_objects(page)]
        with open(os.path.join(pdir, "objects.txt"), "w") as f:
            f.write("\n".join(urls) + "\n")
    with open(os.path.join(root, "index.html"), "w") as f:
        f.write("<html><body>mhttp testbed origin</body></html>\n")
    for dirpath, dirnames, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for fn in filenames:
            p = os.path.join(dirpath, fn)
            os.chmod(p, 0o644)
            os.utime(p, (MTIME, MTIME))
    text = "".join("%s  %s\n" % (manifest[k], k) for k in sorted(manifest))
    with open(os.path.join(root, "SHA256SUMS"), "w") as f:
        f.write(text)
    os.chmod(os.path.join(root, "SHA256SUMS"), 0o644)
    os.utime(os.path.join(root, "SHA256SUMS"), (MTIME, MTIME))


def read_manifest(root):
    out = {}
    with open(os.path.join(root, "SHA256SUMS")) as f:
        for line in f:
            digest, rel = line.rstrip("\n").split("  ", 1)
            out[rel] = digest
    return out


def _valid(root):
    """Quick check: the manifest exists and every file in it has its size and mtime."""
    try:
        manifest = read_manifest(root)
    except (OSError, ValueError):
        return False
    expected = {file_path(s): s for s in FILE_SIZES}
    for page in PAGES:
        for rel, size, _h in page_objects(page):
            expected[rel] = size
    if not set(expected) <= set(manifest):
        return False
    for rel in manifest:
        try:
            st = os.stat(os.path.join(root, rel))
        except OSError:
            return False
        if int(st.st_mtime) != MTIME or (rel in expected and st.st_size != expected[rel]):
            return False
    return True


def ensure(cache_root=None):
    """Returns the docroot holding files/, pages/ and SHA256SUMS, generating it once.

    Concurrent callers serialise on a lock file; a complete tree is renamed into place so a
    half-written cache is never reused."""
    cache_root = cache_root or os.environ.get("MHTTP_TESTBED_FILES_CACHE", CACHE_ROOT)
    os.makedirs(cache_root, exist_ok=True)
    root = os.path.join(cache_root, GEN_VERSION)
    with open(os.path.join(cache_root, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _valid(root):
            return root
        if os.path.exists(root):
            shutil.rmtree(root)
        tmp = "%s.tmp.%d" % (root, os.getpid())
        if os.path.exists(tmp):
            shutil.rmtree(tmp)
        try:
            _generate(tmp)
            os.rename(tmp, root)
        finally:
            if os.path.exists(tmp):
                shutil.rmtree(tmp)
    return root


if __name__ == "__main__":
    import sys
    print(ensure(sys.argv[1] if len(sys.argv) > 1 else None))
