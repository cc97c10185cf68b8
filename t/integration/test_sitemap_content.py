# SPDX-License-Identifier: Apache-2.0
"""What the sitemap lists: stores of 0, 1, exactly one page, one page plus
one URL and many pages; stable pages (holes are not refilled); escaping;
changefreq/priority (first match wins); SitemapPath; one sitemap per
virtual host; bad sitemap directives stop start-up.

Every document fetched is checked by sitemap_check (well-formed, structure,
and the official schemas when ../shared/xsd is present)."""
import os
import time

import pytest

from sitemap_check import fetch, fetch_all, union_paths

HTML = "<html><body>x</body></html>\n"
T0 = 1700000000                         # 2023-11-14T22:13:20+00:00
CRAWL = "RewriteEngine On\nRewriteRule ^/p/ /page.html [L]\n"


def w3c(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(t))


def record(srv, *paths, host=None, base=None, each=False):
    """GET each path (200 expected) and wait until all are stored; with
    each=True, wait after every one, so that they are stored in this order."""
    for p in paths:
        srv.get_ok(p, host=host)
        if each:
            srv.wait_recorded(p, base=base)
    srv.wait_recorded(*paths, base=base)


def page_counts(pages):
    return {n: len(d.entries) for n, d in pages.items()}


# ---------------------------------------------------------------------------
# store sizes

def test_sitemap_empty_store_lists_nothing(make_server):
    """No URL recorded yet: 404 saying so, never a placeholder (a root
    that may be a redirect, as MediaWiki's is, or nobody has seen)."""
    srv = make_server()
    srv.start()
    for p in ("/sitemap.xml", "/sitemap-1.xml", "/sitemap-2.xml"):
        r = srv.get(p)
        assert r.status == 404, (p, r)
    assert b"recorded yet" in srv.get("/sitemap.xml").body
    # the same after the only URL has been removed again
    srv.write("htdocs/gone.html", HTML)
    record(srv, "/gone.html")
    r = fetch(srv, "/sitemap.xml", kind="urlset")
    assert r.doc.locs == [srv.base + "/gone.html"]
    os.unlink(srv.path("htdocs/gone.html"))
    assert srv.get("/gone.html").status == 404
    srv.wait_absent("/gone.html")
    r = srv.get("/sitemap.xml")
    assert r.status == 404 and b"recorded yet" in r.body, r
    assert srv.get("/sitemap-1.xml").status == 404


def test_sitemap_one_url(make_server):
    srv = make_server()
    srv.write("htdocs/page.html", HTML, mtime=T0)
    srv.start()
    record(srv, "/page.html")
    r = fetch(srv, "/sitemap.xml", kind="urlset")
    assert r.doc.entries == [{"loc": srv.base + "/page.html", "lastmod": w3c(T0)}]
    # the one page is also served under its own name, with the same bytes
    r1 = fetch(srv, "/sitemap-1.xml", kind="urlset")
    assert r1.body == r.body
    assert r1.header("ETag") == r.header("ETag")
    assert srv.get("/sitemap-2.xml").status == 404


def test_sitemap_exactly_one_page(make_server):
    srv = make_server(conf="SitemapPageSize 3\n" + CRAWL)
    srv.start()
    paths = ["/p/a", "/p/b", "/p/c"]
    record(srv, *paths)
    r = fetch(srv, "/sitemap.xml", kind="urlset")
    assert sorted(r.doc.locs) == sorted(srv.base + p for p in paths)
    assert fetch(srv, "/sitemap-1.xml", kind="urlset").body == r.body
    assert srv.get("/sitemap-2.xml").status == 404


def test_sitemap_one_page_plus_one(make_server):
    srv = make_server(conf="SitemapPageSize 3\n" + CRAWL)
    srv.start()
    paths = ["/p/a", "/p/b", "/p/c", "/p/d"]
    record(srv, *paths)
    pages, index = fetch_all(srv)
    assert index is not None, "4 URLs on pages of 3 need an index"
    assert index.locs == [srv.base + "/sitemap-1.xml", srv.base + "/sitemap-2.xml"]
    assert page_counts(pages) == {1: 3, 2: 1}
    assert union_paths(pages, srv.base) == set(paths) == srv.urls()
    assert srv.get("/sitemap-3.xml").status == 404


def test_sitemap_default_page_size_one_page(make_server):
    """With the default page size (50000), 40 URLs are one urlset."""
    srv = make_server(conf=CRAWL)
    srv.start()
    paths = [f"/p/{i}" for i in range(40)]
    record(srv, *paths)
    r = fetch(srv, "/sitemap.xml", kind="urlset")
    assert {loc[len(srv.base):] for loc in r.doc.locs} == set(paths)


def test_sitemap_many_pages_union(make_server):
    srv = make_server(conf="SitemapPageSize 3\n" + CRAWL)
    srv.write("htdocs/page.html", HTML, mtime=T0)
    srv.start()
    paths = [f"/p/{i}" for i in range(31)]
    record(srv, *paths)
    pages, index = fetch_all(srv)
    stored = srv.urls()
    assert len(stored) == 31
    # the union of the pages is the set of stored URLs, each once
    assert union_paths(pages, srv.base) == stored
    # pages 1..11, contiguous, all full but the last
    assert list(pages) == list(range(1, 12))
    assert page_counts(pages) == {**{n: 3 for n in range(1, 11)}, 11: 1}
    assert [e["lastmod"] for e in index.entries] == [w3c(T0)] * 11
    for d in pages.values():
        assert all(e["lastmod"] == w3c(T0) for e in d.entries)
    assert srv.get("/sitemap-12.xml").status == 404
    # pages agree with the store's page numbers
    rows = srv.query("SELECT u.url, u.page FROM urls u JOIN sites s ON s.id = u.site_id "
                     "WHERE s.base = ?", (srv.base,))
    by_page = {}
    for url, page in rows:
        by_page.setdefault(page, set()).add(url)
    assert {n: {loc[len(srv.base):] for loc in d.locs} for n, d in pages.items()} == by_page


# ---------------------------------------------------------------------------
# stable pages

def test_sitemap_stable_pages_and_holes(make_server):
    """A URL keeps its page; new URLs fill the last page then open a new
    one; a removed URL leaves a hole that is not refilled; a page's lastmod
    is its newest URL's, moved to the removal time by a removal; an empty
    page leaves the index."""
    srv = make_server(conf="SitemapPageSize 3\n")
    for i in range(1, 10):
        srv.write(f"htdocs/u{i}.html", HTML, mtime=T0 + i)
    srv.start()
    record(srv, *[f"/u{i}.html" for i in range(1, 8)], each=True)

    def layout():
        pages, index = fetch_all(srv)
        return ({n: [loc[len(srv.base):] for loc in d.locs] for n, d in pages.items()},
                {int(e["loc"].rsplit("-", 1)[1][:-4]): e["lastmod"] for e in index.entries})

    pages, mods = layout()
    assert pages == {1: ["/u1.html", "/u2.html", "/u3.html"],
                     2: ["/u4.html", "/u5.html", "/u6.html"],
                     3: ["/u7.html"]}
    assert mods == {1: w3c(T0 + 3), 2: w3c(T0 + 6), 3: w3c(T0 + 7)}

    # visiting stored URLs again moves nothing
    srv.get_ok("/u2.html")
    srv.get_ok("/u7.html")
    # a removal on page 2 leaves a hole there
    before = int(time.time())
    os.unlink(srv.path("htdocs/u5.html"))
    assert srv.get("/u5.html").status == 404
    srv.wait_absent("/u5.html")
    after = int(time.time())
    # a new URL goes to the last page, not into the hole
    record(srv, "/u8.html")
    pages, mods = layout()
    assert pages == {1: ["/u1.html", "/u2.html", "/u3.html"],
                     2: ["/u4.html", "/u6.html"],
                     3: ["/u7.html", "/u8.html"]}
    assert mods[1] == w3c(T0 + 3) and mods[3] == w3c(T0 + 8)
    assert w3c(before) <= mods[2] <= w3c(after + 1), (mods[2], before, after)

    # the last page is full after one more; the next opens page 4
    record(srv, "/u9.html", each=True)
    srv.write("htdocs/u10.html", HTML, mtime=T0 + 10)
    record(srv, "/u10.html")
    pages, mods = layout()
    assert pages[3] == ["/u7.html", "/u8.html", "/u9.html"]
    assert pages[4] == ["/u10.html"]

    # emptying page 1: it leaves the index and answers 404
    for i in (1, 2, 3):
        os.unlink(srv.path(f"htdocs/u{i}.html"))
        assert srv.get(f"/u{i}.html").status == 404
    srv.wait_absent("/u1.html", "/u2.html", "/u3.html")
    pages, mods = layout()
    assert sorted(pages) == [2, 3, 4]
    assert srv.get("/sitemap-1.xml").status == 404
    # ...and is not reused either
    srv.write("htdocs/u11.html", HTML, mtime=T0 + 11)
    record(srv, "/u11.html")
    pages, mods = layout()
    assert pages[4] == ["/u10.html", "/u11.html"] and 1 not in pages


# ---------------------------------------------------------------------------
# escaping

# (file name, raw request target, stored path, how <loc> spells it in the bytes)
ESCAPES = [
    ("a&b.html", b"/a&b.html", "/a&b.html", b"/a&amp;b.html"),
    ("it's.html", b"/it's.html", "/it's.html", b"/it&apos;s.html"),
    ("caf\u00e9.html", "/caf\u00e9.html".encode(), "/caf%C3%A9.html", b"/caf%C3%A9.html"),
    ("na\u00efve.html", b"/na%c3%afve.html", "/na%C3%AFve.html", b"/na%C3%AFve.html"),
    ('q"x.html', b'/q"x.html', "/q%22x.html", b"/q%22x.html"),
    ("l<t.html", b"/l<t.html", "/l%3Ct.html", b"/l%3Ct.html"),
    ("g>t.html", b"/g>t.html", "/g%3Et.html", b"/g%3Et.html"),
    ("all&'.html", b"/all&'.html", "/all&'.html", b"/all&amp;&apos;.html"),
]


def test_sitemap_escaping(make_server):
    srv = make_server(conf="SitemapAllowQuery a b\n")
    for f, *_ in ESCAPES:
        srv.write("htdocs/" + f, HTML)
    srv.start()
    for f, target, stored, _ in ESCAPES:
        r = srv.get(target)
        assert r.status == 200, (target, r)
    srv.get_ok("/page.html?a=1&b=2")
    srv.wait_recorded(*[e[2] for e in ESCAPES])
    stored = srv.urls()
    query_url = [u for u in stored if u.startswith("/page.html?")]
    assert len(query_url) == 1, stored
    r = fetch(srv, "/sitemap.xml", kind="urlset")
    assert {loc[len(srv.base):] for loc in r.doc.locs} == stored
    for f, target, path, raw in ESCAPES:
        assert b"<loc>" + srv.base.encode() + raw + b"</loc>" in r.body, (raw, r.body)
    # the query's '&' is an entity in the bytes too
    assert (b"<loc>" + srv.base.encode() + query_url[0].replace("&", "&amp;").encode()
            + b"</loc>") in r.body, r.body
    # no raw non-ASCII, no unescaped quote or apostrophe in a <loc>
    assert max(r.body) < 0x80
    for loc_bytes in r.body.split(b"<loc>")[1:]:
        text = loc_bytes.split(b"</loc>")[0]
        assert b"'" not in text and b'"' not in text and b"<" not in text, text


# ---------------------------------------------------------------------------
# changefreq and priority

ANNOTATIONS = r"""
SitemapAllowQuery page
SitemapChangefreq ^/news/ daily
SitemapChangefreq ^/news/old yearly
SitemapChangefreq \.html$ weekly
SitemapChangefreq \?page= hourly
SitemapPriority ^/news/ .8
SitemapPriority ^/news/old 0.1
SitemapPriority ^/index\.html$ 1
SitemapPriority page=2$ 0
SitemapPriority ^/p/prio 0.5
""" + CRAWL


def test_sitemap_changefreq_priority_first_match(make_server):
    srv = make_server(conf=ANNOTATIONS)
    srv.write("htdocs/news/a.html", HTML)
    srv.write("htdocs/news/old.html", HTML)
    srv.write("htdocs/list.html", HTML)
    srv.start()
    paths = ["/news/a.html", "/news/old.html", "/index.html", "/list.html?page=2",
             "/list.html", "/p/plain", "/p/prio"]
    record(srv, *paths)
    r = fetch(srv, "/sitemap.xml", kind="urlset")
    got = {e["loc"][len(srv.base):]: (e.get("changefreq"), e.get("priority"))
           for e in r.doc.entries}
    assert got == {
        "/news/a.html": ("daily", "0.8"),
        "/news/old.html": ("daily", "0.8"),      # first match wins
        "/index.html": ("weekly", "1.0"),
        "/list.html?page=2": ("hourly", "0.0"),  # matched with the query
        "/list.html": ("weekly", None),
        "/p/plain": (None, None),
        "/p/prio": (None, "0.5"),
    }, got


def test_sitemap_annotations_vhost_before_server(make_server):
    """A vhost's own rules come before the server config's, which it
    inherits."""
    srv = make_server()
    srv.write("vh/a.html", HTML)
    srv.write("vh/b.html", HTML)
    srv.conf_text = f"""
SitemapChangefreq . monthly
SitemapPriority . 0.2
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName vh.test
    DocumentRoot "{srv.root}/vh"
    <Directory "{srv.root}/vh">
        Require all granted
    </Directory>
    SitemapChangefreq ^/a daily
</VirtualHost>
"""
    srv.start()
    base = f"http://vh.test:{srv.port}"
    record(srv, "/a.html", "/b.html", host="vh.test", base=base)
    r = fetch(srv, "/sitemap.xml", host="vh.test", base=base, kind="urlset")
    got = {e["loc"]: (e.get("changefreq"), e.get("priority")) for e in r.doc.entries}
    assert got == {base + "/a.html": ("daily", "0.2"), base + "/b.html": ("monthly", "0.2")}


BAD_DIRECTIVES = [
    ("SitemapChangefreq ^/ sometimes", "sometimes"),
    ("SitemapChangefreq ^/ Daily", "Daily"),
    ('SitemapChangefreq "^/(unclosed" daily', "^/(unclosed"),
    ("SitemapPriority ^/ 1.5", "1.5"),
    ("SitemapPriority ^/ 0.85", "0.85"),
    ("SitemapPriority ^/ -0.1", "-0.1"),
    ("SitemapPriority ^/ high", "high"),
    ('SitemapPriority "[z-a]" 0.5', "[z-a]"),
    ("SitemapPath /sitemap.txt", "/sitemap.txt"),
    ("SitemapPath sitemap.xml", "sitemap.xml"),
    ("SitemapPath /maps/.xml", "/maps/.xml"),
    ("SitemapPageSize 0", "0"),
    ("SitemapPageSize 50001", "50001"),
    ("SitemapPageSize 10x", "10x"),
]


@pytest.mark.parametrize("line,value", BAD_DIRECTIVES, ids=[b[0] for b in BAD_DIRECTIVES])
def test_sitemap_bad_directive_stops_startup(make_server, line, value):
    srv = make_server()
    srv.config_fails(line.split()[0], value, conf=line)


# ---------------------------------------------------------------------------
# SitemapPath

def test_sitemap_custom_path(make_server):
    srv = make_server(conf="SitemapPath /maps/site.xml\nSitemapPageSize 2\n"
                           "RewriteEngine On\nRewriteRule ^/maps/p/ /page.html [L]\n")
    # a sitemap lists only URLs under its own directory (sitemaps.org):
    # /maps/ is the site
    srv.conf_text = f"SitemapBaseURL {srv.base}/maps/\n" + srv.conf_text
    # a static /sitemap.xml is no longer the module's
    srv.write("htdocs/sitemap.xml", '<?xml version="1.0"?><static/>\n')
    srv.start()
    # before anything is recorded: no document at the new path either
    assert srv.get("/maps/site.xml").status == 404
    record(srv, "/maps/p/1")
    r = fetch(srv, "/maps/site.xml", kind="urlset")
    assert r.doc.locs == [srv.base + "/maps/p/1"]
    assert fetch(srv, "/maps/site-1.xml", kind="urlset").body == r.body
    paths = ["/maps/p/1", "/maps/p/2", "/maps/p/3", "/maps/p/4", "/maps/p/5"]
    record(srv, *paths[1:])
    pages, index = fetch_all(srv, "/maps/site.xml")
    assert index.locs == [f"{srv.base}/maps/site-{n}.xml" for n in (1, 2, 3)]
    assert union_paths(pages, srv.base) == set(paths)
    assert srv.get("/sitemap.xml").body == b'<?xml version="1.0"?><static/>\n'
    for p in ("/sitemap-1.xml", "/maps/site-4.xml", "/maps/site-0.xml", "/maps/site-x.xml",
              "/maps/site-1.xml/x", "/maps/sitemap.xml"):
        assert srv.get(p).status == 404, p


# ---------------------------------------------------------------------------
# virtual hosts

def vhost(srv, name, extra=""):
    return f"""
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName {name}
    DocumentRoot "{srv.root}/{name}"
    <Directory "{srv.root}/{name}">
        Require all granted
    </Directory>
{extra}
</VirtualHost>
"""


def test_sitemap_two_vhosts_own_urls(make_server):
    srv = make_server()
    for name in ("a.test", "b.test", "c.test"):
        for f in ("shared.html", f"only-{name[0]}.html", "x1.html", "x2.html", "x3.html"):
            srv.write(f"{name}/{f}", HTML)
    srv.conf_text = (vhost(srv, "a.test", "SitemapPageSize 2")
                     + vhost(srv, "b.test", "SitemapBaseURL https://www.example.com")
                     + vhost(srv, "c.test", "Sitemap Off"))
    srv.start()
    a = f"http://a.test:{srv.port}"
    b = "https://www.example.com"
    record(srv, "/shared.html", "/only-a.html", "/x1.html", host="a.test", base=a)
    record(srv, "/shared.html", "/only-b.html", host="b.test", base=b)
    srv.get_ok("/only-c.html", host="c.test")

    pages_a, index_a = fetch_all(srv, host="a.test", base=a)
    assert index_a.locs == [a + "/sitemap-1.xml", a + "/sitemap-2.xml"]
    assert union_paths(pages_a, a) == {"/shared.html", "/only-a.html", "/x1.html"} == srv.urls(a)

    pages_b, index_b = fetch_all(srv, host="b.test", base=b)
    assert index_b is None
    assert union_paths(pages_b, b) == {"/shared.html", "/only-b.html"} == srv.urls(b)

    # b's page 2 does not exist, whatever a has
    assert srv.get("/sitemap-2.xml", host="b.test").status == 404
    # no sitemap where Sitemap is Off
    assert srv.get("/sitemap.xml", host="c.test").status == 404
    assert set(srv.all_urls()) == {a, b}


def test_sitemap_page_size_change_keeps_pages(make_server):
    """A new SitemapPageSize (graceful restart) moves no stored URL; new
    URLs fill the last page up to the new size."""
    srv = make_server(conf="SitemapPageSize 3\n" + CRAWL)
    srv.start()
    record(srv, *[f"/p/{i}" for i in range(5)], each=True)
    before, _ = fetch_all(srv)
    assert page_counts(before) == {1: 3, 2: 2}
    srv.graceful(conf="SitemapPageSize 4\n" + CRAWL)
    record(srv, "/p/5", "/p/6", "/p/7", each=True)
    after, _ = fetch_all(srv)
    assert after[1].locs == before[1].locs
    assert after[2].locs == before[2].locs + [srv.base + "/p/5", srv.base + "/p/6"]
    assert after[3].locs == [srv.base + "/p/7"]


def test_sitemap_read_while_recording(make_server):
    """Documents fetched while URLs are being recorded are each valid (one
    snapshot each); at the end the pages hold every URL once."""
    import threading
    srv = make_server(conf="SitemapPageSize 10\n" + CRAWL)
    srv.write("htdocs/page.html", HTML, mtime=T0)
    srv.start()
    paths = [f"/p/{i}" for i in range(200)]
    errors = []

    def crawl():
        try:
            for p in paths:
                srv.get_ok(p)
        except Exception as e:          # reported below
            errors.append(e)

    # one URL first: an empty site has no document (404)
    srv.get_ok(paths[0])
    srv.wait_recorded(paths[0])
    t = threading.Thread(target=crawl)
    t.start()
    rounds = 0
    while t.is_alive() or rounds == 0:
        pages, index = fetch_all(srv)
        union_paths(pages, srv.base)
        rounds += 1
    t.join()
    assert not errors, errors
    srv.wait_recorded(*paths)
    pages, index = fetch_all(srv)
    assert union_paths(pages, srv.base) == set(paths)
    assert page_counts(pages) == {n: 10 for n in range(1, 21)}
