# SPDX-License-Identifier: Apache-2.0
"""A repeat (a response whose raw facts were acted on before) is found when
its body begins, before the filters after the head reader have run:
log_transaction keeps that answer only when the four headers it hashed
(Last-Modified, ETag, X-Robots-Tag, Cache-Control) are still what they
were.  It no longer reads them again to know: it compares headers_out's
entries with those kept when the body began.  These tests change a hashed
header of a repeat after that point, in place (a value set again) and by
an entry added to headers_out, and want the change acted on."""

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
