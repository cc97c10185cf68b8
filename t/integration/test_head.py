# SPDX-License-Identifier: Apache-2.0
"""SitemapReadHead: a page's own <head> decides, as it streams past.

Every case is served three ways (static files, a CGI writing its page in
small flushed pieces, a proxied backend sending it in pieces), on one
server per way, and the sitemap's store must then hold exactly the pages
that are public, indexable and self-canonical: the precision of a mixed
site.  With SitemapReadHead Off the same site lists every page."""

import gzip
import http.server
import re
import subprocess
import time
from html.parser import HTMLParser

import pytest

from conftest import LOG_LINE, PG_SCHEMA_VERSION, SITEMAPCTL
from pg import pg_cluster, pg_db  # noqa: F401 (fixtures)
from sitemap_check import fetch


# ---- the pages ---------------------------------------------------------------

WORDPRESS = """<!DOCTYPE html>
<html lang="en-US">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<!-- This site is optimized with the Yoast SEO plugin v21.1 -->
<title>Hello world! &#8211; My Blog</title>
<meta name="robots" content="index, follow, max-image-preview:large, max-snippet:-1" />
<link rel="canonical" href="{base}{path}" />
<meta property="og:title" content="Hello world! - My Blog" />
<script type="application/ld+json" class="yoast-schema-graph">{{"@graph":[{{"name":"<meta name=robots content=noindex>"}}]}}</script>
<!-- / Yoast SEO plugin. -->
<link rel='dns-prefetch' href='//s.w.org' />
<script>
window._wpemojiSettings = {{"baseUrl":"https:\\/\\/s.w.org"}};
!function(i,n){{if(i<n&&n>i)document.write("<link rel=canonical href=/elsewhere>")}}(1,2);
</script>
<style id='wp-emoji-styles-inline-css'>
img.wp-smiley {{ display: inline !important; }} /* <meta name=robots content=noindex> */
</style>
<link rel='stylesheet' id='wp-block-library-css' href='/wp-includes/css/style.min.css?ver=6.3&amp;x=1' media='all' />
</head>
<body class="post-template-default">
<meta name="robots" content="noindex">
<p>Hello</p>
</body></html>
"""

DRUPAL = """<!DOCTYPE html>
<html lang="en" dir="ltr">
  <head>
    <meta charset="utf-8" />
<noscript><style>form.antibot * :not(.antibot-message) {{ display: none !important; }}</style></noscript>
<meta name="robots" content="noindex, nofollow" />
<link rel="canonical" href="{path}" />
<meta name="Generator" content="Drupal 10 (https://www.drupal.org)" />
    <title>Unpublished draft | Drupal site</title>
    <script type="application/json" data-drupal-selector="drupal-settings-json">{{"path":{{"baseUrl":"\\/"}}}}</script>
  </head>
  <body class="path-node"><p>draft</p></body>
</html>
"""

DJANGO = """<!doctype html>
<html lang="de">
<head>
  <meta charset="utf-8">
  <title>Produkte &middot; Shop</title>
  <link rel="canonical" href="{page}?sort=name">
  <link rel="stylesheet" href="/static/css/app.3f2a.css">
  <script src="/static/js/app.js" defer></script>
</head>
<body><h1>Produkte</h1></body>
</html>
"""


def html(head, body="<p>text</p>"):
    return ("<!DOCTYPE html>\n<html><head>\n" + head
            + "\n</head>\n<body>" + body + "</body></html>\n")


# name -> (document, listed); {base} is the site's base URL, {path} the
# page's own path, {page} its last segment.
CASES = {
    "plain": (html("<title>plain</title>"), True),
    "robots-index": (html('<meta name="robots" content="index, follow">'),
                     True),
    "noindex": (html('<meta name="robots" content="noindex, follow">'), False),
    "noindex-caps": (html("<META NAME=ROBOTS CONTENT='NoFollow,NOINDEX'>"),
                     False),
    "googlebot-none": (html('<meta content="none" name="googlebot"/>'),
                       False),
    "bingbot-noindex": (html('<meta name="bingbot" content="noindex">'),
                        True),
    "noindex-in-comment": (html('<!-- <meta name="robots" '
                                'content="noindex"> -->'), True),
    "noindex-in-script": (html("<script>var m = '<meta name=\"robots\" "
                               "content=\"noindex\">';</script>"), True),
    "noindex-in-template": (html('<template><meta name="robots" '
                                 'content="noindex"></template>'), True),
    "noindex-in-body": (html("<title>b</title>",
                             '<meta name="robots" content="noindex">'), True),
    "canonical-self": (html('<link rel="canonical" href="{base}{path}">'),
                       True),
    "canonical-relative": (html("<link rel=canonical href={page}>"), True),
    "canonical-entity": (html("<link href='{path}?&#x23;top' "
                              "rel='canonical'>"), True),
    "canonical-other": (html('<link rel="canonical" href="/plain.html">'),
                        False),
    "canonical-other-host": (
        html('<link rel="canonical" href="https://www.example.com{path}">'),
        False),
    "canonical-in-comment": (html('<!--<link rel="canonical" '
                                  'href="/plain.html">-->'), True),
    "wordpress": (WORDPRESS, True),
    "drupal": (DRUPAL, False),
    "django": (DJANGO, False),
}

LISTED = sorted(n for n, (_, listed) in CASES.items() if listed)
NOT_LISTED = sorted(n for n, (_, listed) in CASES.items() if not listed)


def document(srv, name, path):
    doc, _ = CASES[name]
    return doc.format(base=srv.base, path=path, page=path.rsplit("/", 1)[1])


def pieces(text, size=7):
    data = text.encode()
    return [data[i:i + size] for i in range(0, len(data), size)]


# ---- the three ways of serving ---------------------------------------------------

def serve_static(srv):
    for name in CASES:
        srv.write(f"htdocs/s/{name}.html", document(srv, name, f"/s/{name}.html"))
    return {name: f"/s/{name}.html" for name in CASES}


def serve_cgi(srv):
    """A CGI per page that writes it 7 bytes at a time, each piece its own
    write() (printf to a pipe), with pauses inside the head, so that
    mod_cgid's pipe bucket comes back empty (EAGAIN) mid-tag."""
    for name in CASES:
        path = f"/cgi-bin/{name}"
        lines = ["printf 'Content-Type: text/html; charset=utf-8\\r\\n\\r\\n'"]
        for i, piece in enumerate(pieces(document(srv, name, path))):
            lines.append("printf '%s' '" + piece.decode().replace("'", "'\\''")
                         + "'")
            if i in (3, 20, 41):
                lines.append("sleep 0.05")
        srv.cgi(name, "\n".join(lines) + "\n")
    return {name: f"/cgi-bin/{name}" for name in CASES}


class Backend(http.server.BaseHTTPRequestHandler):
    """Serves pages[path] chunked, in pieces flushed apart, with a pause in
    the head; gzipped when gz (with Content-Encoding: gzip)."""
    protocol_version = "HTTP/1.1"
    pages = {}
    gz = False

    def do_GET(self):
        doc = self.pages.get(self.path)
        if doc is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Transfer-Encoding", "chunked")
        data = doc.encode()
        if self.gz:
            self.send_header("Content-Encoding", "gzip")
            data = gzip.compress(data)
        self.end_headers()
        for i in range(0, len(data), 11):
            piece = data[i:i + 11]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.flush()
            if i == 110:
                time.sleep(0.05)
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, *args):
        pass


@pytest.fixture
def backend(http_backend):
    def start(pages, gz=False):
        return http_backend(Backend, pages=pages, gz=gz)
    return start


def proxied(backend, gz=False):
    def serve(srv):
        pages = {f"/p/{name}.html": document(srv, name, f"/p/{name}.html")
                 for name in CASES}
        port = backend(pages, gz)
        srv.conf_text += f"\nProxyPass /p/ http://127.0.0.1:{port}/p/\n"
        return {name: f"/p/{name}.html" for name in CASES}
    return serve


def run_site(make_server, serve, conf=""):
    srv = make_server(modules=("proxy", "proxy_http"), conf=conf)
    urls = serve(srv)
    srv.start()
    for name, url in urls.items():
        r = srv.get(url)
        assert r.status == 200, (name, r)
        # the page arrives whole and unchanged
        body = r.body
        if r.header("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        assert body.decode() == document(srv, name, url), name
    srv.sentinel()
    stored = srv.urls() - {u for u in srv.urls() if "sentinel" in u}
    return srv, urls, stored


WAYS = {
    "static": serve_static,
    "cgi": serve_cgi,
}


@pytest.mark.parametrize("way", ["static", "cgi", "proxy"])
def test_lists_exactly_the_indexable_self_canonical_pages(make_server,
                                                          backend, way):
    serve = proxied(backend) if way == "proxy" else WAYS[way]
    srv, urls, stored = run_site(make_server, serve)
    assert stored == {urls[n] for n in LISTED}, (
        f"listed but should not be: "
        f"{sorted(n for n in NOT_LISTED if urls[n] in stored)}; "
        f"missing: {sorted(n for n in LISTED if urls[n] not in stored)}")
    # Asking again changes nothing (the repeats are not read again).
    for url in urls.values():
        srv.get(url)
    srv.sentinel()
    assert {u for u in srv.urls() if "sentinel" not in u} == stored


@pytest.mark.parametrize("way", ["static", "cgi"])
def test_read_head_off_lists_every_page(make_server, way):
    _, urls, stored = run_site(make_server, WAYS[way],
                               conf="SitemapReadHead Off")
    assert stored == set(urls.values())


def test_proxied_gzip_is_read(make_server, backend):
    """A gzip body from a backend is read decoded: the same verdicts as
    the plain pages."""
    srv, urls, stored = run_site(make_server, proxied(backend, gz=True))
    assert stored == {urls[n] for n in LISTED}


def test_deflate_after_the_reader(make_server):
    """Debian's deflate.conf compresses text/html: the head is read before
    mod_deflate, so a gzip client gets the same verdicts."""
    srv = make_server(modules=("filter", "deflate"),
                      conf="Include /etc/apache2/mods-available/deflate.conf")
    urls = serve_static(srv)
    srv.start()
    for url in urls.values():
        r = srv.get(url, headers={"Accept-Encoding": "gzip"})
        assert r.status == 200
        assert r.header("Content-Encoding") == "gzip", r
    srv.sentinel()
    assert {u for u in srv.urls() if "sentinel" not in u} == \
        {urls[n] for n in LISTED}


def test_flip_to_noindex_and_back(make_server):
    """A page that gains a noindex leaves on its next GET (its file, so its
    Last-Modified and ETag, changed); HEAD and 304 keep what is stored;
    losing the noindex brings it back."""
    srv = make_server()
    srv.write("htdocs/flip.html", html("<title>flip</title>"), mtime=1_600_000_000)
    srv.start()
    srv.get_ok("/flip.html")
    srv.wait_recorded("/flip.html")
    etag = srv.get_ok("/flip.html").header("ETag")

    srv.write("htdocs/flip.html",
              html('<meta name="robots" content="noindex">'),
              mtime=1_600_000_100)
    h = srv.request("HEAD", "/flip.html")
    assert h.status == 200 and h.header("ETag") != etag
    r304 = srv.get("/flip.html", headers={"If-None-Match": h.header("ETag")})
    assert r304.status == 304
    srv.sentinel()
    assert "/flip.html" in srv.urls(), "HEAD and 304 must keep the page"

    srv.get_ok("/flip.html")
    srv.wait_absent("/flip.html")

    srv.write("htdocs/flip.html",
              html('<link rel="canonical" href="/elsewhere.html">'),
              mtime=1_600_000_200)
    srv.get_ok("/flip.html")
    srv.assert_not_recorded("/flip.html")

    srv.write("htdocs/flip.html", html("<title>back</title>"),
              mtime=1_600_000_300)
    srv.get_ok("/flip.html")
    srv.wait_recorded("/flip.html")


def test_static_file_far_into_the_head_and_from_an_offset(make_server):
    """A verdict 40 KB into a static page's head (well inside the 64 KiB
    read) is found, and a file sent from an offset (mod_asis: the body
    after the file's own headers, one file bucket that does not start at
    0) is read from there, not from its start (a noindex in the headers'
    part is no part of the page)."""
    srv = make_server(modules=("asis",), conf="AddHandler send-as-is asis",
                      loglevel="warn sitemap:trace1")
    script = "<script>" + "var x = 1; // padding\n" * 1800 + "</script>"
    assert 38_000 < len(script) < 60_000
    srv.write("htdocs/far-noindex.html",
              html(script + '<meta name="robots" content="noindex">'))
    srv.write("htdocs/far-canonical.html",
              html(script + '<link rel="canonical" href="/elsewhere.html">'))
    srv.write("htdocs/far-plain.html", html(script + "<title>far</title>"))
    asis_head = ("Status: 200 OK\nContent-Type: text/html\n"
                 "X-Padding: <meta name=robots content=noindex>\n\n")
    srv.write("htdocs/sent-as-is.asis",
              asis_head + html("<title>asis</title>"))
    srv.write("htdocs/sent-as-is-noindex.asis",
              asis_head + html('<meta name="robots" content="noindex">'))
    srv.start()
    for url in ("/far-noindex.html", "/far-canonical.html",
                "/far-plain.html", "/sent-as-is.asis",
                "/sent-as-is-noindex.asis"):
        r = srv.get_ok(url)
        assert "</html>" in r.body.decode(), url        # sent whole
    srv.sentinel()
    assert {u for u in srv.urls() if "sentinel" not in u} == \
        {"/far-plain.html", "/sent-as-is.asis"}
    assert reads(srv, "/far-plain.html") == 1


def test_directive_is_checked(make_server):
    srv = make_server()
    srv.config_fails("SitemapReadHead", conf="SitemapReadHead maybe")


def reads(srv, url):
    return sum(1 for ln in srv.log_lines("sitemap", "trace1")
               if ln.endswith(f"reading the head of {url}"))


def most_reads_of_one_process(srv, url):
    """Each process keeps its own memory of repeats: under prefork each
    child reads a page's head once before it knows the page."""
    per_pid = {}
    for ln in srv.log_lines("sitemap", "trace1"):
        if ln.endswith(f"reading the head of {url}"):
            pid = LOG_LINE.match(ln).group(3)
            per_pid[pid] = per_pid.get(pid, 0) + 1
    return max(per_pid.values(), default=0)


@pytest.mark.parametrize("gzip_client", [False, True], ids=["identity", "gzip"])
def test_repeats_are_not_read_again(make_server, gzip_client):
    """The steady state keeps its cost: once a response was acted on, the
    same response again is recognised when its body begins and its head is
    not read, also when mod_deflate changes its ETag after the reader."""
    srv = make_server(modules=("filter", "deflate"),
                      loglevel="warn sitemap:trace1",
                      conf="Include /etc/apache2/mods-available/deflate.conf")
    srv.write("htdocs/r.html", WORDPRESS.format(base="", path="/r.html"),
              mtime=1_600_000_000)
    srv.write("htdocs/n.html", html('<meta name="robots" content="noindex">'),
              mtime=1_600_000_000)
    srv.start()
    headers = {"Accept-Encoding": "gzip"} if gzip_client else {}
    for url in ("/r.html", "/n.html"):
        r = srv.get(url, headers=headers)
        assert r.status == 200
        assert (r.header("Content-Encoding") == "gzip") == gzip_client
    srv.wait_recorded("/r.html")
    srv.assert_not_recorded("/n.html")
    assert reads(srv, "/r.html") == 1 and reads(srv, "/n.html") == 1
    for _ in range(3):
        srv.get("/r.html", headers=headers)
        srv.get("/n.html", headers=headers)
    srv.sentinel()
    for url in ("/r.html", "/n.html"):
        assert most_reads_of_one_process(srv, url) == 1, \
            "a repeat's head was read again"
    # a change is read
    before = reads(srv, "/r.html")
    srv.write("htdocs/r.html", WORDPRESS.format(base="", path="/elsewhere"),
              mtime=1_600_000_100)
    srv.get("/r.html", headers=headers)
    srv.wait_absent("/r.html")
    assert reads(srv, "/r.html") == before + 1


def test_body_is_never_held(make_server):
    """The reader passes on what it has read before it waits for more: a
    CGI that writes half its head and then waits until the client has seen
    that half is answered (the client would wait forever otherwise)."""
    import socket
    srv = make_server()
    flag = srv.path("go")
    first = "<html><head><title>slow</title><link rel=canonical href="
    srv.cgi("slow", f"""printf 'Content-Type: text/html\\r\\n\\r\\n'
printf '%s' '{first}'
i=0
while [ ! -e {flag} ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done
printf '%s' '/cgi-bin/slow></head><body>done</body></html>'
""")
    srv.start()
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
    try:
        s.sendall(f"GET /cgi-bin/slow HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}"
                  "\r\nConnection: close\r\n\r\n".encode())
        got = b""
        while first.encode() not in got:
            chunk = s.recv(4096)        # times out if the reader holds it
            assert chunk, got
            got += chunk
        srv.write("go", "")
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            got += chunk
    finally:
        s.close()
    assert b"</html>" in got
    srv.wait_recorded("/cgi-bin/slow")


def test_pages_the_rules_leave_out_are_not_read(make_server):
    """An excluded path, a refused query or credentials leave a page out
    whatever its head says: its head is never read (such a page is never a
    repeat, so reading it would cost on every request)."""
    srv = make_server(loglevel="warn sitemap:trace1",
                      conf="SitemapExclude ^/x/")
    srv.write("htdocs/x/a.html", WORDPRESS.format(base="", path="/x/a.html"))
    srv.write("htdocs/q.html", WORDPRESS.format(base="", path="/q.html"))
    srv.start()
    for _ in range(2):
        srv.get_ok("/x/a.html")
        srv.get_ok("/q.html?utm_source=x")
        srv.get_ok("/q.html", headers={"Authorization": "Basic eDp5"})
    srv.get_ok("/q.html")
    srv.wait_recorded("/q.html")
    assert reads(srv, "/x/a.html") == 0
    assert reads(srv, "/q.html?utm_source=x") == 0
    assert reads(srv, "/q.html") == 1       # the plain GET only
    assert srv.urls() == {"/q.html"}


# ---- hreflang alternates ------------------------------------------------------

LANGS = ("en", "de", "fr")
# A hostile href: quotes, <, & and ' in the path; normalised (the quote and
# '<' percent-encoded) and then entity-escaped.
HOSTILE = "https://other.example/it&#39;s/&quot;q&quot;&lt;b&gt;&amp;c"
HOSTILE_STORED = "https://other.example/it's/%22q%22%3Cb%3E&c"
HOSTILE_XML = "https://other.example/it&apos;s/%22q%22%3Cb%3E&amp;c"


def cluster_page(base, paths, lang, extra=""):
    """A page of the cluster: names every language's page and x-default
    (its own spelling of the hrefs: case, dot segments),
    plus what must be ignored: a relative href, another scheme, a bad
    hreflang."""
    links = "".join(
        f'<link rel="alternate" hreflang="{l.upper() if l == "de" else l}" '
        f'href="{base.upper()}/./x/..{paths[l]}">\n'
        if l == "de" else
        f'<link rel="alternate" hreflang="{l}" href="{base}{paths[l]}">\n'
        for l in LANGS)
    links += f'<link rel="alternate" hreflang="x-default" href="{base}/">\n'
    links += ('<link rel="alternate" hreflang="it" href="/it/page.html">\n'
              '<link rel="alternate" hreflang="es" href="ftp://ex.com/es">\n'
              '<link rel="alternate" hreflang="en_US" href="https://ex.com/">\n'
              '<link rel="alternate" hreflang="pt" href="javascript:x">\n')
    return html(f"<title>{lang}</title>\n" + links + extra)


def cluster_expected(base, paths):
    return [(l, base + paths[l]) for l in LANGS] + [("x-default", base + "/")]


def url_entry(body, loc):
    """The bytes of the <url> of loc (None when absent)."""
    m = re.search(rb"<url[ >](?:(?!</url>).)*?<loc>" + re.escape(loc.encode())
                  + rb"</loc>.*?</url>\n", body, re.S)
    return m.group(0) if m else None


def alternates_in(doc, loc):
    return doc.by_loc()[loc].get("alternates", [])


def serve_cluster(srv, way, backend=None):
    """The cluster's three pages and the hostile one, served one way;
    returns {name: path}."""
    prefix = {"static": "/s/", "cgi": "/cgi-bin/", "proxy": "/p/"}[way]
    suffix = "" if way == "cgi" else ".html"
    paths = {n: f"{prefix}{n}{suffix}" for n in LANGS + ("hostile", "plain")}
    docs = {l: cluster_page(srv.base, paths, l) for l in LANGS}
    docs["hostile"] = html(f'<link rel=alternate hreflang=ES-419 '
                           f'href="{HOSTILE}">')
    docs["plain"] = html("<title>never had any</title>")
    if way == "static":
        for n, d in docs.items():
            srv.write(f"htdocs{paths[n]}", d, mtime=1_700_000_000)
    elif way == "cgi":
        for n, d in docs.items():
            lines = ["printf 'Content-Type: text/html\\r\\n\\r\\n'"]
            for i, piece in enumerate(pieces(d)):
                lines.append("printf '%s' '" + piece.decode()
                             .replace("'", "'\\''") + "'")
                if i in (3, 20, 41):
                    lines.append("sleep 0.02")
            srv.cgi(n, "\n".join(lines) + "\n")
    else:
        port = backend({paths[n]: d for n, d in docs.items()})
        srv.conf_text += f"\nProxyPass /p/ http://127.0.0.1:{port}/p/\n"
    return paths


@pytest.mark.parametrize("way", ["static", "cgi", "proxy"])
def test_hreflang_cluster_is_served(make_server, backend, tmp_path, way):
    """Three pages in en/de/fr and x-default naming each other: each <url>
    carries the four alternates, normalised, in the page's order, the
    xhtml prefix declared once on <urlset>; what is relative, another
    scheme or a bad hreflang is ignored; a hostile href is escaped; a page
    without any keeps today's bytes; sitemapctl export gives the same
    bytes."""
    srv = make_server(modules=("proxy", "proxy_http"))
    paths = serve_cluster(srv, way, backend)
    srv.start()
    for p in paths.values():
        srv.get_ok(p)
    srv.wait_recorded(*paths.values())
    srv.sentinel()
    r = fetch(srv)
    doc, body, base = r.doc, r.body, srv.base
    for l in LANGS:
        loc = base + paths[l]
        assert alternates_in(doc, loc) == cluster_expected(base, paths), l
        entry = url_entry(body, loc)
        assert entry.startswith(b"<url><loc>" + loc.encode() + b"</loc>")
        assert (b'<xhtml:link rel="alternate" hreflang="de" href="'
                + (base + paths["de"]).encode() + b'"/>') in entry
    assert alternates_in(doc, base + paths["hostile"]) == [
        ("es-419", HOSTILE_STORED)]
    assert (b'hreflang="es-419" href="' + HOSTILE_XML.encode() + b'"/>'
            in url_entry(body, base + paths["hostile"]))
    plain = url_entry(body, base + paths["plain"])
    assert re.fullmatch(rb"<url><loc>[^<]+</loc><lastmod>[^<]+</lastmod>"
                        rb"</url>\n", plain), plain
    # the prefix is declared once, on <urlset>, never on a <url>
    assert (b' xmlns:xhtml="http://www.w3.org/1999/xhtml">'
            in body.split(b"<url>", 1)[0])
    assert body.count(b"xmlns:xhtml") == 1
    # what is stored, as sitemapctl lists it
    row = srv.row(paths["en"])
    assert row["alternates"] == "\n".join(
        f"{h} {u}" for h, u in cluster_expected(base, paths))
    out = tmp_path / "export"
    x = subprocess.run([SITEMAPCTL, "export", srv.db_path, "--site", base,
                        str(out)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    assert x.returncode == 0, x.stderr
    assert (out / "sitemap.xml").read_bytes() == body
    x = subprocess.run([SITEMAPCTL, "list", srv.db_path, "--site", base],
                       stdout=subprocess.PIPE, text=True, timeout=60)
    lines = x.stdout.splitlines()
    at = lines.index(next(ln for ln in lines
                          if ln.startswith(base + paths["en"] + "\t")))
    assert lines[at + 1:at + 5] == [f"\t{h}\t{u}" for h, u in
                                    cluster_expected(base, paths)]
    x = subprocess.run([SITEMAPCTL, "stats", srv.db_path, "--site", base],
                       stdout=subprocess.PIPE, text=True, timeout=60)
    assert "alternates:     13 hreflang alternates of 4 URLs" in x.stdout, \
        x.stdout


class SiteMapLinks(HTMLParser):
    """The HTML site map's entries: {href: [(href, hreflang, lang, text)]
    of its "also in" links}."""

    def __init__(self):
        super().__init__()
        self.entries, self.page, self.alt, self.depth = {}, None, None, 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "small" and a.get("class") == "alternates":
            self.depth = 1
        elif tag == "a" and self.depth:
            self.alt = [a["href"], a.get("hreflang"), a.get("lang"), ""]
        elif tag == "a" and "href" in a:
            self.page = a["href"]
            self.entries[self.page] = []

    def handle_data(self, data):
        if self.alt:
            self.alt[3] += data

    def handle_endtag(self, tag):
        if tag == "a" and self.alt:
            self.entries[self.page].append(tuple(self.alt))
            self.alt = None
        elif tag == "small":
            self.depth = 0


def test_hreflang_cluster_in_the_html_site_map(make_server):
    """The HTML site map shows each page's other languages as the XML
    lists them but for the page itself: a link each, labelled with its
    language tag (x-default as "default"), with hreflang and lang; hrefs
    escaped; a page without alternates shows none."""
    srv = make_server(conf="SitemapHTMLPath /site-map.html\n")
    paths = serve_cluster(srv, "static")
    srv.start()
    for p in paths.values():
        srv.get_ok(p)
    srv.wait_recorded(*paths.values())
    r = srv.get_ok("/site-map.html")
    links = SiteMapLinks()
    links.feed(r.body.decode())
    base = srv.base
    want = [(u, h, None if h == "x-default" else h,
             "default" if h == "x-default" else h)
            for h, u in cluster_expected(base, paths)]
    for l in LANGS:
        assert links.entries[base + paths[l]] == [
            w for w in want if w[0] != base + paths[l]], links.entries
    assert links.entries[base + paths["hostile"]] == [
        (HOSTILE_STORED, "es-419", "es-419", "es-419")]
    assert links.entries[base + paths["plain"]] == []
    assert b"<b>" not in r.body and b"&quot;q&quot;" not in r.body


def wait_row(srv, url, ok, timeout=20):
    deadline = time.monotonic() + timeout
    while not ok(srv.row(url)):
        assert time.monotonic() < deadline, srv.row(url)
        time.sleep(0.1)


def test_hreflang_changes_follow_the_page(make_server):
    """New alternates move the page's version (ETag) even when the page's
    Last-Modified stays; the new ones are served; a page losing them all
    serves the bytes of a page that never had any."""
    srv = make_server()
    paths = {l: f"/{l}.html" for l in LANGS}
    for l in LANGS:
        srv.write(f"htdocs/{l}.html", cluster_page(srv.base, paths, l),
                  mtime=1_700_000_000)
    srv.write("htdocs/never.html", html("<title>never</title>"),
              mtime=1_700_000_000)
    srv.start()
    for p in list(paths.values()) + ["/never.html"]:
        srv.get_ok(p)
    srv.sentinel()
    before = fetch(srv)
    en = srv.base + "/en.html"
    assert len(alternates_in(before.doc, en)) == 4

    # the same Last-Modified, another size (so another ETag): only the
    # alternates differ in the sitemap
    srv.write("htdocs/en.html", html(
        "<title>en</title>"
        f'<link rel=alternate hreflang=en href="{srv.base}/en.html">'
        f'<link rel=alternate hreflang=it href="{srv.base}/it.html">'),
        mtime=1_700_000_000)
    srv.get_ok("/en.html")
    # no sentinel: a new URL would move the page's version by itself
    wait_row(srv, "/en.html", lambda row: "\nit " in (row["alternates"] or ""))
    after = fetch(srv)
    assert alternates_in(after.doc, en) == [
        ("en", srv.base + "/en.html"), ("it", srv.base + "/it.html")]
    assert after.doc.by_loc()[en]["lastmod"] == \
        before.doc.by_loc()[en]["lastmod"]
    assert after.header("ETag") != before.header("ETag")
    assert srv.get("/sitemap.xml", headers={
        "If-None-Match": before.header("ETag")}).status == 200

    # losing them all: the bytes of a page that never had any
    for l in LANGS:
        srv.write(f"htdocs/{l}.html", html(f"<title>{l}</title>"),
                  mtime=1_700_000_000)
        srv.get_ok(f"/{l}.html")
    srv.sentinel()
    cleared = fetch(srv)
    assert b"<xhtml:link" not in cleared.body
    never = url_entry(cleared.body, srv.base + "/never.html")
    for l in LANGS:
        loc = srv.base + f"/{l}.html"
        assert url_entry(cleared.body, loc) == never.replace(
            b"/never.html", f"/{l}.html".encode())
    assert srv.row("/en.html")["alternates"] is None


def test_hreflang_on_postgresql(make_server, pg_db, tmp_path):
    """The same on a PostgreSQL store: stored, served, changed, exported
    byte for byte, listed and counted."""
    base = "https://www.example.com"
    srv = make_server(db=pg_db.uri, conf=f"SitemapBaseURL {base}")
    paths = {l: f"/{l}.html" for l in LANGS}
    for l in LANGS:
        srv.write(f"htdocs/{l}.html", cluster_page(base, paths, l),
                  mtime=1_700_000_000)
    srv.start()
    for p in paths.values():
        srv.get_ok(p)
    pg_db.wait_urls(base, set(paths.values()))
    r = fetch(srv, base=base)
    for l in LANGS:
        assert alternates_in(r.doc, base + paths[l]) == \
            cluster_expected(base, paths)
    out = tmp_path / "export"
    x = subprocess.run([SITEMAPCTL, "export", pg_db.uri, "--site", base,
                        str(out)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    assert x.returncode == 0, x.stderr
    assert (out / "sitemap.xml").read_bytes() == r.body
    x = subprocess.run([SITEMAPCTL, "stats", pg_db.uri, "--site", base],
                       stdout=subprocess.PIPE, text=True, timeout=60)
    assert "alternates:     12 hreflang alternates of 3 URLs" in x.stdout, \
        x.stdout
    x = subprocess.run([SITEMAPCTL, "check", pg_db.uri],
                       stdout=subprocess.PIPE, text=True, timeout=60)
    assert x.returncode == 0, x.stdout

    srv.write("htdocs/fr.html", html(
        f'<link rel=alternate hreflang=fr href="{base}/fr.html">'),
        mtime=1_700_000_000)
    srv.get_ok("/fr.html")
    deadline = time.monotonic() + 20
    while True:
        after = fetch(srv, base=base)
        if alternates_in(after.doc, base + "/fr.html") == [
                ("fr", base + "/fr.html")]:
            break
        assert time.monotonic() < deadline, after.body
        time.sleep(0.2)
    assert after.header("ETag") != r.header("ETag")
    # a hostile row: skipped, counted by check, never breaks the XML
    pg_db.sql("UPDATE sitemap_urls SET alternates = 'de https://x.example/"
              "\"><evil/>' || chr(10) || 'en https://x.example/ok'"
              " WHERE url = '/de.html';"
              " UPDATE sitemap_pages SET version = version + 1")
    bad = fetch(srv, base=base)
    assert alternates_in(bad.doc, base + "/de.html") == [
        ("en", "https://x.example/ok")]
    x = subprocess.run([SITEMAPCTL, "check", pg_db.uri],
                       stdout=subprocess.PIPE, text=True, timeout=60)
    assert x.returncode != 0 and "alternates" in x.stdout, x.stdout
    srv.expect_log(r"hreflang alternate")


def test_hreflang_tampered_rows_are_skipped(make_server, tmp_path):
    """Alternates no writer could have stored (written by hand, a damaged
    store) are left out of the <url>, the others kept; the document stays
    valid; the module and sitemapctl export warn, check names the row."""
    import sqlite3
    from conftest import as_run_user
    srv = make_server()
    paths = {l: f"/{l}.html" for l in LANGS}
    for l in LANGS:
        srv.write(f"htdocs/{l}.html", cluster_page(srv.base, paths, l))
    srv.expect_log(r"hreflang alternates? of .* left out")
    srv.start()
    for p in paths.values():
        srv.get_ok(p)
    srv.wait_recorded(*paths.values())
    wait_row(srv, "/fr.html", lambda row: row and row["alternates"])
    with as_run_user():
        con = sqlite3.connect(srv.db_path, timeout=10)
        con.execute("UPDATE urls SET alternates = ? WHERE url = '/de.html'",
                    ("DE https://x.example/upper\n"
                     "fr https://x.example/\"><evil/>&\n"
                     "it javascript:alert(1)\n"
                     "en https://x.example/ok",))
        con.execute("UPDATE pages SET version = version + 1")
        con.commit()
        con.close()
    r = fetch(srv)
    assert alternates_in(r.doc, srv.base + "/de.html") == [
        ("en", "https://x.example/ok")]
    assert b"evil" not in r.body
    assert alternates_in(r.doc, srv.base + "/en.html") == \
        cluster_expected(srv.base, paths)
    srv.wait_log(r"3 hreflang alternates of .* left out", module="sitemap")
    out = tmp_path / "export"
    x = subprocess.run([SITEMAPCTL, "export", srv.db_path, "--site", srv.base,
                        str(out)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    assert x.returncode == 0, x.stderr
    assert "warning: 3 hreflang alternates of the store left out" \
        in x.stderr, x.stderr
    assert (out / "sitemap.xml").read_bytes() == r.body
    x = subprocess.run([SITEMAPCTL, "check", srv.db_path],
                       stdout=subprocess.PIPE, text=True, timeout=60)
    assert x.returncode == 1 and "alternates no writer could have stored " \
        "(1 rows, the first /de.html)" in x.stdout, x.stdout


def test_hreflang_postgresql_schema_3_upgraded_in_place(make_server, pg_db):
    """A database of schema version 3 (titles, no alternates): sitemapctl's
    readers refuse it until the module's writer upgrades it in place; its
    URLs and titles stay, and alternates are stored from then on."""
    base = "https://www.example.com"
    r = subprocess.run([SITEMAPCTL, "add", pg_db.uri, "--site", base,
                        "/kept"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    pg_db.sql("DROP TABLE sitemap_verdicts, sitemap_images;"
              " DROP TABLE sitemap_robots;"
              " ALTER TABLE sitemap_pages DROP COLUMN oldest_seen;"
              " DROP TABLE sitemap_crawls, sitemap_crawlers,"
              " sitemap_crawl_unlisted, sitemap_crawl_days;"
              " ALTER TABLE sitemap_urls DROP COLUMN held;"
              " ALTER TABLE sitemap_urls DROP COLUMN alternates;"
              " ALTER TABLE sitemap_urls DROP COLUMN description,"
              " DROP COLUMN published;"
              " UPDATE sitemap_urls SET title = 'Kept';"
              " UPDATE sitemap_meta SET value = '3'"
              " WHERE key = 'schema_version'")
    r = subprocess.run([SITEMAPCTL, "list", pg_db.uri, "--site", base],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "schema version 3" in r.stderr, r.stderr
    srv = make_server(db=pg_db.uri, conf=f"SitemapBaseURL {base}")
    paths = {l: f"/{l}.html" for l in LANGS}
    for l in LANGS:
        srv.write(f"htdocs/{l}.html", cluster_page(base, paths, l))
    srv.start()
    for p in paths.values():
        srv.get_ok(p)
    pg_db.wait_urls(base, {"/kept"} | set(paths.values()))
    assert pg_db.sql("SELECT value FROM sitemap_meta"
                     " WHERE key = 'schema_version'") \
        == [[str(PG_SCHEMA_VERSION)]]
    assert pg_db.sql("SELECT title FROM sitemap_urls"
                     " WHERE url = '/kept'") == [["Kept"]]
    doc = fetch(srv, base=base).doc
    assert alternates_in(doc, base + "/en.html") == \
        cluster_expected(base, paths)
    r = subprocess.run([SITEMAPCTL, "check", pg_db.uri],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
