# SPDX-License-Identifier: Apache-2.0
"""The site's robots.txt kept in the store (issue 31, item 6): a robots.txt
an application makes is followed by every process, also after a restart,
not only by the one that served it; a URL that becomes disallowed leaves
the sitemap without being requested again (the writer's sweep), and comes
back at its next request once allowed; a sweep over many URLs holds up
neither serving nor a stop."""
import http.client
import os
import subprocess
import time

import pytest

from conftest import SITEMAPCTL
from pg import pg_cluster, pg_db  # noqa: F401 (fixtures)
from test_why import wait_why

HTML = "<html><head><title>x</title></head><body>x</body></html>\n"

# robots.txt made by an application (as WordPress's is), through a rewrite;
# what it says is read from a file the test rewrites
ROBOTS_CGI = r"""
printf 'Content-Type: text/plain\r\n\r\n'
cat "$DOCUMENT_ROOT/../robots.body"
"""
REWRITE = ("RewriteEngine On\n"
           "RewriteRule ^/robots\\.txt$ /cgi-bin/robots.cgi [PT]\n")
ALLOW_ALL = "User-agent: *\nDisallow:\n"
NO_PRIVATE = "User-agent: *\nDisallow: /private/\n"
NO_A = "User-agent: *\nDisallow: /a/\n"

PREFORK4 = ("StartServers 4\nMinSpareServers 4\nMaxSpareServers 4\n"
            "ServerLimit 4\nMaxRequestWorkers 4\nMaxConnectionsPerChild 0\n")


def generated(make_server, body, pages=(), conf="", **kw):
    s = make_server(conf=REWRITE + conf, **kw)
    s.cgi("robots.cgi", ROBOTS_CGI)
    s.write("robots.body", body)
    for p in pages:
        s.write("htdocs" + p, HTML)
    return s


def wait_for(what, fn, timeout=20):
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        assert time.monotonic() < deadline, f"not within {timeout}s: {what}"
        time.sleep(0.1)


def stored_body(s):
    rows = s.query("SELECT r.body FROM robots r JOIN sites s"
                   " ON s.id = r.site_id WHERE s.base = ?", (s.base,))
    return rows[0][0] if rows else None


def serve_robots(s, body):
    """The application serves body at /robots.txt; wait until stored."""
    s.write("robots.body", body)
    r = s.get_ok("/robots.txt")
    assert body.encode() in r.body, r.body
    wait_for("robots.txt stored", lambda: stored_body(s) == body)


def sitemap_text(s):
    r = s.get("/sitemap.xml")
    return r.body.decode() if r.status == 200 else ""


def test_generated_rules_followed_by_every_child(make_server):
    """Prefork, four children: one serves the application's robots.txt;
    the disallowed URL, asked for on connections spread over all of them,
    is never listed, whichever child records it."""
    s = generated(make_server, NO_PRIVATE, ["/private/a.html"],
                  mpm="prefork", mpm_conf=PREFORK4)
    for i in range(16):
        s.write(f"htdocs/public/{i}.html", HTML)
    s.start()
    serve_robots(s, NO_PRIVATE)
    # each connection (a child, whichever is free) asks for the
    # disallowed page, then for a fresh page: once that is stored, the
    # child's writer has dealt with the first
    for i in range(16):
        c = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
        for path in ("/private/a.html", f"/public/{i}.html"):
            c.request("GET", path, headers={"Host": f"127.0.0.1:{s.port}"})
            r = c.getresponse()
            r.read()
            assert r.status == 200, (path, r.status)
        c.close()
    s.wait_recorded(*[f"/public/{i}.html" for i in range(16)])
    s.assert_not_recorded("/private/a.html")
    assert "/private/" not in sitemap_text(s)
    wait_why(s.db_path, s.base + "/private/a.html",
             "robots.txt line 2 disallows it for *")


def test_generated_rules_followed_after_graceful_restart(make_server):
    """The process that served robots.txt is gone (graceful restart); the
    new one has never served it and still keeps the URL out."""
    s = generated(make_server, NO_PRIVATE, ["/private/a.html",
                                            "/public/a.html"])
    s.start()
    serve_robots(s, NO_PRIVATE)
    s.graceful()
    s.get_ok("/private/a.html")
    s.get_ok("/public/a.html")
    s.wait_recorded("/public/a.html")
    s.sentinel()
    s.assert_not_recorded("/private/a.html")
    wait_why(s.db_path, s.base + "/private/a.html",
             "robots.txt line 2 disallows it for *")


def test_newly_disallowed_urls_leave_without_a_request(make_server):
    pages = ["/a/1.html", "/a/2.html", "/b.html"]
    s = generated(make_server, ALLOW_ALL, pages)
    s.start()
    serve_robots(s, ALLOW_ALL)
    for p in pages:
        s.get_ok(p)
    s.wait_recorded(*pages)
    # robots.txt starts disallowing /a/: nobody asks for /a/... again
    serve_robots(s, NO_A)
    s.wait_absent("/a/1.html", "/a/2.html")
    assert "/b.html" in s.urls()
    text = sitemap_text(s)
    assert "/b.html" in text and "/a/" not in text, text
    f = wait_why(s.db_path, s.base + "/a/1.html",
                 "robots.txt line 2 disallows it for *")
    assert f["listed"] == "no"
    # allowed again: back at its next request
    serve_robots(s, ALLOW_ALL)
    s.get_ok("/a/1.html")
    s.wait_recorded("/a/1.html")
    assert "/a/1.html" in sitemap_text(s)


def test_window_before_robots_txt_was_ever_served(make_server):
    """Before anyone fetched the application's robots.txt its rules are
    unknown: a URL recorded then is listed, and removed once robots.txt
    is first served (the first rules stored start a sweep)."""
    s = generated(make_server, NO_PRIVATE, ["/private/a.html"])
    s.start()
    s.get_ok("/private/a.html")
    s.wait_recorded("/private/a.html")
    s.get_ok("/robots.txt")
    s.wait_absent("/private/a.html")
    wait_why(s.db_path, s.base + "/private/a.html",
             "robots.txt line 2 disallows it for *")


def test_newly_disallowed_by_a_file(make_server):
    """The same for a robots.txt file: read when it changed (here at a
    request for another page), the stored URLs it disallows go."""
    s = make_server()
    for p in ("/a/1.html", "/b.html"):
        s.write("htdocs" + p, HTML)
    s.write("htdocs/robots.txt", ALLOW_ALL)
    s.start()
    s.get_ok("/a/1.html")
    s.get_ok("/b.html")
    s.wait_recorded("/a/1.html", "/b.html")
    time.sleep(1.1)                 # a new modification time
    s.write("htdocs/robots.txt", NO_A)
    # the file is looked at every 5 s at most, at a request
    deadline = time.monotonic() + 20
    while "/a/1.html" in s.urls():
        assert time.monotonic() < deadline, s.log_tail(20)
        s.get_ok("/b.html")
        time.sleep(0.5)
    wait_why(s.db_path, s.base + "/a/1.html",
             "robots.txt line 2 disallows it for *")


def test_sweep_on_postgresql(make_server, pg_db):  # noqa: F811
    base = "https://www.example.com"
    pages = ["/a/1.html", "/a/2.html", "/b.html"]
    s = generated(make_server, ALLOW_ALL, pages, db=pg_db.uri,
                  conf=f"SitemapBaseURL {base}\n")
    s.start()
    s.get_ok("/robots.txt")
    for p in pages:
        s.get_ok(p)
    pg_db.wait_urls(base, pages)
    s.write("robots.body", NO_A)
    s.get_ok("/robots.txt")
    deadline = time.monotonic() + 20
    while set(pg_db.urls(base)) != {"/b.html"}:
        assert time.monotonic() < deadline, (pg_db.urls(base), s.log_tail())
        time.sleep(0.2)
    assert pg_db.sql("SELECT v.url, v.verdict, v.reason FROM"
                     " sitemap_verdicts v WHERE v.url LIKE '/a/%'"
                     " ORDER BY v.url") == [
        ["/a/1.html", "removed", "robots.txt line 2 disallows it for *"],
        ["/a/2.html", "removed", "robots.txt line 2 disallows it for *"]]
    wait_for("the sweep done", lambda: pg_db.sql(
        "SELECT sweep IS NULL, body = E'User-agent: *\\nDisallow: /a/\\n'"
        " FROM sitemap_robots") == [["t", "t"]])
    # a stale request cannot add one back
    s.get_ok("/a/1.html")
    s.get_ok("/b.html?x")           # (refused: a query) then a sentinel
    s.write("htdocs/c.html", HTML)
    s.get_ok("/c.html")
    pg_db.wait_urls(base, ["/c.html"])
    assert "/a/1.html" not in pg_db.urls(base)


def big_store(s, tmp_path, n):
    log = tmp_path / "access.log"
    with open(log, "w") as f:
        for i in range(n):
            f.write(f'1.2.3.4 - - [10/Oct/2026:13:55:36 +0000] '
                    f'"GET /a/{i:05d}.html HTTP/1.1" 200 5\n')
    r = subprocess.run([SITEMAPCTL, "import", s.db_path, "--site", s.base,
                        str(log)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr


def count_a(s):
    (n,), = s.query("SELECT count(*) FROM urls WHERE url LIKE '/a/%'")
    return n


@pytest.mark.parametrize("n", [20000])
def test_big_sweep_bounded(make_server, tmp_path, n):
    """20,000 stored URLs become disallowed: serving goes on meanwhile
    (each request answered well within a second), a graceful stop in the
    middle of the sweep is not held up, and the next start finishes it
    where it was."""
    s = generated(make_server, ALLOW_ALL, ["/b.html"])
    big_store(s, tmp_path, n)
    s.start()
    serve_robots(s, ALLOW_ALL)
    s.get_ok("/b.html")
    s.wait_recorded("/b.html")
    assert count_a(s) == n
    serve_robots(s, NO_A)
    slowest = 0.0
    t0 = time.monotonic()
    while count_a(s) > n // 2:
        assert time.monotonic() - t0 < 60, s.log_tail()
        for path in ("/b.html", "/sitemap.xml"):
            t = time.monotonic()
            s.get_ok(path)
            slowest = max(slowest, time.monotonic() - t)
    assert slowest < 1.0, slowest
    left = count_a(s)
    t = time.monotonic()
    s.graceful_stop()
    stop_took = time.monotonic() - t
    assert stop_took < 10, stop_took
    print(f"\nsweep: {n - left} of {n} removed in "
          f"{time.monotonic() - t0:.1f}s, slowest request {slowest:.3f}s, "
          f"graceful stop {stop_took:.2f}s")
    s.restart()
    t = time.monotonic()
    # the last chunk's URLs leave before the next pass finds nothing more
    # and clears the cursor: wait for both
    wait_for("sweep finished after the restart",
             lambda: count_a(s) == 0
             and s.query("SELECT sweep FROM robots") == [(None,)],
             timeout=60)
    print(f"rest of the sweep after the restart: {time.monotonic() - t:.1f}s")
    assert "/b.html" in s.urls()
