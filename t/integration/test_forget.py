# SPDX-License-Identifier: Apache-2.0
"""A recorded URL is removed when its final status becomes 404, 410 or 301;
other statuses leave it alone."""
import os

HTML = "<html><body>x</body></html>\n"

STEERED_CGI = r"""
if [ -n "$HTTP_X_TEST_STATUS" ]; then printf 'Status: %s\r\n' "$HTTP_X_TEST_STATUS"; fi
if [ -n "$HTTP_X_TEST_LOCATION" ]; then printf 'Location: %s\r\n' "$HTTP_X_TEST_LOCATION"; fi
printf 'Content-Type: text/html\r\n\r\n<html><body>cgi</body></html>\n'
"""

# mod_rewrite answers 410 / 301 / 302 while a flag file exists.
FLAG_CONF = """
RewriteEngine On
RewriteCond {root}/flags/gone -f
RewriteRule ^/gone\\.html$ - [G]
RewriteCond {root}/flags/moved -f
RewriteRule ^/moved\\.html$ /page.html [R=301,L]
RewriteCond {root}/flags/found -f
RewriteRule ^/found\\.html$ /page.html [R=302,L]
"""


def flagged(make_server):
    srv = make_server()
    srv.conf_text = FLAG_CONF.format(root=srv.root)
    for f in ("doomed.html", "gone.html", "moved.html", "found.html", "stays.html",
              "caf\u00e9.html"):
        srv.write("htdocs/" + f, HTML)
    os.makedirs(srv.path("flags"))
    os.chmod(srv.path("flags"), 0o755)
    srv.cgi("steer.cgi", STEERED_CGI)
    return srv.start()


def test_forget_on_404(make_server):
    srv = flagged(make_server)
    srv.get_ok("/doomed.html")
    srv.get_ok("/stays.html")
    srv.wait_recorded("/doomed.html", "/stays.html")
    os.unlink(srv.path("htdocs/doomed.html"))
    assert srv.get("/doomed.html").status == 404
    srv.wait_absent("/doomed.html")
    assert "/stays.html" in srv.urls()


def test_forget_on_410(make_server):
    srv = flagged(make_server)
    srv.get_ok("/gone.html")
    srv.wait_recorded("/gone.html")
    srv.write("flags/gone", "")
    assert srv.get("/gone.html").status == 410
    srv.wait_absent("/gone.html")


def test_back_after_410_with_the_same_response(make_server):
    """The same bytes and headers as when first recorded, after a 410 in
    between: recorded again (a remembered response must not hide that the
    URL was forgotten since; one process serves all three)."""
    srv = flagged(make_server)
    first = srv.get_ok("/gone.html")
    srv.wait_recorded("/gone.html")
    srv.write("flags/gone", "")
    assert srv.get("/gone.html").status == 410
    srv.wait_absent("/gone.html")
    os.unlink(srv.path("flags/gone"))
    again = srv.get_ok("/gone.html")
    assert again.header("ETag") == first.header("ETag")
    srv.wait_recorded("/gone.html")


def test_forget_on_301(make_server):
    srv = flagged(make_server)
    srv.get_ok("/moved.html")
    srv.wait_recorded("/moved.html")
    srv.write("flags/moved", "")
    assert srv.get("/moved.html").status == 301
    srv.wait_absent("/moved.html")


def test_other_statuses_keep_the_url(make_server):
    """302, 304, 403, 500, 503 and a 200 of another type keep it."""
    srv = flagged(make_server)
    srv.get_ok("/found.html")
    srv.get_ok("/cgi-bin/steer.cgi")
    srv.wait_recorded("/found.html", "/cgi-bin/steer.cgi")
    srv.write("flags/found", "")
    assert srv.get("/found.html").status == 302
    lm = srv.request("HEAD", "/stays.html").header("Last-Modified")
    for st in ("302", "307", "403", "500", "503", "400"):
        h = {"X-Test-Status": st}
        if st.startswith("3"):
            h["X-Test-Location"] = "http://x.test/"
        r = srv.get("/cgi-bin/steer.cgi", headers=h)
        assert r.status == int(st), r
    srv.sentinel()
    assert {"/found.html", "/cgi-bin/steer.cgi"} <= srv.urls()
    srv.get_ok("/stays.html")
    srv.wait_recorded("/stays.html")
    assert srv.get("/stays.html", headers={"If-Modified-Since": lm}).status == 304
    srv.sentinel()
    assert "/stays.html" in srv.urls()
    # ...whereas a CGI's own 404 does remove it
    assert srv.get("/cgi-bin/steer.cgi", headers={"X-Test-Status": "404"}).status == 404
    srv.wait_absent("/cgi-bin/steer.cgi")


def test_forget_by_another_spelling(make_server):
    srv = flagged(make_server)
    srv.get_ok("/caf%c3%a9.html")
    srv.wait_recorded("/caf%C3%A9.html")
    os.unlink(srv.path("htdocs/caf\u00e9.html"))
    assert srv.get("//./caf%C3%A9.html").status == 404
    srv.wait_absent("/caf%C3%A9.html")


def test_forget_after_redirect_directives(make_server):
    """Redirect gone / Redirect permanent, added by a graceful restart."""
    srv = make_server()
    for f in ("old-a.html", "old-b.html", "old-c.html"):
        srv.write("htdocs/" + f, HTML)
    srv.start()
    for f in ("old-a.html", "old-b.html", "old-c.html"):
        srv.get_ok("/" + f)
    srv.wait_recorded("/old-a.html", "/old-b.html", "/old-c.html")
    srv.graceful(conf="""
Redirect gone /old-a.html
Redirect permanent /old-b.html /page.html
Redirect temp /old-c.html /page.html
""")
    assert srv.get("/old-a.html").status == 410
    assert srv.get("/old-b.html").status == 301
    assert srv.get("/old-c.html").status == 302
    srv.wait_absent("/old-a.html", "/old-b.html")
    srv.sentinel()
    assert "/old-c.html" in srv.urls()


def test_forget_unknown_url_is_harmless(server):
    assert server.get("/never-seen.html").status == 404
    server.get_ok("/page.html")
    server.wait_recorded("/page.html")
    assert server.urls() == {"/page.html"}


def test_url_count_follows(make_server):
    srv = flagged(make_server)
    for f in ("doomed.html", "stays.html", "gone.html"):
        srv.get_ok("/" + f)
    srv.wait_recorded("/doomed.html", "/stays.html", "/gone.html")
    count = lambda: srv.query("SELECT url_count FROM sites WHERE base = ?", (srv.base,))[0][0]
    assert count() == 3
    os.unlink(srv.path("htdocs/doomed.html"))
    assert srv.get("/doomed.html").status == 404
    srv.wait_absent("/doomed.html")
    assert count() == 2
