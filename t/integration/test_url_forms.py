# SPDX-License-Identifier: Apache-2.0
"""The URL a crawler derives from a <loc> is the stored URL, byte for byte.

Crawlers do not request a <loc> as written: browsers and Node parse it
with the WHATWG URL rules (`new URL(loc).href`), Scrapy with w3lib's
safe_url_string.  Both percent-encode some characters; if the stored URL
held one of them literally, the crawler's request would be recorded as a
second URL (e.g. `?page='x'` listed, `?page=%27x%27` requested).

For every byte value, written literally and as a %XX escape, in a path and
in a query, the module records a request; every URL it stores must be left
unchanged by Node's URL and by w3lib, and requesting the URL a crawler
derives must not add a row."""
import json
import shutil
import subprocess
import urllib.parse

# Characters whose escaped form names another resource than the literal
# one (RFC 3986 reserved characters, and '%'): their two spellings may be
# stored apart.  Every other byte must give one URL whichever way it is
# written.
RESERVED = set(b":/?#[]@!$&'()*+,;=%")

NODE_HREF = r"""
const urls = JSON.parse(require('fs').readFileSync(0, 'utf8'));
console.log(JSON.stringify(urls.map(u => new URL(u).href)));
"""

W3LIB_SAFE = r"""
import json, sys
from w3lib.url import safe_url_string
print(json.dumps([safe_url_string(u) for u in json.load(sys.stdin)]))
"""


def node_hrefs(urls):
    node = shutil.which("node") or shutil.which("nodejs")
    assert node, "node is missing: run tools/deps (Debian package nodejs)"
    out = subprocess.run([node, "-e", NODE_HREF], input=json.dumps(urls),
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def w3lib_safe(urls):
    # Debian's interpreter has python3-w3lib (tools/deps).
    out = subprocess.run(["/usr/bin/python3", "-c", W3LIB_SAFE],
                         input=json.dumps(urls), capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


def targets():
    """(marker, raw target) for every byte, literal and escaped, in a path
    (/p/ is rewritten to a page) and in the value of an allowed query
    parameter.  The marker ("p41e": path, byte 0x41, escaped) starts the
    segment or value, so each stored row names the request it came from."""
    for b in range(256):
        for kind, spell in (("r", bytes([b])), ("e", b"%%%02X" % b)):
            m = "%02x%s" % (b, kind)
            yield "p" + m, b"/p/p" + m.encode() + b"-a" + spell + b"b"
            yield "q" + m, b"/page.html?q=q" + m.encode() + b"-a" + spell + b"b"


def marker_of(url):
    if url.startswith("/p/p"):
        return url[3:7]
    if url.startswith("/page.html?q=q"):
        return url[13:17]
    return None


def test_every_byte_is_stored_as_crawlers_request_it(make_server):
    srv = make_server(conf="""
SitemapAllowQuery q
AllowEncodedSlashes NoDecode
RewriteEngine On
RewriteRule ^/p/ /page.html [L]
""", modules=("rewrite",))
    srv.expect_log(r"AH10244: invalid URI path")     # a lone '%'
    srv.start()
    answered = {}
    for marker, target in targets():
        answered[marker] = srv.get(target).status
    srv.sentinel()
    stored = {}
    for url in srv.urls():
        m = marker_of(url)
        if m:
            assert m not in stored, f"two rows for one request: {stored[m]!r} {url!r}"
            stored[m] = url

    # Nothing the server did not answer with 200 is stored, and every
    # escaped spelling is (httpd answers 404 to %00 in a path), but for
    # control characters (below 0x20, 0x7F), literal or escaped, which
    # are never stored (issue 33).
    control = set(range(0x20)) | {0x7F}
    for m, status in answered.items():
        if status != 200:
            assert m not in stored, (m, status, stored.get(m))
    missing = [m for m in answered
               if m[3] == "e" and m not in stored and m != "p00e"
               and int(m[1:3], 16) not in control]
    assert not missing, [(m, answered[m]) for m in missing]
    kept = [stored[m] for m in stored if int(m[1:3], 16) in control]
    assert not kept, kept

    # A byte that is not a delimiter is one URL however it is written.
    for b in range(256):
        for part in "pq":
            lit, esc = stored.get("%s%02xr" % (part, b)), stored.get("%s%02xe" % (part, b))
            if lit and esc and b not in RESERVED:
                assert lit.split("-", 1)[1] == esc.split("-", 1)[1], (hex(b), lit, esc)
    # What crawlers derive from each <loc> is the <loc> itself.
    locs = sorted(srv.base + u for u in stored.values())
    node, w3lib = node_hrefs(locs), w3lib_safe(locs)
    changed = [(loc, n, w) for loc, n, w in zip(locs, node, w3lib)
               if n != loc or w != loc]
    assert not changed, changed[:20]

    # The case of the issue: a quote in a query is stored as crawlers
    # request it.
    assert stored["q27r"] == "/page.html?q=q27r-a%27b", stored["q27r"]

    # Requesting what a crawler derives records no second URL.
    before = srv.urls()
    for href in node:
        parts = urllib.parse.urlsplit(href)
        target = parts.path + ("?" + parts.query if parts.query else "")
        srv.get_ok(target.encode("ascii"))
    sentinel = srv.sentinel()
    assert srv.urls() == before | {sentinel}
