# SPDX-License-Identifier: Apache-2.0
"""SitemapIndexNowStale (issue 36): listed URLs a verified crawler fetched
before they last changed, a change more than a day old, are submitted
with IndexNow once (the fake endpoint of test_indexnow.py); the directive
is refused without IndexNow."""
import sqlite3
import time

import pytest

from conftest import as_run_user, build_has
from test_crawl_coverage import (CRAWLER_IP, STATUS, crawl, ranges_file,
                                 wait_figures)
from test_indexnow import (corroborate, endpoint, indexnow_conf,  # noqa: F401
                           srv_ctl)

DAY = 86400


def wait_sent(srv, ep, before, url, timeout=20):
    """Until url is in a POST the endpoint accepted after the first
    before URLs."""
    deadline = time.monotonic() + timeout
    while url not in ep.delivered()[before:]:
        assert time.monotonic() < deadline, (url, ep.posts, srv.log_tail(20))
        time.sleep(0.1)
    return ep.delivered()[before:]


def test_refused_without_indexnow(make_server):
    srv = make_server()
    if build_has("indexnow"):
        srv.config_fails("SitemapIndexNowStale On needs SitemapIndexNow On",
                         conf="SitemapIndexNowStale On\n")
    else:
        srv.config_fails("SitemapIndexNowStale On", "--without-indexnow",
                         conf="SitemapIndexNowStale On\n")


def test_off_is_accepted_without_indexnow(make_server):
    srv = make_server(conf="SitemapIndexNowStale Off\n")
    srv.start()
    srv.get_ok("/page.html")


def test_bad_value_refused(make_server):
    srv = make_server()
    srv.config_fails("SitemapIndexNowStale", conf="SitemapIndexNowStale yes\n")


@pytest.mark.skipif(not build_has("indexnow"), reason="built --without-indexnow")
def test_stale_urls_submitted_once(make_server, endpoint):  # noqa: F811
    srv = make_server()
    path = ranges_file(srv)
    srv.conf_text = (STATUS + f'SitemapCrawler Googlebot googlebot "{path}"\n'
                     + indexnow_conf(endpoint, "SitemapIndexNowStale On\n"))
    srv.write("htdocs/other.html", "<html><body>other</body></html>\n")
    srv.start()
    srv.get_ok("/page.html")
    srv.get_ok("/other.html")
    corroborate(srv, "/page.html", "/other.html")
    page, other = srv.base + "/page.html", srv.base + "/other.html"
    endpoint.wait_delivered([page, other])
    crawl(srv, "/page.html", CRAWLER_IP)
    crawl(srv, "/other.html", CRAWLER_IP)
    wait_figures(srv, verified_hits=2, crawled_1d=2, stale=0)

    # The crawler fetched both 3 days ago; /page.html changed 2 days ago
    # (stale for over a day: submitted), /other.html an hour ago (stale,
    # too recent: not yet).
    now = int(time.time())
    with as_run_user():
        con = sqlite3.connect(srv.db_path, timeout=5)
        con.execute("UPDATE crawls SET fetched = ?", (now - 3 * DAY,))
        con.execute("UPDATE urls SET lastmod = ? WHERE url = '/page.html'",
                    (now - 2 * DAY,))
        con.execute("UPDATE urls SET lastmod = ? WHERE url = '/other.html'",
                    (now - 3600,))
        con.commit()
        con.close()
    before = len(endpoint.delivered())
    srv.graceful()                  # the writer looks when it starts
    wait_sent(srv, endpoint, before, page)
    assert srv.query("SELECT c.stale_sent FROM crawls c JOIN urls u"
                     " ON u.id = c.url_id WHERE u.url = '/page.html'") == \
        [(now - 2 * DAY,)]

    # Once: a second start submits it no more.  The sentinel: a URL
    # queued by hand after it is delivered, the stale one not again.
    srv.graceful()
    out = srv_ctl(srv, "indexnow", "--site", srv.base, "/sentinel.html")
    assert "1 URL queued" in out, out
    sent = wait_sent(srv, endpoint, before, srv.base + "/sentinel.html")
    assert sent.count(page) == 1, sent
    assert other not in sent, sent
    assert "queued for IndexNow" in srv.log_text()
