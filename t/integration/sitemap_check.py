# SPDX-License-Identifier: Apache-2.0
"""Checks of sitemap documents and responses, shared by the test_sitemap_*
files.

Every XML document the module serves goes through check_document():
  1. well-formed (xml.etree), UTF-8, with an XML declaration;
  2. the project's own structural checks: root element and namespace,
     each <url>/<sitemap> has exactly one <loc>, first, an absolute http(s)
     URL under the site's base; <lastmod> a W3C datetime with seconds and
     zone; <changefreq> one of the words; <priority> 0.0-1.0; no unknown
     elements; at most 50,000 entries and 52,428,800 bytes; no duplicate
     <loc>; hreflang alternates (<xhtml:link rel="alternate" hreflang
     href/>) only after them, each with an absolute http(s) href;
  3. when ../shared/xsd exists beside the project, or beside the
     directory holding it (a git worktree), and xmllint is installed: the
     official sitemaps.org schemas (sitemap.xsd for a <urlset>,
     all-offline.xsd for one with xhtml:link alternates, siteindex.xsd for
     a <sitemapindex>), with XML_CATALOG_FILES=<xsd>/catalog.xml xmllint
     --nonet --noout --schema.
"""
import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET

from conftest import TOP_SRCDIR

NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
Q = "{%s}" % NS
# SITEMAP_TEST_XSD overrides where the schemas are looked for (a directory
# that does not exist turns the schema check off, as without ../shared).
XSD_DIR = os.environ.get("SITEMAP_TEST_XSD") or next(
    (d for d in (os.path.join(TOP_SRCDIR, "..", "shared", "xsd"),
                 os.path.join(TOP_SRCDIR, "..", "..", "shared", "xsd"))
     if os.path.isdir(d)), os.path.join(TOP_SRCDIR, "..", "shared", "xsd"))
XHTML = "{http://www.w3.org/1999/xhtml}"
IMAGE = "{http://www.google.com/schemas/sitemap-image/1.1}"
HREFLANG_RX = re.compile(r"^(x-default|[a-z]{2,8}(-[a-z0-9]{1,8})*)$")
XMLLINT = shutil.which("xmllint")
MAX_ENTRIES = 50000
MAX_BYTES = 52428800
CHANGEFREQ_WORDS = {"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"}
LASTMOD_RX = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$")
PRIORITY_RX = re.compile(r"^(0(\.\d+)?|1(\.0+)?|\.\d+)$")
XML_DECL_RX = re.compile(rb'^<\?xml version="1\.0" encoding="(?i:utf-8)"\?>')
CONTENT_TYPE_RX = re.compile(r"^application/xml;\s*charset=utf-8$", re.I)


def have_schemas():
    return (os.path.isfile(os.path.join(XSD_DIR, "sitemap.xsd"))
            and os.path.isfile(os.path.join(XSD_DIR, "siteindex.xsd"))
            and XMLLINT is not None)


def schema_validate(body, kind):
    """Validate body (bytes) against the official schema of kind ("urlset"
    or "sitemapindex"); a no-op without ../shared/xsd."""
    if not have_schemas():
        return
    xsd = os.path.join(XSD_DIR, "sitemap.xsd" if kind == "urlset" else "siteindex.xsd")
    if kind == "urlset" and (b"<xhtml:link" in body or b"<image:image" in body):
        # sitemap.xsd's wildcard is strict: the driver that imports xhtml
        xsd = os.path.join(XSD_DIR, "all-offline.xsd")
        if not os.path.isfile(xsd):
            return
    fd, path = tempfile.mkstemp(suffix=".xml", prefix="sitemap-check-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
        env = dict(os.environ, XML_CATALOG_FILES=os.path.join(XSD_DIR, "catalog.xml"))
        r = subprocess.run([XMLLINT, "--nonet", "--noout", "--schema", xsd, path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, errors="replace", env=env, timeout=120)
        assert r.returncode == 0, (
            f"{kind} fails {os.path.basename(xsd)}:\n{r.stderr[-3000:]}\n"
            f"document starts:\n{body[:1500].decode('utf-8', 'replace')}")
    finally:
        os.unlink(path)


def _text(el):
    return el.text if el.text is not None else ""


def _check_entry(entry, kind, base, seen):
    """One <url> (kind "urlset") or <sitemap> ("sitemapindex"): returns a
    dict of its fields."""
    allowed = (["loc", "lastmod", "changefreq", "priority"] if kind == "urlset"
               else ["loc", "lastmod"])
    children = list(entry)
    assert children, f"empty <{entry.tag}>"
    alternates = []
    images = []
    # SitemapImages: <image:image><image:loc>URL</image:loc></image:image>
    # last, only image:loc in each
    while kind == "urlset" and children and children[-1].tag == IMAGE + "image":
        img = children.pop()
        locs = list(img)
        assert len(locs) == 1 and locs[0].tag == IMAGE + "loc", \
            f"<image:image> holds {[c.tag for c in locs]}"
        src = _text(locs[0])
        assert re.match(r"^https?://[^/]+/", src), f"image:loc {src!r}"
        assert len(src) <= 2048 and not re.search(r"[\s<>\"{}|\\^`]", src), src
        images.insert(0, src)
    assert len(set(images)) == len(images), f"an image twice: {images}"
    while kind == "urlset" and children and children[-1].tag == XHTML + "link":
        link = children.pop()
        assert set(link.attrib) == {"rel", "hreflang", "href"}, link.attrib
        assert link.get("rel") == "alternate", link.attrib
        assert HREFLANG_RX.match(link.get("hreflang")), link.attrib
        href = link.get("href")
        assert re.match(r"^https?://[^/]+/", href), f"href {href!r}"
        assert len(href) <= 2048 and not re.search(r"[\s<>\"{}|\\^`]", href), href
        assert len(list(link)) == 0 and not (link.text or "").strip()
        alternates.insert(0, (link.get("hreflang"), href))
    assert len({h for h, _ in alternates}) == len(alternates), \
        f"an hreflang twice: {alternates}"
    names = []
    for c in children:
        assert c.tag.startswith(Q), f"element {c.tag} outside the sitemap namespace"
        name = c.tag[len(Q):]
        assert name in allowed, f"unexpected <{name}> in <{entry.tag[len(Q):]}>"
        assert name not in names, f"<{name}> twice in one entry"
        assert len(list(c)) == 0, f"<{name}> has child elements"
        names.append(name)
    assert names[0] == "loc", f"<loc> is not first: {names}"
    # the schema's order: loc, lastmod, changefreq, priority
    assert names == [n for n in allowed if n in names], f"elements out of order: {names}"
    out = {n: _text(entry.find(Q + n)) for n in names}
    loc = out["loc"]
    assert loc == loc.strip() and loc, f"<loc> {loc!r}"
    assert re.match(r"^https?://", loc), f"<loc> not an absolute http(s) URL: {loc!r}"
    assert loc.startswith(base + "/"), f"<loc> {loc!r} is not under the base {base!r}"
    assert len(loc) <= 2048, f"<loc> longer than 2048 characters: {loc[:100]!r}..."
    assert not re.search(r"[\s<>\"{}|\\^`]", loc), f"<loc> holds characters a URL may not: {loc!r}"
    assert loc not in seen, f"duplicate <loc> {loc!r}"
    seen.add(loc)
    if "lastmod" in out:
        assert LASTMOD_RX.match(out["lastmod"]), f"<lastmod> {out['lastmod']!r}"
    if "changefreq" in out:
        assert out["changefreq"] in CHANGEFREQ_WORDS, f"<changefreq> {out['changefreq']!r}"
    if "priority" in out:
        p = out["priority"]
        assert PRIORITY_RX.match(p) and 0.0 <= float(p) <= 1.0, f"<priority> {p!r}"
    if alternates:
        out["alternates"] = alternates
    if images:
        out["images"] = images
    return out


class Document:
    """A checked sitemap document."""

    def __init__(self, kind, entries, body):
        self.kind = kind            # "urlset" or "sitemapindex"
        self.entries = entries      # list of dicts: loc, lastmod, ...
        self.body = body

    @property
    def locs(self):
        return [e["loc"] for e in self.entries]

    def by_loc(self):
        return {e["loc"]: e for e in self.entries}

    def __repr__(self):
        return f"<{self.kind} of {len(self.entries)}>"


def check_document(body, base, kind=None):
    """Run every check on body (bytes); kind, when given, is the root
    element expected.  Returns a Document."""
    assert isinstance(body, bytes)
    assert body, "empty body"
    assert len(body) <= MAX_BYTES, f"document of {len(body)} bytes"
    assert XML_DECL_RX.match(body), f"no UTF-8 XML declaration: {body[:80]!r}"
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AssertionError(f"not UTF-8: {e}")
    try:
        root = ET.fromstring(body)
    except ET.ParseError as e:
        raise AssertionError(f"not well-formed XML: {e}\n{body[:2000]!r}")
    assert root.tag in (Q + "urlset", Q + "sitemapindex"), f"root element {root.tag}"
    got = root.tag[len(Q):]
    if kind is not None:
        assert got == kind, f"expected a <{kind}>, got a <{got}>:\n{body[:1000]!r}"
    child = "url" if got == "urlset" else "sitemap"
    entries = []
    seen = set()
    for e in root:
        assert e.tag == Q + child, f"unexpected <{e.tag}> in <{got}>"
        entries.append(_check_entry(e, got, base, seen))
    assert entries, f"a <{got}> without entries is invalid"
    assert len(entries) <= MAX_ENTRIES, f"{len(entries)} entries"
    schema_validate(body, got)
    return Document(got, entries, body)


def check_headers(resp, expect_validators=True):
    """The headers every 200 (or HEAD) answer of the sitemap carries."""
    ct = resp.header("Content-Type")
    assert ct and CONTENT_TYPE_RX.match(ct), f"Content-Type {ct!r}"
    assert (resp.header("X-Robots-Tag") or "").lower() == "noindex", resp.headers
    if expect_validators:
        etag = resp.header("ETag")
        assert etag and re.match(r'^(W/)?"[^"]+"$', etag), f"ETag {etag!r}"
        assert resp.header("Last-Modified"), f"no Last-Modified: {resp.headers}"


def is_root_only(doc, base):
    """The document served while nothing is recorded: a urlset of the
    site's root (the directory of its sitemap: base + "/", or base +
    "/blog/" for a site under /blog/), without <lastmod> (nor
    Last-Modified)."""
    return (doc.kind == "urlset" and len(doc.entries) == 1
            and list(doc.entries[0]) == ["loc"]
            and doc.entries[0]["loc"].startswith(base + "/")
            and doc.entries[0]["loc"].endswith("/"))


def fetch(srv, path="/sitemap.xml", base=None, kind=None, host=None,
          validators=None, headers=None):
    """GET path, expect 200, check the headers and the document.
    validators: True requires ETag and Last-Modified, False only ETag,
    None (default) both unless the document is the root-only urlset."""
    base = base or srv.base
    r = srv.get(path, host=host, headers=headers)
    assert r.status == 200, f"GET {path}: {r.status} {r.reason}\n{r.body[:300]!r}\n{srv.log_tail(10)}"
    r.doc = check_document(r.body, base, kind)
    if validators is None:
        validators = not is_root_only(r.doc, base)
    check_headers(r, expect_validators=validators)
    if not validators:
        etag = r.header("ETag")
        assert etag and re.match(r'^(W/)?"[^"]+"$', etag), f"ETag {etag!r}"
    return r


def page_path(sitemap_path, n):
    assert sitemap_path.endswith(".xml")
    return f"{sitemap_path[:-4]}-{n}.xml"


def fetch_all(srv, sitemap_path="/sitemap.xml", base=None, host=None):
    """The whole sitemap: {page number: Document} (the page numbers those
    the index lists, or {1: ...} for a single urlset) and the index
    Document (None for a single urlset).  Checks that each <sitemap> of
    the index names a page beside SitemapPath whose newest <lastmod> is the
    <lastmod> the index gives it, and that no URL is on two pages."""
    base = base or srv.base
    top = fetch(srv, sitemap_path, base=base, host=host)
    if top.doc.kind == "urlset":
        return {1: top.doc}, None
    pages = {}
    rx = re.compile("^" + re.escape(base + sitemap_path[:-4]) + r"-([1-9][0-9]*)\.xml$")
    for e in top.doc.entries:
        m = rx.match(e["loc"])
        assert m, f"index entry {e['loc']!r} is not a page beside {sitemap_path}"
        n = int(m.group(1))
        r = fetch(srv, page_path(sitemap_path, n), base=base, kind="urlset", host=host)
        pages[n] = r.doc
        mods = [u["lastmod"] for u in r.doc.entries if "lastmod" in u]
        if mods:
            assert "lastmod" in e, f"index entry of page {n} has no <lastmod>"
            # the page's lastmod is at least its newest URL's
            assert e["lastmod"] >= max(mods), (n, e["lastmod"], max(mods))
    assert list(pages) == sorted(pages), f"index out of page order: {list(pages)}"
    all_locs = [loc for d in pages.values() for loc in d.locs]
    assert len(all_locs) == len(set(all_locs)), "a URL is on two pages"
    return pages, top.doc


def union_paths(pages, base):
    """The stored paths of every URL of every page (each must be once)."""
    out = []
    for d in pages.values():
        for loc in d.locs:
            assert loc.startswith(base + "/"), loc
            out.append(loc[len(base):])
    assert len(out) == len(set(out)), "a URL is listed twice"
    return set(out)
