# SPDX-License-Identifier: Apache-2.0
"""The sitemap for people (issue 18): the stylesheet processing instruction
and the module's CSS (SitemapStylesheet), the plain-text sitemap
(SitemapTextPath) and the HTML site map (SitemapHTMLPath): content, paging,
escaping of hostile paths, 404s, HEAD, ETag/304, and the directives'
errors."""
import html.parser
import re
import subprocess
import xml.etree.ElementTree as ET

from sitemap_check import check_document, fetch

HTML = "<html><body>x</body></html>\n"
CRAWL = "RewriteEngine On\nRewriteRule ^/p/ /page.html [L]\n"
PI_RX = re.compile(rb'^<\?xml version="1.0" encoding="UTF-8"\?>\n'
                   rb'<\?xml-stylesheet type="text/css" href="([^"]*)"\?>\n<')
# Hostile but stored as they are ('&' and "'" are legal in a path) or
# percent-encoded ('<', '>', '"').
HOSTILE = "/p/a&b'c<script>alert(1)</script>\"x.html"


def record(srv, *paths):
    for p in paths:
        assert srv.get(p).status == 200, p
    srv.wait_recorded(*[q for q in paths if "<" not in q])


def conditional(srv, path, ctype):
    """GET, HEAD and the 304s of path; returns the GET response."""
    g = srv.get(path)
    assert g.status == 200, (path, g, g.body[:200])
    assert g.header("Content-Type").startswith(ctype), g.headers
    etag, lm = g.header("ETag"), g.header("Last-Modified")
    assert etag and lm, g.headers
    h = srv.request("HEAD", path)
    assert h.status == 200 and h.body == b""
    assert h.header("ETag") == etag
    assert srv.get(path, headers={"If-None-Match": etag}).status == 304
    assert srv.get(path, headers={"If-Modified-Since": lm}).status == 304
    assert srv.get(path, headers={"If-None-Match": '"other"'}).status == 200
    assert srv.request("POST", path, body=b"x").status == 405
    return g


# ---------------------------------------------------------------------------
# SitemapStylesheet

def test_stylesheet_default_on_index_page_and_urlset(make_server):
    srv = make_server(conf="SitemapPageSize 2\n" + CRAWL)
    srv.start()
    record(srv, "/p/1.html")
    one = fetch(srv, "/sitemap.xml")                  # a single urlset
    assert PI_RX.match(one.body).group(1) == b"/sitemap.css", one.body[:200]
    record(srv, "/p/2.html", "/p/3.html")
    for path, kind in (("/sitemap.xml", "sitemapindex"),
                       ("/sitemap-1.xml", "urlset"), ("/sitemap-2.xml", "urlset")):
        r = fetch(srv, path, kind=kind)
        assert PI_RX.match(r.body).group(1) == b"/sitemap.css", (path, r.body[:200])
    css = conditional(srv, "/sitemap.css", "text/css")
    body = css.body.decode()
    assert "display: table-row" in body and "Last modified" in body
    assert int(css.header("Content-Length")) == len(css.body)


def test_stylesheet_beside_sitemap_path_off_and_url(make_server, tmp_path):
    srv = make_server()
    # a sitemap lists only URLs under its directory: /maps/ is the site
    maps = f"SitemapBaseURL {srv.base}/maps/\nSitemapPath /maps/site.xml\n"
    srv.conf_text = maps
    srv.write("htdocs/maps/index.html", "<html><body>maps</body></html>\n")
    srv.start()
    srv.get_ok("/maps/")
    srv.wait_recorded("/maps/")
    r = fetch(srv, "/maps/site.xml")
    assert PI_RX.match(r.body).group(1) == b"/maps/sitemap.css"
    assert srv.get("/maps/sitemap.css").status == 200
    assert srv.get("/sitemap.css").status == 404
    etag_on = r.header("ETag")

    srv.graceful(conf=maps + "SitemapStylesheet Off\n")
    r = fetch(srv, "/maps/site.xml")
    assert b"xml-stylesheet" not in r.body
    assert r.header("ETag") != etag_on         # the bytes changed: so did the tag
    assert srv.get("/maps/sitemap.css").status == 404

    # The HTML site map still uses (so the module still serves) its CSS.
    srv.graceful(conf=maps + "SitemapStylesheet Off\n"
                      "SitemapHTMLPath /site-map.html\n")
    assert b"xml-stylesheet" not in fetch(srv, "/maps/site.xml").body
    assert b'href="/maps/sitemap.css"' in srv.get("/site-map.html").body
    assert srv.get("/maps/sitemap.css").status == 200

    url = "https://cdn.example.com/x.css?v=1&a=2"
    srv.graceful(conf=maps + f"SitemapStylesheet {url}\n")
    r = fetch(srv, "/maps/site.xml")
    assert PI_RX.match(r.body).group(1) == b"https://cdn.example.com/x.css?v=1&amp;a=2"
    assert srv.get("/maps/sitemap.css").status == 404


def test_stylesheet_documents_valid_and_export_identical(make_server, tmp_path):
    """xmllint with the official schema when ../shared has it; sitemapctl
    export writes the same bytes, the processing instruction included."""
    import os
    from conftest import SITEMAPCTL, TOP_BUILDDIR
    srv = make_server(conf="SitemapPageSize 2\n" + CRAWL)
    srv.start()
    record(srv, "/p/1.html", "/p/2.html", "/p/3.html")
    served = {p: fetch(srv, p).body for p in ("/sitemap.xml", "/sitemap-1.xml",
                                              "/sitemap-2.xml")}
    out = tmp_path / "export"
    out.mkdir()
    r = subprocess.run([SITEMAPCTL, "export",
                        srv.db_path, "--site", srv.base, str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for p, body in served.items():
        assert (out / p[1:]).read_bytes() == body, p
    # The stylesheet the documents name goes beside them, as served.
    assert (out / "sitemap.css").read_bytes() == srv.get("/sitemap.css").body
    assert str(out / "sitemap.css") in r.stdout.splitlines()
    # The admin's own stylesheet (or none) is not the module's to write.
    srv.graceful(conf="SitemapPageSize 2\nSitemapStylesheet /own.css\n" + CRAWL)
    record(srv, "/p/4.html")
    other = tmp_path / "other"
    r = subprocess.run([SITEMAPCTL, "export",
                        srv.db_path, "--site", srv.base, str(other)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (other / "sitemap.xml").exists()
    assert not (other / "sitemap.css").exists()
    for cand in (os.path.join(TOP_BUILDDIR, "..", "shared", "xsd"),
                 os.path.join(TOP_BUILDDIR, "..", "..", "shared", "xsd")):
        if os.path.isfile(os.path.join(cand, "sitemap.xsd")):
            for p, schema in (("sitemap.xml", "siteindex.xsd"),
                              ("sitemap-1.xml", "sitemap.xsd")):
                v = subprocess.run(["xmllint", "--noout", "--nonet", "--schema",
                                    os.path.join(cand, schema), str(out / p)],
                                   capture_output=True, text=True)
                assert v.returncode == 0, (p, v.stderr)
            break


def test_stylesheet_directive_errors(make_server):
    srv = make_server()
    srv.config_fails("SitemapStylesheet", "'/a b.css'", conf="SitemapStylesheet \"/a b.css\"\n")
    srv.config_fails("SitemapStylesheet", "?>", conf="SitemapStylesheet /x?>.css\n")
    srv.config_fails("SitemapTextPath", "'/sitemap.xml'", ".txt",
                     conf="SitemapTextPath /sitemap.xml\n")
    srv.config_fails("SitemapHTMLPath", "'site-map.html'",
                     conf="SitemapHTMLPath site-map.html\n")
    srv.config_fails("SitemapHTMLStylesheet", "'<x>'",
                     conf="SitemapHTMLStylesheet <x>\n")


# ---------------------------------------------------------------------------
# SitemapTextPath

def test_text_sitemap_pages_like_the_xml(make_server):
    srv = make_server(conf="SitemapPageSize 2\nSitemapTextPath /sitemap.txt\n" + CRAWL)
    srv.start()
    r = srv.get("/sitemap.txt")                       # nothing yet: none
    assert r.status == 404 and b"recorded yet" in r.body, r
    paths = ["/p/1.html", "/p/2.html", "/p/3.html", "/p/x&y'z.html"]
    record(srv, *paths)
    # Two pages now: no single text file (the protocol has no text index).
    assert srv.get("/sitemap.txt").status == 404
    for n in (1, 2):
        xml = fetch(srv, f"/sitemap-{n}.xml")
        locs = [e["loc"] for e in xml.doc.entries]
        t = conditional(srv, f"/sitemap-{n}.txt", "text/plain")
        assert t.header("Content-Type") == "text/plain; charset=utf-8"
        lines = t.body.decode("utf-8").split("\n")
        assert lines[-1] == "" and lines[:-1] == locs, (n, t.body, locs)
    assert (srv.base + "/p/x&y'z.html\n").encode() in srv.get("/sitemap-2.txt").body
    for bad in ("/sitemap-3.txt", "/sitemap-0.txt", "/sitemap-01.txt", "/sitemap-x.txt"):
        assert srv.get(bad).status == 404, bad


def test_text_sitemap_single_page_and_none_by_default(make_server):
    # (in the site's directory: a text sitemap too lists only URLs under
    # its own)
    srv = make_server(conf="SitemapTextPath /urls.txt\n" + CRAWL)
    srv.write("htdocs/sitemap.txt", "a file of the site\n")
    srv.start()
    record(srv, "/p/1.html", "/p/2.html")
    t = conditional(srv, "/urls.txt", "text/plain")
    assert sorted(t.body.decode().split()) == [srv.base + "/p/1.html", srv.base + "/p/2.html"]
    # Not claimed where not configured: the site's own file.
    assert srv.get("/sitemap.txt").body == b"a file of the site\n"


# ---------------------------------------------------------------------------
# SitemapHTMLPath

class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self.tags, self.attrs = [], [], {}

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.setdefault(tag, []).append(dict(attrs))
        if tag == "a":
            self.links.append(dict(attrs)["href"])


def parse(body):
    p = Links()
    p.feed(body.decode("utf-8"))
    return p


def test_html_site_map_tree_escaping_and_http(make_server):
    srv = make_server(conf="SitemapHTMLPath /site-map.html\n" + CRAWL)
    srv.start()
    empty = srv.get("/site-map.html")
    assert empty.status == 200 and b"No page has been recorded yet" in empty.body
    srv.write("htdocs/z.html", HTML)
    paths = ["/p/news/a.html", "/p/news/b.html", "/p/docs/x/y.html", "/index.html",
             "/z.html", HOSTILE]
    record(srv, *paths)
    srv.wait_recorded("/index.html")
    r = conditional(srv, "/site-map.html", "text/html")
    body = r.body
    p = parse(body)
    assert b'<html lang="en">' in body
    for landmark in ("header", "main", "footer", "h1", "h2", "section"):
        assert landmark in p.tags, landmark
    assert "script" not in p.tags                   # none of ours, none injected
    assert b"<script" not in body and b"alert(1)</script>" not in body
    assert b"&amp;b&apos;c" in body                 # '&' and "'" escaped
    assert b"a&b'c" not in body                     # in links and their text
    hrefs = set(p.links)
    for u in ("/p/news/a.html", "/p/news/b.html", "/p/docs/x/y.html", "/index.html"):
        assert srv.base + u in hrefs, (u, hrefs)
    assert any("a&b'c%3Cscript%3E" in h for h in hrefs), hrefs
    # The tree: /p/ is a section, news/ and docs/ nested lists.
    assert re.search(rb'<h2 id="s\d+">/p/</h2>', body)
    assert b'<span class="dir">news/</span>' in body
    assert b'<span class="dir">docs/</span><ul>\n<li><span class="dir">x/</span>' in body
    css = p.attrs["link"][-1]
    assert css["rel"] == "stylesheet" and css["href"] == "/sitemap.css"
    assert srv.get("/sitemap.css").status == 200
    assert srv.get("/site-map-2.html").status == 404
    assert srv.get("/site-map-1.html").body == body
    # Top-level files in one section, first.
    assert body.count(b">Top level</h2>") == 1
    assert body.index(b">Top level</h2>") < body.index(b">/p/</h2>")
    # Made from the store, so not recorded into it.
    assert r.header("X-Robots-Tag") == "noindex, follow"
    srv.assert_not_recorded("/site-map.html")


def test_html_site_map_paging(make_server):
    """2,000 links at most on a page: 2,003 URLs make two pages, with
    navigation; the admin's stylesheet replaces the module's."""
    srv = make_server(conf="SitemapHTMLPath /site-map.html\n"
                           "SitemapHTMLStylesheet /style/map.css\n"
                           "SitemapStylesheet Off\n" + CRAWL)
    srv.start()
    n = 2003
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        list(ex.map(lambda i: srv.get_ok(f"/p/{i:05d}.html"), range(n)))
    srv.wait_recorded(f"/p/{n - 1:05d}.html", "/p/00000.html")
    deadline = __import__("time").monotonic() + 30
    while srv.query("SELECT count(*) FROM urls")[0][0] < n:
        assert __import__("time").monotonic() < deadline
        __import__("time").sleep(0.2)
    one, two = srv.get("/site-map.html"), srv.get("/site-map-2.html")
    assert one.status == 200 and two.status == 200
    l1 = [h for h in parse(one.body).links if "/p/" in h]
    l2 = [h for h in parse(two.body).links if "/p/" in h]
    assert len(l1) == 2000 and len(l2) == 3, (len(l1), len(l2))
    assert not set(l1) & set(l2)
    assert '/site-map-2.html' in parse(one.body).links
    assert b'aria-current="page">2<' in two.body
    assert srv.get("/site-map-3.html").status == 404
    assert parse(one.body).attrs["link"][-1]["href"] == "/style/map.css"
    assert srv.get("/sitemap.css").status == 404      # neither needs it


def test_views_503_when_the_store_cannot_be_read(make_server):
    """The store's directory unreadable: the text and HTML views answer 503
    with Retry-After, the CSS (no store) 200, the status page 200 saying
    "unreadable"; each process logs it at most once a minute."""
    import json
    import os
    srv = make_server(conf="SitemapTextPath /sitemap.txt\nSitemapHTMLPath /site-map.html\n"
                           "<Location /sitemap-status>\nSetHandler sitemap-status\n"
                           "</Location>\n" + CRAWL)
    srv.expect_log(r"\[sitemap:(warn|error|crit)\].*" + re.escape(srv.db_path))
    srv.start()
    record(srv, "/p/1.html")
    dbdir = os.path.dirname(srv.db_path)
    mode = os.stat(dbdir).st_mode & 0o7777
    os.chmod(dbdir, 0)
    try:
        for p in ("/sitemap.txt", "/site-map.html") * 8:
            r = srv.get(p)
            assert r.status == 503 and r.header("Retry-After") == "60", (p, r)
        assert srv.get("/sitemap.css").status == 200
        site = json.loads(srv.get("/sitemap-status?json").body)["sites"][0]
        assert site["health"] == "unreadable" and site["store_error"], site
        srv.wait_log(r"cannot be read.*503", module="sitemap")
        lines = [l for l in srv.log_lines("sitemap", "error") if "answering 503 to" in l]
        pids = {re.search(r"\[pid (\d+)", l).group(1) for l in lines}
        assert len(lines) <= 2 * len(pids), lines          # not one per request
    finally:
        os.chmod(dbdir, mode)
    assert srv.get("/sitemap.txt").status == 200


def link_texts(body):
    """{href: the link's text} of an HTML site map page."""
    import html as html_mod
    return {html_mod.unescape(h): html_mod.unescape(t) for h, t in
            re.findall(r'<li><a href="([^"]*)">([^<]*)</a></li>',
                       body.decode("utf-8"))}


def test_html_site_map_shows_titles(make_server):
    """The head reader's <title> names each link (decoded, whitespace
    collapsed, escaped, valid UTF-8 whatever the page's charset); a page
    without one shows its path; a new title replaces the old, with new
    validators."""
    import time
    srv = make_server(conf="SitemapHTMLPath /site-map.html\n")
    pages = {
        "t/a.html": b"<html><head><title>  Caf&#233; &amp;\n News </title>"
                    b"</head><body>x</body></html>\n",
        "t/b.html": b"<html><head><title><script>alert(1)</script> \"q\" 'a'"
                    b"</title></head><body>x</body></html>\n",
        "t/c.html": b"<html><head><title>Caf\xe9 latin-1</title></head>"
                    b"<body>x</body></html>\n",
        "t/d.html": b"<html><head></head><body>no title</body></html>\n",
    }
    for name, body in pages.items():
        srv.write("htdocs/" + name, body, mtime=1_700_000_000)
    srv.start()
    record(srv, *["/" + n for n in pages])
    r = srv.get("/site-map.html")
    assert r.status == 200
    texts = link_texts(r.body)
    base = srv.base
    assert texts[base + "/t/a.html"] == "Caf\u00e9 & News", texts
    assert texts[base + "/t/b.html"] == "<script>alert(1)</script> \"q\" 'a'"
    assert texts[base + "/t/c.html"] == "Caf\ufffd latin-1"
    assert texts[base + "/t/d.html"] == "/t/d.html"
    assert b"<script" not in r.body
    assert "script" not in parse(r.body).tags
    # A new title (and Last-Modified): shown, and the ETag moves.
    srv.write("htdocs/t/a.html", b"<html><head><title>Renamed</title></head>"
              b"<body>x</body></html>\n", mtime=1_700_100_000)
    srv.get_ok("/t/a.html")
    deadline = time.monotonic() + 15
    while True:
        r2 = srv.get("/site-map.html")
        if link_texts(r2.body)[base + "/t/a.html"] == "Renamed":
            break
        assert time.monotonic() < deadline, link_texts(r2.body)
        time.sleep(0.2)
    assert r2.header("ETag") != r.header("ETag")
