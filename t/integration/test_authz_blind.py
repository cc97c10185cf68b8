# SPDX-License-Identifier: Apache-2.0
"""The anonymous re-check (a lookup subrequest for a stand-in visitor, 12,000
instructions a new URL) is skipped when nothing in the configuration looks at
who asks (mod_sitemap_authz_conf.c, issue 35); one directive that can, even
in a section the page is not in, or a module not known to be blind, keeps it
on for every page.  test_authz*.py show that the pages such directives
restrict stay out of the sitemap."""
import re

import pytest

HTML = "<html><body>x</body></html>\n"
LOOKUP = r"anonymous lookup of /page\.html"

# name: (modules, what goes into <Directory htdocs/elsewhere>, what the
# start-up line names)
DEPENDENT = {
    "require-ip": (("authz_host",), "Require ip 10.0.0.0/8", "Require ip"),
    "require-not-env": ((), "<RequireAll>\nRequire all granted\nRequire not env x\n</RequireAll>",
                        "Require not env"),
    "require-expr": ((), "Require expr \"%{REMOTE_ADDR} == '10.0.0.1'\"",
                     "Require expr"),
    "rewritecond": ((), "RewriteCond %{HTTP_USER_AGENT} ^x\nRewriteRule ^ - [F]",
                    "RewriteCond"),
    "rewrite-ns": ((), "RewriteRule ^x$ /page.html [L,NS]", "RewriteRule"),
    "rewrite-var": ((), "RewriteRule ^x$ /p/%{REMOTE_ADDR}.html", "RewriteRule"),
    "if": ((), "<If \"-R '10.0.0.0/8'\">\nRequire all denied\n</If>", "<If"),
    "deny": (("access_compat",), "Deny from 10.0.0.0/8", "Deny"),
    "allowoverride": ((), "AllowOverride FileInfo", "AllowOverride"),
    "multiviews": ((), "Options +MultiViews", "Options"),
    "requestheader": ((), "RequestHeader set X-A b", "RequestHeader"),
    "expression": ((), "SetEnvIf Request_URI ^/x y=1\n"
                   "Header set X-W \"%{REMOTE_ADDR}e\"\n"
                   "ErrorDocument 404 \"%{REMOTE_ADDR}\"", "ErrorDocument"),
    "module": (("dumpio",), "", "module mod_dumpio.c"),
}


def test_blind_configuration_skips_the_recheck(make_server):
    """The tests' own configuration (SetEnvIf, mod_headers, CGI, Require all
    granted and denied, a LogFormat with %{...}): no lookup for a new page."""
    s = make_server(loglevel="warn sitemap:trace2")
    s.write("htdocs/page.html", HTML)
    s.conf_text = (f'<Directory "{s.docroot}/elsewhere">\n'
                   "BrowserMatch ^x nokeepalive\nRequire valid-user\n"
                   # Debian's mime.conf: a type map is read by its
                   # handler, which no lookup runs
                   "AddHandler type-map var\n"
                   "Header set X-A \"%{REQUEST_URI}e\"\nOptions -Indexes\n"
                   "RewriteRule ^y$ /page.html [L]\n</Directory>\n")
    s.start()
    s.wait_log(r"anonymous re-check: not needed", module="sitemap")
    s.get_ok("/page.html")
    # recorded: the lookup, made before the change is handed over, would
    # be in the log by now
    s.wait_recorded("/page.html")
    assert not [ln for ln in s.log_text().splitlines()
                if "anonymous lookup of" in ln]


@pytest.mark.parametrize("name", sorted(DEPENDENT))
def test_a_directive_on_the_client_keeps_the_recheck(make_server, name):
    modules, directives, named = DEPENDENT[name]
    s = make_server(loglevel="warn sitemap:trace2", modules=modules)
    s.write("htdocs/page.html", HTML)
    s.conf_text = (f'<Directory "{s.docroot}/elsewhere">\n{directives}\n'
                   "</Directory>\n")
    s.start()
    line = s.wait_log(r"anonymous re-check: on for every new page",
                      module="sitemap")[0]
    assert f"({named}".lower() in line.lower(), line
    s.get_ok("/page.html")
    s.wait_log(LOOKUP, module="sitemap")
    s.wait_recorded("/page.html")


def test_a_provider_alias_keeps_the_recheck(make_server):
    """<AuthzProviderAlias ip Valid-User ...>: `Require Valid-User` is then
    an address check (httpd looks providers up by case), so the alias
    itself keeps the re-check on (a review found it recorded from
    127.0.0.1 a page refused to everyone else)."""
    s = make_server(loglevel="warn sitemap:trace2",
                    modules=("authz_host", "authz_user"))
    s.write("htdocs/g/page.html", HTML)
    s.conf_text = ("<AuthzProviderAlias ip Valid-User 127.0.0.1>\n"
                   "</AuthzProviderAlias>\n"
                   f'<Directory "{s.docroot}/g">\nRequire Valid-User\n'
                   "</Directory>\n")
    s.start()
    line = s.wait_log(r"anonymous re-check: on for every new page",
                      module="sitemap")[0]
    assert "(<AuthzProviderAlias" in line, line
    s.get_ok("/g/page.html")
    s.wait_log(r"anonymous lookup of /g/page\.html", module="sitemap")
    s.assert_not_recorded("/g/page.html")


def test_a_location_keeps_the_recheck_for_its_uris_only(make_server):
    """A rule on the client inside <Location> (Debian's status.conf puts
    `Require local` in <Location /server-status>) applies only to URIs under
    its path, for the visitor and the stand-in alike when nothing else looks
    at the client: the lookup runs for those, and a rewrite [PT] into the
    section counts, not for the rest."""
    s = make_server(loglevel="warn sitemap:trace2", modules=("authz_host",))
    for p in ("page.html", "private/page.html", "q/page.html",
              "wild/page.html"):
        s.write(f"htdocs/{p}", HTML)
    s.conf_text = ("<Location /private>\nRequire local\n</Location>\n"
                   # a wildcard path (fnmatch): guards what precedes it
                   "<Location /wild/*>\nRequire local\n</Location>\n"
                   '<Location "/q/">\n<RequireAny>\nRequire ip 10.0.0.0/8\n'
                   "Require local\n</RequireAny>\n</Location>\n"
                   "RewriteEngine On\n"
                   "RewriteRule ^/alias/(.*) /private/$1 [PT]\n")
    s.start()
    s.wait_log(r"anonymous re-check: not needed.*<Location> sections",
               module="sitemap")
    for p in ("/private/page.html", "/alias/page.html", "//q/page.html",
              "/wild/page.html"):
        s.get_ok(p)
    s.wait_log(r"anonymous lookup of /private/page\.html", module="sitemap")
    s.wait_log(r"anonymous lookup of /alias/page\.html", module="sitemap")
    s.wait_log(r"anonymous lookup of //q/page\.html", module="sitemap")
    s.wait_log(r"anonymous lookup of /wild/page\.html", module="sitemap")
    s.get_ok("/page.html")
    s.wait_recorded("/page.html")
    s.assert_not_recorded("/private/page.html", "/alias/page.html",
                          "/q/page.html", "/wild/page.html")
    assert not [ln for ln in s.log_text().splitlines()
                if re.search(LOOKUP + ":", ln)]
