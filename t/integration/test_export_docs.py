# SPDX-License-Identifier: Apache-2.0
"""sitemapctl export writes what the module serves beyond the plain
sitemap (issue 37): with --images the <url>s carry their <image:image>s as
with SitemapImages On; --news-path with --news-publication writes the news
sitemap, --llms-path (with --llms-title, --llms-summary, --llms-max)
llms.txt.  Exported bytes are compared with the served bytes of the same
store, on SQLite and PostgreSQL; bad option values are refused."""
import os
import subprocess
import time

import pytest

from conftest import SITEMAPCTL
from pg import pg_cluster, pg_db  # noqa: F401 (fixtures)
from test_images import write_image, wait_images
from test_news_llms import iso, page, validate_news

CONF = ('SitemapImages On\n'
        'SitemapNewsPath /news-sitemap.xml\n'
        'SitemapNewsPublication "The [Test] Times" de\n'
        'SitemapLLMsPath /ai/llms.txt\n'
        'SitemapLLMsTitle "Test *site*"\n'
        'SitemapLLMsSummary "What (it) is."\n'
        'SitemapLLMsMax 3\n')
OPTS = ["--images", "--news-path", "/news-sitemap.xml",
        "--news-publication", "The [Test] Times DE",
        "--llms-path", "/ai/llms.txt", "--llms-title", "Test *site*",
        "--llms-summary", "What (it) is.", "--llms-max", "3"]
DOCS = ["/sitemap.xml", "/news-sitemap.xml", "/ai/llms.txt"]


def export(srv, out, *opts, db=None):
    return subprocess.run([SITEMAPCTL, "export", db or srv.db_path, "--site",
                           srv.base, *opts, out], capture_output=True,
                          text=True, timeout=60)


def setup_site(srv):
    w = srv.write
    w("htdocs/index.html", page("Home", '<meta name="description" '
                                'content="The [home] page.">'))
    w("htdocs/news/a.html", page(
        "Story (one)", '<meta property="og:image" content="/img/a.png">'
        f'<meta property="article:published_time" content="{iso(1)}">'))
    w("htdocs/news/b.html", page("Story two", f'<meta property="article:'
                                 f'published_time" content="{iso(2)}">'))
    w("htdocs/docs/c.html", page("C"))
    w("htdocs/docs/d/e.html", page("E"))
    write_image(srv, "img/a.png")
    return ["/", "/news/a.html", "/news/b.html", "/docs/c.html",
            "/docs/d/e.html"]


def check_export(srv, out, db=None):
    r = export(srv, out, *OPTS, db=db)
    assert r.returncode == 0, r.stderr
    written = r.stdout.split()
    for path in DOCS:
        assert out + path in written, (path, written)
        with open(out + path, "rb") as f:
            exported = f.read()
        served = srv.get_ok(path).body
        assert exported == served, (path, exported[:600], served[:600])
    with open(out + "/sitemap.xml", "rb") as f:
        assert b"<image:loc>" + srv.base.encode() + b"/img/a.png" in f.read()
    with open(out + "/news-sitemap.xml", "rb") as f:
        validate_news(f.read())
    # without --images the urlset has no image (as SitemapImages Off)
    plain = export(srv, out + "-plain", db=db)
    assert plain.returncode == 0, plain.stderr
    assert out + "-plain/sitemap.xml" in plain.stdout.split()
    assert not [p for p in plain.stdout.split()
                if "news" in p or "llms" in p], plain.stdout
    with open(out + "-plain/sitemap.xml", "rb") as f:
        assert b"image:" not in f.read()


def test_export_equals_served_sqlite(make_server):
    srv = make_server(conf=CONF)
    listed = setup_site(srv)
    srv.start()
    for p in listed:
        srv.get_ok(p)
    srv.wait_recorded(*listed)
    srv.get_ok("/img/a.png", headers={"Referer": srv.base + "/news/a.html"})
    wait_images(srv, {"/news/a.html": [srv.base + "/img/a.png"]})
    check_export(srv, os.path.join(srv.root, "export"))


def test_export_equals_served_postgresql(make_server, pg_db):
    srv = make_server(db=pg_db.uri, conf=CONF)
    listed = setup_site(srv)
    srv.start()
    for p in listed:
        srv.get_ok(p)
    pg_db.wait_urls(srv.base, listed)
    srv.get_ok("/img/a.png", headers={"Referer": srv.base + "/news/a.html"})
    deadline = time.monotonic() + 15      # the sentinel: the image served
    while b"/img/a.png" not in srv.get_ok("/sitemap.xml").body:
        assert time.monotonic() < deadline, "the image was not stored"
        time.sleep(0.1)
    check_export(srv, os.path.join(srv.root, "export"), db=pg_db.uri)


@pytest.mark.parametrize("opts, needle", [
    (["--news-path", "/n.xml"], "--news-path needs --news-publication"),
    (["--news-path", "/n.txt", "--news-publication", "T en"],
     "--news-path '/n.txt'"),
    (["--news-path", "/n.xml", "--news-publication", "Times"],
     "--news-publication 'Times'"),
    (["--news-path", "/n.xml", "--news-publication", "Times english"],
     "not 2 or 3 letters"),
    (["--llms-path", "/llms.md"], "--llms-path '/llms.md'"),
    (["--llms-max", "5"], "go with --llms-path"),
    (["--llms-path", "/l.txt", "--llms-max", "0"], "--llms-max '0'"),
    (["--llms-path", "/l.txt", "--llms-title", " "], "--llms-title ' '"),
])
def test_bad_export_options(tmp_path, opts, needle):
    r = subprocess.run([SITEMAPCTL, "export", str(tmp_path / "db"), "--site",
                        "http://example.com", *opts, str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r
    assert needle in r.stderr, r.stderr
