# SPDX-License-Identifier: Apache-2.0
"""Big stores, seeded straight into SQLite (as the module would have
written them: rows in insertion order, pages filled one after the other,
sites.last_page and the page and site summaries kept):
a full page of 50,000 URLs, and page N costing what page 1 costs."""
import socket
import sqlite3
import statistics
import struct
import time

from conftest import as_run_user
from sitemap_check import MAX_BYTES, check_document, fetch

ENTRY_OVERHEAD = 160        # SM_ENTRY_OVERHEAD (src/store/sm_store.h)
T0 = 1700000000


def xml_escaped_len(s):
    """The length of s with the five XML entities (sm_xml_escaped_len)."""
    return (len(s) + 4 * s.count("&") + 3 * (s.count("<") + s.count(">"))
            + 5 * (s.count("'") + s.count('"')))


def seed(srv, n, page_size, prefix="/s/", urls=None):
    """n URLs prefix0000001 ... (or the list urls) for this server's site,
    page_size a page."""
    base = srv.base
    if urls is not None:
        n = len(urls)
    with as_run_user():
        con = sqlite3.connect(srv.db_path, timeout=10)
        try:
            con.execute("BEGIN IMMEDIATE")
            # The module's writer made the site's row at start-up (with its
            # settings); it must hold no URLs yet.
            row = con.execute("SELECT id, url_count FROM sites WHERE base = ?",
                              (base,)).fetchone()
            assert row is None or row[1] == 0, "seed() wants a site without URLs"
            last_page = (n - 1) // page_size + 1
            if row is None:
                cur = con.execute("INSERT INTO sites(base, page_size, last_page)"
                                  " VALUES (?, ?, ?)", (base, page_size, last_page))
                site_id = cur.lastrowid
            else:
                site_id = row[0]
                con.execute("UPDATE sites SET page_size = ?, last_page = ? WHERE id = ?",
                            (page_size, last_page, site_id))

            # ids as the module hands them out: (site id << 40) + 1, 2, ...
            first = (site_id << 40) + 1

            def rows():
                for i in range(n):
                    url = urls[i] if urls is not None else f"{prefix}{i:07d}"
                    t = T0 + i
                    yield (first + i, site_id, url, i // page_size + 1, t, None, t,
                           time.time(), len(base) + xml_escaped_len(url) + ENTRY_OVERHEAD)

            con.executemany(
                "INSERT INTO urls(id, site_id, url, page, lastmod, etag, first_seen,"
                " last_seen, xml_len) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows())
            # the summaries, as the module's writer keeps them
            now = int(time.time())
            con.execute(
                "INSERT INTO pages(site_id, page, url_count, xml_bytes, lastmod, changed,"
                " version, first_id) SELECT site_id, page, count(*), sum(xml_len),"
                " max(lastmod), ?, 1, min(id) FROM urls WHERE site_id = ? GROUP BY page",
                (now, site_id))
            con.execute("UPDATE sites SET url_count = ?, index_changed = ?, next_id = ?"
                        " WHERE id = ?", (n, now, first + n, site_id))
            con.execute("COMMIT")
        finally:
            con.close()


def test_sitemap_full_page_of_50000(make_server):
    srv = make_server()
    srv.start()
    n = 50001
    seed(srv, n, 50000)
    # the module goes on where the seed stopped: page 2 has room
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    index = fetch(srv, "/sitemap.xml", kind="sitemapindex")
    assert index.doc.locs == [srv.base + "/sitemap-1.xml", srv.base + "/sitemap-2.xml"]
    r1 = srv.get("/sitemap-1.xml")
    assert r1.status == 200
    # sent from its rendition (a file): the length is known
    assert r1.header("Content-Length") == str(len(r1.body)), r1.headers
    doc1 = check_document(r1.body, srv.base, "urlset")
    assert len(doc1.entries) == 50000
    assert doc1.locs[0] == srv.base + "/s/0000000"
    assert doc1.locs[-1] == srv.base + "/s/0049999"
    assert index.doc.entries[0]["lastmod"] == doc1.entries[-1]["lastmod"]
    r2 = fetch(srv, "/sitemap-2.xml", kind="urlset")
    assert r2.doc.locs == [srv.base + "/s/0050000", srv.base + "/page.html"]
    assert srv.get("/sitemap-3.xml").status == 404
    # a client that goes away in the middle of the big page: no store
    # fault is logged (the harness fails the test on error lines), and the
    # server goes on serving
    for _ in range(3):
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            s.sendall(f"GET /sitemap-1.xml HTTP/1.1\r\nHost: {srv.server_name}\r\n\r\n".encode())
            s.recv(1000)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    time.sleep(0.5)
    assert fetch(srv, "/sitemap-2.xml", kind="urlset").body == r2.body
    assert not srv.log_lines("sitemap", ("error", "crit", "warn")), srv.log_tail()


PAGE_OVERHEAD = 256         # SM_PAGE_OVERHEAD


def test_sitemap_page_byte_limit(make_server):
    """Page 1 is seeded with long URLs up to a few hundred bytes under the
    52,428,800-byte limit (by the module's own accounting); a URL that
    still fits goes on it, the next one, which does not, opens page 2.
    The page served stays under the limit."""
    srv = make_server(conf="RewriteEngine On\nRewriteRule ^/p/ /page.html [L]\n")
    srv.start()
    base = srv.base
    entry = lambda u: len(base) + xml_escaped_len(u) + ENTRY_OVERHEAD
    room = MAX_BYTES - PAGE_OVERHEAD
    long_len = 2048 - len(base)
    left = 600
    long_entry = len(base) + long_len + ENTRY_OVERHEAD
    urls, used = [], 0
    while room - left - used > 2 * long_entry:
        urls.append(f"/big/{len(urls):06d}/".ljust(long_len, "x"))
        used += long_entry
    # two more to leave exactly `left` bytes
    rest = room - left - used
    for i, share in enumerate((rest // 2, rest - rest // 2)):
        n = share - len(base) - ENTRY_OVERHEAD
        assert 20 < n <= long_len, n
        urls.append(f"/big/filler{i}/".ljust(n, "y"))
        used += share
    assert sum(map(entry, urls)) == used and room - used == left
    seed(srv, 0, 50000, urls=urls)
    # a URL that fits in the 600 bytes left, then one that does not
    fits = "/p/".ljust(left - len(base) - ENTRY_OVERHEAD - 100, "f")
    assert entry(fits) <= left
    srv.get_ok(fits)
    srv.wait_recorded(fits)
    assert left - entry(fits) < entry("/p/next")
    srv.get_ok("/p/next")
    srv.wait_recorded("/p/next")
    assert srv.row(fits)["page"] == 1
    assert srv.row("/p/next")["page"] == 2
    index = fetch(srv, "/sitemap.xml", kind="sitemapindex")
    assert index.doc.locs == [base + "/sitemap-1.xml", base + "/sitemap-2.xml"]
    # HTTP/1.0: the body comes unchunked, read to the end of the connection
    r1 = srv.get("/sitemap-1.xml", version="HTTP/1.0")
    assert r1.status == 200, r1
    assert len(r1.body) <= MAX_BYTES
    doc1 = check_document(r1.body, base, "urlset")
    assert len(doc1.entries) == len(urls) + 1
    assert doc1.locs[-1] == base + fits
    r2 = fetch(srv, "/sitemap-2.xml", kind="urlset")
    assert r2.doc.locs == [base + "/p/next"]


def median_time(srv, path, n=7):
    times = []
    for _ in range(n):
        t0 = time.monotonic()
        r = srv.get(path)
        times.append(time.monotonic() - t0)
        assert r.status == 200, (path, r)
    return statistics.median(times), r


def test_sitemap_last_page_costs_the_first(make_server):
    srv = make_server(conf="SitemapPageSize 100\n")
    srv.start()
    n = 100000
    seed(srv, n, 100)
    pages = n // 100
    index = fetch(srv, "/sitemap.xml", kind="sitemapindex")
    assert len(index.doc.entries) == pages
    assert index.doc.locs[-1] == f"{srv.base}/sitemap-{pages}.xml"
    srv.get("/sitemap-1.xml")               # warm up the reader
    first, r1 = median_time(srv, "/sitemap-1.xml")
    last, rn = median_time(srv, f"/sitemap-{pages}.xml")
    middle, rm = median_time(srv, f"/sitemap-{pages // 2}.xml")
    for r, k in ((r1, 0), (rm, pages // 2 - 1), (rn, pages - 1)):
        d = check_document(r.body, srv.base, "urlset")
        assert d.locs == [f"{srv.base}/s/{i:07d}" for i in range(k * 100, k * 100 + 100)]
    assert last <= 3 * first + 0.015 and middle <= 3 * first + 0.015, \
        f"page 1: {first * 1000:.1f}ms, page {pages // 2}: {middle * 1000:.1f}ms, " \
        f"page {pages}: {last * 1000:.1f}ms"
    print(f"page 1: {first * 1000:.1f}ms, page {pages}: {last * 1000:.1f}ms")


def test_sitemap_index_at_most_50000_entries(make_server):
    """SitemapPageSize 1 (allowed) and 50,001 URLs: 50,001 pages.  A
    sitemap index may list at most 50,000 sitemaps (sitemaps.org), so the
    index the module serves must not list more."""
    srv = make_server(conf="SitemapPageSize 1\n")
    srv.start()
    seed(srv, 50001, 1)
    r = srv.get("/sitemap.xml", version="HTTP/1.0")
    assert r.status == 200, r
    doc = check_document(r.body, srv.base, "sitemapindex")
    assert len(doc.entries) == 50000
    # Said in the error log (the config check keeps this away otherwise).
    srv.expect_log(r"has 50001 non-empty pages; the index lists the first 50000")
    assert any("the index lists the first 50000" in ln
               for ln in srv.log_text().splitlines())
