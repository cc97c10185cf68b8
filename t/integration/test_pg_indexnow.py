# SPDX-License-Identifier: Apache-2.0
"""IndexNow on a PostgreSQL store (issues 19 and 15): the pending list is
in the shared database, so a farm's servers send every change once between
them, a restart loses nothing, sitemapctl works on the URI, and a schema-1
database gets IndexNow's tables by an in-place upgrade.  The endpoint is
test_indexnow.py's recording server on 127.0.0.1."""
import os
import time

import pytest

from conftest import PG_SCHEMA_VERSION, build_has
from pg import pg_cluster, pg_db  # noqa: F401 (fixtures)
from test_indexnow import (KEY, corroborate, endpoint,  # noqa: F401
                           indexnow_conf, settle)
from test_pg_farm import BASE, ctl, farm, sitemap

pytestmark = pytest.mark.skipif(not build_has("indexnow"),
                                reason="built --without-indexnow")


def wait_pending(pg_db, n, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        have = int(pg_db.sql("SELECT count(*) FROM sitemap_indexnow_pending")
                   [0][0])
        if have == n or time.monotonic() > deadline:
            return have
        time.sleep(0.1)


def pg_held(pg_db):
    def held(path):
        rows = pg_db.sql("SELECT u.held FROM sitemap_urls u JOIN"
                         " sitemap_sites s ON s.id = u.site_id WHERE"
                         f" s.base = '{BASE}' AND u.url = '{path}'")
        return int(rows[0][0]) if rows else None
    return held


def wait_count(endpoint, n, timeout=20):
    """Until n URLs (repeats counted) were delivered."""
    deadline = time.monotonic() + timeout
    while len(endpoint.delivered()) < n and time.monotonic() < deadline:
        time.sleep(0.1)


def test_farm_sends_each_change_once(make_server, pg_db, endpoint):
    # Slow answers: the other server polls while a POST is under way.
    endpoint.delay = 0.3
    a, b = farm(make_server, pg_db, conf=indexnow_conf(endpoint))
    for j in range(0, 12):
        a.get_ok(f"/p{j}.html")
    for j in range(6, 18):
        b.get_ok(f"/p{j}.html")
    # one client on both nodes: a second one, on a
    corroborate(a, *[f"/p{j}.html" for j in range(18)], held=pg_held(pg_db))
    first = [f"{BASE}/p{j}.html" for j in range(18)]
    endpoint.wait_delivered(first)
    assert sorted(settle(endpoint, 2)) == sorted(first)
    # Changed on one node (Last-Modified moves), removed on the other.
    for s in (a, b):
        s.write("htdocs/p1.html", "<html><body>new</body></html>\n",
                mtime=1_800_000_000)
        os.unlink(s.path("htdocs/p2.html"))
    a.get_ok("/p1.html")
    assert b.get("/p2.html").status == 404
    wait_count(endpoint, len(first) + 2)
    after = settle(endpoint, 2)
    assert sorted(after) == sorted(first + [f"{BASE}/p1.html",
                                            f"{BASE}/p2.html"])
    assert all(p[2]["host"] == "www.example.com" for p in endpoint.posts)
    assert all(p[2]["keyLocation"] == f"{BASE}/{KEY}.txt"
               for p in endpoint.posts)
    # What sitemapctl stats says on the URI, as on a file.
    r = ctl("stats", pg_db.uri, "--site", BASE)
    assert r.returncode == 0, r.stderr
    assert f"indexnow:       0 pending, {len(after)} sent, 0 dropped" \
        in r.stdout, r.stdout
    assert "last answer:    200 at " in r.stdout, r.stdout
    assert sitemap(a).body == sitemap(b).body


def test_backlog_delivered_after_restart(make_server, pg_db, endpoint):
    endpoint.default = 503
    s, = farm(make_server, pg_db, n=1, conf=indexnow_conf(endpoint))
    s.expect_log(r"IndexNow .* not accepted by .*HTTP 503.* retrying")
    s.get_ok("/p0.html")
    corroborate(s, "/p0.html", held=pg_held(pg_db))
    deadline = time.monotonic() + 10
    while not endpoint.posts and time.monotonic() < deadline:
        time.sleep(0.1)
    assert endpoint.posts, "no attempt"
    s.stop()
    assert pg_db.sql("SELECT url FROM sitemap_indexnow_pending") \
        == [["/p0.html"]]
    endpoint.default = 200
    s.start()
    endpoint.wait_delivered([f"{BASE}/p0.html"], timeout=30)
    assert wait_pending(pg_db, 0) == 0


def test_first_switch_on_sends_only_new_changes(make_server, pg_db, endpoint):
    s, = farm(make_server, pg_db, n=1)
    s.get_ok("/p0.html")
    pg_db.wait_urls(BASE, {"/p0.html"})
    s.graceful(conf=f"SitemapBaseURL {BASE}\n" + indexnow_conf(endpoint))
    s.get_ok("/p1.html")
    s.get_ok("/p0.html")
    corroborate(s, "/p1.html", held=pg_held(pg_db))
    endpoint.wait_delivered([f"{BASE}/p1.html"])
    assert settle(endpoint) == [f"{BASE}/p1.html"]


def test_sitemapctl_indexnow_on_the_uri(make_server, pg_db, endpoint):
    s, = farm(make_server, pg_db, n=1, conf=indexnow_conf(endpoint))
    for j in range(3):
        s.get_ok(f"/p{j}.html")
    corroborate(s, *[f"/p{j}.html" for j in range(3)], held=pg_held(pg_db))
    endpoint.wait_delivered([f"{BASE}/p{j}.html" for j in range(3)])
    before = len(settle(endpoint, 1))
    # A URL given twice is queued once, in the order given.
    r = ctl("indexnow", pg_db.uri, "--site", BASE, "/p2.html", "/p0.html",
            "/p2.html")
    assert r.returncode == 0, r.stderr
    assert "2 URLs queued" in r.stdout, r.stdout
    wait_count(endpoint, before + 2)
    assert settle(endpoint, 1)[before:] == [f"{BASE}/p2.html",
                                            f"{BASE}/p0.html"]
    r = ctl("indexnow", pg_db.uri, "--site", BASE, "--all")
    assert r.returncode == 0, r.stderr
    assert "3 URLs queued" in r.stdout, r.stdout
    wait_count(endpoint, before + 5)
    assert sorted(settle(endpoint, 1)[before + 2:]) == sorted(
        f"{BASE}/p{j}.html" for j in range(3))


def test_schema_1_upgraded_in_place(make_server, pg_db):
    """A database of schema version 1 (before IndexNow) gets the tables from
    the first writer that opens it; its URLs stay."""
    r = ctl("add", pg_db.uri, "--site", BASE, "/kept")
    assert r.returncode == 0, r.stderr
    pg_db.sql("DROP TABLE sitemap_indexnow_pending, sitemap_indexnow_state;"
              " DROP TABLE sitemap_verdicts, sitemap_images;"
              " DROP TABLE sitemap_robots;"
              " ALTER TABLE sitemap_pages DROP COLUMN oldest_seen;"
              " DROP TABLE sitemap_crawls, sitemap_crawlers,"
              " sitemap_crawl_unlisted, sitemap_crawl_days;"
              " DROP TABLE sitemap_removed_days;"
              " ALTER TABLE sitemap_urls DROP COLUMN title;"
              " ALTER TABLE sitemap_urls DROP COLUMN alternates;"
              " ALTER TABLE sitemap_urls DROP COLUMN held;"
              " ALTER TABLE sitemap_urls DROP COLUMN description,"
              " DROP COLUMN published;"
              " UPDATE sitemap_meta SET value = '1'"
              " WHERE key = 'schema_version'")
    r = ctl("check", pg_db.uri)
    assert r.returncode == 1 and "schema version 1" in r.stdout + r.stderr, \
        r.stdout + r.stderr
    s, = farm(make_server, pg_db, n=1)
    s.get_ok("/p0.html")
    pg_db.wait_urls(BASE, {"/kept", "/p0.html"})
    assert pg_db.sql("SELECT value FROM sitemap_meta"
                     " WHERE key = 'schema_version'") \
        == [[str(PG_SCHEMA_VERSION)]]
    assert pg_db.sql("SELECT to_regclass('sitemap_indexnow_state')"
                     " IS NOT NULL") == [["t"]]
    r = ctl("check", pg_db.uri)
    assert r.returncode == 0, r.stdout + r.stderr


def test_one_client_held_until_a_second(make_server, pg_db, endpoint):
    """The corroboration rule on PostgreSQL, as on SQLite (test_indexnow.py's
    catch-all test): one client's new URL is listed, not submitted."""
    s, = farm(make_server, pg_db, n=1, conf=indexnow_conf(endpoint))
    held = pg_held(pg_db)
    s.get_ok("/p0.html")
    s.get_ok("/p0.html")
    pg_db.wait_urls(BASE, {"/p0.html"})
    s.get_ok("/p1.html")
    corroborate(s, "/p1.html", held=held)
    endpoint.wait_delivered([f"{BASE}/p1.html"])
    assert [u for _, _, b in endpoint.posts for u in b["urlList"]] \
        == [f"{BASE}/p1.html"], endpoint.posts
    assert held("/p0.html")
    corroborate(s, "/p0.html", held=held)
    endpoint.wait_delivered([f"{BASE}/p0.html"])
    assert sorted(settle(endpoint)) == [f"{BASE}/p0.html", f"{BASE}/p1.html"]
