# SPDX-License-Identifier: Apache-2.0
"""Why is my page not listed? (issue 31, item 8).  The module keeps the
latest verdict of each URL it left out or removed (a table of at most
10,000 rows a site, written by the writer thread in its batches), and
`sitemapctl why DB URL` reads it back with the URL's listing; the status
page's JSON lists the latest URLs left out.  Every common reason is checked
with a real httpd, and a flood of one ignored URL writes at most one row."""
import json
import os
import sqlite3
import subprocess
import time

import pytest

from conftest import SITEMAPCTL
from pg import PASSWORD, pg_cluster, pg_db  # noqa: F401 (fixtures)

HTML = "<html><head><title>t</title></head><body>x</body></html>\n"
EX_OK, EX_USAGE, EX_UNKNOWN_SITE, EX_NOT_SEEN = 0, 2, 4, 8

# A CGI steered by request headers: X-Test-Canonical names a canonical,
# X-Test-Meta puts <meta name=robots content=...> in the head.
CGI = r"""
printf 'Content-Type: text/html\r\n\r\n<html><head>'
if [ -n "$HTTP_X_TEST_CANONICAL" ]; then printf '<link rel="canonical" href="%s">' "$HTTP_X_TEST_CANONICAL"; fi
if [ -n "$HTTP_X_TEST_META" ]; then printf '<meta name="robots" content="%s">' "$HTTP_X_TEST_META"; fi
printf '</head><body>cgi</body></html>\n'
"""

CONF = """
SetEnvIf X-Test-Robots "(.+)" TEST_ROBOTS=$1
Header always set X-Robots-Tag "%{TEST_ROBOTS}e" env=TEST_ROBOTS
SetEnvIf X-Test-CC "(.+)" TEST_CC=$1
Header always set Cache-Control "%{TEST_CC}e" env=TEST_CC
<Location /local/>
    Require ip 127.0.0.1
</Location>
SitemapExclude ^/hidden/
<Directory "{root}/htdocs/pi">
    AcceptPathInfo On
</Directory>
<Location /sitemap-status>
    SetHandler sitemap-status
</Location>
"""


def why(db, url, *args, want=None):
    r = subprocess.run([SITEMAPCTL, "why", db, url, *args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, errors="replace", timeout=60)
    if want is not None:
        assert r.returncode == want, (url, r.returncode, r.stdout, r.stderr)
    fields = {}
    for line in r.stdout.splitlines():
        k, _, v = line.partition(": ")
        fields[k] = v
    return r, fields


def wait_why(db, url, reason, *args, timeout=20):
    """sitemapctl why's fields once url's verdict says reason."""
    deadline = time.monotonic() + timeout
    while True:
        r, f = why(db, url, *args)
        if f.get("reason") == reason:
            assert r.returncode == EX_OK, (r.stdout, r.stderr)
            return f
        if time.monotonic() > deadline:
            raise AssertionError(f"{url}: no verdict '{reason}' within "
                                 f"{timeout}s: {r.returncode}\n{r.stdout}"
                                 f"{r.stderr}")
        time.sleep(0.1)


@pytest.fixture
def srv(make_server):
    s = make_server(modules=("authz_host",))
    s.conf_text = CONF.replace("{root}", s.root)
    for f in ("a.html", "pi/file.html", "hidden/x.html", "gone.html",
              "s.html", "local/l.html", "cc.html", "auth.html"):
        s.write("htdocs/" + f, HTML)
    s.write("htdocs/notes.txt", "plain text\n")
    s.write("htdocs/robots.txt", "User-agent: *\nDisallow: /blocked/\n")
    s.write("htdocs/blocked/b.html", HTML)
    s.write("htdocs/logo.png", "\x89PNG not really\n")
    s.cgi("c.cgi", CGI)
    return s.start()


def verdicts(srv):
    return srv.query("SELECT v.url, v.verdict, v.reason, v.detail, v.status"
                     " FROM verdicts v JOIN sites s ON s.id = v.site_id"
                     " WHERE s.base = ? ORDER BY v.url", (srv.base,))


def test_listed_url(srv):
    srv.get_ok("/a.html")
    srv.wait_recorded("/a.html")
    r, f = why(srv.db_path, srv.base + "/a.html", want=EX_OK)
    assert f["url"] == srv.base + "/a.html"
    assert f["listed"] == "yes"
    assert f["lastmod"].startswith("20") and "verdict" not in f


def test_path_info_after_a_static_file(srv):
    srv.get_ok("/pi/file.html/extra")
    f = wait_why(srv.db_path, "/pi/file.html/extra", "path info",
                 "--site", srv.base)
    assert f["listed"] == "no" and f["verdict"] == "left out"
    assert f["status"] == "200"


def test_session_cookie(srv):
    srv.get_ok("/s.html", headers={"Cookie": "PHPSESSID=abc"})
    f = wait_why(srv.db_path, srv.base + "/s.html", "session")
    assert f["listed"] == "no"


def test_noindex_meta_and_header(srv):
    srv.get_ok("/cgi-bin/c.cgi", headers={"X-Test-Meta": "noindex"})
    f = wait_why(srv.db_path, srv.base + "/cgi-bin/c.cgi",
                 "meta robots noindex")
    assert f["listed"] == "no" and f["verdict"] == "left out"
    srv.get_ok("/a.html", headers={"X-Test-Robots": "noindex"})
    wait_why(srv.db_path, srv.base + "/a.html", "x-robots-tag")


def test_canonical_shows_its_target(srv):
    srv.get_ok("/cgi-bin/c.cgi", headers={
        "X-Test-Canonical": "/a.html"})
    f = wait_why(srv.db_path, srv.base + "/cgi-bin/c.cgi",
                 "canonical names another URL")
    assert f["detail"] == srv.base + "/a.html"


def test_excluded_query_and_content_type(srv):
    srv.get_ok("/hidden/x.html")
    srv.get_ok("/a.html?utm_source=x&b=2")
    srv.get_ok("/notes.txt")
    srv.get_ok("/logo.png")
    wait_why(srv.db_path, srv.base + "/hidden/x.html", "excluded")
    # The URL as asked, its query normalised as sitemapctl normalises one.
    wait_why(srv.db_path, srv.base + "/a.html?utm_source=x&b=2", "query")
    wait_why(srv.db_path, srv.base + "/notes.txt", "content type")
    # Not a page type: no verdict kept.
    srv.sentinel()
    why(srv.db_path, srv.base + "/logo.png", want=EX_NOT_SEEN)


def test_credentials_no_store_and_restricted(srv):
    srv.get_ok("/auth.html", headers={"Authorization": "Basic YTpi"})
    srv.get_ok("/cc.html", headers={"X-Test-CC": "no-store"})
    srv.get_ok("/local/l.html")
    wait_why(srv.db_path, srv.base + "/auth.html", "authenticated")
    wait_why(srv.db_path, srv.base + "/cc.html", "cache-control no-store")
    f = wait_why(srv.db_path, srv.base + "/local/l.html",
                 "not for anonymous visitors")
    assert f["listed"] == "no"


def test_301_shows_its_location(srv):
    srv.get_ok("/a.html")
    srv.wait_recorded("/a.html")
    srv.stop()
    srv.conf_text += "Redirect permanent /a.html /s.html\n"
    srv.write_conf()
    srv.restart()
    assert srv.get("/a.html").status == 301
    f = wait_why(srv.db_path, srv.base + "/a.html", "status 301")
    assert f["verdict"] == "removed"
    assert f["detail"].endswith("/s.html"), f


def test_robots_txt_line(srv):
    srv.get_ok("/blocked/b.html")
    f = wait_why(srv.db_path, srv.base + "/blocked/b.html",
                 "robots.txt line 2 disallows it for *")
    assert f["listed"] == "no" and f["verdict"] == "left out"


def test_404_removes_and_says_so(srv):
    srv.get_ok("/gone.html")
    srv.wait_recorded("/gone.html")
    os.unlink(srv.path("htdocs/gone.html"))
    assert srv.get("/gone.html").status == 404
    f = wait_why(srv.db_path, srv.base + "/gone.html", "status 404")
    assert f["verdict"] == "removed" and f["listed"] == "no"
    assert f["status"] == "404"


def test_exit_statuses_and_usage(srv):
    srv.get_ok("/a.html")
    srv.wait_recorded("/a.html")
    r, f = why(srv.db_path, srv.base + "/never.html", want=EX_NOT_SEEN)
    assert f["listed"] == "no" and f["verdict"].startswith("none kept")
    why(srv.db_path, "/a.html", want=EX_USAGE)           # a path, no site
    why(srv.db_path, "https://other.example/a.html", "--site", srv.base,
        want=EX_USAGE)                                   # another site
    why(srv.db_path, "https://other.example/a.html", want=EX_UNKNOWN_SITE)
    r = subprocess.run([SITEMAPCTL, "why", srv.db_path], text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode == EX_USAGE and "needs a URL" in r.stderr


def test_flood_of_one_ignored_url_writes_once(srv):
    for _ in range(200):
        srv.get_ok("/s.html", headers={"Cookie": "PHPSESSID=abc"})
    wait_why(srv.db_path, srv.base + "/s.html", "session")
    srv.sentinel()
    assert verdicts(srv) == [("/s.html", "left out", "session", None, 200)]
    # Written once per process (seq grows with each write): once under
    # event and worker (one child), at most ServerLimit (4) under prefork.
    (seq,), = srv.query("SELECT seq FROM verdicts")
    assert seq == 1 or (srv.mpm == "prefork" and seq <= 4), seq


def test_status_json_lists_left_out(srv):
    srv.get_ok("/hidden/x.html")
    srv.get_ok("/s.html", headers={"Cookie": "PHPSESSID=abc"})
    wait_why(srv.db_path, srv.base + "/s.html", "session")
    wait_why(srv.db_path, srv.base + "/hidden/x.html", "excluded")
    # Listed since: not among the left out any more.
    srv.get_ok("/s.html")
    # The module's own answers are never noted (no-store, text/plain).
    srv.get_ok("/sitemap-status")
    srv.get_ok("/sitemap-status?metrics")
    srv.wait_recorded("/s.html")
    srv.sentinel()
    r = srv.get("/sitemap-status?json")
    site = json.loads(r.body)["sites"][0]
    urls = [(v["url"], v["reason"], v["verdict"]) for v in site["left_out"]]
    assert urls == [("/hidden/x.html", "excluded", "left out")]
    assert site["left_out"][0]["status"] == 200
    # The HTML page lists them too.
    html = srv.get_ok("/sitemap-status").body.decode()
    assert "<h3>Latest left out</h3>" in html
    assert "<li>/hidden/x.html: left out, excluded <small>" in html


def test_verdicts_are_bounded(srv):
    """At most SM_VERDICTS_MAX rows a site: the oldest go."""
    db = srv.db_path
    srv.get_ok("/a.html")
    srv.wait_recorded("/a.html")
    srv.stop()
    con = sqlite3.connect(db)
    sid = con.execute("SELECT id FROM sites").fetchone()[0]
    con.executemany("INSERT INTO verdicts VALUES (?, ?, ?, 'left out',"
                    " 'session', NULL, 200, 1)",
                    [(sid, f"/old{i}", i) for i in range(1, 10001)])
    con.commit()
    con.close()
    srv.restart()
    srv.get_ok("/hidden/x.html")
    wait_why(db, srv.base + "/hidden/x.html", "excluded")
    assert srv.query("SELECT count(*), min(seq), max(seq) FROM verdicts") \
        == [(10000, 2, 10001)]
    why(db, srv.base + "/old1", want=EX_NOT_SEEN)


def test_postgresql(make_server, pg_db):
    base = "https://www.example.com"
    s = make_server(db=pg_db.uri, conf=f"SitemapBaseURL {base}\n"
                    "SitemapExclude ^/hidden/\n<Location /sitemap-status>\n"
                    "SetHandler sitemap-status\n</Location>\n")
    s.write("htdocs/hidden/x.html", HTML)
    s.write("htdocs/gone.html", HTML)
    s.start()
    s.get_ok("/hidden/x.html")
    s.get_ok("/gone.html")
    pg_db.wait_urls(base, {"/gone.html"})
    os.unlink(s.path("htdocs/gone.html"))
    assert s.get("/gone.html").status == 404
    f = wait_why(pg_db.uri, base + "/hidden/x.html", "excluded")
    assert f["listed"] == "no" and f["verdict"] == "left out"
    f = wait_why(pg_db.uri, base + "/gone.html", "status 404")
    assert f["verdict"] == "removed"
    why(pg_db.uri, base + "/never.html", want=EX_NOT_SEEN)
    site = json.loads(s.get("/sitemap-status?json").body)["sites"][0]
    assert [(v["url"], v["verdict"], v["reason"], v["status"])
            for v in site["left_out"]] == [
        ("/gone.html", "removed", "status 404", 404),
        ("/hidden/x.html", "left out", "excluded", 200)]
    s.get_ok("/page.html")
    pg_db.wait_urls(base, {"/page.html"})
    r, f = why(pg_db.uri, base + "/page.html", want=EX_OK)
    assert f["listed"] == "yes"


def test_postgresql_role_without_the_verdicts_grant(make_server, pg_cluster):
    """A least-privileged role granted the tables before sitemap_verdicts
    came: URLs are still recorded (no verdicts, said once in the log), and
    sitemapctl check names the missing grant."""
    base = "https://www.example.com"
    name = "noverdicts%d" % time.monotonic_ns()
    pg_cluster.sql(f"CREATE ROLE {name} LOGIN PASSWORD '{PASSWORD}'")
    pg_cluster.sql(f"CREATE DATABASE {name}")
    owner = (f"postgresql://postgres@/{name}?host={pg_cluster.dir}"
             f"&port={pg_cluster.port}")
    r = subprocess.run([SITEMAPCTL, "add", owner, "--site", base, "/x"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    pg_cluster.sql(
        f"GRANT USAGE ON SCHEMA public TO {name};"
        " GRANT SELECT, INSERT, UPDATE, DELETE ON sitemap_meta, sitemap_sites,"
        " sitemap_urls, sitemap_pages, sitemap_indexnow_pending,"
        f" sitemap_indexnow_state, sitemap_removed_days TO {name};"
        f" GRANT USAGE ON SEQUENCE sitemap_site_ids TO {name}", db=name)
    uri = (f"postgresql://{name}:{PASSWORD}@127.0.0.1:{pg_cluster.port}/"
           f"{name}")
    r = subprocess.run([SITEMAPCTL, "check", uri], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and "may not read and write all of the" \
        in r.stdout, r.stdout + r.stderr
    s = make_server(db=uri, conf=f"SitemapBaseURL {base}\n"
                    "SitemapExclude ^/hidden/\nSitemapImages On\n")
    s.expect_log(r"may not write sitemap_verdicts: no verdicts are kept")
    s.expect_log(r"may not write sitemap_robots")
    s.expect_log(r"may not write sitemap_images: no images are kept")
    s.write("htdocs/hidden/x.html", HTML)
    s.write("htdocs/img.html", "<!DOCTYPE html><html><head><title>I</title>"
            '<meta property="og:image" content="/a.png"></head>'
            "<body><p>i</p></body></html>")
    s.start()
    s.get_ok("/hidden/x.html")
    s.get_ok("/page.html")
    s.get_ok("/img.html")
    deadline = time.monotonic() + 15
    while not {("/page.html",), ("/img.html",)} <= {
            tuple(row) for row in pg_cluster.sql(
                "SELECT url FROM sitemap_urls", db=name)}:
        assert time.monotonic() < deadline, s.log_tail()
        time.sleep(0.2)
    s.wait_log(r"may not write sitemap_verdicts")
    # Pages with images are still recorded, without them (said once).
    s.wait_log(r"may not write sitemap_images: no images are kept")
    assert PASSWORD not in s.log_text()
