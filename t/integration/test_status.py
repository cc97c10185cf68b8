# SPDX-License-Identifier: Apache-2.0
"""The operators' status handler (SetHandler sitemap-status): the HTML page
with its SVG chart, ?json (and Accept: application/json) whose numbers
match the store, ?metrics in the Prometheus text format, counters that add
up across child processes, and a line per site in mod_status's page."""
import concurrent.futures
import json
import re
import time
import xml.etree.ElementTree as ET

CRAWL = "RewriteEngine On\nRewriteRule ^/p/ /page.html [L]\n"
STATUS = "<Location /sitemap-status>\n  SetHandler sitemap-status\n</Location>\n"
# Several processes, so that counters must be shared to add up.
PREFORK = "StartServers 4\nMinSpareServers 4\nMaxSpareServers 4\n"


def status_json(srv, **kw):
    r = srv.get("/sitemap-status?json", **kw)
    assert r.status == 200, r
    assert r.header("Content-Type") == "application/json"
    return json.loads(r.body)


def wait_counts(srv, want_written, timeout=30):
    deadline = time.monotonic() + timeout
    while True:
        site = status_json(srv)["sites"][0]
        if site["recorder"]["written"] >= want_written:
            return site
        assert time.monotonic() < deadline, site
        time.sleep(0.2)


def test_status_json_matches_store_across_processes(make_server):
    srv = make_server(mpm="prefork", mpm_conf=PREFORK,
                      conf="SitemapPageSize 3\n" + CRAWL + STATUS)
    srv.start()
    paths = [f"/p/{i}.html" for i in range(10)]
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        list(ex.map(srv.get_ok, paths * 2))           # each twice
    srv.wait_recorded(*paths)
    site = wait_counts(srv, 10)
    urls = srv.query("SELECT count(*) FROM urls")[0][0]
    pages = srv.query("SELECT count(*) FROM pages WHERE url_count > 0")[0][0]
    assert site["base"] == srv.base
    assert site["urls"] == urls == 10 and site["pages"] == pages == 4
    rec = site["recorder"]
    # Twenty responses over four children: each child's recorder writes
    # the URLs it saw first (its memory is its own), so every URL is
    # written once at least and twice at most; the sums of all children
    # agree with each other (with per-process counters the child that
    # answers would not see ten writes: wait_counts times out).
    assert 10 <= rec["written"] <= 20 and rec["written"] == rec["queued"], rec
    assert rec["queued"] + rec["skipped"] == rec["recorded"], rec
    assert rec["recorded"] <= 20 and rec["faults"] == 0, rec
    assert site["health"] == "ok"
    assert site["store_bytes"] > 0
    # Newest changes: URLs of the store, newest lastmod first.
    stored = {r[0] for r in srv.query("SELECT url FROM urls")}
    assert site["recent"] and {u["url"] for u in site["recent"]} <= stored
    # The chart's days: today's added count is the store's.
    assert len(site["days"]) == 28
    assert site["days"][-1]["added"] == 10, site["days"][-3:]
    # Accept: application/json gives the same.
    r = srv.get("/sitemap-status", headers={"Accept": "application/json"})
    assert json.loads(r.body)["sites"][0]["urls"] == 10


def test_status_forgotten_and_removed_per_day(make_server):
    srv = make_server(conf=CRAWL + STATUS + "Alias /gone /nonexistent\n")
    srv.start()
    srv.get_ok("/p/a.html")
    srv.wait_recorded("/p/a.html")
    srv.write("htdocs/x.html", "<html></html>")
    srv.get_ok("/x.html")
    srv.wait_recorded("/x.html")
    import os
    os.unlink(srv.path("htdocs/x.html"))
    assert srv.get("/x.html").status == 404             # forgets it
    srv.wait_absent("/x.html")
    site = wait_counts(srv, 3)
    assert site["recorder"]["forgotten"] == 1, site["recorder"]
    assert site["days"][-1]["removed"] == 1, site["days"][-1]
    # The removals are the store's: a restart keeps them, and sitemapctl's
    # count too.
    import subprocess
    from conftest import SITEMAPCTL
    srv.stop()
    srv.restart()
    r = subprocess.run([SITEMAPCTL, "remove",
                        srv.db_path, "--site", srv.base, "/p/a.html"],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "1 removed" in r.stdout, r.stdout + r.stderr
    r = srv.get("/sitemap-status?json")
    site = json.loads(r.body)["sites"][0]
    assert site["days"][-1]["removed"] == 2, site["days"][-1]


def test_status_html_svg_and_escaping(make_server):
    srv = make_server(conf=CRAWL + STATUS)
    srv.start()
    srv.get_ok("/p/a&b'c<i>.html")
    srv.wait_recorded("/p/a&b'c%3Ci%3E.html")
    wait_counts(srv, 1)
    r = srv.get("/sitemap-status")
    assert r.status == 200 and r.header("Content-Type").startswith("text/html")
    body = r.body.decode()
    assert "<script" not in body
    assert "/p/a&amp;b&apos;c%3Ci%3E.html" in body
    svg = re.search(r"<svg .*?</svg>", body, re.S).group(0)
    root = ET.fromstring(svg)                           # well-formed SVG
    rects = root.findall("{http://www.w3.org/2000/svg}rect")
    assert rects and rects[-1].get("fill") == "#2f9e44"   # today: added
    assert srv.request("HEAD", "/sitemap-status").body == b""


def test_status_metrics(make_server):
    srv = make_server(conf=CRAWL + STATUS)
    srv.start()
    srv.get_ok("/p/a.html")
    srv.wait_recorded("/p/a.html")
    wait_counts(srv, 1)
    r = srv.get("/sitemap-status?metrics")
    assert r.header("Content-Type").startswith("text/plain; version=0.0.4")
    text = r.body.decode()
    assert f'sitemap_urls{{site="{srv.base}"}} 1\n' in text
    assert re.search(r'^sitemap_recorder_written_total\{store="[^"]+"\} 1$', text, re.M)
    assert re.search(rf'^sitemap_store_bytes{{site="{re.escape(srv.base)}"}} [1-9][0-9]*$',
                     text, re.M), text
    assert "# TYPE sitemap_recorder_written_total counter" in text
    for line in text.splitlines():                      # the exposition grammar
        assert line.startswith("# ") or re.match(
            r'^[a-zA-Z_:][a-zA-Z0-9_:]*\{[a-z]+="(?:[^"\\\n]|\\.)*"\} -?[0-9]+$', line), line


def test_status_line_in_mod_status(make_server):
    srv = make_server(conf=CRAWL + STATUS + "<Location /server-status>\n"
                      "  SetHandler server-status\n</Location>\n",
                      modules=("status",))
    srv.start()
    srv.get_ok("/p/a.html")
    srv.wait_recorded("/p/a.html")
    r = srv.get("/server-status?auto")
    assert re.search(rf"^Sitemap {re.escape(srv.base)}: 1 URLs, 1 pages, ",
                     r.body.decode(), re.M), r.body[-400:]
    r = srv.get("/server-status")
    assert f"Sitemap {srv.base}: 1 URLs in 1 pages" in r.body.decode()


def test_status_not_claimed_without_sethandler(make_server):
    srv = make_server(conf=CRAWL)
    srv.start()
    assert srv.get("/sitemap-status").status == 404


def test_status_shows_store_faults(make_server):
    """A store locked past the writer's busy timeout: the failed writes are
    counted, the last one's reason shown, health "failing" until a write
    succeeds again."""
    import sqlite3
    from conftest import as_run_user
    srv = make_server(conf=CRAWL + STATUS)
    srv.expect_log(r"\[sitemap:(warn|error)\].*" + re.escape(srv.db_path))
    srv.start()
    srv.get_ok("/p/before.html")
    srv.wait_recorded("/p/before.html")
    with as_run_user():
        con = sqlite3.connect(srv.db_path, timeout=10, isolation_level=None)
        con.execute("BEGIN EXCLUSIVE")
    try:
        srv.get_ok("/p/locked.html")
        deadline = time.monotonic() + 30
        while True:
            site = status_json(srv)["sites"][0]
            if site["recorder"]["faults"] >= 1:
                break
            assert time.monotonic() < deadline, site
            time.sleep(0.3)
        assert site["health"] == "failing", site
        assert re.search(r"lock|busy", site["recorder"]["last_fault_reason"]), site
        assert site["recorder"]["last_fault"]
    finally:
        con.execute("ROLLBACK")
        con.close()
    srv.wait_recorded("/p/locked.html", timeout=30)
    deadline = time.monotonic() + 10
    while status_json(srv)["sites"][0]["health"] != "ok":
        assert time.monotonic() < deadline
        time.sleep(0.2)


def test_status_newest_changes_by_lastmod(make_server):
    """The newest changes: the ten URLs of newest lastmod (the files'
    Last-Modified), newest first, whatever order they were recorded in."""
    srv = make_server(conf=STATUS)
    t0 = 1700000000
    order = [5, 0, 11, 3, 8, 1, 10, 2, 9, 4, 7, 6]
    for i in order:
        srv.write(f"htdocs/f{i}.html", "<html></html>", mtime=t0 + i * 3600)
    srv.start()
    for i in order:
        srv.get_ok(f"/f{i}.html")
    srv.wait_recorded(*[f"/f{i}.html" for i in order])
    recent = status_json(srv)["sites"][0]["recent"]
    assert [u["url"] for u in recent] == [f"/f{i}.html" for i in range(11, 1, -1)]
    assert recent[0]["lastmod"] == time.strftime("%Y-%m-%dT%H:%M:%S+00:00",
                                                 time.gmtime(t0 + 11 * 3600))
