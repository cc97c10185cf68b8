# SPDX-License-Identifier: Apache-2.0
"""Image sitemaps (SitemapImages, SitemapImageHosts; issue 37): a page's
images from its head (og:image, twitter:image, <link rel=image_src>) and
from what browsers fetch with the page as Referer, kept in the store and
served as <image:image><image:loc> in the page's <url>.

Checked here: each head form, and a page with none; an image fetched with
and without a Referer, with a Referer naming an unlisted page, a page of
another host, or with a session or credentials (never attached); a CDN
host named by SitemapImageHosts (from the head only) and one not named; an
image that answers 404 leaves its pages (also on PostgreSQL); a change of images moves the
sitemap's ETag but not the page's lastmod; the document against the
official schemas (sitemap.xsd with sitemap-image.xsd, when ../shared/xsd is
there), read strictly by the npm `sitemap` package and by Scrapy; Off by
default; bad values refused at start-up and by -t."""
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from conftest import SITEMAPCTL, TOP_SRCDIR
from pg import pg_cluster, pg_db  # noqa: F401 (fixtures)
from sitemap_check import fetch

CONFORMANCE = os.path.join(TOP_SRCDIR, "t", "conformance")
SYSTEM_PYTHON = "/usr/bin/python3"
PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01"
       b"\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f"
       b"\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
CONF = ("SitemapImages On\n"
        "SitemapImageHosts cdn.example.net\n")


def page(head):
    return f"<!DOCTYPE html><html><head><title>t</title>{head}</head><body>x</body></html>\n"


def images(srv):
    """{page url: sorted image URLs} as stored."""
    rows = srv.query("SELECT u.url, i.image FROM images i JOIN urls u"
                     " ON u.id = i.url_id") or []
    out = {}
    for u, i in rows:
        out.setdefault(u, []).append(i)
    return {u: sorted(v) for u, v in out.items()}


def wait_images(srv, want, timeout=15):
    deadline = time.monotonic() + timeout
    while True:
        have = images(srv)
        if all(have.get(u) == sorted(v) for u, v in want.items()):
            return have
        assert time.monotonic() < deadline, (want, have, srv.log_tail(20))
        time.sleep(0.1)


def flushed(srv):
    """Every change handed over so far written (a graceful stop flushes
    every process's queue; the server is started again)."""
    srv.assert_not_recorded("/never-there.html", stop=True)


def write_image(srv, rel):
    path = srv.path("htdocs/" + rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(PNG)
    os.chmod(path, 0o644)


def served_images(srv):
    """{loc: images} of the sitemap, checked (structure, and the official
    schemas when present)."""
    r = fetch(srv)
    urlset = re.search(rb"<urlset [^>]*>", r.body).group(0)
    assert b'xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"' \
        in urlset, r.body[:400]
    assert r.body.count(b"xmlns:image=") == 1
    return {e["loc"]: e.get("images", []) for e in r.doc.entries}, r


def test_head_forms(make_server):
    srv = make_server(conf=CONF)
    b = srv.base
    srv.write("htdocs/og.html", page(
        '<meta property="og:image" content="/img/og.png">'
        '<meta property="og:image:width" content="800">'))
    srv.write("htdocs/tw.html", page(
        "<meta name=twitter:image content='https://cdn.example.net/t.jpg?w=1&amp;h=2'>"))
    srv.write("htdocs/dir/link.html", page(
        '<base href="/assets/"><link rel="image_src" href="l b.gif">'))
    srv.write("htdocs/foreign.html", page(
        '<meta property="og:image" content="https://other.example/x.png">'
        '<meta property="og:image" content="data:image/png;base64,AAAA">'))
    srv.write("htdocs/none.html", page('<meta name="description" content="d">'))
    srv.start()
    for p in ("/og.html", "/tw.html", "/dir/link.html", "/foreign.html", "/none.html"):
        srv.get_ok(p)
    srv.wait_recorded("/og.html", "/tw.html", "/dir/link.html", "/foreign.html",
                      "/none.html")
    want = {"/og.html": [f"{b}/img/og.png"],
            "/tw.html": ["https://cdn.example.net/t.jpg?w=1&h=2"],
            "/dir/link.html": [f"{b}/assets/l%20b.gif"]}
    wait_images(srv, want)
    flushed(srv)
    assert images(srv) == want
    served, _ = served_images(srv)
    for p, imgs in want.items():
        assert served[b + p] == imgs, (p, served)
    assert served[b + "/none.html"] == [] and served[b + "/foreign.html"] == []


def test_referer(make_server):
    srv = make_server(conf=CONF + "SitemapExclude ^/hidden\n")
    b = srv.base
    srv.write("htdocs/p.html", page(""))
    srv.write("htdocs/hidden.html", page(""))
    for n in "abcdefg":
        write_image(srv, f"img/{n}.png")
    srv.start()
    srv.get_ok("/p.html")
    srv.get_ok("/hidden.html")
    srv.wait_recorded("/p.html")
    flushed(srv)
    before = fetch(srv)
    lastmod = before.doc.by_loc()[b + "/p.html"].get("lastmod")

    srv.get_ok("/img/a.png", headers={"Referer": b + "/p.html"})
    wait_images(srv, {"/p.html": [f"{b}/img/a.png"]})
    served, after = served_images(srv)
    assert served[b + "/p.html"] == [f"{b}/img/a.png"]
    # an image is not a page: the document's validators moved, the
    # page's lastmod did not
    assert after.header("ETag") != before.header("ETag")
    assert after.doc.by_loc()[b + "/p.html"].get("lastmod") == lastmod

    # never attached: no Referer, an unlisted page, another host, a
    # session, credentials
    srv.get_ok("/img/b.png")
    srv.get_ok("/img/c.png", headers={"Referer": b + "/hidden.html"})
    srv.get_ok("/img/d.png", headers={"Referer": "http://other.example/p.html"})
    srv.get_ok("/img/e.png", headers={"Referer": b + "/p.html",
                                      "Cookie": "PHPSESSID=abc"})
    srv.get_ok("/img/f.png", headers={"Referer": b + "/p.html",
                                      "Authorization": "Basic dTpw"})
    # the same again is a repeat: still one row
    srv.get_ok("/img/a.png", headers={"Referer": b + "/p.html"})
    flushed(srv)
    assert images(srv) == {"/p.html": [f"{b}/img/a.png"]}

    # it answers 404: it leaves its pages
    os.unlink(srv.path("htdocs/img/a.png"))
    assert srv.get("/img/a.png").status == 404
    deadline = time.monotonic() + 15
    while images(srv):
        assert time.monotonic() < deadline, images(srv)
        time.sleep(0.1)
    served, _ = served_images(srv)
    assert served[b + "/p.html"] == []


def test_one_image_many_pages(make_server):
    """An image on every page (a logo): each Referer is its own raw facts,
    so the same image fetched for a second page is no repeat of the first
    and attaches there too; fetched again for either, it is one."""
    srv = make_server(conf=CONF)
    b = srv.base
    for n in "pqr":
        srv.write(f"htdocs/{n}.html", page(""))
    write_image(srv, "img/logo.png")
    srv.start()
    for n in "pqr":
        srv.get_ok(f"/{n}.html")
    srv.wait_recorded("/p.html", "/q.html", "/r.html")
    flushed(srv)
    for n in "pqpqr":
        srv.get_ok("/img/logo.png", headers={"Referer": f"{b}/{n}.html"})
    logo = [f"{b}/img/logo.png"]
    wait_images(srv, {"/p.html": logo, "/q.html": logo, "/r.html": logo})
    flushed(srv)
    assert images(srv) == {"/p.html": logo, "/q.html": logo, "/r.html": logo}


def test_cdn_only_from_head(make_server):
    """A CDN's images are not served by us: they come from the head's
    metas of hosts named in SitemapImageHosts, never from another one."""
    srv = make_server(conf="SitemapImages On\n")
    srv.write("htdocs/p.html", page(
        '<meta property="og:image" content="https://cdn.example.net/c.png">'))
    srv.start()
    srv.get_ok("/p.html")
    srv.wait_recorded("/p.html")
    flushed(srv)
    assert images(srv) == {}


def test_off_by_default(make_server):
    srv = make_server()
    srv.write("htdocs/p.html", page('<meta property="og:image" content="/i.png">'))
    write_image(srv, "i.png")
    srv.start()
    srv.get_ok("/p.html")
    srv.wait_recorded("/p.html")
    srv.get_ok("/i.png", headers={"Referer": srv.base + "/p.html"})
    flushed(srv)
    assert images(srv) == {}
    r = fetch(srv)
    assert b"image" not in r.body


def npm_images(body):
    """{loc: [image urls]} the npm `sitemap` package reads strictly."""
    nm = os.path.join(CONFORMANCE, "node_modules")
    if not os.path.isdir(nm) or not shutil.which("node"):
        pytest.fail("t/conformance/node_modules is missing: run tools/deps")
    js = ("const {XMLToSitemapItemStream, ErrorLevel} = require('sitemap');"
          "const {Readable} = require('stream');"
          "const out = {}; Readable.from([require('fs').readFileSync(0)])"
          ".pipe(new XMLToSitemapItemStream({level: ErrorLevel.THROW}))"
          ".on('data', i => { out[i.url] = (i.img || []).map(x => x.url); })"
          ".on('error', e => { console.error(e); process.exit(1); })"
          ".on('end', () => process.stdout.write(JSON.stringify(out)));")
    r = subprocess.run(["node", "-e", js], input=body, capture_output=True,
                       timeout=60, cwd=CONFORMANCE)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout)


def test_clients_read_it(make_server):
    srv = make_server(conf=CONF)
    b = srv.base
    srv.write("htdocs/a.html", page('<meta property="og:image" content="/a.png">'
                                    '<link rel=image_src href="/a2.png">'))
    srv.write("htdocs/b.html", page(""))
    srv.start()
    srv.get_ok("/a.html")
    srv.get_ok("/b.html")
    srv.wait_recorded("/a.html", "/b.html")
    wait_images(srv, {"/a.html": [f"{b}/a.png", f"{b}/a2.png"]})
    served, r = served_images(srv)
    got = npm_images(r.body)
    assert sorted(got[b + "/a.html"]) == [f"{b}/a.png", f"{b}/a2.png"], got
    assert got[b + "/b.html"] == [], got
    if not os.path.exists(SYSTEM_PYTHON):
        return
    s = subprocess.run([SYSTEM_PYTHON, os.path.join(CONFORMANCE, "scrapy_sitemaps.py"),
                        b + "/robots.txt"], capture_output=True, text=True, timeout=90)
    assert s.returncode == 0, s.stderr[-3000:]
    for enc, got in json.loads(s.stdout).items():
        assert sorted(got["urls"]) == [b + "/a.html", b + "/b.html"], (enc, got)
        assert got["errors"] == 0, (enc, got)


@pytest.mark.parametrize("line, needle", [
    ("SitemapImages maybe", "SitemapImages"),
    ("SitemapImageHosts https://cdn.example.net", "SitemapImageHosts"),
    ("SitemapImageHosts cdn.example.net:8080", "cdn.example.net:8080"),
    ("SitemapImageHosts cdn.example.net/x", "host names"),
])
def test_bad_values_refused(make_server, line, needle):
    srv = make_server(conf=line + "\n")
    srv.config_fails(needle)


def test_images_on_postgresql(make_server, pg_db):
    """The same on a PostgreSQL store: the head's and a fetched image
    stored and served, an image not of a listed page not, a 404 taken
    out, and sitemapctl check content with the new table."""
    base = "https://www.example.com"
    srv = make_server(db=pg_db.uri, conf=f"SitemapBaseURL {base}\n" + CONF)
    srv.write("htdocs/p.html", page('<meta property="og:image" content="/og.png">'))
    write_image(srv, "img/a.png")
    write_image(srv, "img/b.png")
    srv.start()
    srv.get_ok("/p.html")
    pg_db.wait_urls(base, {"/p.html"})
    srv.get_ok("/img/a.png", headers={"Referer": base + "/p.html"})
    srv.get_ok("/img/b.png", headers={"Referer": base + "/unlisted.html"})

    def stored():
        return sorted(r[0] for r in pg_db.sql("SELECT image FROM sitemap_images"))
    want = [f"{base}/img/a.png", f"{base}/og.png"]
    deadline = time.monotonic() + 20
    while stored() != want:
        assert time.monotonic() < deadline, stored()
        time.sleep(0.2)
    r = fetch(srv, base=base)
    assert r.doc.by_loc()[base + "/p.html"]["images"] == \
        [f"{base}/og.png", f"{base}/img/a.png"]
    os.unlink(srv.path("htdocs/img/a.png"))
    assert srv.get("/img/a.png").status == 404
    while stored() != [f"{base}/og.png"]:
        assert time.monotonic() < deadline, stored()
        time.sleep(0.2)
    x = subprocess.run([SITEMAPCTL, "check", pg_db.uri],
                       stdout=subprocess.PIPE, text=True, timeout=60)
    assert x.returncode == 0, x.stdout
