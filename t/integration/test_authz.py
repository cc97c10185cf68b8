"""Only what an anonymous visitor from anywhere may fetch is recorded
(issue 21, item 4): a section restricted by Require ip, local, host or an
expression on the client is served to 127.0.0.1 (where the tests run) and
still kept out of the sitemap; `Require all granted` is recorded."""
import pytest

HTML = "<html><body>x</body></html>\n"

SECTIONS = {
    "ip": "Require ip 127.0.0.1",
    "local": "Require local",
    "host": "Require host localhost",
    "expr": "Require expr \"%{REMOTE_ADDR} == '127.0.0.1'\"",
    "anyof": "<RequireAny>\n Require ip 10.0.0.0/8\n Require local\n</RequireAny>",
    "open": "Require all granted",
    "allof": "<RequireAll>\n Require all granted\n Require not ip 10.0.0.0/8\n</RequireAll>",
}


def conf(srv, sections):
    out = []
    for name in sections:
        out.append(f'<Directory "{srv.docroot}/{name}">\n{SECTIONS[name]}\n</Directory>')
    return "\n".join(out) + "\n"


@pytest.fixture
def srv(make_server):
    s = make_server(modules=("authz_host",))
    for name in SECTIONS:
        s.write(f"htdocs/{name}/page.html", HTML)
    s.conf_text = conf(s, SECTIONS)
    s.start()
    return s


def test_restricted_sections_are_not_recorded(srv):
    for name in SECTIONS:
        r = srv.get(f"/{name}/page.html")
        assert r.status == 200, f"{name}: {r.status} (the test needs 127.0.0.1 let in)"
    srv.wait_recorded("/open/page.html", "/allof/page.html")
    srv.assert_not_recorded("/ip/page.html", "/local/page.html", "/host/page.html",
                            "/expr/page.html", "/anyof/page.html")
    # the stand-in's refusals never reach the error log
    assert not [ln for ln in srv.log_text().splitlines() if "192.0.2.1" in ln]


def test_restriction_added_later_forgets(make_server):
    s = make_server(modules=("authz_host",))
    s.write("htdocs/later/page.html", HTML)
    s.start()
    s.get_ok("/later/page.html")
    s.wait_recorded("/later/page.html")
    s.graceful(conf=f'<Directory "{s.docroot}/later">\nRequire local\n</Directory>\n')
    s.get_ok("/later/page.html")
    s.wait_absent("/later/page.html")
