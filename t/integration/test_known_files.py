# SPDX-License-Identifier: Apache-2.0
"""The known static files (mod_sitemap_known.c): a file whose last
response was a confirmed repeat is served again without the head filter,
and its repeat answered from its slot.  These tests change what the slot
cannot see (a filter that makes the body, a header from .htaccess, another
URL of the same file) and want the change acted on as if the filter had
run."""

import os
import time

HEAD = "<html><head><title>t</title></head><body>x</body></html>\n"
NOINDEX = '<meta name="robots" content="noindex">'


def known(srv, url):
    """url recorded, then asked until its file is known (the first repeat
    confirmed, the next ones without the filter)."""
    srv.get_ok(url)
    srv.wait_recorded(url)
    for _ in range(5):
        srv.get_ok(url)


def htaccess_conf(srv, override):
    return (f'<Directory "{srv.docroot}">\n'
            f"    AllowOverride {override}\n</Directory>\n")


def test_known_file_then_substitute_injects_noindex(make_server):
    """mod_substitute added in .htaccess (no restart) writes a noindex into
    a known file's head; it keeps the file's ETag and Last-Modified, so the
    raw facts are those of the repeat: the noindex must win all the same."""
    srv = make_server(modules=("substitute",))
    srv.conf_text = htaccess_conf(srv, "FileInfo")
    srv.write("htdocs/page.html", HEAD)
    srv.start()
    known(srv, "/page.html")
    srv.write("htdocs/.htaccess",
              "AddOutputFilter SUBSTITUTE .html\n"
              f"Substitute 's|<title>|{NOINDEX}<title>|'\n")
    for _ in range(3):
        r = srv.get_ok("/page.html")
        assert NOINDEX in r.body.decode(), r
    srv.wait_absent("/page.html")


def test_known_file_then_ssi_injects_noindex(make_server):
    """XBitHack full with SSIETag on: a chmod (no new mtime, size or inode)
    makes mod_include parse the file, whose include writes a noindex into
    its head; the ETag and Last-Modified stay the file's."""
    srv = make_server()
    srv.conf_text = (f'<Directory "{srv.docroot}">\n'
                     "    XBitHack full\n    SSIETag on\n</Directory>\n")
    srv.write("htdocs/noindex.inc", NOINDEX)
    p = srv.write("htdocs/page.html",
                  '<html><head><!--#include virtual="/noindex.inc" -->'
                  "<title>t</title></head><body>x</body></html>\n")
    srv.start()
    r = srv.get_ok("/page.html")
    assert NOINDEX not in r.body.decode(), r
    known(srv, "/page.html")
    os.chmod(p, 0o755)
    for _ in range(3):
        r = srv.get_ok("/page.html")
        assert NOINDEX in r.body.decode(), r
    srv.wait_absent("/page.html")


def test_known_file_then_htaccess_x_robots_tag(make_server):
    """An X-Robots-Tag noindex set by mod_headers in a new .htaccess."""
    srv = make_server()
    srv.conf_text = htaccess_conf(srv, "FileInfo")
    srv.write("htdocs/page.html", HEAD)
    srv.start()
    known(srv, "/page.html")
    srv.write("htdocs/.htaccess", 'Header set X-Robots-Tag "noindex"\n')
    r = srv.get_ok("/page.html")
    assert r.header("X-Robots-Tag") == "noindex", r
    srv.wait_absent("/page.html")


def test_known_file_other_urls_still_recorded(make_server):
    """One file known under one URL: its other URLs (an Alias, a symlink,
    a RewriteRule, the directory's index) are recorded each as its own,
    never answered from the first URL's slot."""
    srv = make_server()
    srv.conf_text = (f'Alias /alias/ "{srv.docroot}/"\n'
                     "RewriteEngine On\n"
                     "RewriteRule ^/rewritten$ /index.html [PT]\n"
                     "SitemapAllowQuery page\n")
    srv.write("htdocs/index.html", HEAD)
    os.symlink("index.html", srv.path("htdocs/link.html"))
    srv.start()
    known(srv, "/index.html")
    for url in ("/", "/alias/index.html", "/link.html", "/rewritten",
                "/index.html?page=2"):
        srv.get_ok(url)
    srv.wait_recorded("/index.html", "/", "/alias/index.html", "/link.html",
                      "/rewritten", "/index.html?page=2")


LATE = """
SetEnvIf X-Test-Set "(.+)" TEST_SET=$1
Header set X-Robots-Tag "%{TEST_SET}e" env=TEST_SET
"""


def test_known_files_start_empty_after_graceful(make_server):
    """The table is the process's: after a graceful restart a response
    that is new (a header set after the body began) is read by the filter,
    never answered from a slot filled before."""
    srv = make_server(conf=LATE, loglevel="warn sitemap:trace1")
    srv.write("htdocs/page.html", HEAD)
    srv.start()
    known(srv, "/page.html")
    srv.graceful()
    before = srv.log_text().count("reading the head of /page.html")
    recorded = srv.log_text().count("/page.html\n")
    srv.get_ok("/page.html", headers={"X-Test-Set": "nofollow"})
    deadline = time.monotonic() + 10
    while srv.log_text().count("/page.html\n") < recorded + 2:
        assert time.monotonic() < deadline, srv.log_tail(20)
        time.sleep(0.1)
    text = srv.log_text()
    assert text.count("reading the head of /page.html") > before, \
        srv.log_tail(20)
    assert "from its file" not in text, srv.log_tail(20)


def test_filter_made_body_repeats_only_with_its_content(make_server):
    """A body mod_substitute makes from the start keeps the file's ETag
    while the substitution changes: never a repeat by that ETag alone (nor
    a known file), so the noindex a new pattern writes is seen."""
    srv = make_server(modules=("substitute",))
    srv.conf_text = htaccess_conf(srv, "FileInfo")
    srv.write("htdocs/page.html", HEAD)
    srv.write("htdocs/.htaccess", "AddOutputFilter SUBSTITUTE .html\n"
              "Substitute 's|<body>x|<body>y|'\n")
    srv.start()
    known(srv, "/page.html")
    srv.write("htdocs/.htaccess",
              "AddOutputFilter SUBSTITUTE .html\n"
              f"Substitute 's|<title>|{NOINDEX}<title>|'\n")
    r = srv.get_ok("/page.html")
    assert NOINDEX in r.body.decode(), r
    srv.wait_absent("/page.html")


def test_known_file_gzip_client_late_noindex(make_server):
    """mod_deflate encodes a known file for a gzip client, and a header set
    after the body began (X-Robots-Tag noindex) makes that response new:
    the noindex is acted on at once, as when the filter ran, although the
    response has a Content-Encoding (the file itself has none)."""
    srv = make_server(modules=("filter", "deflate"),
                      conf="Include /etc/apache2/mods-available/deflate.conf\n"
                      + LATE)
    srv.write("htdocs/page.html", HEAD * 20)
    srv.start()
    known(srv, "/page.html")
    r = srv.get_ok("/page.html", headers={"Accept-Encoding": "gzip",
                                          "X-Test-Set": "noindex"})
    assert r.header("Content-Encoding") == "gzip", r
    srv.wait_absent("/page.html")


def test_known_file_for_gzip_clients_only(make_server):
    """Debian's deflate.conf and clients that all take gzip (crawlers do):
    the file becomes known all the same (the slot keeps the ETag as the
    head filter's place saw it, before mod_deflate's "-gzip"), so a late
    noindex is acted on by reading the head from the file, the known
    path's way, and the page is back with its next plain request."""
    srv = make_server(modules=("filter", "deflate"),
                      conf="Include /etc/apache2/mods-available/deflate.conf\n"
                      + LATE, loglevel="warn sitemap:trace1")
    srv.write("htdocs/page.html", HEAD * 20)
    srv.start()
    gz = {"Accept-Encoding": "gzip"}
    srv.get_ok("/page.html", headers=gz)
    srv.wait_recorded("/page.html")
    for _ in range(5):
        r = srv.get_ok("/page.html", headers=gz)
        assert r.header("Content-Encoding") == "gzip", r
    srv.get_ok("/page.html", headers={**gz, "X-Test-Set": "noindex"})
    srv.wait_log(r"read the head of /page\.html from its file")
    srv.wait_absent("/page.html")
    srv.get_ok("/page.html", headers=gz)
    srv.wait_recorded("/page.html")
