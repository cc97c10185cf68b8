# SPDX-License-Identifier: Apache-2.0
"""Pages of applications: no validators of their own (or a Last-Modified
that is only the time of the response), per-request noise in the body
(nonces, timings, request ids), session cookies, Link headers.

lastmod moves when the content changes and only then (the content's
fingerprint stands in for the missing validator); a change of such a page
(a noindex, a canonical, a title) is seen at its next GET; a request with
a session never adds or changes a URL."""
import time

import pytest

# A CGI like a PHP application: the page's content comes from a file the
# test edits; every response carries noise that is not content (a request
# id in an inline script, a timing comment, a nonce in a hidden input and a
# nonce attribute); no ETag; Last-Modified "now" when the file lm-now
# exists; extra headers from the file headers.
APP = r"""
d="{root}/app"
printf 'Content-Type: text/html; charset=UTF-8\r\n'
if [ -e "$d/lm-now" ]; then printf 'Last-Modified: %s\r\n' "$(LC_ALL=C date -u '+%a, %d %b %Y %H:%M:%S GMT')"; fi
if [ -s "$d/headers" ]; then cat "$d/headers"; fi
printf '\r\n'
n=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
printf '<!DOCTYPE html><html><head><title>%s</title>' "$(cat "$d/title")"
if [ -s "$d/head" ]; then cat "$d/head"; fi
printf '<script nonce="%s">var rid = "%s";</script></head>\n' "$n" "$n"
printf '<body><!-- generated in 0.%s s -->\n' "$n"
cat "$d/body"
printf '<form><input type="hidden" name="_wpnonce" value="%s"><input name="s"></form>\n' "$n"
printf '</body></html>\n'
"""


@pytest.fixture
def app(make_server):
    s = make_server()
    s.write("app/title", "Hello")
    s.write("app/body", "<p>first version</p>\n")
    s.write("app/head", "")
    s.write("app/headers", "")
    s.cgi("page.cgi", APP.format(root=s.root))
    return s


def lastmod(srv, url):
    row = srv.row(url)
    assert row is not None, f"{url} not stored\n{srv.log_tail(10)}"
    return row["lastmod"]


def wait_row(srv, url, pred, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        row = srv.row(url)
        if row is not None and pred(row):
            return row
        if time.monotonic() > deadline:
            raise AssertionError(f"{url}: never satisfied: {row}\n{srv.log_tail(15)}")
        time.sleep(0.1)


URL = "/cgi-bin/page.cgi"


@pytest.mark.parametrize("lm_now", [False, True], ids=["no-validators", "last-modified-now"])
def test_lastmod_moves_with_content_only(app, lm_now):
    if lm_now:
        app.write("app/lm-now", "")
    app.start()
    r = app.get_ok(URL)
    assert r.header("ETag") is None
    assert (r.header("Last-Modified") is not None) == lm_now
    app.wait_recorded(URL)
    first = lastmod(app, URL)
    # the same content, served again and again over seconds: lastmod stays
    for _ in range(4):
        time.sleep(0.6)
        app.get_ok(URL)
    app.sentinel()
    app.sentinel()
    assert lastmod(app, URL) == first
    # an edit moves it at the next GET
    time.sleep(1.1)
    app.write("app/body", "<p>second version</p>\n")
    app.get_ok(URL)
    moved = wait_row(app, URL, lambda row: row["lastmod"] > first)["lastmod"]
    # and serving the new content again does not
    time.sleep(1.1)
    app.get_ok(URL)
    app.sentinel()
    assert lastmod(app, URL) == moved


def settle(srv, url):
    """The page recorded, then served again until it is a repeat for a
    response with validators (what it was before the change under test)."""
    srv.get_ok(url)
    srv.wait_recorded(url)
    for _ in range(3):
        srv.sentinel()
        srv.get_ok(url)
    srv.sentinel()


def test_noindex_seen_at_next_get(app):
    app.start()
    settle(app, URL)
    app.write("app/head", '<meta name="robots" content="noindex,follow">')
    app.get_ok(URL)
    app.wait_absent(URL)
    app.write("app/head", "")
    app.get_ok(URL)
    app.wait_recorded(URL)


def test_title_seen_at_next_get(app):
    app.start()
    settle(app, URL)
    wait_row(app, URL, lambda row: row["title"] == "Hello")
    app.write("app/title", "Hello again")
    app.get_ok(URL)
    wait_row(app, URL, lambda row: row["title"] == "Hello again")


def test_canonical_seen_at_next_get(app):
    app.start()
    settle(app, URL)
    app.write("app/head", '<link rel="canonical" href="/elsewhere.html">')
    app.get_ok(URL)
    app.wait_absent(URL)


def test_alternates_seen_at_next_get(app):
    """New hreflang alternates of a page without validators are stored at
    its next GET, as a new title is (issue 31, item 5)."""
    app.start()
    settle(app, URL)
    assert not app.row(URL)["alternates"]
    app.write("app/head",
              f'<link rel="alternate" hreflang="fr" href="{app.base}/fr/">'
              f'<link rel="alternate" hreflang="de" href="{app.base}/de/">')
    app.get_ok(URL)
    wait_row(app, URL, lambda row: row["alternates"] == (
        f"fr {app.base}/fr/\nde {app.base}/de/"))


@pytest.mark.parametrize("link,listed", [
    ('<{base}/other.html>; rel="canonical"', False),
    ('</other.html>; rel=canonical', False),
    ('</style.css>; rel=preload; as=style, </other.html>; rel="canonical"', False),
    ('<{base}/cgi-bin/page.cgi>; rel="canonical"', True),
    ('</other.html>; rel="next"', True),
    ('</a.html>; rel="canonical", </b.html>; rel="canonical"', True),
], ids=["absolute", "relative", "second-link", "self", "not-canonical", "conflicting"])
def test_link_header_canonical(app, link, listed):
    app.write("app/headers", "Link: " + link.format(base=app.base) + "\r\n")
    app.start()
    r = app.get_ok(URL)
    assert r.header("Link"), r
    if listed:
        app.wait_recorded(URL)
    else:
        app.assert_not_recorded(URL)
        # the same page without the header is listed: the header was the reason
        app.write("app/headers", "")
        app.get_ok(URL)
        app.wait_recorded(URL)


@pytest.mark.parametrize("cookie", [
    "wordpress_logged_in_0123abcd=editor%7C1700000000%7Cx",
    "wp-postpass_0123abcd=%24P%24B",
    "SSESS0123abcd=xyz", "PHPSESSID=abc", "my_wiki_session=abc",
    "my_wikiUserID=2", "sessionid=abc", "_app_session=abc",
    "joomla_user_state=logged_in", "JSESSIONID=abc",
])
def test_session_never_adds_or_changes(app, cookie):
    app.start()
    h = {"Cookie": "_ga=GA1.1.1; " + cookie + "; consent=yes"}
    app.get_ok(URL, headers=h)
    app.assert_not_recorded(URL)
    app.get_ok(URL)                                     # anonymous
    wait_row(app, URL, lambda row: row["title"] == "Hello")
    first = lastmod(app, URL)
    # an editor sees a changed page: nothing about it moves
    time.sleep(1.1)
    app.write("app/title", "Draft title")
    app.write("app/body", "<p>editor's preview</p>\n")
    app.get_ok(URL, headers=h)
    app.sentinel()
    row = app.row(URL)
    assert row["title"] == "Hello" and row["lastmod"] == first, row


def test_session_may_still_remove(app):
    app.write("htdocs/gone.html", "<html><body>x</body></html>\n")
    app.start()
    app.get_ok("/gone.html")
    app.wait_recorded("/gone.html")
    import os
    os.unlink(app.path("htdocs/gone.html"))
    r = app.get("/gone.html", headers={"Cookie": "PHPSESSID=abc"})
    assert r.status == 404
    app.wait_absent("/gone.html")


def test_analytics_cookies_are_anonymous(app):
    app.start()
    app.get_ok(URL, headers={"Cookie": "_ga=GA1.1.1; _gid=x; cookieconsent_status=dismiss"})
    app.wait_recorded(URL)


def test_session_cookie_directive(app):
    app.conf_text = "SitemapSessionCookie mysite_auth *_tok\n"
    app.start()
    # the built-in list is replaced: PHPSESSID is now no session
    app.get_ok(URL, headers={"Cookie": "mysite_auth=1"})
    app.get_ok("/cgi-bin/page.cgi?x", headers={"Cookie": "a_tok=1"})
    app.assert_not_recorded(URL)
    app.get_ok(URL, headers={"Cookie": "PHPSESSID=abc"})
    app.wait_recorded(URL)


def test_session_cookie_none_and_default(app):
    app.conf_text = "SitemapSessionCookie None\n"
    app.start()
    app.get_ok(URL, headers={"Cookie": "PHPSESSID=abc"})
    app.wait_recorded(URL)


@pytest.mark.parametrize("value,needle", [
    ("None PHPSESSID", "None must be the only value"),
    ("bad;name", "'bad;name' is not allowed"),
    ("*", "'*' is not allowed"),
    ("*mid*", "'*mid*' is not allowed"),
])
def test_session_cookie_refused(make_server, value, needle):
    s = make_server()
    s.config_fails("SitemapSessionCookie", needle,
                   conf=f"SitemapSessionCookie {value}\n")


# ---------------------------------------------------------------------------
# the same on a PostgreSQL store (the writer's code differs per backend)

from pg import pg_cluster, pg_db  # noqa: E402,F401 (fixtures)

SAME = r"""
printf 'Content-Type: text/html\r\n\r\n'
printf '<html><head><title>same</title></head><body>one page for any path</body></html>\n'
"""


def test_postgresql_lastmod_and_path_info(make_server, pg_db):
    s = make_server(db=pg_db.uri)
    s.write("app/title", "Hello")
    s.write("app/body", "<p>first version</p>\n")
    s.write("app/head", "")
    s.write("app/headers", "")
    s.cgi("page.cgi", APP.format(root=s.root))
    s.cgi("same.cgi", SAME)
    s.start()

    def row(url):
        rows = pg_db.sql("SELECT u.lastmod, u.etag FROM sitemap_urls u JOIN "
                         "sitemap_sites t ON t.id = u.site_id WHERE t.base = "
                         f"'{s.base}' AND u.url = '{url}'")
        return rows[0] if rows else None

    s.get_ok(URL)
    pg_db.wait_urls(s.base, [URL])
    first = row(URL)
    assert first[1].startswith("fp:"), first
    time.sleep(1.1)
    s.get_ok(URL)
    s.get_ok("/cgi-bin/same.cgi")
    pg_db.wait_urls(s.base, ["/cgi-bin/same.cgi"])
    assert row(URL) == first
    s.write("app/body", "<p>second version</p>\n")
    s.get_ok(URL)
    deadline = time.monotonic() + 10
    while row(URL) == first and time.monotonic() < deadline:
        time.sleep(0.2)
    assert int(row(URL)[0]) > int(first[0])
    # a script's path info with the script's own content: not a page
    s.get_ok("/cgi-bin/same.cgi/x")
    s.write("htdocs/sentinel.html", "<html><body>s</body></html>\n")
    s.get_ok("/sentinel.html")
    pg_db.wait_urls(s.base, ["/sentinel.html"])
    assert "/cgi-bin/same.cgi/x" not in pg_db.urls(s.base)
