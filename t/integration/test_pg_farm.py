# SPDX-License-Identifier: Apache-2.0
"""A farm of servers sharing one PostgreSQL store (issue 15): two httpd
instances behind an imaginary load balancer, one site, one database."""

import concurrent.futures
import os
import re
import subprocess
import threading
import time

import pytest

from conftest import PG_SCHEMA_VERSION, SITEMAPCTL
from pg import PASSWORD, pg_cluster, pg_db  # noqa: F401 (fixtures)

BASE = "https://www.example.com"
# What a database outage may log (rate-limited, checked below).
FAULT = re.compile(r"store postgresql://|SitemapDatabase: 'postgresql://")


def farm(make_server, pg_db, n=2, conf="", **kw):
    nodes = []
    for i in range(n):
        s = make_server(db=pg_db.uri, conf=f"SitemapBaseURL {BASE}\n{conf}",
                        **kw)
        for j in range(40):
            s.write(f"htdocs/p{j}.html", f"<html><body>{j}</body></html>\n",
                    mtime=1700000000 + j)
        nodes.append(s)
    for s in nodes:
        s.start()
    return nodes


def sitemap(s, path="/sitemap.xml", **kw):
    try:
        r = s.get(path, **kw)
    except ConnectionError as e:
        raise AssertionError(f"{path}: {e}\n{s.log_tail()}") from e
    assert r.status == 200, (path, r.status, s.log_tail())
    return r


def locs(body):
    return set(re.findall(r"<loc>([^<]*)</loc>", body.decode()))


def ctl(*args):
    return subprocess.run([SITEMAPCTL, *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=60)


def test_split_traffic_gives_one_sitemap(make_server, pg_db):
    a, b = farm(make_server, pg_db)
    for j in range(0, 10):
        assert a.get_ok(f"/p{j}.html")
    for j in range(5, 15):
        assert b.get_ok(f"/p{j}.html")
    want = {f"/p{j}.html" for j in range(15)}
    pg_db.wait_urls(BASE, want)
    ra, rb = sitemap(a), sitemap(b)
    assert ra.body == rb.body
    assert locs(ra.body) == {BASE + u for u in want}
    assert ra.header("ETag") == rb.header("ETag")
    assert ra.header("Last-Modified") == rb.header("Last-Modified")
    # A crawler bouncing between the nodes gets 304s.
    assert b.get("/sitemap.xml", headers={
        "If-None-Match": ra.header("ETag")}).status == 304
    assert a.get("/sitemap.xml", headers={
        "If-Modified-Since": rb.header("Last-Modified")}).status == 304
    # Passwords never reach the logs.
    for s in (a, b):
        assert PASSWORD not in s.log_text()


def test_removal_on_one_node_removes_for_all(make_server, pg_db):
    a, b = farm(make_server, pg_db)
    for j in range(3):
        a.get_ok(f"/p{j}.html")
    pg_db.wait_urls(BASE, {"/p0.html", "/p1.html", "/p2.html"})
    os.unlink(b.path("htdocs/p1.html"))
    assert b.get("/p1.html").status == 404
    deadline = time.monotonic() + 15
    while "/p1.html" in pg_db.urls(BASE):
        assert time.monotonic() < deadline, "not removed"
        time.sleep(0.2)
    ra, rb = sitemap(a), sitemap(b)
    assert ra.body == rb.body and ra.header("ETag") == rb.header("ETag")
    assert BASE + "/p1.html" not in locs(ra.body)
    assert BASE + "/p0.html" in locs(ra.body)


def test_pages_stable_while_both_add(make_server, pg_db):
    """Both nodes record new URLs at once (the same ones too): every URL is
    stored once, keeps the page it got first, and pages stay full-sized
    and identical on both nodes.  While the first URLs come in, a session
    holds off every insert for 2 s, so that both writers then go at once."""
    a, b = farm(make_server, pg_db, conf="SitemapPageSize 4\n")
    assert pg_db.has_schema()
    locker = threading.Thread(target=pg_db.sql, args=(
        "BEGIN; LOCK TABLE sitemap_urls IN SHARE MODE; SELECT pg_sleep(2);"
        " COMMIT",))
    locker.start()
    time.sleep(0.3)

    def hit(node, js):
        for j in js:
            assert node.get(f"/p{j}.html").status == 200

    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        list(ex.map(lambda args: hit(*args), [
            (a, range(0, 20)), (b, range(19, -1, -1)),
            (a, range(20, 40)), (b, range(39, 19, -1))]))
        locker.join()
        first = pg_db.wait_urls(BASE, {f"/p{j}.html" for j in range(20)})
        list(ex.map(lambda args: hit(*args), [
            (a, range(0, 40, 3)), (b, range(1, 40, 3))]))
    final = pg_db.wait_urls(BASE, {f"/p{j}.html" for j in range(40)})
    assert len(final) == 40
    rows = pg_db.sql("SELECT count(*), count(DISTINCT url) FROM sitemap_urls")
    assert rows == [["40", "40"]]
    for u, page in first.items():
        assert final[u] == page, (u, page, final[u])
    per_page = {}
    for page in final.values():
        per_page[page] = per_page.get(page, 0) + 1
    assert sorted(per_page) == list(range(1, 11))
    assert set(per_page.values()) == {4}
    ra, rb = sitemap(a), sitemap(b)
    assert ra.body == rb.body and ra.header("ETag") == rb.header("ETag")
    for n in range(1, 11):
        pa, pb = sitemap(a, f"/sitemap-{n}.xml"), sitemap(b, f"/sitemap-{n}.xml")
        assert pa.body == pb.body
        assert pa.header("ETag") == pb.header("ETag")
        assert pa.header("Last-Modified") == pb.header("Last-Modified")
    assert pg_db.sql("SELECT count(*) FROM sitemap_sites") == [["1"]]


def test_outage_serves_pages_and_records_afterwards(make_server, pg_db,
                                                    pg_cluster):
    a, b = farm(make_server, pg_db)
    a.get_ok("/p0.html")
    pg_db.wait_urls(BASE, {"/p0.html"})
    for s in (a, b):
        s.expect_log(FAULT)
    pg_cluster.stop()
    try:
        served = set()
        for j in range(1, 30):
            node = a if j % 2 else b
            t0 = time.monotonic()
            assert node.get(f"/p{j}.html").status == 200
            assert time.monotonic() - t0 < 3, "a page waited for the store"
            served.add(f"/p{j}.html")
        for s in (a, b):
            r = s.get("/sitemap.xml")
            assert r.status == 503
            assert r.header("Retry-After")
            assert s.get("/sitemap.xml").status == 503
    finally:
        pg_cluster.start()
    pg_db.wait_urls(BASE, served | {"/p0.html"}, timeout=40)
    ra, rb = sitemap(a), sitemap(b)
    assert ra.body == rb.body
    # The fault was logged, at most once a minute per process and kind.
    for s in (a, b):
        faults = [ln for ln in s.log_text().splitlines()
                  if FAULT.search(ln) and "[sitemap:" in ln
                  and ("error" in ln or "warn" in ln)]
        assert faults
        assert len([ln for ln in faults if "answering 503" in ln]) <= 1
        assert PASSWORD not in s.log_text()


def test_start_without_database(make_server, pg_db, pg_cluster):
    """A server that cannot reach the database at start-up starts and
    serves; it records once the database is there."""
    pg_cluster.stop()
    try:
        s = make_server(db=pg_db.uri, conf=f"SitemapBaseURL {BASE}\n")
        s.expect_log(FAULT)
        s.start()
        assert s.get("/page.html").status == 200
        assert s.get("/sitemap.xml").status == 503
    finally:
        pg_cluster.start()
    pg_db.wait_urls(BASE, {"/page.html"}, timeout=40)
    assert sitemap(s).status == 200
    assert PASSWORD not in s.log_text()


def test_graceful_stop_under_load_loses_nothing(make_server, pg_db):
    a, b = farm(make_server, pg_db, flush="1s")
    for j in range(200):
        a.write(f"htdocs/load/{j}.html", "<html></html>\n")
    ok = set()
    stop = threading.Event()

    def load(k):
        j = k
        while j < 200 and not stop.is_set():
            try:
                r = a.get(f"/load/{j}.html")
            except OSError:
                return
            if r.status == 200:
                ok.add(f"/load/{j}.html")
            j += 4

    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        futs = [ex.submit(load, k) for k in range(4)]
        time.sleep(0.3)
        a.graceful_stop()
        stop.set()
        for f in futs:
            f.result()
    assert len(ok) > 10
    have = pg_db.urls(BASE)
    assert ok <= set(have), sorted(ok - set(have))[:10]


def test_sitemapctl_on_the_uri(make_server, pg_db, tmp_path):
    a, b = farm(make_server, pg_db, conf="SitemapPageSize 3\n")
    for j in range(7):
        (a if j % 2 else b).get_ok(f"/p{j}.html")
    pg_db.wait_urls(BASE, {f"/p{j}.html" for j in range(7)})

    r = ctl("check", pg_db.uri)
    assert r.returncode == 0, r.stderr
    assert f"ok (mod_sitemap store, schema version {PG_SCHEMA_VERSION}" in r.stdout
    assert PASSWORD not in r.stdout + r.stderr

    r = ctl("stats", pg_db.uri, "--site", BASE)
    assert r.returncode == 0, r.stderr
    assert re.search(r"urls: +7\n", r.stdout)
    assert PASSWORD not in r.stdout

    r = ctl("list", pg_db.uri, "--site", BASE)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 7
    assert {ln.split("\t")[0] for ln in lines} == \
        {f"{BASE}/p{j}.html" for j in range(7)}

    out = tmp_path / "export"
    r = ctl("export", pg_db.uri, "--site", BASE, str(out))
    assert r.returncode == 0, r.stderr
    for name in ("sitemap.xml", "sitemap-1.xml", "sitemap-2.xml",
                 "sitemap-3.xml"):
        served = sitemap(a, "/" + name).body
        assert (out / name).read_bytes() == served, name
        assert sitemap(b, "/" + name).body == served

    r = ctl("add", pg_db.uri, "--site", BASE, "/added")
    assert r.returncode == 0, r.stderr
    r = ctl("remove", pg_db.uri, "--site", BASE, "/p0.html")
    assert r.returncode == 0, r.stderr
    urls = pg_db.urls(BASE)
    assert "/added" in urls and "/p0.html" not in urls

    log = tmp_path / "access.log"
    log.write_text('1.2.3.4 - - [10/Oct/2026:13:55:36 +0000] '
                   '"GET /from-log HTTP/1.1" 200 5\n')
    r = ctl("import", pg_db.uri, "--site", BASE, str(log))
    assert r.returncode == 0, r.stderr
    assert "/from-log" in pg_db.urls(BASE)

    r = ctl("prune", pg_db.uri, "--site", BASE, "--older-than", "36500d")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0 removed"

    # Same exit statuses as with a file: an unknown site, a store that
    # cannot be reached (its password masked in the message).
    r = ctl("list", pg_db.uri, "--site", "https://nowhere.example")
    assert r.returncode == 4
    bad = pg_db.uri.replace(PASSWORD, "wrong-pw")
    r = ctl("stats", bad)
    assert r.returncode == 3
    assert "wrong-pw" not in r.stderr and "***" in r.stderr
    r = ctl("check", pg_db.uri)
    assert r.returncode == 0, r.stdout + r.stderr


def test_settings_differ_warns(make_server, pg_db):
    a = make_server(db=pg_db.uri, conf=f"SitemapBaseURL {BASE}\n")
    a.start()
    a.get_ok("/page.html")
    pg_db.wait_urls(BASE, {"/page.html"})
    b = make_server(db=pg_db.uri, conf=f"SitemapBaseURL {BASE}\n"
                    "SitemapPageSize 100\n")
    b.expect_log(r"differ from those another server stored")
    b.start()
    b.wait_log(r"differ from those another server stored.*this server's "
               r"replace them", level="warn")


@pytest.mark.slow
def test_slow_database(make_server, pg_db):
    """A lock held on the store's tables (a slow database): pages are
    served at once, the sitemap answers 503 after its short lock wait
    instead of hanging, and what was served is written afterwards."""
    a, = farm(make_server, pg_db, n=1)
    a.get_ok("/p0.html")
    pg_db.wait_urls(BASE, {"/p0.html"})
    a.expect_log(FAULT)
    locker = threading.Thread(target=pg_db.sql, args=(
        "BEGIN; LOCK TABLE sitemap_sites, sitemap_pages IN ACCESS EXCLUSIVE"
        " MODE; SELECT pg_sleep(8); COMMIT",))
    locker.start()
    try:
        time.sleep(0.5)
        for j in range(1, 10):
            t0 = time.monotonic()
            assert a.get(f"/p{j}.html").status == 200
            assert time.monotonic() - t0 < 3, "a page waited for the store"
        t0 = time.monotonic()
        r = a.get("/sitemap.xml")
        assert r.status == 503 and r.header("Retry-After")
        assert time.monotonic() - t0 < 5
    finally:
        locker.join()
    pg_db.wait_urls(BASE, {f"/p{j}.html" for j in range(10)}, timeout=30)
    assert sitemap(a).status == 200


def test_role_without_create(make_server, pg_cluster):
    """A role that may not create the tables: start-up says so (and still
    serves), as does sitemapctl check; once the owner created them, the
    least-privileged grants of the README are enough."""
    name = "weak%d" % time.monotonic_ns()
    pg_cluster.sql(f"CREATE ROLE {name} LOGIN PASSWORD '{PASSWORD}'")
    pg_cluster.sql(f"CREATE DATABASE {name}")
    uri = (f"postgresql://{name}:{PASSWORD}@127.0.0.1:{pg_cluster.port}/"
           f"{name}")
    s = make_server(db=uri, conf=f"SitemapBaseURL {BASE}\n")
    s.expect_log(r"permission denied for schema public \(the role needs "
                 r"CREATE on the schema")
    s.expect_log(FAULT)
    s.start()
    s.wait_log(r"SitemapDatabase: 'postgresql://%s:\*\*\*@.*permission "
               r"denied for schema public \(the role needs CREATE" % name)
    assert s.get("/page.html").status == 200
    r = ctl("check", uri)
    assert r.returncode == 1
    assert "this role may not create tables" in r.stdout
    s.stop()
    # The owner creates the tables once; the README's grants suffice.
    owner = (f"postgresql://postgres@/{name}?host={pg_cluster.dir}"
             f"&port={pg_cluster.port}")
    r = ctl("add", owner, "--site", BASE, "/by-owner")
    assert r.returncode == 0, r.stderr
    pg_cluster.sql(
        f"GRANT USAGE ON SCHEMA public TO {name};"
        " GRANT SELECT, INSERT, UPDATE, DELETE ON sitemap_meta, sitemap_sites,"
        " sitemap_urls, sitemap_pages, sitemap_indexnow_pending,"
        " sitemap_indexnow_state, sitemap_removed_days, sitemap_verdicts,"
        " sitemap_crawls, sitemap_crawlers, sitemap_crawl_unlisted,"
        " sitemap_images,"
        " sitemap_crawl_days,"
        f" sitemap_robots TO {name};"
        f" GRANT USAGE ON SEQUENCE sitemap_site_ids TO {name}", db=name)
    r = ctl("check", uri)
    assert r.returncode == 0, r.stdout + r.stderr
    s.start()
    s.get_ok("/page.html")
    deadline = time.monotonic() + 15
    while True:
        rows = pg_cluster.sql("SELECT url FROM sitemap_urls ORDER BY url",
                              db=name)
        if rows == [["/by-owner"], ["/page.html"]]:
            break
        assert time.monotonic() < deadline, rows
        time.sleep(0.2)
    assert PASSWORD not in s.log_text()


def test_expiry_one_server_a_period(make_server, pg_db):
    """SitemapExpire runs on one server a period: a run another server
    claimed (the time in the site's row) holds every server off; once the
    period is over, one of them removes the old URLs."""
    a, b = farm(make_server, pg_db, conf="SitemapExpire 8s\n")
    for j in range(5):
        a.get_ok(f"/p{j}.html")
    pg_db.wait_urls(BASE, {f"/p{j}.html" for j in range(5)})
    now = "floor(extract(epoch FROM now()))::bigint"
    pg_db.sql(f"UPDATE sitemap_sites SET expiry_claimed = {now} + 3600;"
              f" UPDATE sitemap_urls SET last_seen = {now} - 1000;"
              " UPDATE sitemap_pages SET oldest_seen = 0")
    time.sleep(5)           # two periods (SitemapExpire / 4) on each server
    assert len(pg_db.urls(BASE)) == 5
    pg_db.sql("UPDATE sitemap_sites SET expiry_claimed = 0")
    deadline = time.monotonic() + 15
    while pg_db.urls(BASE):
        assert time.monotonic() < deadline, pg_db.urls(BASE)
        time.sleep(0.2)
    runs = [ln for s in (a, b) for ln in s.log_text().splitlines()
            if "URLs not served for 8 s left the store" in ln]
    assert len(runs) == 1, runs
    assert "5 URLs not served" in runs[0]


def test_database_restart_between_requests(make_server, pg_db, pg_cluster):
    """A restart of PostgreSQL between two sitemap requests: the reader and
    the writer connect again at once; no 503, nothing logged."""
    a, = farm(make_server, pg_db, n=1)
    a.get_ok("/p0.html")
    pg_db.wait_urls(BASE, {"/p0.html"})
    before = sitemap(a).body
    pg_cluster.stop()
    pg_cluster.start()
    assert sitemap(a).body == before
    a.get_ok("/p1.html")
    pg_db.wait_urls(BASE, {"/p1.html"})


def test_stop_while_database_down_keeps_the_queue(make_server, pg_db,
                                                  pg_cluster):
    """A stop while the database is down: what was queued is kept in a
    spill file (a URI store's go to the state directory, SitemapStateDir)
    and written by the next process that reaches the database."""
    s, = farm(make_server, pg_db, n=1)
    s.get_ok("/p0.html")
    pg_db.wait_urls(BASE, {"/p0.html"})
    s.expect_log(FAULT)
    pg_cluster.stop()
    try:
        served = set()
        for j in range(1, 20):
            assert s.get(f"/p{j}.html").status == 200
            served.add(f"/p{j}.html")
        s.stop()
        m = re.search(r"stopping with (\d+) changes not written: kept in "
                      r"(\S+)\.spill-\*", s.log_text())
        assert m, s.log_tail()
        assert int(m.group(1)) == len(served)
        assert os.path.basename(m.group(2)).startswith("pg-")
        assert os.path.dirname(m.group(2)) == s.path("state")
        assert [f for f in os.listdir(os.path.dirname(m.group(2)))
                if f.startswith(os.path.basename(m.group(2)) + ".spill-")]
    finally:
        pg_cluster.start()
    s.start()
    pg_db.wait_urls(BASE, served | {"/p0.html"}, timeout=40)
    # read back once: the file is gone
    deadline = time.monotonic() + 10
    while [f for f in os.listdir(os.path.dirname(m.group(2)))
           if f.startswith(os.path.basename(m.group(2)) + ".spill-")]:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    assert PASSWORD not in s.log_text()


@pytest.mark.slow
def test_thirty_second_outage_loses_nothing(make_server, pg_db, pg_cluster):
    """The database down for 30 s under traffic on two servers: every page
    is served at once, and every URL answered 200 meanwhile is stored once
    the database is back."""
    a, b = farm(make_server, pg_db, conf="RewriteEngine On\n"
                                         "RewriteRule ^/o/ /p0.html [L]\n")
    a.get_ok("/p0.html")
    pg_db.wait_urls(BASE, {"/p0.html"})
    for s in (a, b):
        s.expect_log(FAULT)
    served, slowest, i = set(), 0.0, 0
    pg_cluster.stop()
    try:
        end = time.monotonic() + 30
        while time.monotonic() < end:
            node = (a, b)[i % 2]
            t0 = time.monotonic()
            r = node.get(f"/o/{i}.html")
            slowest = max(slowest, time.monotonic() - t0)
            if r.status == 200:
                served.add(f"/o/{i}.html")
            i += 1
            time.sleep(0.05)
    finally:
        pg_cluster.start()
    assert len(served) > 100 and slowest < 3, (len(served), slowest)
    have = pg_db.wait_urls(BASE, served | {"/p0.html"}, timeout=60)
    assert served <= set(have)
    assert sitemap(a).body == sitemap(b).body


def test_read_only_database(make_server, pg_db, pg_cluster):
    """A database that turns read-only (a standby, a failover in progress):
    pages are served, the sitemap is still read and served, writes wait in
    memory, logged at most once a minute, and go in once it is writable."""
    s, = farm(make_server, pg_db, n=1)
    s.get_ok("/p0.html")
    pg_db.wait_urls(BASE, {"/p0.html"})
    s.expect_log(r"read-only transaction|works again")

    def read_only(on):
        pg_cluster.sql(f"ALTER DATABASE {pg_db.name} SET"
                       f" default_transaction_read_only = {on}")
        pg_cluster.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                       f" WHERE datname = '{pg_db.name}'")

    read_only("on")
    try:
        for j in range(1, 10):
            t0 = time.monotonic()
            assert s.get(f"/p{j}.html").status == 200
            assert time.monotonic() - t0 < 3
        s.wait_log(r"read-only transaction", timeout=15)
        r = sitemap(s)                      # reading still works
        assert f"{BASE}/p0.html" in locs(r.body)
        time.sleep(2.5)                     # several failed flushes
        assert "/p5.html" not in pg_db.urls(BASE)
    finally:
        read_only("off")
    pg_db.wait_urls(BASE, {f"/p{j}.html" for j in range(10)}, timeout=40)
    faults = [ln for ln in s.log_text().splitlines()
              if "read-only transaction" in ln]
    assert 1 <= len(faults) <= 2, faults


def test_batched_writes_match_sqlite(pg_db, tmp_path):
    """The PostgreSQL writer adds new URLs many at a time: the same import
    (new URLs, a URL twice, pages of 7) gives exactly the rows, pages and
    lastmods SQLite gives, and `add` of a URL named twice adds it once
    (the second is "already stored", as in SQLite)."""
    log = tmp_path / "access.log"
    with open(log, "w") as f:
        for i in range(150):
            f.write(f'127.0.0.1 - - [23/Nov/2026:10:{i // 60:02d}:{i % 60:02d}'
                    f' +0000] "GET /b/{i % 140}.html HTTP/1.1" 200 100\n')
    lite = str(tmp_path / "s.db")
    for db in (lite, pg_db.uri):
        r = ctl("import", db, "--site", BASE, "--page-size", "7", str(log))
        assert r.returncode == 0, r.stderr
        r = ctl("add", db, "--site", BASE, "/x", "/x", "/b/3.html", "/y")
        assert r.returncode == 0, r.stderr
        assert "2 added, 2 already stored" in r.stdout, r.stdout
    a = ctl("list", lite, "--site", BASE)
    b = ctl("list", pg_db.uri, "--site", BASE)
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    rows = lambda out: [ln.split("\t")[::2] for ln in out.splitlines()]
    assert len(a.stdout.splitlines()) == 142
    assert rows(b.stdout) == rows(a.stdout)
    assert [ln.split("\t")[1] for ln in b.stdout.splitlines()][:140] == \
        [ln.split("\t")[1] for ln in a.stdout.splitlines()][:140]
