# SPDX-License-Identifier: Apache-2.0
"""The views in a real browser: headless Chromium (Debian's chromium)
renders the styled sitemap index, a styled page and the HTML site map.
--dump-dom shows what the browser built (the HTML site map's links), and a
screenshot of each view is saved under the test's temporary directory and
must not be blank (more than one colour once the PNG is decoded)."""
import os
import re
import shutil
import struct
import subprocess
import zlib

import pytest

CHROMIUM = shutil.which("chromium")
CRAWL = "RewriteEngine On\nRewriteRule ^/p/ /page.html [L]\n"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--window-size=1000,700"]

pytestmark = pytest.mark.skipif(not CHROMIUM, reason="chromium is not installed "
                                "(tools/deps installs it)")


def chromium(tmp_path, *args, timeout=60):
    profile = tmp_path / "profile"
    r = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
                       capture_output=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


def png_colours(path):
    """The distinct pixel values of an 8-bit RGB(A) PNG, up to a few."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    width, height, depth, ctype = ihdr[:4]
    assert depth == 8 and ctype in (2, 6), ihdr
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    colours, prev = set(), bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):         # undo the PNG filters
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        if y % 7 == 0:
            for x in range(0, width, 3):
                colours.add(bytes(line[x * bpp:x * bpp + 3]))
        prev = line
    return colours


def screenshot(tmp_path, url, name, css_colour):
    """css_colour: a background only our stylesheet paints (its presence
    says the CSS was applied, not Chromium's own XML tree view, which is
    colourful too)."""
    out = tmp_path / f"{name}.png"
    chromium(tmp_path, f"--screenshot={out}", url)
    assert out.exists() and out.stat().st_size > 2000, name
    colours = png_colours(out)
    assert len(colours) > 8, (name, len(colours))    # text, rows, links
    assert bytes.fromhex(css_colour) in colours, (name, "stylesheet not applied")
    return out


def test_views_in_chromium(make_server, tmp_path):
    srv = make_server(conf="SitemapPageSize 3\nSitemapHTMLPath /site-map.html\n"
                           "SitemapChangefreq ^/p/ daily\n" + CRAWL +
                           "<Location /sitemap-status>\n"
                           "  SetHandler sitemap-status\n</Location>\n")
    srv.start()
    paths = ["/p/news/one.html", "/p/news/two.html", "/p/docs/guide.html",
             "/p/about.html", "/p/a&b'c<x>.html"]
    for p in paths:
        srv.get_ok(p)
    srv.wait_recorded("/p/news/one.html", "/p/about.html", "/p/a&b'c%3Cx%3E.html")

    # The HTML site map as the browser built it: the links are there,
    # the hostile path is text (no <x> element).
    dom = chromium(tmp_path, "--dump-dom", srv.base + "/site-map.html").decode()
    for p in paths[:4]:
        assert f'href="{srv.base}{p}"' in dom, (p, dom[:2000])
    assert "a&amp;b'c%3Cx%3E.html" in dom
    assert "<x>" not in dom and "<script" not in dom

    # The styled XML: the browser applied the CSS (the ::before headers are
    # not in the DOM, so the screenshots show it: many colours, not a
    # wall of black text on white).
    # #eef3f8: the even rows of the tables; #f7f9fb: the HTML page.
    shots = [screenshot(tmp_path, srv.base + "/sitemap.xml", "index", "eef3f8"),
             screenshot(tmp_path, srv.base + "/sitemap-1.xml", "page", "eef3f8"),
             screenshot(tmp_path, srv.base + "/site-map.html", "html", "f7f9fb"),
             # The status page's chart: today's bar of URLs added.
             screenshot(tmp_path, srv.base + "/sitemap-status", "status", "2f9e44")]
    keep = os.environ.get("SITEMAP_SCREENSHOTS")
    if keep:
        os.makedirs(keep, exist_ok=True)
        for s in shots:
            shutil.copy(s, keep)


# The styled XML of a page with hreflang alternates, measured in the
# browser: a page of the same site loads it in a same-origin iframe (the
# window's load waits for it) and writes what it measured into its DOM,
# which --dump-dom prints.
MEASURE = """<!DOCTYPE html><html><body>
<pre id="out">not measured</pre>
<script>
function measure(frame) {
  var d = frame.contentDocument, w = frame.contentWindow;
  var locs = d.getElementsByTagNameNS("*", "loc");
  var links = d.getElementsByTagNameNS("http://www.w3.org/1999/xhtml", "link");
  var canvas = document.createElement("canvas").getContext("2d");
  var cs = w.getComputedStyle(locs[0]);
  canvas.font = cs.fontWeight + " " + cs.fontSize + " " + cs.fontFamily;
  var longest = "";
  for (var i = 0; i < locs.length; i++)
    if (locs[i].textContent.length > longest.length) longest = locs[i].textContent;
  var first = longest.match(/^[a-z]+:[/][/][^/]+[/][^/]*[/]?/)[0];
  var box = locs[0].getBoundingClientRect();
  var headers = [], columns = {};
  for (i = 0; i < links.length; i++) {
    var b = w.getComputedStyle(links[i], "::before");
    if (b.textTransform === "uppercase" || parseInt(b.fontWeight, 10) >= 600)
      headers.push(links[i].getAttribute("hreflang"));
    columns[Math.round(links[i].getBoundingClientRect().left)] = 1;
  }
  document.getElementById("out").textContent = JSON.stringify({
    links: links.length,
    locWidth: box.width - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight),
    first: first, firstWidth: canvas.measureText(first).width,
    headers: headers, linkColumns: Object.keys(columns).length,
    scrollWidth: d.documentElement.scrollWidth, width: w.innerWidth});
}
</script>
<iframe src="/sitemap.xml" width="1000" height="700" style="border:0"
        onload="measure(this)"></iframe>
</body></html>
"""
LANGS = ("en", "de", "fr", "es", "it", "nl", "pt-br", "x-default")


def cluster(base, lang):
    return f"/{lang}/a-rather-long-section-name/and-a-long-page-name-{lang}.html"


def test_hreflang_sitemap_is_readable(make_server, tmp_path):
    import json
    srv = make_server()
    srv.start()
    links = "".join(f'<link rel="alternate" hreflang="{l}" href="{srv.base}{cluster(srv.base, l)}">'
                    for l in LANGS)
    for l in LANGS:
        srv.write("htdocs" + cluster(srv.base, l),
                  f"<html><head>{links}</head><body>{l}</body></html>\n")
        srv.get_ok(cluster(srv.base, l))
    srv.wait_recorded(*[cluster(srv.base, l) for l in LANGS])
    srv.sentinel()
    srv.write("htdocs/measure.html", MEASURE)
    dom = chromium(tmp_path, "--dump-dom", "--virtual-time-budget=5000",
                   srv.base + "/measure.html").decode()
    m = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
    got = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert got["links"] >= len(LANGS) * len(LANGS), got
    # the URL column holds at least the first segment of the longest URL
    assert got["locWidth"] > got["firstWidth"], got
    # no alternate is styled as a column header; a URL's alternates share
    # one column; nothing scrolls sideways
    assert got["headers"] == [], got
    assert got["linkColumns"] == 1, got
    assert got["scrollWidth"] <= got["width"], got
    screenshot(tmp_path, srv.base + "/sitemap.xml", "hreflang", "eef3f8")


# SitemapImages: every <image:image> in one column (an anonymous cell
# after the URL's), none styled as a column header, nothing sideways.
MEASURE_IMAGES = """<!DOCTYPE html><html><body>
<pre id="out">not measured</pre>
<script>
function measure(frame) {
  var d = frame.contentDocument, w = frame.contentWindow;
  var ns = "http://www.google.com/schemas/sitemap-image/1.1";
  var imgs = d.getElementsByTagNameNS(ns, "image");
  var columns = {}, headers = 0, cells = 0;
  for (var i = 0; i < imgs.length; i++) {
    var loc = imgs[i].getElementsByTagNameNS(ns, "loc")[0];
    if (w.getComputedStyle(loc).display === "table-cell") cells++;
    var b = w.getComputedStyle(imgs[i], "::before");
    if (b.textTransform === "uppercase") headers++;
    columns[Math.round(imgs[i].getBoundingClientRect().left)] = 1;
  }
  document.getElementById("out").textContent = JSON.stringify({
    images: imgs.length, columns: Object.keys(columns).length,
    headers: headers, cells: cells,
    scrollWidth: d.documentElement.scrollWidth, width: w.innerWidth});
}
</script>
<iframe src="/sitemap.xml" width="1000" height="700" style="border:0"
        onload="measure(this)"></iframe>
</body></html>
"""


def test_image_sitemap_is_readable(make_server, tmp_path):
    import json
    srv = make_server(conf="SitemapImages On\n")
    srv.start()
    for n in range(3):
        metas = "".join(f'<meta property="og:image" content="/images/a-long-image-name-{n}-{k}.jpg">'
                        for k in range(3))
        srv.write(f"htdocs/p{n}.html", f"<html><head>{metas}</head><body>p</body></html>\n")
        srv.get_ok(f"/p{n}.html")
    srv.wait_recorded("/p0.html", "/p1.html", "/p2.html")
    srv.sentinel()
    srv.write("htdocs/measure.html", MEASURE_IMAGES)
    dom = chromium(tmp_path, "--dump-dom", "--virtual-time-budget=5000",
                   srv.base + "/measure.html").decode()
    m = re.search(r'<pre id="out">(.*?)</pre>', dom, re.S)
    got = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
    assert got["images"] == 9, got
    assert got["columns"] == 1 and got["headers"] == 0 and got["cells"] == 0, got
    assert got["scrollWidth"] <= got["width"], got
    screenshot(tmp_path, srv.base + "/sitemap.xml", "images", "eef3f8")
