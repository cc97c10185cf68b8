# SPDX-License-Identifier: Apache-2.0
"""SitemapExpire: URLs not served for that long leave the store; URLs that
keep being served stay, even though repeats are skipped in memory."""
import time

import pytest

CRAWL = "RewriteEngine On\nRewriteRule ^/crawl/ /page.html [L]\n"


@pytest.mark.slow
def test_unserved_urls_expire_served_ones_stay(make_server):
    srv = make_server(conf=CRAWL + "SitemapExpire 4s")
    srv.start()
    srv.get_ok("/crawl/old")
    srv.get_ok("/crawl/kept")
    srv.wait_recorded("/crawl/old", "/crawl/kept")
    # Keep serving one of them for longer than the expiry.
    deadline = time.monotonic() + 9
    while time.monotonic() < deadline:
        srv.get_ok("/crawl/kept")
        time.sleep(0.25)
    srv.wait_absent("/crawl/old")
    assert "/crawl/kept" in srv.urls()
    # The sitemap follows the store.
    body = srv.get_ok("/sitemap.xml").body.decode()
    assert "/crawl/kept" in body and "/crawl/old" not in body


def test_expire_zero_keeps_everything(make_server):
    # A second site in the same store with the default expiry: its old URL
    # leaving is the sentinel that the expiry ran.
    srv = make_server()
    srv.write("dflt.test/page.html", "<html><body>x</body></html>\n")
    srv.conf_text = (CRAWL + "SitemapExpire 0\n"
                     f"<VirtualHost 127.0.0.1:{srv.port}>\n"
                     "    ServerName 127.0.0.1\n"
                     f'    DocumentRoot "{srv.root}/htdocs"\n'
                     "    RewriteEngine On\n    RewriteRule ^/crawl/ /page.html [L]\n</VirtualHost>\n"
                     f"<VirtualHost 127.0.0.1:{srv.port}>\n"
                     "    ServerName dflt.test\n"
                     f'    DocumentRoot "{srv.root}/dflt.test"\n'
                     f'    <Directory "{srv.root}/dflt.test">\n'
                     "        Require all granted\n    </Directory>\n"
                     "    SitemapExpire 365d\n</VirtualHost>\n")
    srv.start()
    dflt = f"http://dflt.test:{srv.port}"
    srv.get_ok("/crawl/a")
    srv.get_ok("/page.html", host="dflt.test")
    srv.wait_recorded("/crawl/a")
    srv.wait_recorded("/page.html", base=dflt)
    # Make the URL look more than a year old (older than the default
    # 365d), and forget when the expiry last ran (each start would
    # otherwise find the first start's claim and skip the run for an
    # hour, so the test would pass whatever SitemapExpire 0 meant): with
    # expiry off it stays.
    srv.graceful_stop()
    import sqlite3
    from conftest import as_run_user
    with as_run_user():
        con = sqlite3.connect(srv.db_path, timeout=10)
        con.execute("UPDATE urls SET last_seen = last_seen - 400 * 86400")
        # (behind the writer's back: the pages' oldest last_seen, which
        # expiry reads, goes back with it)
        con.execute("UPDATE pages SET oldest_seen = 0")
        con.execute("UPDATE sites SET expiry_claimed = 0")
        con.commit()
        con.close()
    srv.start()
    srv.get_ok("/crawl/b")
    srv.wait_recorded("/crawl/b")
    srv.wait_absent("/page.html", base=dflt)      # the expiry ran
    assert srv.urls() == {"/crawl/a", "/crawl/b"}
