#!/usr/bin/python3
"""The daemon's status page in a real headless Chromium (Debian's chromium, chromedriver and
python3-selenium): without the secret it shows nothing and the RPC refuses; with it, a URL
added from the page's form completes byte-exact while the page's per-path rows show both
interfaces; the Pause, Resume and Remove buttons act (checked over the RPC); data is shown as
text, never as markup. Prints `ok`/`FAIL` lines (tests/integration/test_daemon_page.sh)."""
import argparse, os, re, subprocess, sys, time

import daemon_rpc
from daemon_rpc import Rpc, check, sha
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

WAIT_STEP = 0.2


def until(fn, limit):
    """fn() every WAIT_STEP s until it returns something true, at most limit s: that, or None"""
    end = time.time() + limit
    while time.time() < end:
        try:
            v = fn()
        except (WebDriverException, IndexError):
            v = None  # a row not shown yet, or replaced between two steps: look again
        if v:
            return v
        time.sleep(WAIT_STEP)
    return None


def status_of(a, gid):
    return (a.rpc.call("aria2.tellStatus", gid, ["status"]).get("result") or {}).get("status")


def browser(profile):
    """Headless Chromium. --no-sandbox: Chromium's sandbox refuses to start as root, and this
    browser opens only the daemon's own page on loopback, inside the test's throwaway network
    namespace that has no route out: there is no untrusted content to confine."""
    o = webdriver.ChromeOptions()
    o.binary_location = "/usr/bin/chromium"
    for f in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
              "--disable-component-update", "--disable-sync", "--no-proxy-server",
              f"--user-data-dir={profile}", "--window-size=1280,900"):
        o.add_argument(f)
    d = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
    d.set_page_load_timeout(20)
    d.set_script_timeout(10)
    return d


# the table as the browser shows it: one entry per row
ROWS_JS = """return [...document.querySelectorAll('#rows tr')].map(tr => ({
  kind: tr.className, gid: tr.dataset.gid, status: tr.dataset.status || '',
  iface: tr.dataset.iface || '', cells: [...tr.cells].map(td => td.textContent),
  elements: tr.querySelectorAll('*:not(td):not(progress):not(span):not(button)').length}))"""


def rows(d, gid=None, kind=None):
    return [r for r in d.execute_script(ROWS_JS)
            if (gid is None or r["gid"] == gid) and (kind is None or r["kind"] == kind)]


def text(d, id_):
    return d.find_element(By.ID, id_).text


def submit(d, field, value, button):
    f = d.find_element(By.ID, field)
    f.clear()
    f.send_keys(value)
    d.find_element(By.ID, button).click()


def click(d, gid, cls):
    """clicks the button cls of gid's row (found again if the row moved meanwhile)"""
    return until(lambda: d.find_element(By.CSS_SELECTOR, f'tr.dl[data-gid="{gid}"] button.{cls}').click() or True, 10)


def locked(a, d):
    """no secret, then a wrong one: the page shows no download, and the RPC refuses"""
    d.get(f"http://127.0.0.1:{a.port}/status")
    st = until(lambda: "Unauthorized" in text(d, "state") and text(d, "state"), 10)
    check("page without the secret: says Unauthorized", bool(st), text(d, "state"))
    check("page without the secret: no download shown", rows(d) == [], str(rows(d)))
    e = a.rpc.call("aria2.tellActive", token=False).get("error") or {}
    check("RPC without the secret: refused", e.get("message") == "Unauthorized", str(e))
    submit(d, "token", "wrong-" + a.secret, "token-use")
    time.sleep(1.5)  # a poll or two
    check("page with a wrong secret: Unauthorized, no download shown",
          "Unauthorized" in text(d, "state") and rows(d) == [], text(d, "state"))


def add_markup(a):
    """a paused download whose URI holds markup, added over the RPC: (gid, uri)"""
    uri = a.url + "?<img src=x onerror=\"document.title='pwned'\"><b>bold</b>"
    gid = a.rpc.call("aria2.addUri", [uri], {"pause": "true"}).get("result")
    check("RPC: a paused download with markup in its URI added", bool(gid))
    return gid, uri


def escaped(a, d, gid, uri):
    r = until(lambda: rows(d, gid, "dl"), 10)
    check("a URI with markup is shown as text, never as markup",
          bool(r) and r[0]["cells"][0] == uri and r[0]["elements"] == 0 and d.title == "mhttp daemon",
          f"{r} title {d.title!r}")


def add_and_complete(a, d):
    """adds a.url from the form; the per-path rows while it runs, the file at the end"""
    submit(d, "uri", a.url, "add")
    m = until(lambda: re.search(r"added ([0-9a-f]{16})", text(d, "msg")), 10)
    if not check("URL added from the page's form: a GID shown", bool(m), text(d, "msg")):
        return None
    gid = m.group(1)
    seen, shown = {}, {}

    # A path's row appears before its first rate sample: its share reads '-' until then, so
    # each row is watched until it shows a share and an SRTT (or the download ends).
    def paths():
        for r in rows(d, gid, "path"):
            seen[r["iface"]] = r["cells"]
            if re.fullmatch(r"\d+(\.\d)? ms", r["cells"][4]) and r["cells"][2].endswith("%"):
                shown[r["iface"]] = r["cells"]
        return {"wifi0", "lte0"} <= set(shown)
    until(paths, 60)
    if a.shot:
        d.save_screenshot(a.shot)
    check(f"per-path rows of the download show both interfaces ({sorted(seen)})",
          {"wifi0", "lte0"} <= set(seen), str(seen))
    check("each path row shows a share and an SRTT", set(shown) == set(seen) and len(shown) > 0,
          f"shown {shown}, seen {seen}")
    done = until(lambda: [r for r in rows(d, gid, "dl") if r["status"] in ("complete", "error")], 120)
    check("the page shows the download complete", bool(done) and done[0]["status"] == "complete"
          and "100.0 %" in done[0]["cells"][2], str(done))
    path = os.path.join(a.dir, os.path.basename(a.url))
    check("the file is byte-exact (sha256)", os.path.exists(path) and sha(path) == a.sha)
    return gid


def buttons(a, d):
    """Pause, Resume, Remove of a running download (the links slowed first), seen over the RPC"""
    slowed = [subprocess.run([sys.executable, a.testbed, "set", link, "rate=2mbit"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, timeout=30).returncode for link in ("wifi0", "lte0")]
    check("links slowed to 2 Mbit/s each (testbed set)", slowed == [0, 0], str(slowed))
    submit(d, "uri", a.slow_url, "add")
    m = until(lambda: re.search(r"added ([0-9a-f]{16})", text(d, "msg")), 10)
    if not check("second URL added from the page", bool(m), text(d, "msg")):
        return
    gid = m.group(1)
    check("it runs", until(lambda: status_of(a, gid) == "active" and
                           rows(d, gid, "dl")[0]["status"] == "active", 15))
    click(d, gid, "toggle")
    check("Pause button: the RPC says paused", until(lambda: status_of(a, gid) == "paused", 15),
          status_of(a, gid))
    check("the page shows it paused", until(lambda: rows(d, gid, "dl")[0]["status"] == "paused", 10))
    click(d, gid, "toggle")
    check("Resume button: the RPC says active again",
          until(lambda: status_of(a, gid) in ("active", "waiting"), 15), status_of(a, gid))
    until(lambda: rows(d, gid, "dl")[0]["status"] == "active", 10)
    click(d, gid, "remove")
    check("Remove button: the RPC says removed", until(lambda: status_of(a, gid) == "removed", 15),
          status_of(a, gid))
    until(lambda: rows(d, gid, "dl")[0]["status"] == "removed", 10)
    click(d, gid, "remove")
    gone = until(lambda: "error" in a.rpc.call("aria2.tellStatus", gid) and not rows(d, gid), 15)
    check("Remove of a stopped download: its result is forgotten (RPC and page)", bool(gone))


def main():
    ap = argparse.ArgumentParser()
    for k in ("port", "secret", "url", "sha", "slow-url", "dir", "profile", "testbed"):
        ap.add_argument("--" + k, required=True)
    ap.add_argument("--shot", help="a screenshot of the page while the paths show, to this PNG")
    a = ap.parse_args()
    a.rpc = Rpc(a.port, a.secret)
    d = browser(a.profile)
    try:
        markup = add_markup(a)
        locked(a, d)
        submit(d, "token", a.secret, "token-use")
        check("page with the secret: connected", until(lambda: "active" in text(d, "state"), 10), text(d, "state"))
        escaped(a, d, *markup)
        add_and_complete(a, d)
        d.get(f"http://127.0.0.1:{a.port}/#token={a.secret}")
        check("secret from the address's fragment: connected, and taken out of the address",
              until(lambda: "active" in text(d, "state"), 10) and "token" not in d.current_url, d.current_url)
        buttons(a, d)
    finally:
        d.quit()
    return 1 if daemon_rpc.FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
