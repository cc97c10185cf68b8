# SPDX-License-Identifier: Apache-2.0
"""Which responses are recorded.  Every rule is checked both ways: first the
case that must not be recorded (asserted absent after a sentinel), then the
same URL with one fact changed, which must be recorded."""
import time

import pytest

from conftest import sha_htpasswd

HTML = "<html><body>x</body></html>\n"

# A CGI whose response is steered by request headers, so that one URL can
# be answered both ways:
#   X-Test-CT      Content-Type (default text/html)
#   X-Test-Status  Status (default none, i.e. 200)
#   X-Test-Canonical  a <link rel=canonical> href in the head
CGI_STEERED = r"""
if [ "$REQUEST_METHOD" = POST ]; then cat >/dev/null; fi
printf 'Content-Type: %s\r\n' "${HTTP_X_TEST_CT:-text/html}"
if [ -n "$HTTP_X_TEST_STATUS" ]; then printf 'Status: %s\r\n' "$HTTP_X_TEST_STATUS"; fi
printf '\r\n<html><head>'
if [ -n "$HTTP_X_TEST_CANONICAL" ]; then printf '<link rel="canonical" href="%s">' "$HTTP_X_TEST_CANONICAL"; fi
printf '</head><body>cgi %s</body></html>\n' "$PATH_INFO"
"""


def rules_conf(root):
    return f"""
# response headers steered by request headers (see the tests)
SetEnvIf X-Test-Robots "(.+)" TEST_ROBOTS=$1
SetEnvIf X-Test-CC "(.+)" TEST_CC=$1
Header always set X-Robots-Tag "%{{TEST_ROBOTS}}e" env=TEST_ROBOTS
Header always set Cache-Control "%{{TEST_CC}}e" env=TEST_CC
# two values of each in headers_out (not err_headers_out: no "always")
SetEnvIf X-Test-Two "(.+)" TEST_TWO=$1
Header add X-Robots-Tag "noarchive" env=TEST_TWO
Header add X-Robots-Tag "%{{TEST_TWO}}e" env=TEST_TWO
Header add Cache-Control "max-age=60" env=TEST_TWO
Header add Cache-Control "%{{TEST_TWO}}e" env=TEST_TWO

<Location /private/>
    AuthType Basic
    AuthName "private"
    AuthBasicProvider file
    AuthUserFile "{root}/htpasswd"
    Require valid-user
</Location>

<Directory "{root}/htdocs/pi">
    AcceptPathInfo On
</Directory>

<Directory "{root}/htdocs/ir">
    RewriteEngine On
    RewriteRule ^old\\.html$ /ir/new.html [L]
    RewriteRule ^broken\\.html$ /ir/nonexistent.html [L]
</Directory>

RewriteEngine On
RewriteRule ^/crawl/ /page.html [L]
ErrorDocument 404 /errdoc.html
"""


@pytest.fixture
def srv(make_server):
    s = make_server()
    s.conf_text = rules_conf(s.root)
    for f in ("m.html", "auth.html", "robots.html", "cc.html", "pi/page.html",
              "ir/new.html", "inc/fragment.html", "errdoc.html", "range.html",
              "dir/index.html", "ct/page.html", "ct/page.xhtml"):
        s.write("htdocs/" + f, HTML)
    s.write("htdocs/private/p.html", HTML)
    s.write("htdocs/ct/page.txt", "plain\n")
    s.write("htdocs/ssi.shtml",
            '<html><body><!--#include virtual="/inc/fragment.html" --></body></html>\n')
    s.write("htpasswd", sha_htpasswd("alice", "secret"))
    s.cgi("steer.cgi", CGI_STEERED)
    return s.start()


def both_ways(srv, url, negative, positive):
    """negative(): requests that must not record url; positive(): the same
    URL with one fact changed, which must record it."""
    negative()
    srv.assert_not_recorded(url)
    positive()
    srv.wait_recorded(url)


def test_get_records_and_head_does_not(srv):
    def neg():
        assert srv.request("HEAD", "/m.html").status == 200
    both_ways(srv, "/m.html", neg, lambda: srv.get_ok("/m.html"))


def test_post_is_not_recorded(srv):
    def neg():
        r = srv.request("POST", "/cgi-bin/steer.cgi", body="a=1",
                        headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert r.status == 200
    both_ways(srv, "/cgi-bin/steer.cgi", neg, lambda: srv.get_ok("/cgi-bin/steer.cgi"))


def test_only_final_status_200(srv):
    def neg():
        for st in ("203", "500", "302", "404", "410"):
            r = srv.get("/cgi-bin/steer.cgi", headers={"X-Test-Status": st})
            assert r.status == int(st), r
    both_ways(srv, "/cgi-bin/steer.cgi", neg, lambda: srv.get_ok("/cgi-bin/steer.cgi"))


def test_partial_content_206_is_not_recorded(srv):
    def neg():
        r = srv.get("/range.html", headers={"Range": "bytes=0-3"})
        assert r.status == 206, r
    both_ways(srv, "/range.html", neg, lambda: srv.get_ok("/range.html"))


def test_not_modified_304_is_not_recorded(srv):
    def neg():
        lm = srv.request("HEAD", "/cc.html").header("Last-Modified")
        r = srv.get("/cc.html", headers={"If-Modified-Since": lm})
        assert r.status == 304, r
    both_ways(srv, "/cc.html", neg, lambda: srv.get_ok("/cc.html"))


def test_error_document_is_not_recorded(srv):
    """A 404 answered by an ErrorDocument (an internal redirect to a page
    that exists) records neither URL; the error page itself, asked for
    directly, is recorded."""
    def neg():
        assert srv.get("/no-such-page.html").status == 404
    both_ways(srv, "/errdoc.html", neg, lambda: srv.get_ok("/errdoc.html"))
    srv.assert_not_recorded("/no-such-page.html")


def test_internal_redirect_records_the_url_asked_for(srv):
    """Final status after internal redirects decides, and the URL recorded
    is the client's."""
    def neg():
        assert srv.get("/ir/broken.html").status == 404
    neg()
    srv.assert_not_recorded("/ir/broken.html", "/ir/nonexistent.html")
    srv.get_ok("/ir/old.html")
    srv.wait_recorded("/ir/old.html")
    srv.assert_not_recorded("/ir/new.html")


def test_rewrite_records_the_url_asked_for(srv):
    srv.get_ok("/crawl/some/where")
    srv.wait_recorded("/crawl/some/where")
    srv.assert_not_recorded("/page.html")


def test_subrequest_is_not_recorded(srv):
    """mod_include fetches /inc/fragment.html by a subrequest."""
    r = srv.get_ok("/ssi.shtml")
    assert b"<html><body>x</body></html>" in r.body, r.body
    srv.wait_recorded("/ssi.shtml")
    srv.assert_not_recorded("/inc/fragment.html")
    srv.get_ok("/inc/fragment.html")
    srv.wait_recorded("/inc/fragment.html")


def test_directory_index_records_the_directory(srv):
    srv.get_ok("/dir/")
    srv.get_ok("/")
    srv.wait_recorded("/dir/", "/")
    assert srv.get("/dir").status == 301          # mod_dir's redirect
    srv.assert_not_recorded("/dir/index.html", "/index.html", "/dir")
    srv.get_ok("/dir/index.html")
    srv.wait_recorded("/dir/index.html")


def test_content_types(srv):
    def neg():
        assert srv.get("/ct/page.txt").status == 200
        for ct in ("text/plain", "application/json", "image/png", "text/htmlx"):
            r = srv.get("/cgi-bin/steer.cgi", headers={"X-Test-CT": ct})
            assert r.status == 200 and r.header("Content-Type").startswith(ct), r
    neg()
    srv.assert_not_recorded("/ct/page.txt", "/cgi-bin/steer.cgi")
    srv.get_ok("/ct/page.html")
    srv.get_ok("/ct/page.xhtml")
    srv.wait_recorded("/ct/page.html", "/ct/page.xhtml")
    # parameters are ignored, the comparison is case-insensitive
    r = srv.get_ok("/cgi-bin/steer.cgi", headers={"X-Test-CT": "TEXT/HTML; Charset=UTF-8"})
    assert r.header("Content-Type").lower().startswith("text/html")
    srv.wait_recorded("/cgi-bin/steer.cgi")


def test_xhtml_from_cgi(srv):
    def neg():
        srv.get_ok("/cgi-bin/steer.cgi", headers={"X-Test-CT": "application/xml"})
    both_ways(srv, "/cgi-bin/steer.cgi", neg,
              lambda: srv.get_ok("/cgi-bin/steer.cgi",
                                 headers={"X-Test-CT": "application/xhtml+xml; charset=utf-8"}))


def test_authorization_header_is_not_recorded(srv):
    def neg():
        srv.get_ok("/auth.html", headers={"Authorization": "Basic Ym9iOnB3"})
        srv.get_ok("/auth.html", headers={"Authorization": "Bearer abc"})
    both_ways(srv, "/auth.html", neg, lambda: srv.get_ok("/auth.html"))


def test_credentials_never_change_a_recorded_page(srv):
    """The Authorization header is looked at only when a response is not a
    repeat: a recorded page asked for again with credentials changes
    nothing, and neither does a changed version of it (a new Last-Modified,
    so no repeat) until a request without credentials sees it."""
    srv.write("htdocs/auth2.html", HTML, mtime=1600000000)
    srv.get_ok("/auth2.html")
    srv.wait_recorded("/auth2.html")
    assert srv.row("/auth2.html")["lastmod"] == 1600000000
    srv.get_ok("/auth2.html", headers={"Authorization": "Basic Ym9iOnB3"})
    srv.write("htdocs/auth2.html", HTML + "changed\n", mtime=1650000000)
    r = srv.get_ok("/auth2.html", headers={"Authorization": "Bearer abc"})
    assert r.header("Last-Modified") == "Fri, 15 Apr 2022 05:20:00 GMT", r
    srv.assert_not_recorded()     # every process's queue written by now
    assert srv.row("/auth2.html")["lastmod"] == 1600000000
    srv.get_ok("/auth2.html")
    deadline = time.monotonic() + 10
    while srv.row("/auth2.html")["lastmod"] != 1650000000:
        assert time.monotonic() < deadline, srv.row("/auth2.html")
        time.sleep(0.1)


def test_authenticated_user_is_not_recorded(srv):
    r = srv.get("/private/p.html")
    assert r.status == 401
    srv.get_ok("/private/p.html", headers={"Authorization": "Basic YWxpY2U6c2VjcmV0"})
    srv.assert_not_recorded("/private/p.html")


@pytest.mark.parametrize("value", ["noindex", "none", "NoIndex", "noarchive, noindex",
                                   "googlebot: noindex", "noindex, nofollow"])
def test_x_robots_tag_noindex(srv, value):
    def neg():
        r = srv.get_ok("/robots.html", headers={"X-Test-Robots": value})
        assert r.header("X-Robots-Tag") == value, r
    def pos():
        srv.get_ok("/robots.html", headers={"X-Test-Robots": "noarchive, nofollow"})
    both_ways(srv, "/robots.html", neg, pos)


@pytest.mark.parametrize("value", ["noindex", "googlebot: none"])
def test_x_robots_tag_noindex_removes_a_stored_page(srv, value):
    """A stored page that starts answering X-Robots-Tag noindex goes, as
    one whose <head> says noindex, and comes back without it.  The header
    is set by mod_headers after the head reader asked whether the response
    repeats one already acted on (it did): that answer must not stand for
    the final headers."""
    for _ in range(2):
        srv.get_ok("/robots.html")
        srv.wait_recorded("/robots.html")
        r = srv.get_ok("/robots.html", headers={"X-Test-Robots": value})
        assert r.header("X-Robots-Tag") == value, r
        srv.wait_absent("/robots.html")


@pytest.mark.parametrize("value", ["noindex", "no-store"])
def test_second_value_of_a_header_counts(srv, value):
    """X-Robots-Tag or Cache-Control twice in the response's own headers
    (the one-pass header read must not keep only the first): the second
    value's noindex or no-store keeps the page out."""
    def neg():
        r = srv.get_ok("/robots.html", headers={"X-Test-Two": value})
        assert value in [v for k, v in r.headers
                         if k.lower() in ("x-robots-tag", "cache-control")], r
    def pos():
        srv.get_ok("/robots.html", headers={"X-Test-Two": "nofollow"})
    both_ways(srv, "/robots.html", neg, pos)


@pytest.mark.parametrize("value", ["no-store", "max-age=0, no-store", "No-Store"])
def test_cache_control_no_store(srv, value):
    def neg():
        r = srv.get_ok("/cc.html", headers={"X-Test-CC": value})
        assert r.header("Cache-Control") == value, r
    def pos():
        srv.get_ok("/cc.html", headers={"X-Test-CC": "public, max-age=60"})
    both_ways(srv, "/cc.html", neg, pos)


@pytest.mark.parametrize("value", ["private", "private, max-age=60",
                                   "private, must-revalidate, max-age=0"])
def test_cache_control_private_anonymous_recorded(srv, value):
    """private is what every anonymous visitor of MediaWiki gets: recorded
    when the request had no credentials and no session; not otherwise."""
    cc = {"X-Test-CC": value}
    def neg():
        srv.get_ok("/cc.html", headers=dict(cc, Cookie="PHPSESSID=abc123"))
        srv.get_ok("/cc.html", headers=dict(cc, Authorization="Basic eDp5"))
    def pos():
        r = srv.get_ok("/cc.html", headers=dict(cc, Cookie="_ga=GA1.2.3; cookieconsent=1"))
        assert r.header("Cache-Control") == value, r
    both_ways(srv, "/cc.html", neg, pos)


def test_path_info_static(srv):
    def neg():
        srv.get_ok("/pi/page.html/extra")
        srv.get_ok("/pi/page.html/")
    neg()
    srv.assert_not_recorded("/pi/page.html/extra", "/pi/page.html/", "/pi/page.html")
    srv.get_ok("/pi/page.html")
    srv.wait_recorded("/pi/page.html")


def test_path_info_cgi(srv):
    """A script's path info is its own page (a front controller's route)
    only when its head says so: one that names the script itself as
    canonical (the same document for any path) is not a second page."""
    def neg():
        r = srv.get_ok("/cgi-bin/steer.cgi/extra/path",
                       headers={"X-Test-Canonical": "/cgi-bin/steer.cgi"})
        assert b"/extra/path" in r.body
    neg()
    srv.assert_not_recorded("/cgi-bin/steer.cgi/extra/path", "/cgi-bin/steer.cgi")
    srv.get_ok("/cgi-bin/steer.cgi/extra/path")
    srv.wait_recorded("/cgi-bin/steer.cgi/extra/path")
    srv.get_ok("/cgi-bin/steer.cgi")
    srv.wait_recorded("/cgi-bin/steer.cgi")


CGI_SAME = r"""
printf 'Content-Type: text/html\r\n\r\n'
printf '<html><head><title>same</title></head><body>the same page for any path</body></html>\n'
"""


def test_path_info_cgi_same_page(make_server):
    """A script that answers the same document for any path info (no
    canonical to say so) is not a second page once its own URL is stored:
    the content fingerprints are the same."""
    s = make_server()
    s.cgi("same.cgi", CGI_SAME)
    s.start()
    s.get_ok("/cgi-bin/same.cgi")
    s.wait_recorded("/cgi-bin/same.cgi")
    s.get_ok("/cgi-bin/same.cgi/anything")
    s.get_ok("/cgi-bin/same.cgi/a/b")
    s.assert_not_recorded("/cgi-bin/same.cgi/anything", "/cgi-bin/same.cgi/a/b")


def test_path_info_cgi_unread_head(make_server):
    """Without SitemapReadHead a script's path info is never a page."""
    s = make_server()
    s.conf_text = "SitemapReadHead Off\n"
    s.cgi("steer.cgi", CGI_STEERED)
    s.start()
    s.get_ok("/cgi-bin/steer.cgi/extra/path")
    s.assert_not_recorded("/cgi-bin/steer.cgi/extra/path")
    s.get_ok("/cgi-bin/steer.cgi")
    s.wait_recorded("/cgi-bin/steer.cgi")


def test_query_not_recorded_by_default(srv):
    def neg():
        srv.get_ok("/m.html?a=1")
        srv.get_ok("/m.html?utm_source=x&b=2")
    neg()
    srv.assert_not_recorded("/m.html?a=1", "/m.html?utm_source=x&b=2", "/m.html")
    srv.get_ok("/m.html")
    srv.wait_recorded("/m.html")


def test_404_leaves_no_trace(srv):
    assert srv.get("/missing.html").status == 404
    assert srv.get("/missing/").status == 404
    srv.assert_not_recorded("/missing.html", "/missing/", "/errdoc.html")


def test_sitemap_off_records_nothing(make_server):
    srv = make_server(conf="Sitemap Off")
    srv.write("htdocs/m.html", HTML)
    srv.start()
    srv.get_ok("/m.html")
    srv.get_ok("/")
    srv.graceful_stop()
    assert not srv.urls(), srv.all_urls()


def test_content_types_directive_replaces_default(make_server):
    srv = make_server(conf="SitemapContentTypes text/plain")
    srv.write("htdocs/t.txt", "plain\n")
    srv.write("htdocs/h.html", HTML)
    srv.write("htdocs/x.xhtml", HTML)
    srv.start()
    srv.get_ok("/h.html")
    srv.get_ok("/x.xhtml")
    # the usual sentinel is HTML, not recorded here: the positive case
    # comes last and a graceful-stop flushes everything
    srv.get_ok("/t.txt")
    srv.wait_recorded("/t.txt")
    srv.graceful_stop()
    assert srv.urls() == {"/t.txt"}
