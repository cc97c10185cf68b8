# SPDX-License-Identifier: Apache-2.0
"""URL normalisation (RFC 3986 6.2.2) of what is recorded.

Each case sends a raw request target (bytes exactly as written) for a file
that exists, and checks that the only URL stored is the canonical one.
httpd itself may refuse or rewrite some spellings: when it does not answer
200 nothing may be stored, and the canonical form is then reached with a
second, plain request."""
import pytest

HTML = "<html><body>x</body></html>\n"

# (id, file under htdocs, raw request target, canonical URL)
CASES = [
    ("utf8-raw", "café.html", "/caf\xc3\xa9.html".encode("latin-1"), "/caf%C3%A9.html"),
    ("utf8-lower-escapes", "thé.html", b"/th%c3%a9.html", "/th%C3%A9.html"),
    ("utf8-upper-escapes", "naïve.html", b"/na%C3%AFve.html", "/na%C3%AFve.html"),
    ("space", "a b.html", b"/a%20b.html", "/a%20b.html"),
    ("tilde-escaped", "~user/index.html", b"/%7euser/", "/~user/"),
    ("tilde-escaped-upper", "~other/index.html", b"/%7Eother/", "/~other/"),
    ("unreserved-escapes", "page2.html", b"/%70%61ge%32.html", "/page2.html"),
    ("amp-apostrophe", "a&b'c.html", b"/a&b'c.html", "/a&b'c.html"),
    ("dot-dot", "dot1.html", b"/x/../dot1.html", "/dot1.html"),
    ("dot", "dot2.html", b"/./dot2.html", "/dot2.html"),
    ("dot-dot-deep", "sub/dot3.html", b"/sub/a/b/../../dot3.html", "/sub/dot3.html"),
    ("double-slash", "slash1.html", b"//slash1.html", "/slash1.html"),
    ("inner-slashes", "sub/slash2.html", b"/sub///slash2.html", "/sub/slash2.html"),
    ("mixed", "sub/caf\u00e9 2.html", b"/sub/./x/..//caf%c3%a9%202.html", "/sub/caf%C3%A9%202.html"),
]


@pytest.mark.parametrize("name,file,target,canonical", CASES, ids=[c[0] for c in CASES])
def test_normalisation(make_server, name, file, target, canonical):
    srv = make_server()
    srv.write("htdocs/" + file, HTML)
    srv.start()
    r = srv.get(target)
    if r.status == 200:
        srv.wait_recorded(canonical)
    else:
        assert r.status in (400, 403, 404), r
        srv.assert_not_recorded(canonical)
        srv.get_ok(canonical)
        srv.wait_recorded(canonical)
    sentinel = srv.sentinel()
    assert srv.urls() == {canonical, sentinel}, srv.urls()
    # the canonical spelling is the same URL: no second row
    srv.get_ok(canonical)
    sentinel2 = srv.sentinel()
    assert srv.urls() == {canonical, sentinel, sentinel2}


def test_encoded_slash_stays_encoded(make_server):
    """%2f names another resource than "/": kept, as %2F.  Without
    AllowEncodedSlashes httpd answers 404 and nothing is stored."""
    srv = make_server(conf="""
RewriteEngine On
RewriteRule ^/enc/ /page.html [L]
""")
    srv.start()
    assert srv.get("/enc/a%2fb").status == 404
    srv.assert_not_recorded("/enc/a%2Fb", "/enc/a/b", "/enc/a%2fb")
    srv.graceful(conf="""
AllowEncodedSlashes NoDecode
RewriteEngine On
RewriteRule ^/enc/ /page.html [L]
""")
    srv.get_ok("/enc/a%2fb")
    srv.wait_recorded("/enc/a%2Fb")
    srv.get_ok("/enc/c/d")
    srv.wait_recorded("/enc/c/d")
    srv.assert_not_recorded("/enc/a/b", "/enc/a%2fb")


def test_encoded_slash_with_allow_on(make_server):
    srv = make_server(conf="""
AllowEncodedSlashes On
RewriteEngine On
RewriteRule ^/enc/ /page.html [L]
""")
    srv.start()
    srv.get_ok("/enc/x%2Fy")
    srv.wait_recorded("/enc/x%2Fy")
    srv.assert_not_recorded("/enc/x/y")


def test_spellings_of_one_url_share_a_row(make_server):
    srv = make_server()
    srv.write("htdocs/caf\u00e9.html", HTML)
    srv.start()
    for t in (b"/caf%c3%a9.html", b"/caf%C3%A9.html", "/caf\xc3\xa9.html".encode("latin-1"),
              b"//caf%c3%a9.html", b"/./caf%c3%a9.html", b"/%63af%c3%a9.html"):
        r = srv.get(t)
        assert r.status in (200, 400), (t, r)
    s = srv.sentinel()
    assert srv.urls() == {"/caf%C3%A9.html", s}
    rows = srv.query("SELECT count(*) FROM urls")
    assert rows == [(2,)]
