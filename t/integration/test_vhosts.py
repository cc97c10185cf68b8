# SPDX-License-Identifier: Apache-2.0
"""Virtual hosts: each site only sees its own URLs, the base URL never comes
from the request, SitemapBaseURL overrides it, and vhosts inherit the
server configuration."""
import os

import pytest

HTML = "<html><body>x</body></html>\n"


def vhost(srv, name, extra=""):
    return f"""
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName {name}
    DocumentRoot "{srv.root}/{name}"
    <Directory "{srv.root}/{name}">
        Require all granted
    </Directory>
{extra}
</VirtualHost>
"""


def two_vhosts(make_server, a_extra="", b_extra="", server_conf=""):
    srv = make_server()
    for name in ("a.test", "b.test"):
        srv.write(f"{name}/only-{name[0]}.html", HTML)
        srv.write(f"{name}/shared.html", HTML)
        srv.write(f"{name}/page.html", HTML)
        srv.write(f"{name}/t.txt", "plain\n")
        srv.write(f"{name}/drafts/x.html", HTML)
        srv.write(f"{name}/list.html", HTML)
    srv.conf_text = server_conf + vhost(srv, "a.test", a_extra) + vhost(srv, "b.test", b_extra)
    srv.start()
    srv.a = f"http://a.test:{srv.port}"
    srv.b = f"http://b.test:{srv.port}"
    return srv


def sentinel_a(srv):
    return srv.sentinel(host="a.test", base=srv.a, docroot=srv.path("a.test"))


def test_each_vhost_sees_only_its_urls(make_server):
    srv = two_vhosts(make_server)
    srv.get_ok("/only-a.html", host="a.test")
    srv.get_ok("/shared.html", host="a.test")
    srv.get_ok("/only-b.html", host="b.test")
    srv.get_ok("/shared.html", host="b.test")
    assert srv.get("/only-b.html", host="a.test").status == 404
    assert srv.get("/only-a.html", host="b.test").status == 404
    srv.wait_recorded("/only-a.html", "/shared.html", base=srv.a)
    srv.wait_recorded("/only-b.html", "/shared.html", base=srv.b)
    s = sentinel_a(srv)
    assert srv.urls(srv.a) == {"/only-a.html", "/shared.html", s}
    assert srv.urls(srv.b) == {"/only-b.html", "/shared.html"}
    assert set(srv.all_urls()) == {srv.a, srv.b}
    # forgetting in b leaves a alone
    os.unlink(srv.path("b.test/shared.html"))
    assert srv.get("/shared.html", host="b.test").status == 404
    srv.wait_absent("/shared.html", base=srv.b)
    s2 = sentinel_a(srv)
    assert srv.urls(srv.a) == {"/only-a.html", "/shared.html", s, s2}


@pytest.mark.parametrize("host", ["evil.example", "evil.example:1234", "127.0.0.1",
                                  "a.test.evil.example", "a.test:9999"])
def test_forged_host_goes_to_default_vhost_base(make_server, host):
    """A Host that matches no vhost lands in the default (first) vhost and
    is recorded under that vhost's base; the forged name is never a base.
    A known name with a forged port keeps the vhost's port."""
    srv = two_vhosts(make_server)
    srv.get_ok("/page.html", host=host)
    srv.wait_recorded("/page.html", base=srv.a)
    s = sentinel_a(srv)
    assert srv.all_urls() == {srv.a: {"/page.html", s}}


def test_forged_absolute_form_target(make_server):
    """The host in an absolute-form request target is not a base either."""
    srv = two_vhosts(make_server)
    srv.get_ok("http://evil.example/only-a.html", host="b.test")
    srv.get_ok(f"http://b.test:{srv.port}/only-b.html", host="evil.example")
    srv.wait_recorded("/only-a.html", base=srv.a)
    srv.wait_recorded("/only-b.html", base=srv.b)
    s = sentinel_a(srv)
    assert srv.all_urls() == {srv.a: {"/only-a.html", s}, srv.b: {"/only-b.html"}}


def test_forged_host_main_server(server):
    server.get_ok("/page.html", host="evil.example")
    server.get_ok("/index.html", host="localhost:1")
    server.wait_recorded("/page.html", "/index.html")
    assert set(server.all_urls()) == {server.base}


def test_base_url_override(make_server):
    srv = two_vhosts(make_server,
                     a_extra="SitemapBaseURL HTTPS://WWW.Example.COM:443/",
                     b_extra="SitemapBaseURL http://B.example:8080")
    srv.get_ok("/only-a.html", host="a.test")
    srv.get_ok("/only-b.html", host="b.test")
    srv.get_ok("/page.html", host="evil.example")
    srv.wait_recorded("/only-a.html", "/page.html", base="https://www.example.com")
    srv.wait_recorded("/only-b.html", base="http://b.example:8080")
    assert set(srv.all_urls()) == {"https://www.example.com", "http://b.example:8080"}


def test_base_url_override_main_server(make_server):
    srv = make_server(conf="SitemapBaseURL https://www.example.org:8443")
    srv.start()
    srv.get_ok("/page.html", host="evil.example")
    srv.wait_recorded("/page.html", base="https://www.example.org:8443")
    assert set(srv.all_urls()) == {"https://www.example.org:8443"}


def test_inheritance_from_server_config(make_server):
    """Directives of the server config apply to a vhost that does not set
    them; a vhost's own setting wins."""
    srv = two_vhosts(make_server, server_conf="""
SitemapExclude ^/drafts/
SitemapAllowQuery page
SitemapContentTypes text/html text/plain
""", b_extra="SitemapContentTypes text/html")
    # a inherits everything
    srv.get_ok("/drafts/x.html", host="a.test")
    srv.get_ok("/list.html?sort=1", host="a.test")
    srv.get_ok("/drafts/x.html", host="b.test")
    srv.get_ok("/t.txt", host="b.test")
    srv.get_ok("/list.html?sort=1", host="b.test")
    srv.assert_not_recorded("/drafts/x.html", "/list.html?sort=1", base=srv.a,
                            host="a.test", docroot=srv.path("a.test"))
    srv.get_ok("/list.html?page=2", host="a.test")
    srv.get_ok("/t.txt", host="a.test")
    srv.get_ok("/list.html?page=3", host="b.test")
    srv.wait_recorded("/list.html?page=2", "/t.txt", base=srv.a)
    srv.wait_recorded("/list.html?page=3", base=srv.b)
    assert srv.urls(srv.b) == {"/list.html?page=3"}


def test_sitemap_off_in_one_vhost(make_server):
    srv = two_vhosts(make_server, b_extra="Sitemap Off")
    srv.get_ok("/only-b.html", host="b.test")
    srv.get_ok("/only-a.html", host="a.test")
    srv.wait_recorded("/only-a.html", base=srv.a)
    srv.graceful_stop()
    assert set(srv.all_urls()) == {srv.a}


def test_sitemap_on_only_in_vhost(make_server):
    """Off in the server config, On in one vhost: only that one records."""
    srv = two_vhosts(make_server, server_conf="Sitemap Off\n", b_extra="Sitemap On")
    srv.get_ok("/only-a.html", host="a.test")
    srv.get_ok("/only-b.html", host="b.test")
    srv.wait_recorded("/only-b.html", base=srv.b)
    srv.graceful_stop()
    assert set(srv.all_urls()) == {srv.b}


def test_vhost_with_own_database(make_server):
    srv = two_vhosts(make_server, b_extra="SitemapDatabase db/b.db")
    srv.get_ok("/only-a.html", host="a.test")
    srv.get_ok("/only-b.html", host="b.test")
    srv.wait_recorded("/only-a.html", base=srv.a)
    srv.wait_recorded("/only-b.html", base=srv.b, db=srv.path("db/b.db"))
    srv.graceful_stop()
    assert set(srv.all_urls()) == {srv.a}
    assert set(srv.all_urls(db=srv.path("db/b.db"))) == {srv.b}


def test_sites_table_base_is_canonical(make_server):
    srv = two_vhosts(make_server)
    srv.get_ok("/only-a.html", host="A.TEST")
    srv.wait_recorded("/only-a.html", base=srv.a)
    bases = [r[0] for r in srv.query("SELECT base FROM sites")]
    assert srv.a in bases
    for b in bases:
        assert b == b.lower() and not b.endswith("/") and "evil" not in b
