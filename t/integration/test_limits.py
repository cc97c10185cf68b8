# SPDX-License-Identifier: Apache-2.0
"""SitemapExclude, SitemapAllowQuery, SitemapMaxURLs and the 2048-character
URL limit."""
import os
import re
import time

HTML = "<html><body>x</body></html>\n"
CRAWL = """
RewriteEngine On
RewriteRule ^/crawl/ /page.html [L]
RewriteRule ^/long/ /page.html [L]
"""


def test_exclude(make_server):
    conf = CRAWL + """
SitemapExclude ^/drafts/
SitemapExclude "\\.bak\\.html$"
"""
    srv = make_server(conf=conf)
    for f in ("drafts/a.html", "drafts/b.html", "x.bak.html", "published/a.html", "x.html"):
        srv.write("htdocs/" + f, HTML)
    srv.start()
    srv.get_ok("/drafts/a.html")
    srv.get_ok("/%64rafts/b.html")          # canonical path /drafts/b.html
    srv.get_ok("//drafts/b.html")
    srv.get_ok("/x.bak.html")
    srv.assert_not_recorded("/drafts/a.html", "/drafts/b.html", "/x.bak.html")
    srv.get_ok("/published/a.html")
    srv.get_ok("/x.html")
    srv.wait_recorded("/published/a.html", "/x.html")
    # the same URLs once the patterns are gone
    srv.graceful(conf=CRAWL)
    srv.get_ok("/drafts/a.html")
    srv.get_ok("/x.bak.html")
    srv.wait_recorded("/drafts/a.html", "/x.bak.html")


def test_exclude_matches_path_not_query(make_server):
    srv = make_server(conf="""
SitemapAllowQuery page
SitemapExclude "page=2"
SitemapExclude "^/secret"
""")
    srv.write("htdocs/list.html", HTML)
    srv.write("htdocs/secret.html", HTML)
    srv.start()
    srv.get_ok("/secret.html")
    srv.get_ok("/secret.html?page=1")
    srv.assert_not_recorded("/secret.html", "/secret.html?page=1")
    srv.get_ok("/list.html?page=2")
    srv.wait_recorded("/list.html?page=2")


def test_allow_query(make_server):
    srv = make_server(conf="SitemapAllowQuery page lang")
    srv.write("htdocs/list.html", HTML)
    srv.start()
    srv.get_ok("/list.html?page=2&sort=name")
    srv.get_ok("/list.html?sort=name")
    srv.get_ok("/list.html?utm_source=x&page=1")
    srv.get_ok("/list.html?PAGE=4")
    srv.assert_not_recorded("/list.html?page=2&sort=name", "/list.html?sort=name",
                            "/list.html?utm_source=x&page=1", "/list.html?page=2",
                            "/list.html?page=1", "/list.html", "/list.html?PAGE=4")
    srv.get_ok("/list.html?page=2")
    srv.get_ok("/list.html?lang=en&page=3")
    srv.get_ok("/list.html")
    srv.wait_recorded("/list.html?page=2", "/list.html?lang=en&page=3", "/list.html")


def test_allow_query_both_ways_by_config(make_server):
    srv = make_server()
    srv.write("htdocs/list.html", HTML)
    srv.start()
    srv.get_ok("/list.html?page=2")
    srv.assert_not_recorded("/list.html?page=2", "/list.html")
    srv.graceful(conf="SitemapAllowQuery page")
    srv.get_ok("/list.html?page=2")
    srv.wait_recorded("/list.html?page=2")


def test_url_length_limit(make_server):
    """base + path + query may have 2048 characters, not one more."""
    srv = make_server(conf=CRAWL + "SitemapAllowQuery q")
    srv.start()
    room = 2048 - len(srv.base)
    fits = "/long/" + "a" * (room - len("/long/"))
    too_long = fits + "b"
    assert len(srv.base + fits) == 2048
    q_fits = "/long/q?q=" + "c" * (room - len("/long/q?q="))
    assert len(srv.base + q_fits) == 2048
    srv.get_ok(too_long)
    srv.get_ok(q_fits + "d")
    srv.assert_not_recorded(too_long, q_fits + "d")
    srv.get_ok(fits)
    srv.get_ok(q_fits)
    srv.wait_recorded(fits, q_fits)


def test_max_urls(make_server):
    """Beyond SitemapMaxURLs new URLs are not recorded; a warning is logged
    (at most once a minute); known URLs are still refreshed and forgotten."""
    srv = make_server(conf=CRAWL + "SitemapMaxURLs 3")
    srv.expect_log(r"\[sitemap:warn\]")
    srv.start()
    for i in range(1, 4):
        srv.get_ok(f"/crawl/{i}")
    srv.wait_recorded("/crawl/1", "/crawl/2", "/crawl/3")
    for i in range(4, 8):
        srv.get_ok(f"/crawl/{i}")
        time.sleep(0.3)                  # separate batches
    srv.wait_log(r"", module="sitemap", level="warn")
    srv.get_ok("/crawl/1")               # known URL: fine
    srv.graceful_stop()
    assert srv.urls() == {"/crawl/1", "/crawl/2", "/crawl/3"}
    assert srv.query("SELECT url_count FROM sites WHERE base = ?", (srv.base,)) == [(3,)]
    warns = srv.log_lines("sitemap", "warn")
    per_pid = {}
    for ln in warns:
        m = re.search(r"\[pid (\d+)", ln)
        per_pid[m.group(1)] = per_pid.get(m.group(1), 0) + 1
    assert max(per_pid.values()) == 1, "warned more than once a minute:\n" + "\n".join(warns)


def test_max_urls_frees_room_after_forget(make_server):
    srv = make_server(conf="SitemapMaxURLs 2")
    srv.expect_log(r"\[sitemap:warn\]")
    for f in ("a.html", "b.html", "c.html"):
        srv.write("htdocs/" + f, HTML)
    srv.start()
    srv.get_ok("/a.html")
    srv.get_ok("/b.html")
    srv.wait_recorded("/a.html", "/b.html")
    srv.get_ok("/c.html")
    srv.wait_log(r"", module="sitemap", level="warn")
    os.unlink(srv.path("htdocs/a.html"))
    assert srv.get("/a.html").status == 404
    srv.wait_absent("/a.html")
    srv.get_ok("/c.html")
    srv.wait_recorded("/c.html")
    assert srv.urls() == {"/b.html", "/c.html"}
