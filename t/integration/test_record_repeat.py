# SPDX-License-Identifier: Apache-2.0
"""A repeat (a response whose raw facts were acted on before) is found when
its body begins, before the filters after the head reader have run:
log_transaction keeps that answer only when the four headers it hashed
(Last-Modified, ETag, X-Robots-Tag, Cache-Control) are still what they
were.  It no longer reads them again to know: it compares headers_out's
entries with those kept when the body began.  These tests change a hashed
header of a repeat after that point, in place (a value set again) and by
an entry added to headers_out, and want the change acted on."""

import re
import time

HTML = "<html><head><title>t</title></head><body>x</body></html>\n"

CONF = """
SetEnvIf X-Test-Set "(.+)" TEST_SET=$1
SetEnvIf X-Test-Add "(.+)" TEST_ADD=$1
# headers_out (no "always"), after the head reader: mod_headers' filter
Header set X-Robots-Tag "%{TEST_SET}e" env=TEST_SET
Header add X-Robots-Tag "%{TEST_ADD}e" env=TEST_ADD
"""
# An X-Robots-Tag in headers_out before the body begins (post_read_request)
EARLY = 'Header set X-Robots-Tag "nofollow" early\n'


def repeat_then(srv, url, headers):
    """url recorded, asked again (repeats), then with headers: gone."""
    srv.get_ok(url)
    srv.wait_recorded(url)
    for _ in range(3):
        srv.get_ok(url)
    r = srv.get_ok(url, headers=headers)
    assert "noindex" in (r.header("X-Robots-Tag") or ""), r
    srv.wait_absent(url)
    # And back once the header is gone again.
    srv.get_ok(url)
    srv.wait_recorded(url)


def test_hashed_header_set_again_after_the_repeat_check(make_server):
    """An X-Robots-Tag there when the body begins, replaced in place by
    mod_headers: the same entry, a new value."""
    srv = make_server(conf=EARLY + CONF)
    srv.write("htdocs/page.html", HTML)
    srv.start()
    r = srv.get_ok("/page.html")
    assert r.header("X-Robots-Tag") == "nofollow", r
    repeat_then(srv, "/page.html", {"X-Test-Set": "noindex"})


def test_hashed_header_added_after_the_repeat_check(make_server):
    """A static page's X-Robots-Tag, added by mod_headers after the entries
    that were there (httpd sets Content-Length again meanwhile)."""
    srv = make_server(conf=CONF)
    srv.write("htdocs/page.html", HTML)
    srv.start()
    repeat_then(srv, "/page.html", {"X-Test-Add": "noindex"})


def test_mass_host_sites_apart_on_one_connection(make_server):
    """sitemap_site's answer is kept per request: two Hosts asked on one
    keep-alive connection each get their own site."""
    import http.client
    srv = make_server()
    for name in ("a.hosted.test", "b.hosted.test"):
        srv.write(f"hosts/{name}/p-{name[0]}.html", HTML)
    srv.conf_text = f"""
Include /etc/apache2/mods-available/vhost_alias.load
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName mass.test
    ServerAlias *
    UseCanonicalName Off
    VirtualDocumentRoot "{srv.root}/hosts/%0"
    <Directory "{srv.root}/hosts">
        Require all granted
    </Directory>
    SitemapSiteFromHost "[a-z]+\\.hosted\\.test"
</VirtualHost>
"""
    srv.start()
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        for _ in range(2):
            for name in ("a.hosted.test", "b.hosted.test"):
                c.request("GET", f"/p-{name[0]}.html",
                          headers={"Host": f"{name}:{srv.port}"})
                r = c.getresponse()
                r.read()
                assert r.status == 200, (name, r.status)
    finally:
        c.close()
    for name in ("a.hosted.test", "b.hosted.test"):
        base = f"http://{name}:{srv.port}"
        srv.wait_recorded(f"/p-{name[0]}.html", base=base)
        assert f"/p-{'b' if name[0] == 'a' else 'a'}.html" \
            not in srv.urls(base)


# A static file whose response was a confirmed repeat is served again
# without the head filter while the file stays the same (mod_sitemap_head.c,
# sitemap_head_remember); a response of it that is no repeat after all (a
# header set after the body began) has its head read from the file.
def known_then(srv, url, headers):
    """url decided, asked again until its file is known (the first repeat
    confirmed, the next ones without the filter), then with headers: the
    head is read from the file."""
    srv.get_ok(url)
    for _ in range(4):
        srv.get_ok(url)
    srv.get_ok(url, headers=headers)
    srv.wait_log(rf"read the head of {re.escape(url)} from its file")


def test_known_file_late_header_reads_head_from_file(make_server):
    """The late X-Robots-Tag noindex is acted on at once (as when the
    filter ran), and the page is back with its next plain request."""
    srv = make_server(conf=CONF, loglevel="warn sitemap:trace1")
    srv.write("htdocs/page.html", HTML)
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    known_then(srv, "/page.html", {"X-Test-Set": "noindex"})
    srv.wait_absent("/page.html")
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")


def test_known_file_late_header_keeps_head_verdict(make_server):
    """A page whose head names a canonical elsewhere stays out when a
    header set after the body began makes its response new: its head is
    read from the file and says so again (not judged by headers alone)."""
    srv = make_server(conf=CONF, loglevel="warn sitemap:trace1")
    srv.write("htdocs/canon.html",
              '<html><head><title>c</title><link rel="canonical" '
              'href="/other.html"></head><body>x</body></html>\n')
    srv.start()
    forgets = r"forgetting \S*/canon\.html: canonical names another URL"
    srv.get_ok("/canon.html")
    srv.wait_log(forgets)
    known_then(srv, "/canon.html", {"X-Test-Set": "nofollow"})
    deadline = time.monotonic() + 10
    while len([ln for ln in srv.log_text().splitlines()
               if re.search(forgets, ln)]) < 2:
        assert time.monotonic() < deadline, srv.log_tail(20)
        time.sleep(0.1)
    assert not any(re.search(r"recording \S*/canon\.html", ln)
                   for ln in srv.log_text().splitlines()), srv.log_tail(20)
    assert "/canon.html" not in srv.urls()


AUTH_IF = """
<If "%{{HTTP:X-Test-Auth}} == 'yes'">
    AuthType Basic
    AuthName "private"
    AuthBasicProvider file
    AuthUserFile "{root}/htpasswd"
    Require valid-user
</If>
"""


def test_known_file_asked_with_credentials_is_refused(make_server):
    """A known file's response to an authenticated user is refused by the
    rules as before (not taken for the anonymous repeat it resembles)."""
    from conftest import sha_htpasswd
    srv = make_server(loglevel="warn sitemap:trace1")
    srv.conf_text = AUTH_IF.format(root=srv.root)
    srv.write("htpasswd", sha_htpasswd("alice", "secret"))
    srv.write("htdocs/page.html", HTML)
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    for _ in range(4):
        srv.get_ok("/page.html")
    assert srv.get("/page.html", headers={"X-Test-Auth": "yes"}).status == 401
    srv.get_ok("/page.html", headers={"X-Test-Auth": "yes",
                                      "Authorization": "Basic YWxpY2U6c2VjcmV0"})
    srv.wait_log(r"not recorded \(authenticated\): /page\.html")
