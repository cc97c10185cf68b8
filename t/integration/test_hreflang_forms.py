# SPDX-License-Identifier: Apache-2.0
"""hreflang alternates and canonicals as real pages write them (issue 32
item 10): an href with a literal space or other non-ASCII bytes (browsers
and search engines read "a b" as a%20b), an internationalised host
(bücher.example is xn--bcher-kva.example); and how the HTML site map shows
them to people: paths with their UTF-8 decoded, a page never "also in"
itself, each alternate link with its hreflang and lang.

The stored hrefs are checked against what Node's URL (the WHATWG URL
standard, as browsers) makes of the href as written; the sitemap is
checked as test_conformance's are (sitemap_check: structure, xmllint with
the official schemas when present; the npm `sitemap` package strictly)."""
import json
import os
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from conftest import TOP_SRCDIR
from sitemap_check import fetch
from test_head import SiteMapLinks, alternates_in, html

CONFORMANCE = os.path.join(TOP_SRCDIR, "t", "conformance")
IDN = "https://b\u00fccher.example"
IDN_ESCAPED = "https://B%C3%9CCHER.example"
IDN_ASCII = "https://xn--bcher-kva.example"


def whatwg(hrefs):
    """{href: Node's new URL(href).href}: the WHATWG URL standard."""
    if not shutil.which("node"):
        pytest.fail("node is missing: run tools/deps")
    r = subprocess.run(
        ["node", "-e", "const o = {}; for (const h of JSON.parse("
         "process.argv[1])) o[h] = new URL(h).href; "
         "process.stdout.write(JSON.stringify(o));", json.dumps(hrefs)],
        capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def npm_links(srv):
    """The hreflang links the npm `sitemap` package reads strictly from
    the server (t/conformance/clients.mjs, from its robots.txt)."""
    nm = os.path.join(CONFORMANCE, "node_modules")
    if not os.path.isdir(nm):
        pytest.fail("t/conformance/node_modules is missing: run tools/deps")
    r = subprocess.run(["node", os.path.join(CONFORMANCE, "clients.mjs"),
                        srv.base + "/robots.txt", "identity"],
                       capture_output=True, text=True, timeout=60,
                       cwd=CONFORMANCE)
    assert r.returncode == 0, r.stderr[-3000:]
    return sorted(json.loads(r.stdout)["identity"]["links"])


def cluster(base):
    """hreflang -> href as the pages write them."""
    return {
        "en": f"{base}/en.html",
        "de": f"{base}/de seite.html",             # a literal space
        "fr": f"{IDN}/fr/caf\u00e9 cr\u00e8me.html?x=1",
        "it": f"{IDN_ESCAPED}/it",                  # escaped, uppercase
        "ja": "https://\u4f8b\u3048.\u30c6\u30b9\u30c8/ja",
        "x-default": f"{base}/",
    }


def test_blank_and_idn_hrefs_are_stored_as_browsers_read_them(make_server):
    """Alternates with a space, raw UTF-8 in the path, a Unicode or
    %-encoded host: stored (and listed in the sitemap, valid, read by the
    npm client) exactly as WHATWG URL parsing gives them; a canonical
    naming an IDN host is another site (the page is left out), one with a
    space naming the page itself keeps it."""
    srv = make_server(conf="SitemapAllowQuery x\n")
    base = srv.base
    hrefs = cluster(base)
    links = "".join(f'<link rel="alternate" hreflang="{h}" href="{u}">\n'
                    for h, u in hrefs.items())
    for name in ("en.html", "de seite.html"):
        srv.write(f"htdocs/{name}", html("<title>t</title>\n" + links),
                  mtime=1_700_000_000)
    srv.write("htdocs/idn-canonical.html", html(
        f'<link rel="canonical" href="{IDN}/idn-canonical.html">'))
    srv.write("htdocs/self canonical.html", html(
        f'<link rel="canonical" href="{base}/self canonical.html">'))
    srv.start()
    pages = ["/en.html", "/de%20seite.html", "/idn-canonical.html",
             "/self%20canonical.html"]
    for p in pages:
        srv.get_ok(p)
    srv.wait_recorded("/en.html", "/de%20seite.html", "/self%20canonical.html")
    srv.sentinel()

    want = whatwg(list(hrefs.values()))
    expected = [(h, want[u]) for h, u in hrefs.items()]
    # what WHATWG makes of them, spelled out: the stored form
    assert [u for _, u in expected] == [
        f"{base}/en.html", f"{base}/de%20seite.html",
        f"{IDN_ASCII}/fr/caf%C3%A9%20cr%C3%A8me.html?x=1",
        f"{IDN_ASCII}/it", "https://xn--r8jz45g.xn--zckzah/ja", f"{base}/"]
    r = fetch(srv)          # structure, and xmllint with the schemas
    for loc in (base + "/en.html", base + "/de%20seite.html"):
        assert alternates_in(r.doc, loc) == expected, loc
    assert srv.row("/en.html")["alternates"] == "\n".join(
        f"{h} {u}" for h, u in expected)
    locs = r.doc.by_loc()
    assert base + "/idn-canonical.html" not in locs
    assert base + "/self%20canonical.html" in locs
    assert npm_links(srv) == sorted(
        f"{base}{p} {h} {u}" for p in ("/en.html", "/de%20seite.html")
        for h, u in expected)


class Headings(HTMLParser):
    """The HTML site map's section headings and directory names."""

    def __init__(self):
        super().__init__()
        self.h2, self.dirs, self.now = [], [], None

    def handle_starttag(self, tag, attrs):
        if tag == "h2" or (tag == "span" and ("class", "dir") in attrs):
            self.now = [tag, ""]

    def handle_data(self, data):
        if self.now:
            self.now[1] += data

    def handle_endtag(self, tag):
        if self.now and tag == self.now[0]:
            (self.h2 if tag == "h2" else self.dirs).append(self.now[1])
            self.now = None


def test_html_site_map_shows_paths_decoded_and_others_only(make_server):
    """Headings and directories show /café/, not /caf%C3%A9/ (an escape of
    no valid UTF-8, %E9, and one of a bidi override stay); a page lists its
    other languages but never itself, each link with hreflang and lang
    (x-default: hreflang only); a page whose only alternate is itself
    shows none."""
    srv = make_server(conf="SitemapHTMLPath /site-map.html\n")
    base = srv.base
    fr, en = "/caf\u00e9/menu du jour.html", "/cafe/menu.html"
    fr_url, en_url = "/caf%C3%A9/menu%20du%20jour.html", "/cafe/menu.html"
    links = (f'<link rel=alternate hreflang=fr href="{base}{fr}">'
             f'<link rel=alternate hreflang=en href="{base}{en}">'
             f'<link rel=alternate hreflang=x-default href="{base}/">')
    srv.write("htdocs" + fr, html(links))
    srv.write("htdocs" + en, html(links))
    srv.write("htdocs/only/self.html", html(
        f'<link rel=alternate hreflang=de href="{base}/only/self.html">'))
    # a directory whose name is no UTF-8 (Latin-1 \xe9) but for its end,
    # and one holding a right-to-left override
    srv.write("htdocs/" + os.fsdecode(b"caf\xc3\xa9/\xe9t\xc3\xa9/x.html"),
              html(""))
    srv.write("htdocs/r\u202el/a.html", html(""))
    srv.start()
    paths = [fr_url, en_url, "/only/self.html", "/caf%C3%A9/%E9t%C3%A9/x.html",
             "/r%E2%80%AEl/a.html"]
    for p in paths:
        srv.get_ok(p)
    srv.wait_recorded(*paths)
    srv.sentinel()
    # the XML still lists each page among its own alternates
    r = fetch(srv)
    assert [u for _, u in alternates_in(r.doc, base + en_url)] == [
        base + fr_url, base + en_url, base + "/"]

    page = srv.get_ok("/site-map.html").body.decode()
    heads = Headings()
    heads.feed(page)
    assert "/caf\u00e9/" in heads.h2 and "/caf%C3%A9/" not in heads.h2, \
        heads.h2
    assert heads.dirs == ["%E9t\u00e9/"], heads.dirs
    assert "/r%E2%80%AEl/" in heads.h2, heads.h2
    alts = SiteMapLinks()
    alts.feed(page)
    assert alts.entries[base + fr_url] == [
        (base + en_url, "en", "en", "en"),
        (base + "/", "x-default", None, "default")]
    assert alts.entries[base + en_url] == [
        (base + fr_url, "fr", "fr", "fr"),
        (base + "/", "x-default", None, "default")]
    assert alts.entries[base + "/only/self.html"] == []
    assert page.count('<small class="alternates">') == 2
