# SPDX-License-Identifier: Apache-2.0
"""Restrictions made with mod_rewrite, <If>, RedirectMatch or SetEnvIf on
the client's address, headers or environment are seen by the anonymous
re-check (issue 33, item 4): a page served to 127.0.0.1 (where the tests
run), or to a client sending the right header or cookie, that a visitor
from elsewhere without them would not get is never published; an
unrestricted neighbour is."""

import http.server

HTML = "<html><head><title>{t}</title></head><body>x</body></html>\n"

# name -> (configuration, request headers that let the test client in)
CASES = {
    # the two configurations
    "internal": (r"""RewriteEngine On
RewriteCond %{REMOTE_ADDR} !^127\.0\.0\.1$
RewriteRule ^/internal/ - [F]
""", {}),
    "ifonly": ("""<If "%{REMOTE_ADDR} != '127.0.0.1'">
RedirectMatch 403 ^/ifonly/
</If>
""", {}),
    # a request header: only clients sending X-Internal: 1 get in
    "xint": (r"""RewriteEngine On
RewriteCond %{HTTP:X-Internal} !=1
RewriteRule ^/xint/ - [F]
""", {"X-Internal": "1"}),
    # a cookie (not a session cookie of SitemapSessionCookie's list)
    "cookie": ("""<If "! %{HTTP_COOKIE} =~ /staff=yes/">
RedirectMatch 403 ^/cookie/
</If>
""", {"Cookie": "staff=yes"}),
    # outsiders are rewritten to another page, answered 200
    "members": (r"""RewriteEngine On
RewriteCond %{REMOTE_ADDR} !^127\.0\.0\.1$
RewriteRule ^/members/ /login.html [L]
""", {}),
    # SetEnvIf's server rules (before translate_name) ...
    "envsrv": (r"""SetEnvIfExpr "%{REMOTE_ADDR} != '127.0.0.1'" outsider=1
RewriteEngine On
RewriteCond %{ENV:outsider} =1
RewriteRule ^/envsrv/ - [F]
""", {}),
    # ... and its per-directory ones (header_parser)
    "envdir": ("""<Directory "{docroot}/envdir">
SetEnvIfExpr "%{{REMOTE_ADDR}} != '127.0.0.1'" dir_outsider=1
<RequireAll>
Require all granted
Require not env dir_outsider
</RequireAll>
</Directory>
""", {}),
    # the stand-in sends no User-Agent: a rule refusing requests without
    # one keeps the page out (errs towards publishing less)
    "noua": (r"""RewriteEngine On
RewriteCond %{HTTP_USER_AGENT} ^$
RewriteRule ^/noua/ - [F]
""", {"User-Agent": "test"}),
    # a rule on the Host every visitor sends is judged with it: recorded
    "hosted": (r"""RewriteEngine On
RewriteCond %{HTTP_HOST} !^127\.0\.0\.1:\d+$
RewriteRule ^/hosted/ /login.html [L]
""", {}),
    # a section with its own LogLevel: the stand-in stays quiet
    "loud": ("""<Location "/loud/">
LogLevel debug
Require local
</Location>
""", {}),
}

PUBLIC = ("hosted",)

HTACCESS = r"""RewriteEngine On
RewriteCond %{REMOTE_ADDR} !^127\.0\.0\.1$
RewriteRule ^ - [F]
"""


def rewrite_server(make_server):
    s = make_server(modules=("authz_host",), loglevel="warn sitemap:trace2")
    names = list(CASES) + ["hta", "open"]
    for name in names:
        s.write(f"htdocs/{name}/page.html", HTML.format(t=name))
    s.write("htdocs/login.html", HTML.format(t="login"))
    s.write("htdocs/hta/.htaccess", HTACCESS)
    conf = [c.format(docroot=s.docroot) if "{docroot}" in c else c
            for c, _ in CASES.values()]
    conf.append(f'<Directory "{s.docroot}/hta">\nAllowOverride FileInfo\n</Directory>\n')
    s.conf_text = "\n".join(conf)
    s.start()
    return s


def test_rewrite_and_if_restrictions_are_not_recorded(make_server):
    s = rewrite_server(make_server)
    restricted = [f"/{n}/page.html" for n in list(CASES) + ["hta"]
                  if n not in PUBLIC]
    for name, (_, headers) in list(CASES.items()) + [("hta", ({}, {}))]:
        r = s.get(f"/{name}/page.html", headers=headers or None)
        assert r.status == 200, f"{name}: {r.status} (the test client must be let in)"
        assert f"<title>{name}</title>".encode() in r.body
    s.get_ok("/open/page.html")
    s.wait_recorded("/open/page.html", "/hosted/page.html")
    s.assert_not_recorded(*restricted)
    # the stand-in's refusals never reach the error log, a section's own
    # LogLevel debug notwithstanding
    assert not [ln for ln in s.log_text().splitlines() if "192.0.2.1" in ln]
    # what each lookup ended in, at trace2 under the visitor's request
    s.wait_log(r"anonymous lookup of /internal/page\.html: status 403")
    s.wait_log(r"anonymous lookup of /members/page\.html: status 200, .*/login\.html")


def test_headers_and_cookies_restrict_only_their_pages(make_server):
    """Without the header or the cookie the client is refused, as the
    stand-in is; the same client's unrestricted pages are recorded, with
    the header and the cookie sent."""
    s = rewrite_server(make_server)
    s.expect_log(r"AH01630: client denied by server configuration")
    assert s.get("/xint/page.html").status == 403
    assert s.get("/cookie/page.html").status == 403
    s.get_ok("/open/page.html", headers={"X-Internal": "1", "Cookie": "staff=yes"})
    s.get_ok("/login.html")
    s.wait_recorded("/open/page.html", "/login.html")


LOCAL_REDIRECT = """
printf 'Location: {target}\\r\\n\\r\\n'
"""


def test_handler_redirects_are_followed(make_server):
    """A CGI script's local Location (its handler redirects internally):
    the stand-in goes on to where the visitor was sent, so a script that
    sends everyone to a public page is recorded under its own URL, and one
    sending to a page restricted by address is not."""
    s = make_server()
    s.write("htdocs/open/page.html", HTML.format(t="open"))
    s.write("htdocs/internal/page.html", HTML.format(t="internal"))
    s.cgi("to-open.cgi", LOCAL_REDIRECT.format(target="/open/page.html"))
    s.cgi("to-internal.cgi", LOCAL_REDIRECT.format(target="/internal/page.html"))
    s.conf_text = CASES["internal"][0]
    s.start()
    for name in ("to-open", "to-internal"):
        r = s.get_ok(f"/cgi-bin/{name}.cgi")
        assert b"<title>" in r.body
    s.wait_recorded("/cgi-bin/to-open.cgi")
    s.assert_not_recorded("/cgi-bin/to-internal.cgi")


def test_multiviews_records_what_a_visitor_without_language_gets(make_server):
    """MultiViews chooses a file on Accept-Language: the page is recorded
    from a visit that got what a visitor without one gets (the stand-in
    sends no Accept-Language), not from one that got another file."""
    s = make_server(modules=("negotiation",))
    s.write("htdocs/mv/page.html.en", HTML.format(t="en"))
    s.write("htdocs/mv/page.html.de", HTML.format(t="de"))
    s.write("htdocs/mv/other.html.en", HTML.format(t="en"))
    s.write("htdocs/mv/other.html.de", HTML.format(t="de"))
    s.conf_text = f"""AddLanguage en .en
AddLanguage de .de
LanguagePriority en de
ForceLanguagePriority Prefer Fallback
<Directory "{s.docroot}/mv">
Options +MultiViews
</Directory>
"""
    s.start()
    assert b"<title>de</title>" in s.get_ok("/mv/page", headers={"Accept-Language": "de"}).body
    assert b"<title>en</title>" in s.get_ok("/mv/other", headers={"Accept-Language": "en"}).body
    s.wait_recorded("/mv/other")
    s.assert_not_recorded("/mv/page")


class _Backend(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = HTML.format(t="proxied").encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_proxied_pages_are_judged_too(make_server, http_backend):
    """Pages behind mod_proxy, by ProxyPass or by SetHandler "proxy:..."
    (php-fpm's way: its handler puts the backend's URL before the file's
    name), are recorded when open and left out when restricted."""
    port = http_backend(_Backend)
    s = make_server(modules=("proxy", "proxy_http"))
    for name in ("sh", "shx"):
        s.write(f"htdocs/{name}/page.html", "placeholder\n")
    s.conf_text = f"""SitemapAllowQuery id
ProxyPass /pp/ http://127.0.0.1:{port}/pp/
ProxyPass /ppx/ http://127.0.0.1:{port}/ppx/
<Directory "{s.docroot}/sh">
SetHandler "proxy:http://127.0.0.1:{port}"
</Directory>
<Directory "{s.docroot}/shx">
SetHandler "proxy:http://127.0.0.1:{port}"
</Directory>
RewriteEngine On
RewriteCond %{{REMOTE_ADDR}} !^127\\.0\\.0\\.1$
RewriteRule ^/(ppx|shx)/ - [F]
"""
    s.start()
    for path in ("/pp/page.html", "/ppx/page.html", "/sh/page.html",
                 "/shx/page.html", "/pp/page.html?id=1", "/sh/page.html?id=1",
                 "/shx/page.html?id=1"):
        assert b"<title>proxied</title>" in s.get_ok(path).body
    s.wait_recorded("/pp/page.html", "/sh/page.html", "/pp/page.html?id=1",
                    "/sh/page.html?id=1")
    s.assert_not_recorded("/ppx/page.html", "/shx/page.html", "/shx/page.html?id=1")
