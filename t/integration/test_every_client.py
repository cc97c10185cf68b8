# SPDX-License-Identifier: Apache-2.0
"""Every client reads every output (issue 32), with Debian's stock module
set where its defaults matter (deflate.conf, proxy.conf, cache_disk.conf):

  etags        every output the module answers revalidates (304) with the
               ETag the client was given, whatever an encoding filter
               (mod_deflate's "-gzip") added to it, with and without
               mod_cache_disk in front, which never logs AH00708;
  methods      HEAD carries the Content-Length of the GET; OPTIONS answers
               with an Allow header, for every document;
  backend      a compressing backend behind mod_proxy: robots.txt gets its
               Sitemap line for every client, and the head reader judges
               gzip pages by their body;
  claimed      every URL the module answers is its own under ProxyPass /
               and under WordPress's front-controller rewrite rules.
"""

import gzip
import http.server
import os
import re
import time
import zlib

import pytest

from conftest import IS_ROOT, RUN_GID, RUN_UID

MODS = "/etc/apache2/mods-available"
GZ = {"Accept-Encoding": "gzip"}
PAGES = tuple(f"/a-page-with-a-long-enough-name-{i}.html" for i in range(4))


def debian(*names):
    """Include lines for Debian's stock conf files (skip without them)."""
    out = ""
    for n in names:
        p = f"{MODS}/{n}.conf"
        if not os.path.isfile(p):
            pytest.skip(f"{p} is not installed")
        out += f"Include {p}\n"
    return out


def cache_conf(srv):
    """Debian's cache_disk.conf, the cache in the test's root, and the
    documents given a short max-age so that they go stale and mod_cache
    revalidates them."""
    os.makedirs(srv.path("cache"), exist_ok=True)
    if IS_ROOT:
        os.chown(srv.path("cache"), RUN_UID, RUN_GID)
    return (debian("cache_disk")
            + f'CacheRoot "{srv.root}/cache"\nCacheEnable disk /\n'
            "CacheHeader on\n"
            '<LocationMatch "^/(sitemap|robots)">\n'
            '    Header set Cache-Control "max-age=1"\n'
            "</LocationMatch>\n")


class Accepting(http.server.BaseHTTPRequestHandler):
    """An IndexNow endpoint that takes every submission."""

    def log_message(self, *a):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def views_conf(http_backend):
    port = http_backend(Accepting)
    return ("SitemapTextPath /sitemap.txt\nSitemapHTMLPath /sitemap.html\n"
            "SitemapIndexNow On\nSitemapIndexNowKey 0123456789abcdef\n"
            f"SitemapIndexNowEndpoint http://127.0.0.1:{port}/indexnow\n")


ROBOTS = "User-agent: *\nDisallow: /private/\nDisallow: /tmp/\nDisallow: /cgi-bin/\n"


def record_pages(srv):
    srv.write("htdocs/robots.txt", ROBOTS)
    for p in PAGES:
        srv.write("htdocs" + p, f"<html><body>{p}</body></html>\n")
    srv.start()
    for p in PAGES:
        srv.get_ok(p)
    srv.wait_recorded(*PAGES)


# Every output of the module that has validators, and robots.txt's.
OUTPUTS = ("/sitemap.xml", "/sitemap.txt", "/sitemap.html", "/sitemap.css",
           "/robots.txt")


def decoded(r):
    if r.header("Content-Encoding") == "gzip":
        return gzip.decompress(r.body)
    assert r.header("Content-Encoding") is None, r.headers
    return r.body


# ---------------------------------------------------------------------------
# etags

@pytest.mark.parametrize("cache", ["none", "cache_disk"])
@pytest.mark.parametrize("renditions", ["On", "Off"])
def test_encoded_etags_revalidate(make_server, views_conf, cache, renditions):
    mods = ["filter", "deflate", "headers"]
    if cache == "cache_disk":
        mods += ["cache", "cache_disk"]
    srv = make_server(modules=mods, loglevel=os.environ.get("T_LOGLEVEL", "warn sitemap:debug"))
    conf = debian("deflate") + views_conf + f"SitemapCache {renditions}\n"
    if cache == "cache_disk":
        conf += cache_conf(srv)
    srv.conf_text = conf
    record_pages(srv)
    # httpd gives a file changed within the last second a weak ETag, and
    # a strong one after: robots.txt's must not change between the cases
    time.sleep(max(0.0, os.stat(srv.path("htdocs/robots.txt")).st_mtime
                   + 1.5 - time.time()))
    cases = [(path, headers)
             for path in os.environ.get("T_OUTPUTS", " ".join(OUTPUTS)).split()
             for headers in (GZ, {})]
    firsts = {}
    for path, headers in cases:
        first = srv.get(path, headers=headers)
        assert first.status == 200, (path, first)
        etag = first.header("ETag")
        assert etag, (path, first.headers)
        if headers and path != "/sitemap.xml":
            # mod_deflate compressed it and said so in the ETag
            assert first.header("Content-Encoding") == "gzip", (path, first.headers)
            assert etag.endswith('-gzip"'), (path, etag)
        firsts[path, bool(headers)] = first
    # fresh, and (after max-age, one wait for every case: each copy was
    # stored before it) stale in mod_cache: both revalidate (without
    # mod_cache nothing goes stale: no wait)
    stale = 1.2 if cache == "cache_disk" else 0
    for wait in (0, stale):
        time.sleep(wait)
        for path, headers in cases:
            etag = firsts[path, bool(headers)].header("ETag")
            c = srv.get(path, headers={**headers, "If-None-Match": etag})
            assert c.status == 304, (path, headers, wait, etag, c)
            assert c.header("ETag") == etag, (path, c.headers)
            assert c.body == b""
    # a stale copy revalidated for a client without a condition
    time.sleep(stale)
    for path, headers in cases:
        again = srv.get(path, headers=headers)
        assert again.status == 200, (path, again)
        assert decoded(again) == decoded(firsts[path, bool(headers)]), path
        # another tag still answers 200
        other = srv.get(path, headers={**headers, "If-None-Match": '"nope-gzip"'})
        assert other.status == 200, (path, other)
    # mod_cache_disk found every body it had recorded (no AH00708)
    assert not re.search(r"AH00708", srv.log_text()), srv.log_tail()


def test_brotli_etags_revalidate(make_server, views_conf):
    """mod_brotli's "-br" suffix, as mod_deflate's "-gzip"."""
    srv = make_server(modules=("filter", "brotli"))
    srv.conf_text = (views_conf + "AddOutputFilterByType BROTLI_COMPRESS "
                     "text/plain text/html text/css\n")
    record_pages(srv)
    br = {"Accept-Encoding": "br"}
    for path in ("/sitemap.txt", "/sitemap.html", "/sitemap.css", "/robots.txt"):
        r = srv.get(path, headers=br)
        assert r.status == 200 and r.header("Content-Encoding") == "br", (path, r.headers)
        etag = r.header("ETag")
        assert etag.endswith('-br"'), (path, etag)
        c = srv.get(path, headers={**br, "If-None-Match": etag})
        assert c.status == 304 and c.header("ETag") == etag, (path, c)


def test_fallback_robots_revalidates(make_server):
    """No robots.txt: the module's permissive one has validators too, and
    revalidates with the ETag mod_deflate gave it."""
    srv = make_server(modules=("filter", "deflate"))
    srv.conf_text = debian("deflate")
    srv.start()
    for headers in (GZ, {}):
        r = srv.get("/robots.txt", headers=headers)
        assert r.status == 200 and b"Sitemap: " in decoded(r), r
        etag = r.header("ETag")
        assert etag and r.header("Last-Modified"), r.headers
        c = srv.get("/robots.txt", headers={**headers, "If-None-Match": etag})
        assert c.status == 304 and c.header("ETag") == etag, (headers, c)
        c = srv.get("/robots.txt", headers={**headers, "If-Modified-Since":
                                            r.header("Last-Modified")})
        assert c.status == 304, (headers, c)


# ---------------------------------------------------------------------------
# methods

STATUS = "<Location /sitemap-status>\n    SetHandler sitemap-status\n</Location>\n"
KEY_FILE = "/0123456789abcdef.txt"
DOCUMENTS = ("/sitemap.xml", "/sitemap.xml.gz", "/sitemap.txt", "/sitemap.html",
             "/sitemap.css", KEY_FILE, "/sitemap-status")


def head_like_get(srv, path, headers, chunked_gzip=False):
    """HEAD answers what GET does, without the body: the same headers, and
    the Content-Length of the GET's body.  chunked_gzip: an encoding filter
    that made more than its first brigade (mod_deflate: 8 KiB) may leave
    it out, with a chunked GET, as httpd does for a static file; never a
    wrong one."""
    g = srv.get(path, headers=headers)
    h = srv.request("HEAD", path, headers=headers)
    assert g.status == h.status == 200, (path, g, h)
    assert h.body == b""
    for name in ("Content-Type", "Content-Encoding", "ETag", "Vary",
                 "Last-Modified"):
        assert h.header(name) == g.header(name), (path, headers, name, g.headers, h.headers)
    length = h.header("Content-Length")
    if length is None and chunked_gzip:
        assert h.header("Content-Encoding") == "gzip", (path, h.headers)
        assert g.header("Content-Length") is None, (path, g.headers)
        assert g.header("Transfer-Encoding") == "chunked", (path, g.headers)
        return g, h
    assert length == str(len(g.body)), (path, headers, len(g.body), h.headers)
    return g, h


# Every document whose bytes stay the same from one request to the next.
STEADY = ("/sitemap.xml", "/sitemap.xml.gz", "/sitemap-1.xml", "/sitemap-1.xml.gz",
          "/sitemap.txt", "/sitemap.html", "/sitemap-1.html", "/sitemap.css",
          KEY_FILE, "/robots.txt")


@pytest.mark.parametrize("renditions", ["On", "Off"])
def test_head_length_and_options(make_server, views_conf, renditions):
    srv = make_server(modules=("filter", "deflate"))
    srv.conf_text = (debian("deflate") + views_conf + STATUS
                     + f"SitemapCache {renditions}\n")
    record_pages(srv)
    # HEAD: the GET's headers and Content-Length, for every document,
    # compressed by mod_deflate (Debian's deflate.conf) or not
    for path in STEADY:
        for headers in (GZ, {}):
            head_like_get(srv, path, headers)
    g, h = head_like_get(srv, "/sitemap.txt", GZ)
    assert h.header("Content-Encoding") == "gzip", "mod_deflate compresses it"
    # the status page: its counters move between two requests (and with
    # them a few bytes of its length, compressed or not): the length of
    # what the GET got, give or take those, and the same headers
    for headers in (GZ, {}):
        g = srv.get("/sitemap-status", headers=headers)
        h = srv.request("HEAD", "/sitemap-status", headers=headers)
        assert h.status == 200 and h.body == b"", h
        for name in ("Content-Type", "Content-Encoding", "Vary"):
            assert h.header(name) == g.header(name), (name, g.headers, h.headers)
        assert abs(int(h.header("Content-Length", "-1000")) - len(g.body)) < 32, \
            (headers, len(g.body), h.headers)
    # OPTIONS: 200 with Allow, no body, for every document
    for path in DOCUMENTS:
        o = srv.request("OPTIONS", path)
        assert o.status in (200, 204), (path, o)
        allow = {m.strip() for m in (o.header("Allow") or "").split(",")}
        assert {"GET", "HEAD", "OPTIONS"} <= allow, (path, o.headers)
        assert o.body == b"", (path, o.body)
        p = srv.request("POST", path, body=b"x")
        assert p.status == 405, (path, p)
        assert "OPTIONS" in (p.header("Allow") or ""), (path, p.headers)


@pytest.mark.parametrize("renditions", ["On", "Off"])
def test_head_length_large(make_server, views_conf, renditions):
    """Documents far larger than httpd's first brigade (8 KiB), with names
    that do not compress: HEAD still has the GET's length, the module's
    own where nothing compresses the body, and mod_deflate's or none (a
    chunked GET) where it does, never the plain length of a gzip body."""
    srv = make_server(modules=("filter", "deflate"))
    srv.conf_text = (debian("deflate") + views_conf
                     + f"SitemapCache {renditions}\n")
    names = [f"/{os.urandom(32).hex()}.html" for _ in range(600)]
    srv.write("htdocs/robots.txt", ROBOTS)
    for p in names:
        srv.write("htdocs" + p, "<html><body>x</body></html>\n")
    srv.start()
    for p in names:
        srv.get_ok(p)
    srv.wait_recorded(*names)
    for path in ("/sitemap.xml", "/sitemap.xml.gz", "/sitemap.txt", "/sitemap.html"):
        g, h = head_like_get(srv, path, {})
        assert len(g.body) > 16000, (path, len(g.body))
        head_like_get(srv, path, GZ, chunked_gzip=True)


# ---------------------------------------------------------------------------
# backend: a second vhost of the same httpd behind ProxyPass /, serving
# pre-gzipped files with Content-Encoding: gzip whatever the client accepts

BACKEND_ROBOTS = ("User-agent: *\nDisallow: /private/\n"
                  + "".join(f"Disallow: /old/{i}/\n" for i in range(20)))
NOINDEX = '<html><head><meta name="robots" content="noindex"></head><body>x</body></html>\n'
CANONICAL = ('<html><head><link rel="canonical" href="http://elsewhere.example/c">'
             '</head><body>x</body></html>\n')
PLAIN = "<html><head><title>t</title></head><body>plain</body></html>\n"


def deflated(text):
    """Raw deflate (what some servers send as 'deflate')."""
    z = zlib.compressobj(6, zlib.DEFLATED, -15)
    return z.compress(text.encode()) + z.flush()


def start_backend(make_server, files):
    """A second httpd (no mod_sitemap) serving files as they are, with
    Content-Encoding: gzip (deflate for names holding "deflate") whatever
    the client accepts, as a backend with pre-compressed files does."""
    b = make_server(load_module=False, modules=("headers",))
    for name, data in files.items():
        b.write("htdocs/" + name, data)
    b.conf_text = """
<FilesMatch "\\.(html|txt)$">
    Header set Content-Encoding gzip
</FilesMatch>
<FilesMatch "deflate">
    Header set Content-Encoding deflate
</FilesMatch>
"""
    return b.start()


def backend_server(make_server, front=""):
    """The backend, and the front (Sitemap On, ProxyPass / to it) with
    Debian's proxy.conf and deflate.conf."""
    b = start_backend(make_server, {
        "robots.txt": gzip.compress(BACKEND_ROBOTS.encode()),
        "robots-deflate.txt": deflated(BACKEND_ROBOTS),
        "noindex.html": gzip.compress(NOINDEX.encode()),
        "canonical.html": gzip.compress(CANONICAL.encode()),
        "plain.html": gzip.compress(PLAIN.encode()),
        "deflated.html": deflated(NOINDEX)})
    srv = make_server(modules=("filter", "deflate", "proxy", "proxy_http",
                               "headers"))
    srv.conf_text = (debian("proxy", "deflate") + front + f"""
ProxyPass / http://127.0.0.1:{b.port}/
ProxyPassReverse / http://127.0.0.1:{b.port}/
""")
    return srv, b


def sitemap_lines(text, base):
    return [l for l in text.splitlines() if l.lower().startswith("sitemap:")]


@pytest.mark.parametrize("cache", ["none", "cache_disk"])
@pytest.mark.parametrize("name", ["robots.txt", "robots-deflate.txt"])
def test_compressed_backend_robots(make_server, name, cache):
    srv, _ = backend_server(make_server, "" if name == "robots.txt" else
                            f"RewriteEngine On\nRewriteRule ^/robots\\.txt$ "
                            f"http://127.0.0.1:{{port}}/{name} [P]\n")
    srv.conf_text = srv.conf_text.replace("{port}", str(_.port))
    if cache == "cache_disk":
        srv.extra_modules += ("cache", "cache_disk")
        srv.conf_text += cache_conf(srv)
    srv.start()
    # the backend gives a file changed within the last second a weak ETag,
    # and a strong one after: it must not change between the cases
    time.sleep(max(0.0, os.stat(os.path.join(_.docroot, name)).st_mtime
                   + 1.5 - time.time()))
    want = f"Sitemap: {srv.base}/sitemap.xml"
    cases = (GZ, {}, {"Accept-Encoding": "identity"})
    firsts = []
    for headers in cases:
        r = srv.get("/robots.txt", headers=headers)
        assert r.status == 200, r
        body = decoded(r)
        text = body.decode()
        assert BACKEND_ROBOTS.strip() in text, (headers, text)
        assert sitemap_lines(text, srv.base) == [want], (headers, text)
        # compressed again exactly for the clients that take it (mod_deflate)
        assert (r.header("Content-Encoding") == "gzip") == bool(headers.get(
            "Accept-Encoding") == "gzip"), (headers, r.headers)
        if r.header("Content-Length") is not None:
            assert int(r.header("Content-Length")) == len(r.body), r.headers
        assert r.header("ETag"), r.headers
        firsts.append(r)
    # fresh, then (one wait for every case) stale in mod_cache; without
    # mod_cache nothing goes stale: no wait
    stale = 1.2 if cache == "cache_disk" else 0
    for wait in (0, stale):
        time.sleep(wait)
        for headers, r in zip(cases, firsts):
            etag = r.header("ETag")
            c = srv.get("/robots.txt", headers={**headers, "If-None-Match": etag})
            assert c.status == 304, (headers, etag, wait, c)
            # never the backend's gzip for the decoded text (mod_cache's
            # 304 may repeat the 200's own Content-Encoding)
            assert c.header("Content-Encoding") in (
                None, r.header("Content-Encoding")), c.headers
    time.sleep(stale)
    for headers, r in zip(cases, firsts):
        again = srv.get("/robots.txt", headers=headers)
        assert again.status == 200 and decoded(again) == decoded(r), (headers, again)
    assert not re.search(r"AH00708", srv.log_text()), srv.log_tail()


def test_compressed_backend_pages_read(make_server):
    srv, b = backend_server(make_server)
    srv.start()
    for path in ("/plain.html", "/noindex.html", "/canonical.html",
                 "/deflated.html"):
        for headers in (GZ, {}):
            r = srv.get(path, headers=headers)
            assert r.status == 200, (path, r)
            assert r.header("Content-Encoding") in ("gzip", "deflate"), r.headers
    srv.wait_recorded("/plain.html")
    srv.assert_not_recorded("/noindex.html", "/canonical.html", "/deflated.html",
                            docroot=b.docroot)


# ---------------------------------------------------------------------------
# claimed: every URL the module answers is its own, whatever would take it

WORDPRESS_HTACCESS = """# BEGIN WordPress
<IfModule mod_rewrite.c>
RewriteEngine On
RewriteRule .* - [E=HTTP_AUTHORIZATION:%{HTTP:Authorization}]
RewriteBase /
RewriteRule ^index\\.php$ - [L]
RewriteCond %{REQUEST_FILENAME} !-f
RewriteCond %{REQUEST_FILENAME} !-d
RewriteRule . /index.php [L]
</IfModule>
# END WordPress
"""
FRONT = "front controller\n"


def claimed_urls(srv):
    """Each URL the module answers, and what its body must hold."""
    return {
        "/sitemap.xml": b"<urlset",
        "/sitemap.xml.gz": b"\x1f\x8b",
        "/sitemap-1.xml": b"<urlset",
        "/sitemap.txt": srv.base.encode() + PAGES[0].encode(),
        "/sitemap.html": b"<html",
        "/sitemap.css": b"urlset",
        KEY_FILE: b"0123456789abcdef",
        "/sitemap-status": b"Sitemap",
        "/robots.txt": f"Sitemap: {srv.base}/sitemap.xml".encode(),
    }


def check_claimed(srv):
    for path, want in claimed_urls(srv).items():
        r = srv.get(path)
        assert r.status == 200, (path, r, r.body[:200])
        assert want in r.body, (path, r.body[:300])
        if path != "/robots.txt":
            assert FRONT.encode() not in r.body, path


def test_claimed_under_proxypass(make_server, views_conf):
    b = start_backend(make_server, {p[1:]: f"<html><body>{p}</body></html>\n"
                                    for p in PAGES})
    srv = make_server(modules=("proxy", "proxy_http"))
    srv.conf_text = (debian("proxy") + views_conf + STATUS
                     + f"ProxyPass / http://127.0.0.1:{b.port}/\n")
    record_pages(srv)
    check_claimed(srv)


def test_claimed_under_wordpress_rules(make_server, views_conf):
    srv = make_server()
    srv.write("htdocs/.htaccess", WORDPRESS_HTACCESS)
    srv.write("htdocs/index.php", FRONT)
    srv.conf_text = (views_conf + STATUS
                     + f'<Directory "{srv.docroot}">\n    AllowOverride All\n</Directory>\n')
    record_pages(srv)
    # the rules do take what is not a file
    assert srv.get("/no-such-page").body == FRONT.encode()
    check_claimed(srv)
