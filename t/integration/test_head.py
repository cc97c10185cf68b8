"""SitemapReadHead: a page's own <head> decides, as it streams past.

Every case is served three ways (static files, a CGI writing its page in
small flushed pieces, a proxied backend sending it in pieces), on one
server per way, and the sitemap's store must then hold exactly the pages
that are public, indexable and self-canonical: the precision of a mixed
site.  With SitemapReadHead Off the same site lists every page."""

import gzip
import http.server
import time

import pytest

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


def test_proxied_gzip_is_judged_by_its_headers(make_server, backend):
    """A Content-Encoding the module cannot read: recorded as today."""
    srv, urls, stored = run_site(make_server, proxied(backend, gz=True))
    assert stored == set(urls.values())


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


def test_directive_is_checked(make_server):
    srv = make_server()
    srv.config_fails("SitemapReadHead", conf="SitemapReadHead maybe")


def reads(srv, url):
    return sum(1 for ln in srv.log_lines("sitemap", "trace1")
               if ln.endswith(f"reading the head of {url}"))


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
    assert reads(srv, "/r.html") == 1, "a repeat's head was read again"
    assert reads(srv, "/n.html") == 1, "a repeat's head was read again"
    # a change is read
    srv.write("htdocs/r.html", WORDPRESS.format(base="", path="/elsewhere"),
              mtime=1_600_000_100)
    srv.get("/r.html", headers=headers)
    srv.wait_absent("/r.html")
    assert reads(srv, "/r.html") == 2


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
