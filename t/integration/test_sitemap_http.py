# SPDX-License-Identifier: Apache-2.0
"""The HTTP side of the sitemap: headers, HEAD, conditional requests (304),
404 for pages that do not exist and malformed names, 405 for other methods,
503 when the store cannot be read, ETags and Last-Modified that change
exactly when a document's bytes change, and mod_deflate and mod_cache in
front of it."""
import contextlib
import email.utils
import gzip
import os
import re
import sqlite3
import time

import pytest

from conftest import IS_ROOT, RUN_GID, RUN_UID, as_run_user
from sitemap_check import check_document, check_headers, fetch, fetch_all

HTML = "<html><body>x</body></html>\n"
T0 = 1700000000
CRAWL = "RewriteEngine On\nRewriteRule ^/p/ /page.html [L]\n"
VALIDATORS = ("Content-Type", "X-Robots-Tag", "ETag", "Last-Modified")


def record(srv, *paths, each=False):
    for p in paths:
        srv.get_ok(p)
        if each:
            srv.wait_recorded(p)
    srv.wait_recorded(*paths)


def paged_server(make_server, n=7, conf="", **kw):
    """Pages of 3 and n URLs /u1.html ... (mtimes T0+i), recorded in order:
    pages {1: u1-u3, 2: u4-u6, 3: u7...}."""
    srv = make_server(conf="SitemapPageSize 3\n" + CRAWL + conf, **kw)
    for i in range(1, 20):
        srv.write(f"htdocs/u{i}.html", HTML, mtime=T0 + i)
    srv.write("htdocs/t.txt", "plain text, never recorded\n")
    srv.write("htdocs/big.html", "<html><body>" + "static file " * 300 + "</body></html>\n")
    srv.start()
    record(srv, *[f"/u{i}.html" for i in range(1, n + 1)], each=True)
    return srv


# ---------------------------------------------------------------------------
# headers and HEAD

def test_sitemap_get_and_head_headers(make_server):
    srv = paged_server(make_server, n=4)
    for path in ("/sitemap.xml", "/sitemap-1.xml", "/sitemap-2.xml"):
        g = fetch(srv, path)
        h = srv.request("HEAD", path)
        assert h.status == 200, (path, h)
        assert h.body == b""
        check_headers(h)
        for name in VALIDATORS:
            assert h.header(name) == g.header(name), (path, name, h.headers, g.headers)
        cl = h.header("Content-Length")
        assert cl is None or int(cl) == len(g.body), (path, cl, len(g.body))
        # a page's Last-Modified is not in the future
        lm = email.utils.parsedate_to_datetime(g.header("Last-Modified")).timestamp()
        assert lm <= time.time() + 1
        # a query string does not change the document
        assert srv.get(path + "?x=1").body == g.body


def test_sitemap_head_of_an_empty_site(make_server):
    srv = make_server()
    srv.start()
    assert srv.get("/sitemap.xml").status == 404
    h = srv.request("HEAD", "/sitemap.xml")
    assert h.status == 404 and h.body == b""


def test_sitemap_http10(make_server):
    srv = paged_server(make_server, n=4)
    r = srv.get("/sitemap-1.xml", version="HTTP/1.0")
    assert r.status == 200
    check_headers(r)
    check_document(r.body, srv.base, "urlset")


# ---------------------------------------------------------------------------
# conditional requests

@pytest.mark.parametrize("path", ["/sitemap.xml", "/sitemap-2.xml"])
def test_sitemap_conditional_304(make_server, path):
    srv = paged_server(make_server, n=4)
    r = fetch(srv, path)
    etag, lm = r.header("ETag"), r.header("Last-Modified")

    def cond(**h):
        return srv.get(path, headers=h)

    for h in ({"If-None-Match": etag},
              {"If-None-Match": f'"nope", {etag}'},
              {"If-None-Match": "W/" + etag},
              {"If-None-Match": "*"},
              {"If-Modified-Since": lm},
              {"If-None-Match": etag, "If-Modified-Since": lm}):
        c = cond(**h)
        assert c.status == 304, (h, c)
        assert c.body == b"", (h, c.body)
        assert c.header("ETag") == etag, (h, c.headers)

    old = email.utils.formatdate(T0, usegmt=True)
    for h in ({"If-None-Match": '"nope"'},
              {"If-Modified-Since": old},
              # If-None-Match wins over a matching If-Modified-Since
              {"If-None-Match": '"nope"', "If-Modified-Since": lm}):
        c = cond(**h)
        assert c.status == 200, (h, c)
        assert c.body == r.body
    # HEAD is conditional too
    c = srv.request("HEAD", path, headers={"If-None-Match": etag})
    assert c.status == 304, c
    # If-Match / If-Unmodified-Since
    assert srv.get(path, headers={"If-Match": etag}).status == 200
    assert srv.get(path, headers={"If-Match": '"nope"'}).status == 412
    assert srv.get(path, headers={"If-Unmodified-Since": old}).status == 412


def test_sitemap_conditional_after_change(make_server):
    """A validator of an older version does not give a 304."""
    srv = paged_server(make_server, n=4)
    r = fetch(srv, "/sitemap-2.xml")
    record(srv, "/u5.html")
    c = srv.get("/sitemap-2.xml", headers={"If-None-Match": r.header("ETag")})
    assert c.status == 200, c
    check_document(c.body, srv.base, "urlset")
    assert c.body != r.body and c.header("ETag") != r.header("ETag")


# ---------------------------------------------------------------------------
# 404

BAD_NAMES = ["/sitemap-0.xml", "/sitemap-01.xml", "/sitemap-007.xml", "/sitemap-x.xml",
             "/sitemap-1x.xml", "/sitemap--1.xml", "/sitemap-.xml", "/sitemap-+1.xml",
             "/sitemap-1.xml/extra", "/sitemap-1.xml/", "/sitemap-2.xml/sitemap-1.xml",
             "/sitemap-9999999999.xml", "/sitemap-99999999999999999999.xml",
             "/sitemap-1.5.xml", "/sitemap- 1.xml".replace(" ", "%20")]


def test_sitemap_404(make_server):
    srv = paged_server(make_server, n=7)
    # the real pages
    for n in (1, 2, 3):
        assert srv.get(f"/sitemap-{n}.xml").status == 200
    # past the last page
    for p in ("/sitemap-4.xml", "/sitemap-5.xml", "/sitemap-123456789.xml"):
        r = srv.get(p)
        assert r.status == 404, (p, r)
    # malformed names, also when a file of that name exists
    srv.write("htdocs/sitemap-0.xml", "<x/>")
    srv.write("htdocs/sitemap-01.xml", "<x/>")
    for p in BAD_NAMES:
        r = srv.get(p)
        assert r.status == 404, (p, r, r.body[:200])
        assert (r.header("Content-Type") or "").split(";")[0] != "application/xml", (p, r)
    # HEAD as well
    assert srv.request("HEAD", "/sitemap-0.xml").status == 404
    assert srv.request("HEAD", "/sitemap-4.xml").status == 404
    # a page emptied by removals answers 404 and leaves the index
    for i in (4, 5, 6):
        os.unlink(srv.path(f"htdocs/u{i}.html"))
        assert srv.get(f"/u{i}.html").status == 404
    srv.wait_absent("/u4.html", "/u5.html", "/u6.html")
    assert srv.get("/sitemap-2.xml").status == 404
    pages, index = fetch_all(srv)
    assert sorted(pages) == [1, 3]
    # the sitemap's own 404s never show up in the store
    assert not [u for u in srv.urls() if "sitemap" in u]


# ---------------------------------------------------------------------------
# 405

@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "PROPFIND"])
def test_sitemap_405(make_server, method):
    srv = paged_server(make_server, n=4)
    for path in ("/sitemap.xml", "/sitemap-1.xml", "/sitemap-9.xml"):
        r = srv.request(method, path, body="x=1")
        assert r.status == 405, (method, path, r)
        allow = [m.strip() for m in (r.header("Allow") or "").split(",")]
        assert set(allow) >= {"GET", "HEAD"} and method not in allow, (method, path, r.headers)
    # nothing was changed
    pages, _ = fetch_all(srv)
    assert sum(len(d.entries) for d in pages.values()) == 4


def test_sitemap_options(make_server):
    """OPTIONS, as the README says: 200 with exactly "Allow: GET, HEAD,
    OPTIONS" and no body, for the index and for a page."""
    srv = paged_server(make_server, n=1)
    for path in ("/sitemap.xml", "/sitemap-1.xml"):
        r = srv.request("OPTIONS", path)
        assert r.status == 200 and r.body == b"", (path, r)
        assert r.header("Allow") == "GET, HEAD, OPTIONS", (path, r.headers)


# ---------------------------------------------------------------------------
# 503

def fault_expected(srv):
    srv.expect_log(r"\[sitemap:(warn|error|crit)\].*" + re.escape(srv.db_path))


def check_503(srv, path):
    r = srv.get(path)
    assert r.status == 503, (path, r, srv.log_tail(5))
    ra = r.header("Retry-After")
    assert ra and ra.isdigit() and int(ra) > 0, r.headers
    return r


def test_sitemap_503_directory_unreadable(make_server):
    srv = paged_server(make_server, n=4)
    fault_expected(srv)
    good = fetch(srv, "/sitemap.xml").body
    dbdir = os.path.dirname(srv.db_path)
    mode = os.stat(dbdir).st_mode & 0o7777
    os.chmod(dbdir, 0)
    try:
        for p in ("/sitemap.xml", "/sitemap-1.xml", "/sitemap-2.xml"):
            check_503(srv, p)
        # pages are still served (a text file: nothing to record)
        assert srv.get("/t.txt").status == 200
        srv.wait_log(r"cannot be read.*503|503.*cannot be read", module="sitemap")
        assert srv.log_lines("sitemap", "error"), srv.log_tail()
    finally:
        os.chmod(dbdir, mode)
    assert fetch(srv, "/sitemap.xml").body == good


def test_sitemap_503_garbage_file_then_restored(make_server):
    """The store file replaced by garbage: 503 with Retry-After and the
    fault logged; replaced again by a good copy (a new file at the path):
    the module reopens it and serves it."""
    srv = paged_server(make_server, n=4)
    fault_expected(srv)
    good = fetch(srv, "/sitemap.xml").body
    copy = srv.db_path + ".copy"
    garbage = srv.db_path + ".garbage"
    with as_run_user():
        src = sqlite3.connect(srv.db_path, timeout=5)
        dst = sqlite3.connect(copy)
        src.backup(dst)
        dst.close()
        src.close()
        with open(garbage, "wb") as f:
            f.write(b"this is not an SQLite database\n" * 200)
    # the store goes away whole (with its -wal and -shm) and garbage takes
    # its place
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(srv.db_path + suffix)
    os.replace(garbage, srv.db_path)
    check_503(srv, "/sitemap.xml")
    check_503(srv, "/sitemap-2.xml")
    assert srv.get("/t.txt").status == 200
    lines = srv.wait_log(re.escape(srv.db_path), module="sitemap", level="error")
    assert any("503" in ln for ln in lines), lines
    os.replace(copy, srv.db_path)
    r = fetch(srv, "/sitemap.xml")
    assert r.body == good


# ---------------------------------------------------------------------------
# ETag and Last-Modified follow the bytes

DOCS = ["/sitemap.xml", "/sitemap-1.xml", "/sitemap-2.xml", "/sitemap-3.xml"]


def snapshot(srv, docs=DOCS):
    out = {}
    for p in docs:
        r = srv.get(p)
        if r.status == 404:
            out[p] = None
            continue
        assert r.status == 200, (p, r)
        check_headers(r)
        check_document(r.body, srv.base)
        out[p] = (r.header("ETag"), r.header("Last-Modified"), r.body)
    return out


def lm_time(v):
    return email.utils.parsedate_to_datetime(v).timestamp()


def compare(before, after, changed, step, last_modified=True):
    """Exactly the documents in changed have new bytes; a document's ETag
    changes exactly when its bytes do; Last-Modified never goes back and
    (when last_modified) stays the same with the same bytes."""
    problems = []
    for p in before:
        b, a = before[p], after[p]
        assert b is not None and a is not None, (step, p)
        body_changed = b[2] != a[2]
        if body_changed != (p in changed):
            problems.append(f"{p}: bytes {'changed' if body_changed else 'unchanged'}, "
                            f"expected {'changed' if p in changed else 'unchanged'}")
        if (b[0] != a[0]) != body_changed:
            problems.append(f"{p}: ETag {b[0]} -> {a[0]} while the bytes "
                            f"{'changed' if body_changed else 'did not change'}")
        if last_modified and not body_changed and b[1] != a[1]:
            problems.append(f"{p}: Last-Modified {b[1]} -> {a[1]} with the same bytes")
        if lm_time(a[1]) < lm_time(b[1]):
            problems.append(f"{p}: Last-Modified went back {b[1]} -> {a[1]}")
    assert not problems, f"{step}:\n" + "\n".join(problems)


def test_sitemap_etags_follow_the_bytes(make_server):
    srv = paged_server(make_server, n=7)       # pages 1: u1-u3, 2: u4-u6, 3: u7
    s0 = snapshot(srv)
    # nothing changes: the same ETags; visiting stored URLs changes nothing
    srv.get_ok("/u1.html")
    srv.get_ok("/u7.html")
    time.sleep(1.1)
    s1 = snapshot(srv)
    compare(s0, s1, set(), "no change")

    # add a URL (newer than the others): its page (3) and the index change
    record(srv, "/u8.html")
    s2 = snapshot(srv)
    compare(s1, s2, {"/sitemap-3.xml", "/sitemap.xml"}, "add /u8.html")

    # add a URL older than its page's lastmod: only the page changes (the
    # index's entries, page locations and lastmods, are the same bytes)
    time.sleep(1.1)
    srv.write("htdocs/u9.html", HTML, mtime=T0)
    record(srv, "/u9.html")
    s3 = snapshot(srv)
    # (Last-Modified of the unchanged index: test_sitemap_index_last_modified)
    compare(s2, s3, {"/sitemap-3.xml"}, "add /u9.html (old lastmod)", last_modified=False)
    compare({p: v for p, v in s2.items() if p != "/sitemap.xml"},
            {p: v for p, v in s3.items() if p != "/sitemap.xml"},
            {"/sitemap-3.xml"}, "add /u9.html (old lastmod), pages")

    # remove a URL of page 2: page 2 and the index (lastmod moves to now)
    time.sleep(1.1)
    os.unlink(srv.path("htdocs/u5.html"))
    assert srv.get("/u5.html").status == 404
    srv.wait_absent("/u5.html")
    s4 = snapshot(srv)
    compare(s3, s4, {"/sitemap-2.xml", "/sitemap.xml"}, "remove /u5.html")
    assert lm_time(s4["/sitemap-2.xml"][1]) > lm_time(s3["/sitemap-2.xml"][1])

    # a new lastmod for a URL of page 1: page 1 and the index
    time.sleep(1.1)
    os.utime(srv.path("htdocs/u2.html"), (T0 + 100, T0 + 100))
    srv.get_ok("/u2.html")
    deadline = time.monotonic() + 10
    while srv.row("/u2.html")["lastmod"] != T0 + 100:
        assert time.monotonic() < deadline, srv.row("/u2.html")
        time.sleep(0.1)
    s5 = snapshot(srv)
    compare(s4, s5, {"/sitemap-1.xml", "/sitemap.xml"}, "new lastmod of /u2.html")
    assert lm_time(s5["/sitemap-1.xml"][1]) > lm_time(s4["/sitemap-1.xml"][1])
    assert lm_time(s5["/sitemap.xml"][1]) >= lm_time(s4["/sitemap.xml"][1])


def test_sitemap_index_last_modified(make_server):
    """A URL added to a page without changing that page's lastmod leaves the
    index's bytes as they were: its Last-Modified must stay too (and its
    ETag does)."""
    srv = paged_server(make_server, n=4)
    s0 = snapshot(srv, DOCS[:3])
    time.sleep(1.1)
    srv.write("htdocs/old.html", HTML, mtime=T0)
    record(srv, "/old.html")
    s1 = snapshot(srv, DOCS[:3])
    compare(s0, s1, {"/sitemap-2.xml"}, "add /old.html (old lastmod)")


def test_sitemap_etag_differs_between_documents(make_server):
    srv = paged_server(make_server, n=7)
    tags = {p: srv.get(p).header("ETag") for p in DOCS}
    assert len(set(tags.values())) == len(DOCS), tags


def test_sitemap_etag_changes_with_annotations(make_server):
    """The same store under another SitemapChangefreq: other bytes, other
    ETag."""
    srv = paged_server(make_server, n=1)
    r1 = fetch(srv, "/sitemap.xml")
    srv.graceful(conf="SitemapPageSize 3\n" + CRAWL + "SitemapChangefreq . daily\n")
    r2 = fetch(srv, "/sitemap.xml")
    assert r2.body != r1.body and r2.doc.entries[0]["changefreq"] == "daily"
    assert r2.header("ETag") != r1.header("ETag")
    c = srv.get("/sitemap.xml", headers={"If-None-Match": r1.header("ETag")})
    assert c.status == 200


def test_sitemap_last_modified_changes_with_annotations(make_server):
    """Other bytes under another SitemapChangefreq: a client that
    revalidates with If-Modified-Since alone must get them too."""
    srv = paged_server(make_server, n=1)
    r1 = fetch(srv, "/sitemap.xml")
    time.sleep(1.1)
    srv.graceful(conf="SitemapPageSize 3\n" + CRAWL + "SitemapChangefreq . daily\n")
    r2 = fetch(srv, "/sitemap.xml")
    assert r2.body != r1.body
    c = srv.get("/sitemap.xml", headers={"If-Modified-Since": r1.header("Last-Modified")})
    assert c.status == 200, (
        f"bytes changed but Last-Modified did not ({r1.header('Last-Modified')} -> "
        f"{r2.header('Last-Modified')}): an If-Modified-Since client keeps the old document")


# ---------------------------------------------------------------------------
# mod_deflate

DEFLATE = "AddOutputFilterByType DEFLATE application/xml text/html\n"


@pytest.mark.parametrize("cache", ["On", "Off"])
def test_sitemap_deflate(make_server, cache):
    """With renditions (On) the module sends the gzip bytes itself, with
    an ETag of their own; Off, mod_deflate compresses the stream."""
    srv = paged_server(make_server, n=4, conf=DEFLATE + f"SitemapCache {cache}\n",
                       modules=("filter", "deflate"))
    gz = {"Accept-Encoding": "gzip"}
    # how httpd treats the ETag of a compressed static file, for comparison
    static = srv.get("/big.html", headers=gz)
    assert static.header("Content-Encoding") == "gzip", static.headers
    static_304 = srv.get("/big.html", headers={**gz, "If-None-Match": static.header("ETag")}).status
    # big.html is a page too: let it land before the documents are compared
    srv.wait_recorded("/big.html")
    for path in ("/sitemap.xml", "/sitemap-1.xml", "/sitemap-2.xml"):
        plain = fetch(srv, path)
        assert (plain.header("Content-Encoding") or "identity") == "identity"
        z = srv.get(path, headers=gz)
        assert z.status == 200, z
        assert z.header("Content-Encoding") == "gzip", z.headers
        assert "accept-encoding" in (z.header("Vary") or "").lower(), z.headers
        check_headers(z)
        body = gzip.decompress(z.body)
        assert body == plain.body, path
        check_document(body, srv.base)
        assert z.header("ETag") != plain.header("ETag"), "same ETag for two encodings"
        h = srv.request("HEAD", path, headers=gz)
        assert h.status == 200 and h.body == b""
        check_headers(h)
        # conditional requests: the identity ETag and the date give 304s;
        # so does the "-gzip" ETag mod_deflate made (httpd gives a static
        # file's a 200: bug 45023), with that ETag
        c = srv.get(path, headers={**gz, "If-None-Match": plain.header("ETag")})
        # the identity ETag is not the gzip bytes' (renditions); mod_deflate
        # compares before it compresses
        assert c.status == (200 if cache == "On" else 304), (path, c)
        c = srv.get(path, headers={**gz, "If-Modified-Since": z.header("Last-Modified")})
        assert c.status == 304, (path, c)
        c = srv.get(path, headers={**gz, "If-None-Match": z.header("ETag")})
        assert c.status == 304, (path, c, static_304)
        assert c.header("ETag") == z.header("ETag"), (path, c.headers)
    # a change is visible through the filter
    before = gzip.decompress(srv.get("/sitemap-2.xml", headers=gz).body)
    record(srv, "/u5.html")
    after = gzip.decompress(srv.get("/sitemap-2.xml", headers=gz).body)
    assert after != before and srv.base.encode() + b"/u5.html" in after
    check_document(after, srv.base, "urlset")


# ---------------------------------------------------------------------------
# mod_cache

def cache_server(make_server, extra=""):
    srv = make_server(modules=("cache", "cache_disk"))
    os.makedirs(srv.path("cache"))
    if IS_ROOT:
        os.chown(srv.path("cache"), RUN_UID, RUN_GID)
    srv.conf_text = f"""SitemapPageSize 3
{CRAWL}
CacheRoot "{srv.root}/cache"
CacheEnable disk /
CacheHeader on
CacheDetailHeader on
CacheMaxExpire 2
{extra}
"""
    for i in range(1, 10):
        srv.write(f"htdocs/u{i}.html", HTML, mtime=T0 + i)
    srv.start()
    record(srv, *[f"/u{i}.html" for i in range(1, 5)], each=True)
    return srv


SITEMAP_MAX_AGE = """
<LocationMatch "^/sitemap(-[0-9]+)?[.]xml$">
    Header set Cache-Control "max-age=2"
</LocationMatch>
"""


def test_sitemap_behind_mod_cache(make_server):
    """Sitemaps given a max-age: served from the cache while fresh, with the
    same bytes and headers; a change shows once the copy is stale."""
    srv = cache_server(make_server, SITEMAP_MAX_AGE)
    paths = ("/sitemap.xml", "/sitemap-1.xml", "/sitemap-2.xml")
    first = {p: fetch(srv, p) for p in paths}
    assert first["/sitemap.xml"].header("Cache-Control") == "max-age=2"
    seen = {}
    for p, r in first.items():
        again = fetch(srv, p)
        seen[p] = again.header("X-Cache")
        assert again.body == r.body, p
        assert again.header("ETag") == r.header("ETag"), p
        c = srv.get(p, headers={"If-None-Match": r.header("ETag")})
        assert c.status == 304, (p, c)
        h = srv.request("HEAD", p)
        assert h.status == 200 and h.body == b"", (p, h)
        check_headers(h)
    assert any("HIT" in (v or "") for v in seen.values()), \
        f"nothing served from the cache: {seen}"

    # a change shows once the cached copy is stale and revalidated
    record(srv, "/u5.html")
    deadline = time.monotonic() + 10
    while True:
        r = fetch(srv, "/sitemap-2.xml")
        if srv.base.encode() + b"/u5.html" in r.body:
            break
        assert r.body == first["/sitemap-2.xml"].body, "neither the old nor the new page"
        assert time.monotonic() < deadline, f"change not visible through mod_cache: {r.headers}"
        time.sleep(0.25)
    assert r.header("ETag") != first["/sitemap-2.xml"].header("ETag")
    c = srv.get("/sitemap-2.xml", headers={"If-None-Match": first["/sitemap-2.xml"].header("ETag")})
    assert c.status == 200, c
    check_document(c.body, srv.base, "urlset")


def test_sitemap_mod_cache_revalidation_unchanged(make_server):
    """A stale cached sitemap that has not changed: mod_cache revalidates it
    with a conditional request of its own; the client, which sent no
    condition, must still get a 200 with the whole document (as for a
    static file), never a bodiless 304."""
    srv = cache_server(make_server)
    srv.write("htdocs/static.xml", '<?xml version="1.0"?><x/>\n')
    # the static file, for comparison: revalidated and refreshed
    for i in range(3):
        r = srv.get("/static.xml")
        assert r.status == 200 and r.body, (i, r)
    statuses = []
    for path in ("/sitemap.xml", "/sitemap-2.xml"):
        for i in range(4):
            r = srv.get(path)
            statuses.append((path, r.status, r.header("X-Cache"), len(r.body)))
    bad = [s for s in statuses if s[1] != 200 or not s[3]]
    assert not bad, f"unconditional GETs not answered 200 with a body: {statuses}"


def test_sitemap_etag_stable_across_restart(make_server):
    """The same store and configuration after a restart: the same ETags and
    Last-Modified (caches keep their copies)."""
    srv = paged_server(make_server, n=4)
    s0 = snapshot(srv, DOCS[:3])
    srv.graceful()
    s1 = snapshot(srv, DOCS[:3])
    srv.stop()
    srv.restart()
    s2 = snapshot(srv, DOCS[:3])
    assert s0 == s1 == s2
