# SPDX-License-Identifier: Apache-2.0
"""Conformance: what clients nobody here wrote read from a live server.

For each kind of site below, started from its robots.txt, with and without
`Accept-Encoding: gzip`, each client must yield EXACTLY the expected sitemap
URLs (robots.txt parsers) and page URLs (sitemap readers):

  robots.txt   urllib.robotparser (site_maps(); read() from the server for
               identity), Protego (sitemaps), robots-parser (npm,
               getSitemaps);
  sitemaps     the `sitemap` npm package in strict mode (ErrorLevel.THROW,
               validateSMIOptions; also its hreflang links, and the one
               thing its strict mode refused: xmlns:xhtml on a <url>,
               read with WARN then), sitemapper (npm, fetching from the
               server), Scrapy's SitemapSpider started from robots.txt (a
               real CrawlerProcess in a subprocess of /usr/bin/python3),
               and the project's own document checks (sitemap_check: also
               xmllint with the official schemas when ../shared/xsd exists).

The npm packages are those of t/conformance/package.json (package-lock.json
pins them), installed into t/conformance/node_modules by tools/deps."""
import gzip
import json
import os
import shutil
import subprocess
import urllib.robotparser

import protego
import pytest

import sitemap_check
from conftest import TOP_SRCDIR

CONFORMANCE = os.path.join(TOP_SRCDIR, "t", "conformance")
DEBIAN_MODS = "/etc/apache2/mods-available"
SYSTEM_PYTHON = "/usr/bin/python3"
HOLD = 64 * 1024


def deflate_conf(order):
    """Debian's deflate.conf (text/plain and application/xml compressed),
    its modules loaded before mod_sitemap or after it."""
    include = f"Include {DEBIAN_MODS}/deflate.conf\n"
    if order == "first":
        return ("filter", "deflate"), include
    return (), (f"Include {DEBIAN_MODS}/filter.load\n"
                f"Include {DEBIAN_MODS}/deflate.load\n" + include)


def big_robots():
    # more than 64 KiB, with a BOM: the lines go at its start
    return (b"\xef\xbb\xbfUser-agent: *\r\n"
            + b"".join(b"Disallow: /private-%06d/\r\n" % i for i in range(HOLD // 25)))


# name: (deflate order or None, robots.txt body or None for the fallback,
#        recorded paths, SitemapPageSize, a SitemapRobotsExtra on the site)
SITES = {
    "small-file": ("after", b"User-agent: *\r\nDisallow: /private/\r\n",
                   ["/", "/page.html", "/a.html"], None, False),
    "paged-fallback-extra": ("first", None,
                             ["/", "/page.html", "/a.html", "/b.html", "/c.html"], 2, True),
    "long-file-plain": (None, "big", ["/page.html", "/b.html"], None, False),
    # pages naming each other as hreflang alternates (see CLUSTER)
    "hreflang": (None, b"User-agent: *\r\nDisallow: /private/\r\n",
                 ["/", "/en.html", "/de.html", "/fr.html"], None, False),
}
# The "hreflang" site's pages: each names the three and x-default ("/").
CLUSTER = ("en", "de", "fr")


def cluster_page(base):
    links = "".join(f'<link rel="alternate" hreflang="{lang}" '
                    f'href="{base}/{lang}.html">' for lang in CLUSTER)
    return (f'<html><head>{links}<link rel="alternate" hreflang="x-default" '
            f'href="{base}/"></head><body>page</body></html>\n')


def cluster_links(base):
    """What a client must read of the cluster: "url lang href" each."""
    hrefs = [(lang, f"{base}/{lang}.html") for lang in CLUSTER]
    hrefs.append(("x-default", f"{base}/"))
    return sorted(f"{base}/{page}.html {lang} {href}"
                  for page in CLUSTER for lang, href in hrefs)


def extra_sitemap(base):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<url><loc>{base}/extra/one.html</loc></url></urlset>\n")


def node_modules():
    nm = os.path.join(CONFORMANCE, "node_modules")
    if not shutil.which("node") or not os.path.isdir(nm):
        pytest.fail("node or t/conformance/node_modules is missing: run tools/deps "
                    "(as root it installs nodejs and runs npm ci there)")
    return nm


def fetch(srv, path, encoding, deflate):
    """GET path with Accept-Encoding: encoding; the body decoded, after
    checking that it was compressed exactly when it should be."""
    r = srv.get(path, headers={"Accept-Encoding": encoding})
    assert r.status == 200, (path, r)
    ce = r.header("Content-Encoding")
    # sitemaps come gzip from their renditions (SitemapCache On, the
    # default) whether or not mod_deflate is there
    if encoding == "gzip" and (deflate or path.endswith(".xml")):
        assert ce == "gzip", (path, r)
        return gzip.decompress(r.body)
    assert ce is None, (path, r)
    return r.body


def walk(srv, url, encoding, deflate, seen_docs):
    """The page URLs under one sitemap URL of this server, every document
    checked (structure, schemas) on the way."""
    assert url.startswith(srv.base + "/"), url
    body = fetch(srv, url[len(srv.base):], encoding, deflate)
    doc = sitemap_check.check_document(body, srv.base)
    seen_docs.append((url, doc.kind))
    if doc.kind == "urlset":
        return doc.locs
    out = []
    for loc in doc.locs:
        out += walk(srv, loc, encoding, deflate, seen_docs)
    return out


@pytest.mark.parametrize("site", list(SITES))
def test_clients_read_exactly_the_sitemaps(make_server, site):
    order, robots, paths, page_size, extra = SITES[site]
    node_modules()
    modules, conf = deflate_conf(order) if order else ((), "")
    srv = make_server(modules=modules)
    base = srv.base
    want_robots = [base + "/sitemap.xml"]
    want_pages = [base + p for p in paths]
    if page_size:
        conf += f"SitemapPageSize {page_size}\n"
    if extra:
        conf += f"SitemapRobotsExtra {base}/extra/news-sitemap.xml\n"
        srv.write("htdocs/extra/news-sitemap.xml", extra_sitemap(base))
        want_robots.append(base + "/extra/news-sitemap.xml")
        want_pages.append(base + "/extra/one.html")
    srv.conf_text = conf
    for p in paths[1:]:
        srv.write("htdocs" + p, cluster_page(base) if site == "hreflang"
                  else f"<html><body>{p}</body></html>\n")
    if robots is not None:
        srv.write("htdocs/robots.txt", big_robots() if robots == "big" else robots)
    srv.start()
    for p in paths:
        srv.get_ok(p)
    if paths:
        srv.wait_recorded(*paths)
    robots_url = base + "/robots.txt"
    want_pages.sort()

    # Python's parsers, and the documents as the server sends them
    bodies = {}
    for enc in ("gzip", "identity"):
        body = bodies[enc] = fetch(srv, "/robots.txt", enc, order)
        text = body.decode("utf-8")
        rp = urllib.robotparser.RobotFileParser(robots_url)
        if enc == "identity":
            rp.read()           # urllib fetches it itself (no Accept-Encoding)
        else:
            rp.parse(text.splitlines())
        assert rp.site_maps() == want_robots, (enc, rp.site_maps(), text[:300])
        assert list(protego.Protego.parse(text).sitemaps) == want_robots, enc
        docs = []
        pages = []
        for sm in want_robots:
            pages += walk(srv, sm, enc, order, docs)
        assert sorted(pages) == want_pages, (enc, docs)
        if page_size:
            assert docs[0][1] == "sitemapindex" and len(docs) == 1 + 3 + 1, docs
    assert bodies["gzip"] == bodies["identity"]
    if robots == "big":
        assert bodies["identity"].startswith(b"\xef\xbb\xbf\r\nSitemap: ")

    # the npm packages, in one node process
    r = subprocess.run(["node", os.path.join(CONFORMANCE, "clients.mjs"), robots_url,
                        "gzip", "identity"], capture_output=True, text=True, timeout=60,
                       cwd=CONFORMANCE)
    assert r.returncode == 0, f"clients.mjs failed:\n{r.stderr[-3000:]}"
    npm = json.loads(r.stdout)
    for enc in ("gzip", "identity"):
        got = npm[enc]
        assert got["robots"] == want_robots, ("robots-parser", enc, got)
        assert sorted(got["sitemap"]) == want_pages, ("sitemap (strict)", enc, got)
        assert sorted(got["sitemapper"]) == want_pages, ("sitemapper", enc, got)
        assert sorted(got["links"]) == (cluster_links(base) if site == "hreflang"
                                        else []), ("sitemap links", enc, got)
        # The `sitemap` package's strict mode knows no attribute on <url>
        # (a namespace declaration included): the xhtml prefix is declared
        # on <urlset>, so nothing is refused (clients.mjs).
        assert got["refused"] == [], (enc, got)
        # without mod_deflate only the sitemaps (their gzip renditions)
        # come compressed, robots.txt does not
        if enc == "identity":
            compressed = {"identity"}
        else:
            compressed = {"gzip"} if order else {"identity", "gzip"}
        assert set(got["encodings"]) == compressed, (enc, got["encodings"])

    # Scrapy's SitemapSpider, in a subprocess of Debian's python3
    r = subprocess.run([SYSTEM_PYTHON, os.path.join(CONFORMANCE, "scrapy_sitemaps.py"),
                        robots_url], capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, f"scrapy_sitemaps.py failed:\n{r.stderr[-3000:]}"
    scrapy = json.loads(r.stdout)
    for enc in ("gzip", "identity"):
        got = scrapy[enc]
        assert sorted(got["urls"]) == want_pages, ("scrapy", enc, got, r.stderr[-2000:])
        assert got["warnings"] == 0 and got["errors"] == 0, (enc, got, r.stderr[-3000:])
        assert got["sitemaps"][0] == robots_url, got
        if enc == "gzip":
            assert all("gzip" in (ae or "") for ae in got["accept_encoding"]), got
        else:
            assert not any(got["accept_encoding"]), got


def test_official_schemas_are_used_when_present():
    # the schema checks above are silent without ../shared/xsd: say so
    if not sitemap_check.have_schemas():
        pytest.skip(f"no schemas at {sitemap_check.XSD_DIR} (or no xmllint): "
                    "documents were not validated against the official schemas")
    assert os.path.isfile(os.path.join(sitemap_check.XSD_DIR, "catalog.xml"))
