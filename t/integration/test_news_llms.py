# SPDX-License-Identifier: Apache-2.0
"""The news sitemap and llms.txt (issue 37): SitemapNewsPath with
SitemapNewsPublication (Google News: the pages published in the last 48
hours, newest first, from article:published_time or JSON-LD), and
SitemapLLMsPath with SitemapLLMsTitle, SitemapLLMsSummary, SitemapLLMsMax
(llmstxt.org).  Pages with Open Graph meta, JSON-LD, none, a 49-hour-old
article, and pages left out (noindex, canonical elsewhere); xmllint with
the official schemas when ../shared/xsd is there; npm sitemap (strict) and
Scrapy from robots.txt; llms.txt's Markdown parsed back; 304, HEAD, gzip;
both stores; the directives' refusals."""
import datetime
import gzip
import json
import os
import re
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

import pytest

from pg import pg_cluster, pg_db  # noqa: F401 (fixtures)
from sitemap_check import XMLLINT, XSD_DIR, have_schemas
from test_conformance import CONFORMANCE, SYSTEM_PYTHON, node_modules

SM = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
NEWS = "{http://www.google.com/schemas/sitemap-news/0.9}"
W3C_RX = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$")
CONF = ('SitemapNewsPath /news-sitemap.xml\n'
        'SitemapNewsPublication "The Test [Times]" EN\n'
        'SitemapLLMsPath /llms.txt\n'
        'SitemapLLMsSummary "A test site (for news) [really]."\n')
OG_TITLE = "OG [one] (two) \\ three"


def iso(hours_ago, offset_hours=0):
    tz = datetime.timezone(datetime.timedelta(hours=offset_hours))
    t = datetime.datetime.now(datetime.timezone.utc) \
        - datetime.timedelta(hours=hours_ago)
    return t.astimezone(tz).isoformat(timespec="seconds")


def page(title, head=""):
    return (f"<!DOCTYPE html><html><head><title>{title}</title>{head}"
            f"</head><body><p>text</p></body></html>\n")


def jsonld(kind, date):
    return ('<script type="application/ld+json">'
            + json.dumps({"@context": "https://schema.org", "@graph": [
                {"@type": "WebPage", "datePublished": "2001-01-01"},
                {"@type": kind, "headline": "x </b>",
                 "datePublished": date}]})
            + "</script>")


def site_pages(srv):
    """Writes the pages; returns (listed, left out) paths."""
    w = srv.write
    w("htdocs/index.html", page("Home &amp; Garden",
                                '<meta name="description" content="The home.">'))
    w("htdocs/about.html", page("About", '<meta name="description" content='
                                '"Who [we] are (and why)\nnext line">'))
    w("htdocs/news/og.html", page(
        "OG [one] (two) \\ three",
        f'<meta property="article:published_time" content="{iso(1, 2)}">'
        '<meta name="description" content="First story.">'))
    w("htdocs/news/ld.html", page("LD story", jsonld("NewsArticle", iso(2))))
    w("htdocs/news/blog.html", page("Blog post", jsonld("BlogPosting", iso(3))))
    w("htdocs/news/old.html", page(
        "Old story",
        f'<meta property="article:published_time" content="{iso(49)}">'))
    w("htdocs/news/plain.html", page("No date"))
    w("htdocs/news/noindex.html", page(
        "Hidden", '<meta name="robots" content="noindex">'
        f'<meta property="article:published_time" content="{iso(1)}">'))
    w("htdocs/news/canon.html", page(
        "Copy", f'<link rel="canonical" href="{srv.base}/news/og.html">'
        f'<meta property="article:published_time" content="{iso(1)}">'))
    listed = ["/", "/about.html", "/news/og.html", "/news/ld.html",
              "/news/blog.html", "/news/old.html", "/news/plain.html"]
    return listed, ["/news/noindex.html", "/news/canon.html"]


def visit(srv, listed, left_out, wait=None):
    for p in listed + left_out:
        srv.get_ok(p)
    (wait or srv.wait_recorded)(*listed)


def validate_news(body):
    """xmllint with sitemap.xsd and sitemap-news.xsd (all-offline.xsd
    imports both), when ../shared/xsd is there; parsed either way."""
    root = ET.fromstring(body)
    assert root.tag == SM + "urlset"
    if not have_schemas():
        return root
    xsd = os.path.join(XSD_DIR, "all-offline.xsd")
    fd, path = tempfile.mkstemp(suffix=".xml")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
        env = dict(os.environ,
                   XML_CATALOG_FILES=os.path.join(XSD_DIR, "catalog.xml"))
        r = subprocess.run([XMLLINT, "--nonet", "--noout", "--schema", xsd,
                            path], capture_output=True, text=True, env=env,
                           timeout=60)
        assert r.returncode == 0, (r.stderr, body[:2000])
    finally:
        os.unlink(path)
    return root


def news_entries(root):
    out = []
    for url in root.findall(SM + "url"):
        n = url.find(NEWS + "news")
        if n is None:
            out.append((url.findtext(SM + "loc"), None, None))
            continue
        pub = n.find(NEWS + "publication")
        assert pub.findtext(NEWS + "name") == "The Test [Times]"
        assert pub.findtext(NEWS + "language") == "en"
        date = n.findtext(NEWS + "publication_date")
        assert W3C_RX.match(date), date
        out.append((url.findtext(SM + "loc"), n.findtext(NEWS + "title"),
                    date))
    return out


MD_LINK = re.compile(r"^- \[((?:\\.|[^\\\]])*)\]\(([^()\s]*)\)(?:: (.*))?$")


def unescape(s):
    return re.sub(r"\\(.)", r"\1", s)


def parse_llms(text):
    """llms.txt back: (title, summary, {section: [(title, url, desc)]})."""
    lines = text.split("\n")
    assert lines[0].startswith("# "), lines[:3]
    title, summary, sections, cur = unescape(lines[0][2:]), None, {}, None
    for line in lines[1:]:
        if not line:
            continue
        if line.startswith("> "):
            summary = unescape(line[2:])
        elif line.startswith("## "):
            cur = line[3:]
            assert cur not in sections, f"section {cur} twice"
            sections[cur] = []
        else:
            m = MD_LINK.match(line)
            assert m and cur, f"not a link line: {line!r}"
            sections[cur].append((unescape(m.group(1)), m.group(2),
                                  unescape(m.group(3)) if m.group(3)
                                  else None))
    return title, summary, sections


def conditional(srv, path, ctype):
    """GET, HEAD, 304 and gzip of path: the identity body."""
    g = srv.get(path)
    assert g.status == 200, (path, g.status, g.body[:300])
    assert g.header("Content-Type") == ctype, g.headers
    etag = g.header("ETag")
    assert etag, g.headers
    h = srv.request("HEAD", path)
    assert h.status == 200 and h.body == b"" and h.header("ETag") == etag
    assert srv.get(path, headers={"If-None-Match": etag}).status == 304
    assert srv.get(path, headers={"If-None-Match": '"other"'}).status == 200
    z = srv.get(path, headers={"Accept-Encoding": "gzip"})
    assert z.status == 200 and z.header("Content-Encoding") == "gzip", z.headers
    assert gzip.decompress(z.body) == g.body
    zetag = z.header("ETag")
    assert zetag != etag
    assert srv.get(path, headers={"Accept-Encoding": "gzip",
                                  "If-None-Match": zetag}).status == 304
    return g


def check_site(srv, listed):
    base = srv.base
    # the news sitemap: the last 48 hours, newest first; the page's title
    r = conditional(srv, "/news-sitemap.xml", "application/xml; charset=utf-8")
    got = news_entries(validate_news(r.body))
    assert [(loc, title) for loc, title, _ in got] == [
        (base + "/news/og.html", OG_TITLE),
        (base + "/news/ld.html", "LD story"),
        (base + "/news/blog.html", "Blog post")], got
    # llms.txt: parsed back, escapes undone, the left-out pages absent
    r = conditional(srv, "/llms.txt", "text/plain; charset=utf-8")
    title, summary, sections = parse_llms(r.body.decode())
    assert title == "Home & Garden"
    assert summary == "A test site (for news) [really]."
    assert list(sections) == ["Pages", "news"], sections
    # (the sentinel pages assert_not_recorded serves are listed too)
    assert [e for e in sections["Pages"] if "/sentinel-" not in e[1]] == [
        ("Home & Garden", base + "/", "The home."),
        ("About", base + "/about.html", "Who [we] are (and why) next line")]
    assert sorted(sections["news"]) == sorted([
        ("Blog post", base + "/news/blog.html", None),
        ("LD story", base + "/news/ld.html", None),
        (OG_TITLE, base + "/news/og.html", "First story."),
        ("No date", base + "/news/plain.html", None),
        ("Old story", base + "/news/old.html", None)]), sections["news"]
    assert "noindex" not in r.body.decode() and "canon" not in r.body.decode()
    # robots.txt: the news sitemap's own line, never llms.txt
    robots = srv.get_ok("/robots.txt").body.decode()
    assert f"Sitemap: {base}/sitemap.xml" in robots
    assert f"Sitemap: {base}/news-sitemap.xml" in robots, robots
    assert "llms" not in robots


def test_news_and_llms_sqlite(make_server):
    srv = make_server(conf=CONF)
    listed, left_out = site_pages(srv)
    srv.start()
    visit(srv, listed, left_out)
    srv.assert_not_recorded(*left_out)
    check_site(srv, listed)
    # the 49-hour-old article is stored with its time, only not listed
    assert srv.query("SELECT published FROM urls WHERE url = '/news/old.html'"
                     )[0][0] > 0
    # a new title moves the news sitemap's ETag, as the store's does
    etag = srv.get("/news-sitemap.xml").header("ETag")
    srv.write("htdocs/news/ld.html", page("LD story, updated",
                                          jsonld("NewsArticle", iso(2))))
    srv.get_ok("/news/ld.html")
    deadline = time.monotonic() + 15      # a positive sentinel: the title
    while srv.query("SELECT title FROM urls WHERE url = '/news/ld.html'") \
            != [("LD story, updated",)]:
        assert time.monotonic() < deadline, "the new title was not stored"
        time.sleep(0.1)
    r = srv.get("/news-sitemap.xml")
    assert r.header("ETag") != etag
    assert b"LD story, updated" in r.body


def test_description_stored_only_for_news_or_llms(make_server):
    """Without SitemapNewsPath and SitemapLLMsPath the writer stores no
    description or publication time (an index entry a page saved, issue
    35); turned on, a page served again has them."""
    srv = make_server(conf="")
    listed, left_out = site_pages(srv)
    srv.start()
    visit(srv, listed, left_out)
    assert srv.query("SELECT title, description, published FROM urls"
                     " WHERE url = '/news/og.html'") == [(OG_TITLE, None, 0)]
    srv.stop()
    srv.conf_text = CONF
    srv.restart()
    srv.get_ok("/news/og.html")
    deadline = time.monotonic() + 15      # a positive sentinel: stored
    while srv.query("SELECT description, published > 0 FROM urls"
                    " WHERE url = '/news/og.html'") \
            != [("First story.", 1)]:
        assert time.monotonic() < deadline, "the description was not stored"
        time.sleep(0.1)
    assert "/news/og.html" in srv.get_ok("/news-sitemap.xml").body.decode()


def test_news_and_llms_postgresql(make_server, pg_db):
    srv = make_server(db=pg_db.uri, conf=CONF)
    listed, left_out = site_pages(srv)
    srv.start()
    visit(srv, listed, left_out,
          wait=lambda *u: pg_db.wait_urls(srv.base, u))
    check_site(srv, listed)


def test_empty_news_sitemap_validates(make_server):
    """No article in the last 48 hours: one listed page without news:news,
    as sitemap.xsd wants at least one <url> (Google News reads no article
    from it); before any page, the 404 of the other documents."""
    srv = make_server(conf=CONF + "SitemapLLMsTitle \"My *site*\"\n"
                      "SitemapLLMsMax 1\n")
    srv.write("htdocs/index.html", page("Home"))
    srv.write("htdocs/a/b.html", page("Deep"))
    srv.start()
    assert srv.get("/news-sitemap.xml").status == 404
    srv.get_ok("/a/b.html")
    srv.get_ok("/")
    srv.wait_recorded("/", "/a/b.html")
    r = srv.get_ok("/news-sitemap.xml")
    root = validate_news(r.body)
    assert news_entries(root) == [(srv.base + "/", None, None)], r.body
    # SitemapLLMsTitle, escaped; SitemapLLMsMax 1: the shallowest page
    title, summary, sections = parse_llms(srv.get_ok("/llms.txt").body.decode())
    assert title == "My *site*" and summary
    assert sections == {"Pages": [("Home", srv.base + "/", None)]}
    assert b"# My \\*site\\*\n" in srv.get_ok("/llms.txt").body


def test_clients_read_the_news_sitemap(make_server):
    """npm sitemap (strict) and Scrapy, from robots.txt: the main sitemap's
    pages and the news sitemap's articles."""
    node_modules()
    srv = make_server(conf=CONF)
    listed, left_out = site_pages(srv)
    srv.start()
    visit(srv, listed, left_out)
    robots_url = srv.base + "/robots.txt"
    want = sorted(srv.base + p for p in listed)
    news = [srv.base + p for p in ("/news/og.html", "/news/ld.html",
                                   "/news/blog.html")]
    r = subprocess.run(["node", os.path.join(CONFORMANCE, "clients.mjs"),
                        robots_url, "gzip", "identity"], capture_output=True,
                       text=True, timeout=60, cwd=CONFORMANCE)
    assert r.returncode == 0, f"clients.mjs failed:\n{r.stderr[-3000:]}"
    npm = json.loads(r.stdout)
    for enc in ("gzip", "identity"):
        got = npm[enc]
        assert sorted(got["robots"]) == sorted(
            [srv.base + "/sitemap.xml", srv.base + "/news-sitemap.xml"]), got
        assert sorted(got["sitemap"]) == sorted(want + news), (enc, got)
    r = subprocess.run([SYSTEM_PYTHON, os.path.join(CONFORMANCE,
                                                    "scrapy_sitemaps.py"),
                        robots_url], capture_output=True, text=True, timeout=90)
    assert r.returncode == 0, r.stderr[-3000:]
    scrapy = json.loads(r.stdout)
    for enc in ("gzip", "identity"):
        got = scrapy[enc]
        assert sorted(got["urls"]) == sorted(want + news), (enc, got)
        assert got["errors"] == 0, got


@pytest.mark.parametrize("conf, needles", [
    ("SitemapNewsPath /news-sitemap.xml\n",
     ["SitemapNewsPath '/news-sitemap.xml' needs SitemapNewsPublication"]),
    ("SitemapNewsPath /news.txt\nSitemapNewsPublication Times en\n",
     ["SitemapNewsPath: '/news.txt' is not allowed"]),
    ("SitemapNewsPath /n.xml\nSitemapNewsPublication Times english\n",
     ["SitemapNewsPublication: the language 'english' is not allowed",
      "ISO 639"]),
    ("SitemapNewsPath /n.xml\nSitemapNewsPublication Times zh-hk\n",
     ["SitemapNewsPublication: the language 'zh-hk' is not allowed"]),
    ("SitemapNewsPath /n.xml\nSitemapNewsPublication \"  \" en\n",
     ["SitemapNewsPublication: the name '  ' is not allowed", "empty"]),
    ("SitemapNewsPath /sitemap.xml\nSitemapNewsPublication Times en\n",
     ["SitemapNewsPath '/sitemap.xml' is not allowed: another"]),
    ("SitemapLLMsPath /llms.md\n", ["SitemapLLMsPath: '/llms.md' is not allowed"]),
    ("SitemapLLMsMax 0\n", ["SitemapLLMsMax: '0' is not allowed"]),
    ("SitemapLLMsMax 50001\n", ["SitemapLLMsMax: '50001' is not allowed"]),
    ("SitemapLLMsSummary \" \"\n", ["SitemapLLMsSummary: ' ' is not allowed"]),
    ("SitemapLLMsTitle \" \"\n", ["SitemapLLMsTitle: ' ' is not allowed"]),
])
def test_bad_directives_stop_start_up(make_server, conf, needles):
    srv = make_server(conf=conf)
    srv.config_fails(*needles)


RENDERED = re.compile(r"rendered (\S+) as (\S+):")


def renders(srv, uri):
    return [m.group(2) for m in map(RENDERED.search,
                                    srv.log_lines("sitemap", "debug"))
            if m and m.group(1) == uri]


def test_renditions_of_news_and_llms(make_server):
    """SitemapCache on (the default): both documents are rendered once into
    their rendition files, plain and gzip, then sent from them (HEAD with
    the file's Content-Length); a change of their content renders them
    again."""
    srv = make_server(conf=CONF)
    listed, left_out = site_pages(srv)
    srv.start()
    visit(srv, listed, left_out)
    files = os.path.join(srv.db_path + ".renditions")
    for path, which in (("/news-sitemap.xml", "news"), ("/llms.txt", "llms")):
        g = srv.get_ok(path)
        assert len(renders(srv, path)) == 1, renders(srv, path)
        stem = renders(srv, path)[0]
        assert stem.endswith("-" + which), stem
        names = os.listdir(files)
        assert stem + ".xml" in names and stem + ".xml.gz" in names, names
        # a second GET, a HEAD and the gzip form: from the files
        assert srv.get_ok(path).body == g.body
        h = srv.request("HEAD", path)
        assert h.status == 200 and h.body == b""
        assert h.header("Content-Length") == str(len(g.body)), h.headers
        z = srv.get(path, headers={"Accept-Encoding": "gzip"})
        assert z.header("Content-Encoding") == "gzip"
        assert gzip.decompress(z.body) == g.body
        zh = srv.request("HEAD", path, headers={"Accept-Encoding": "gzip"})
        assert zh.header("Content-Length") == str(len(z.body)), zh.headers
        assert zh.header("ETag") == z.header("ETag")
        assert srv.get(path, headers={"If-None-Match": g.header("ETag")}
                       ).status == 304
        assert len(renders(srv, path)) == 1, renders(srv, path)
    check_site(srv, listed)
    assert len(renders(srv, "/llms.txt")) == 1
    # a new page: llms.txt changes, is rendered again, and is right
    srv.write("htdocs/new.html", page("Newer"))
    srv.get_ok("/new.html")
    srv.wait_recorded("/new.html")
    body = srv.get_ok("/llms.txt").body.decode()
    assert f"- [Newer]({srv.base}/new.html)" in body, body
    assert len(renders(srv, "/llms.txt")) == 2


def test_news_rendition_follows_the_window(make_server):
    """The news sitemap's rendition is keyed by the rows the 48-hour window
    selects at each request: an article that leaves the window leaves the
    document at once, though nothing was written to the store."""
    srv = make_server(conf=CONF)
    edge = (datetime.datetime.now(datetime.timezone.utc)
            - datetime.timedelta(hours=48) + datetime.timedelta(seconds=6))
    srv.write("htdocs/edge.html", page("Edge", '<meta property="article:'
                                       'published_time" content="%s">'
                                       % edge.isoformat(timespec="seconds")))
    srv.write("htdocs/fresh.html", page("Fresh", '<meta property="article:'
                                        'published_time" content="%s">'
                                        % iso(1)))
    srv.start()
    visit(srv, ["/edge.html", "/fresh.html"], [])
    first = srv.get_ok("/news-sitemap.xml").body
    assert b"/edge.html" in first and b"/fresh.html" in first, first
    assert srv.get_ok("/news-sitemap.xml").body == first
    assert len(renders(srv, "/news-sitemap.xml")) == 1
    deadline = time.monotonic() + 30      # the sentinel: edge.html leaves
    while b"/edge.html" in srv.get_ok("/news-sitemap.xml").body:
        assert time.monotonic() < deadline, "edge.html stayed listed"
        time.sleep(0.5)
    body = srv.get_ok("/news-sitemap.xml").body
    assert b"/fresh.html" in body
    validate_news(body)
    assert len(renders(srv, "/news-sitemap.xml")) == 2
    z = srv.get(path := "/news-sitemap.xml", headers={"Accept-Encoding": "gzip"})
    assert gzip.decompress(z.body) == body, path
