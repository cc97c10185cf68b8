# SPDX-License-Identifier: Apache-2.0
"""The sitemap while its store cannot be read: 503 with Retry-After (also
when the fault shows only once the URLs are read, before any byte went
out), and the fault logged at most once a minute per process, however
many requests ask (issue 21, items 8 and 9)."""
import os
import re
import sqlite3

import pytest

from conftest import as_run_user
from test_store_faults import CRAWL, fault_server


def answers_503(srv, target="/sitemap.xml"):
    r = srv.get(target)
    assert r.status == 503, f"{target}: {r.status} {r.body[:200]!r}"
    assert r.header("Retry-After") == "60"
    return r


def replace_with_garbage(srv):
    with open(srv.db_path + ".new", "wb") as f:
        f.write(b"this is not an SQLite database!" * 200)
    os.rename(srv.db_path + ".new", srv.db_path)


def test_unreadable_store_logged_once_a_minute(make_server):
    srv = fault_server(make_server)
    srv.expect_log(r"answering 503")
    srv.start()
    srv.get_ok("/crawl/before")
    srv.wait_recorded("/crawl/before")
    assert srv.get("/sitemap.xml").status == 200
    replace_with_garbage(srv)
    for _ in range(500):
        answers_503(srv)
    lines = [ln for ln in srv.log_lines("sitemap") if "answering 503" in ln
             and re.search(r"\[sitemap:(warn|error|crit|alert|emerg)\]", ln)]
    pids = {re.search(r"\[pid (\d+)", ln).group(1) for ln in lines}
    assert lines, "the 503s were not logged at all"
    assert len(lines) <= len(pids), \
        f"{len(lines)} lines from {len(pids)} processes:\n" + "\n".join(lines[:10])
    assert re.search(r"more times in the last minute", lines[0])


@pytest.mark.parametrize("cache", ["Off", "On"])
def test_page_read_fault_is_503_not_an_aborted_200(make_server, cache):
    """The page summaries read fine but the URL rows cannot be read: the
    fault is found before any byte of the body went out, so the answer is
    a clean 503 rather than a 200 whose body breaks off.  Streamed
    (SitemapCache Off), and with renditions when none is made yet (one
    already made for the same page version is still the right bytes)."""
    srv = fault_server(make_server, conf=CRAWL + f"SitemapCache {cache}\n")
    srv.expect_log(r"answering 503|no such table")
    srv.start()
    srv.get_ok("/crawl/a")
    srv.get_ok("/crawl/b")
    srv.wait_recorded("/crawl/a", "/crawl/b")
    if cache == "Off":
        ok = srv.get("/sitemap.xml")
        assert ok.status == 200 and b"/crawl/a" in ok.body
    with as_run_user():                         # a tampered store
        con = sqlite3.connect(srv.db_path, timeout=10)
        con.execute("ALTER TABLE urls RENAME TO urls_gone")
        con.commit()
        con.close()
    for target in ("/sitemap.xml", "/sitemap-1.xml"):
        r = answers_503(srv, target)
        assert b"<urlset" not in r.body
    with as_run_user():                         # repaired: 200 again
        con = sqlite3.connect(srv.db_path, timeout=10)
        con.execute("ALTER TABLE urls_gone RENAME TO urls")
        con.commit()
        con.close()
    r = srv.get("/sitemap.xml")
    assert r.status == 200 and b"/crawl/b" in r.body


def test_view_read_fault_is_503_not_a_broken_200(make_server):
    """The text and HTML views go through the same serving layer as the
    XML: a fault reading the URL rows, found before any byte of the body
    went out, is the same clean 503 with Retry-After (it was a 200 whose
    connection closed before the body)."""
    srv = fault_server(make_server, conf=CRAWL + "SitemapTextPath /sitemap.txt\n"
                       "SitemapHTMLPath /site-map.html\n")
    srv.expect_log(r"answering 503|no such table")
    srv.start()
    srv.get_ok("/crawl/a")
    srv.wait_recorded("/crawl/a")
    for target in ("/sitemap.txt", "/site-map.html"):
        ok = srv.get(target)
        assert ok.status == 200 and b"/crawl/a" in ok.body, (target, ok)
    with as_run_user():                         # a tampered store
        con = sqlite3.connect(srv.db_path, timeout=10)
        con.execute("ALTER TABLE urls RENAME TO urls_gone")
        con.commit()
        con.close()
    for target in ("/sitemap.txt", "/site-map.html"):
        r = answers_503(srv, target)
        assert b"/crawl/a" not in r.body
        assert r.header("ETag") is None and r.header("X-Robots-Tag") is None
    with as_run_user():                         # repaired: 200 again
        con = sqlite3.connect(srv.db_path, timeout=10)
        con.execute("ALTER TABLE urls_gone RENAME TO urls")
        con.commit()
        con.close()
    assert srv.get("/sitemap.txt").status == 200
