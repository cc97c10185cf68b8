# SPDX-License-Identifier: Apache-2.0
"""A front controller (one script answering every URL of a site, as
WordPress, Drupal, Laravel and MediaWiki do) without PHP: a CGI behind
mod_rewrite in the vhost, behind mod_rewrite in .htaccess with the usual
RewriteCond !-f / !-d, and behind FallbackResource.  Each URL the client
asked for, at any depth, is a page of its own and must be listed; a static
file answering /page.html/anything (AcceptPathInfo On) is the same page
under a second name and must not be (issue 31, item 9: test_apps.py does
the same with the real applications)."""
import time

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


# ---------------------------------------------------------------------------
# a script answering one page for any path info, in either order

from pg import pg_cluster, pg_db  # noqa: E402,F401 (fixtures)

SAME = r"""#!/bin/sh
printf 'Content-Type: text/html; charset=utf-8\r\n\r\n'
printf '<!DOCTYPE html><html><head><title>One page</title></head>'
printf '<body>the same page for any path info</body></html>\n'
"""
COPIES = ["/same.cgi/anything", "/same.cgi/a/b.html"]


def wait_until(what, cond, timeout=30):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        time.sleep(0.1)


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
@pytest.mark.parametrize("order", ["script-first", "path-info-first"])
def test_script_path_info_is_one_page_in_either_order(make_server, request,
                                                      order, store):
    """/same.cgi answers the same document (no canonical) for any path
    info: one page, whichever was asked for first.  Script first, the
    writer keeps the path-info URLs out; path info first, they are stored
    until the script's own URL is, and then leave.  A script whose path
    info is a page of its own (the controller names its URL) stays."""
    db = request.getfixturevalue("pg_db") if store == "postgresql" else None
    srv = make_server(db=db.uri) if db else make_server()
    srv.conf_text = CONF.format(docroot=srv.docroot)
    srv.write("htdocs/same.cgi", SAME, mode=0o755)
    srv.write("htdocs/fb/index.cgi", CONTROLLER, mode=0o755)
    srv.start()

    def stored():
        return set(db.urls(srv.base)) if db else srv.urls()

    scripts = ["/same.cgi", "/fb/index.cgi"]
    others = COPIES + ["/fb/index.cgi/other"]
    first, then = (scripts, others) if order == "script-first" else (others, scripts)
    for p in first:
        srv.get_ok(p)
    wait_until(f"{first} stored", lambda: set(first) <= stored())
    for p in then:
        srv.get_ok(p)
    if order == "script-first":
        # the controller's own page is stored; the copies never are
        wait_until("/fb/index.cgi/other stored",
                   lambda: "/fb/index.cgi/other" in stored())
    else:
        # the script's own URL stored: its copies leave
        wait_until("/same.cgi stored, its copies gone",
                   lambda: "/same.cgi" in stored()
                   and not set(COPIES) & stored())
    # every process's queue written (a stop flushes them)
    srv.graceful_stop()
    srv.restart()
    have = stored()
    assert not set(COPIES) & have, sorted(have)
    assert {"/same.cgi", "/fb/index.cgi", "/fb/index.cgi/other"} <= have, sorted(have)
    pages, _ = fetch_all(srv)
    assert union_paths(pages, srv.base) == have
