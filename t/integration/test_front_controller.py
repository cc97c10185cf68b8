# SPDX-License-Identifier: Apache-2.0
"""A front controller (one script answering every URL of a site, as
WordPress, Drupal, Laravel and MediaWiki do) without PHP: a CGI behind
mod_rewrite in the vhost, behind mod_rewrite in .htaccess with the usual
RewriteCond !-f / !-d, and behind FallbackResource.  Each URL the client
asked for, at any depth, is a page of its own and must be listed; a static
file answering /page.html/anything (AcceptPathInfo On) is the same page
under a second name and must not be (issue 31, item 9: test_apps.py does
the same with the real applications)."""
import pytest

from sitemap_check import fetch_all, union_paths

# The controller: a page for whatever URL it was asked, naming it in its
# title and linking one level down, as a CMS's router would.
CONTROLLER = r"""#!/bin/sh
printf 'Content-Type: text/html; charset=utf-8\r\n\r\n'
printf '<!DOCTYPE html><html><head><title>Page %s</title></head>' "$REQUEST_URI"
printf '<body><h1>%s</h1><a href="%sdeeper/">deeper</a></body></html>\n' \
    "$REQUEST_URI" "$REQUEST_URI"
"""

CONF = """AddHandler cgi-script .cgi
# the vhost's own rules (the server config: no per-directory prefix)
RewriteEngine On
RewriteCond %{{DOCUMENT_ROOT}}%{{REQUEST_URI}} !-f
RewriteCond %{{DOCUMENT_ROOT}}%{{REQUEST_URI}} !-d
RewriteRule ^/vh/ /vh.cgi [PT,L]
<Directory "{docroot}">
    Options +ExecCGI +FollowSymLinks
    AcceptPathInfo On
</Directory>
<Directory "{docroot}/ht">
    AllowOverride All
</Directory>
<Directory "{docroot}/fb">
    FallbackResource /fb/index.cgi
</Directory>
"""

HTACCESS = r"""DirectoryIndex index.cgi
RewriteEngine On
RewriteBase /ht/
RewriteRule ^index\.cgi$ - [L]
RewriteCond %{REQUEST_FILENAME} !-f
RewriteCond %{REQUEST_FILENAME} !-d
RewriteRule . /ht/index.cgi [L]
"""

DEPTHS = ["a/", "a/b/c", "a/b/c/", "x/y-z.html", "one"]


def front_server(make_server):
    srv = make_server(loglevel="warn sitemap:trace1")
    srv.conf_text = CONF.format(docroot=srv.docroot)
    srv.write("htdocs/vh.cgi", CONTROLLER, mode=0o755)
    srv.write("htdocs/ht/index.cgi", CONTROLLER, mode=0o755)
    srv.write("htdocs/ht/.htaccess", HTACCESS)
    srv.write("htdocs/fb/index.cgi", CONTROLLER, mode=0o755)
    srv.start()
    return srv


def reasons(srv, paths):
    out = {}
    for ln in srv.log_lines("sitemap"):
        for p in paths:
            if ln.endswith(" " + p) or ln.endswith(srv.base + p):
                if "not recorded" in ln:
                    out.setdefault(p, []).append(ln.split("] ")[-1])
    return out


@pytest.mark.parametrize("prefix", ["/vh/", "/ht/", "/fb/"],
                         ids=["vhost-rewrite", "htaccess-rewrite", "fallbackresource"])
def test_front_controller_urls_are_listed(make_server, prefix):
    srv = front_server(make_server)
    paths = [prefix + d for d in DEPTHS] + [prefix]
    if prefix == "/vh/":
        paths.remove("/vh/")    # the rule needs something after /vh/
    for p in paths:
        r = srv.get(p)
        assert r.status == 200, f"GET {p}: {r.status} {r.body[:200]!r}"
        assert b"Page " + p.encode() in r.body, (p, r.body[:200])
    # every child's queue in the store (whatever the MPM)
    srv.graceful_stop()
    srv.restart()
    have = srv.urls()
    missing = sorted(set(paths) - have)
    assert not missing, (f"front controller URLs not recorded: {missing}\n"
                         f"module: {reasons(srv, missing)}")
    pages, _ = fetch_all(srv)
    assert union_paths(pages, srv.base) == set(paths)


def test_static_file_with_path_info_is_not_a_second_page(make_server):
    srv = front_server(make_server)
    r = srv.get("/page.html/anything")
    assert r.status == 200 and b"page" in r.body, r       # AcceptPathInfo On
    assert srv.get("/page.html/a/b.html").status == 200
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    srv.assert_not_recorded("/page.html/anything", "/page.html/a/b.html", stop=True)
    pages, _ = fetch_all(srv)
    assert union_paths(pages, srv.base) == {"/page.html"} | {
        p for p in srv.urls() if p.startswith("/sentinel-")}
