# SPDX-License-Identifier: Apache-2.0
"""Renditions (issue 17): each sitemap document kept as files, plain and
gzip, sent at static-file cost, and never stale.

Every document is compared, after every kind of change, with what
`sitemapctl export` renders from the store at that moment (the same core
writer, another process, no cache); the gzip forms must decode to those
bytes.  Renders are counted with the module's debug line "rendered URI as
STEM"."""
import gzip
import os
import re
import shutil
import threading
import time

import pytest

from conftest import IS_ROOT, RUN_GID, RUN_UID, SITEMAPCTL
from sitemap_check import check_document
from test_sitemap_scale import seed

HTML = "<html><body>x</body></html>\n"
GZ = {"Accept-Encoding": "gzip"}
RENDERED = re.compile(r"rendered (\S+) as (\S+):")


def renders(srv, uri=None):
    """The documents rendered so far (URIs), in order."""
    out = []
    for ln in srv.log_lines("sitemap", "debug"):
        m = RENDERED.search(ln)
        if m and (uri is None or m.group(1) == uri):
            out.append(m.group(1))
    return out


def cache_dir(srv):
    return srv.db_path + ".renditions"


def cache_files(srv, d=None):
    d = d or cache_dir(srv)
    return {n: os.lstat(os.path.join(d, n)) for n in os.listdir(d)}


def export(srv):
    """{path: bytes} of a fresh render by sitemapctl export."""
    import subprocess
    out = os.path.join(srv.root, "export")
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([SITEMAPCTL, "export", srv.db_path, "--site", srv.base, out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, r.stderr
    docs = {}
    for p in r.stdout.split():
        if p.endswith(".css"):      # the stylesheet: not a rendition
            continue
        with open(p, "rb") as f:
            docs["/" + os.path.relpath(p, out)] = f.read()
    return docs


def check_all_forms(srv):
    """Every document, in every form, equals a fresh render."""
    fresh = export(srv)
    assert "/sitemap.xml" in fresh
    for path, want in fresh.items():
        plain = srv.get(path)
        assert plain.status == 200, (path, plain.status)
        assert plain.body == want, f"{path}: plain bytes differ from a fresh render"
        assert plain.header("Content-Encoding") is None
        assert plain.header("Vary") == "Accept-Encoding"
        assert plain.header("Content-Type") == "application/xml; charset=utf-8"
        z = srv.get(path, headers=GZ)
        assert z.status == 200
        assert z.header("Content-Encoding") == "gzip", z.headers
        assert z.header("Vary") == "Accept-Encoding"
        assert gzip.decompress(z.body) == want, f"{path}: gzip form differs"
        assert z.header("ETag") != plain.header("ETag")
        f = srv.get(path + ".gz")
        assert f.status == 200, (path + ".gz", f.status)
        assert f.header("Content-Type") == "application/gzip"
        assert f.header("Content-Encoding") is None
        assert gzip.decompress(f.body) == want, f"{path}.gz differs"
        check_document(want, srv.base)
    return fresh


def add_pages(srv, *names):
    for n in names:
        srv.write(f"htdocs/{n}.html", HTML)
        assert srv.get(f"/{n}.html").status == 200
    srv.wait_recorded(*(f"/{n}.html" for n in names))


def test_renditions_equal_a_fresh_render_after_every_change(make_server):
    srv = make_server(conf="SitemapPageSize 3\n")
    srv.start()
    add_pages(srv, "a", "b", "c", "d")
    fresh = check_all_forms(srv)
    assert set(fresh) == {"/sitemap.xml", "/sitemap-1.xml", "/sitemap-2.xml"}
    # rendered once each (the index, two pages), then sent from the files
    n = len(renders(srv))
    assert n == 3, renders(srv)
    check_all_forms(srv)
    assert len(renders(srv)) == n

    # a new URL: the last page and the index change, page 1 does not
    add_pages(srv, "e")
    fresh = check_all_forms(srv)
    assert renders(srv)[n:] and "/sitemap-1.xml" not in renders(srv)[n:], renders(srv)
    n = len(renders(srv))

    # a removal (the page holding b: the writers' order decides, under
    # prefork several processes record)
    holder = [p for p, body in fresh.items()
              if p != "/sitemap.xml" and b"/b.html</loc>" in body]
    os.unlink(srv.path("htdocs/b.html"))
    assert srv.get("/b.html").status == 404
    srv.wait_absent("/b.html")
    check_all_forms(srv)
    assert holder and holder[0] in renders(srv)[n:], (holder, renders(srv)[n:])

    # a new lastmod (the page's Last-Modified moves)
    before = srv.row("/d.html")
    srv.write("htdocs/d.html", HTML, mtime=time.time() - 5000)
    assert srv.get("/d.html").status == 200
    deadline = time.monotonic() + 10
    while srv.row("/d.html") == before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert srv.row("/d.html") != before
    check_all_forms(srv)

    # the settings: another SitemapChangefreq through a graceful restart
    srv.graceful(conf="SitemapPageSize 3\nSitemapChangefreq . weekly\n")
    add_pages(srv, "f")          # the new generation's writer stores them
    fresh = check_all_forms(srv)
    assert b"<changefreq>weekly</changefreq>" in fresh["/sitemap-1.xml"]


def test_etags_and_304_for_both_encodings(make_server):
    srv = make_server()
    srv.start()
    add_pages(srv, "a")
    plain = srv.get("/sitemap.xml")
    z = srv.get("/sitemap.xml", headers=GZ)
    pe, ze = plain.header("ETag"), z.header("ETag")
    assert pe and ze and pe != ze
    assert ze == pe[:-1] + '-gz"'
    # the length is known: sent as a file
    assert plain.header("Content-Length") == str(len(plain.body))
    assert z.header("Content-Length") == str(len(z.body))
    r = srv.get("/sitemap.xml", headers={"If-None-Match": pe})
    assert r.status == 304 and r.header("Vary") == "Accept-Encoding"
    r = srv.get("/sitemap.xml", headers={"If-None-Match": ze, **GZ})
    assert r.status == 304 and r.header("ETag") == ze
    # a validator of the other encoding is not this one's
    assert srv.get("/sitemap.xml", headers={"If-None-Match": pe, **GZ}).status == 200
    assert srv.get("/sitemap.xml", headers={"If-None-Match": ze}).status == 200
    # gzip;q=0 refuses gzip
    r = srv.get("/sitemap.xml", headers={"Accept-Encoding": "gzip;q=0, identity"})
    assert r.header("Content-Encoding") is None and r.body == plain.body
    # HEAD: the headers of the GET
    h = srv.request("HEAD", "/sitemap.xml", headers=GZ)
    assert h.status == 200 and h.header("Content-Encoding") == "gzip"
    assert h.header("ETag") == ze


def test_xml_gz_forms(make_server):
    srv = make_server(conf="SitemapPageSize 2\n")
    srv.start()
    add_pages(srv, "a", "b", "c")
    for path in ("/sitemap.xml", "/sitemap-1.xml", "/sitemap-2.xml"):
        r = srv.get(path + ".gz", headers=GZ)
        assert r.status == 200
        assert r.header("Content-Type") == "application/gzip"
        assert r.header("Content-Encoding") is None
        assert r.header("ETag").endswith('-gz"')
        assert gzip.decompress(r.body) == srv.get(path).body
        assert srv.get(path + ".gz", headers={"If-None-Match": r.header("ETag")}).status == 304
    for bad in ("/sitemap-0.xml.gz", "/sitemap-3.xml.gz", "/sitemap-x.xml.gz",
                "/sitemap-01.xml.gz"):
        assert srv.get(bad).status == 404, bad
    # without renditions the gzip files are still served (compressed as
    # they are streamed), with the same bytes
    want = srv.get("/sitemap-1.xml.gz").body
    srv.graceful(conf="SitemapPageSize 2\nSitemapCache Off\n")
    r = srv.get("/sitemap-1.xml.gz")
    assert r.status == 200 and r.header("Content-Type") == "application/gzip"
    assert r.body == want
    # and the .xml documents are as before renditions: no Vary, streamed
    r = srv.get("/sitemap-1.xml", headers=GZ)
    assert r.header("Content-Encoding") is None and r.header("Vary") is None


def test_no_double_compression_with_debian_deflate_conf(make_server):
    conf_file = "/etc/apache2/mods-available/deflate.conf"
    if not os.path.exists(conf_file):
        pytest.skip("Debian's deflate.conf is not installed")
    extra = f"Include {conf_file}\n"
    srv = make_server(conf=extra, modules=("filter", "deflate"))
    srv.start()
    add_pages(srv, "a", "b")
    plain = srv.get("/sitemap.xml")
    assert plain.header("Content-Encoding") is None
    z = srv.get("/sitemap.xml", headers=GZ)
    assert z.header("Content-Encoding") == "gzip", z.headers
    assert gzip.decompress(z.body) == plain.body       # compressed once
    assert z.header("Vary") == "Accept-Encoding"
    f = srv.get("/sitemap.xml.gz", headers=GZ)
    assert f.header("Content-Encoding") is None
    assert gzip.decompress(f.body) == plain.body
    # the control: without renditions mod_deflate does compress the XML
    srv.graceful(conf=extra + "SitemapCache Off\n")
    z = srv.get("/sitemap.xml", headers=GZ)
    assert z.header("Content-Encoding") == "gzip"
    assert z.header("ETag", "").endswith('-gzip"'), z.headers
    assert gzip.decompress(z.body) == plain.body


def test_concurrent_first_requests_render_once(make_server):
    # event with one child process (the harness's sizing), whatever
    # SITEMAP_TEST_MPM says: one process, so exactly one render
    srv = make_server(mpm="event")
    srv.start()
    seed(srv, 30000, 50000)
    results = []

    def one(i):
        r = srv.get("/sitemap-1.xml", headers=GZ if i % 2 else {})
        results.append((i % 2, r.status, gzip.decompress(r.body) if i % 2 else r.body))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and all(s == 200 for _, s, _ in results)
    assert len({b for _, _, b in results}) == 1
    assert renders(srv, "/sitemap-1.xml") == ["/sitemap-1.xml"], renders(srv)
    assert results[0][2] == export(srv)["/sitemap.xml"]


def test_unwritable_cache_dir_falls_back_with_one_line(make_server, tmp_root):
    ro = os.path.join(tmp_root, "ro-cache")
    os.mkdir(ro, 0o555)
    srv = make_server(conf=f"SitemapCache {ro}\n")
    srv.expect_log(r"SitemapCache .*ro-cache: cannot write a rendition")
    srv.start()
    add_pages(srv, "a", "b")
    for _ in range(3):
        r = srv.get("/sitemap.xml")
        assert r.status == 200
        z = srv.get("/sitemap.xml", headers=GZ)
        assert z.header("Content-Encoding") == "gzip"
        assert gzip.decompress(z.body) == r.body
        assert z.header("ETag") == r.header("ETag")[:-1] + '-gz"'
    assert r.body == export(srv)["/sitemap.xml"]
    lines = [ln for ln in srv.log_lines("sitemap", "warn") if "SitemapCache" in ln]
    # at most once a minute per process (prefork may answer from two)
    pids = [re.search(r"\[pid (\d+)", ln).group(1) for ln in lines]
    assert lines and len(pids) == len(set(pids)), lines
    assert os.listdir(ro) == [] and not renders(srv)      # streamed


@pytest.mark.skipif(not IS_ROOT, reason="the threat is a root parent")
def test_symlink_in_cache_dir_not_followed(make_server, tmp_root):
    srv = make_server()
    srv.start()
    add_pages(srv, "a")
    want = srv.get("/sitemap.xml").body
    d = cache_dir(srv)
    names = sorted(n for n in os.listdir(d) if n.endswith(".xml"))
    assert len(names) == 1, names
    # the directory was made by the root parent for the children
    st = os.stat(d)
    assert (st.st_uid, st.st_gid) == (RUN_UID, RUN_GID)
    # a valid rendition moved away and linked back: a follower would take
    # it (its header matches), O_NOFOLLOW makes it a miss and renders again
    outside = os.path.join(tmp_root, "outside.xml")
    shutil.copy(os.path.join(d, names[0]), outside)
    os.chown(outside, RUN_UID, RUN_GID)       # readable: only the link stops it
    os.chmod(outside, 0o644)
    os.unlink(os.path.join(d, names[0]))
    os.symlink(outside, os.path.join(d, names[0]))
    before = len(renders(srv))
    assert srv.get("/sitemap.xml").body == want
    assert len(renders(srv)) == before + 1
    # and the rename replaced the link, never writing through it
    assert not os.path.islink(os.path.join(d, names[0]))
    # a link planted at the name of the next version's file
    victim = os.path.join(tmp_root, "victim")
    with open(victim, "w") as f:
        f.write("root's file\n")
    gzname = names[0] + ".gz"
    os.unlink(os.path.join(d, gzname))
    os.symlink(victim, os.path.join(d, gzname))
    add_pages(srv, "b")
    check_all_forms(srv)
    assert open(victim).read() == "root's file\n"
    assert not os.path.islink(os.path.join(d, gzname))


def test_eviction_keeps_the_bound(make_server):
    srv = make_server(conf="SitemapCacheMaxSize 1M\n")
    srv.start()
    seed(srv, 16000, 4000)        # 4 pages of about 400 KB each
    fresh = export(srv)
    for path in ("/sitemap-1.xml", "/sitemap-2.xml", "/sitemap-3.xml",
                 "/sitemap-4.xml", "/sitemap.xml"):
        assert srv.get(path).body == fresh[path]
        total = sum(s.st_size for s in cache_files(srv).values())
        assert total <= 1 << 20, (path, total)
    # the least recently used went first: page 1's plain file
    names = cache_files(srv)
    assert not [n for n in names if n.endswith("-p1.xml")], sorted((n, s.st_size, s.st_atime) for n, s in names.items())
    assert [n for n in names if n.endswith("-p4.xml")], sorted(names)
    # an evicted page is rendered again when asked for, and still right
    assert srv.get("/sitemap-1.xml").body == fresh["/sitemap-1.xml"]
    assert gzip.decompress(srv.get("/sitemap-1.xml", headers=GZ).body) == fresh["/sitemap-1.xml"]
    assert len(renders(srv, "/sitemap-1.xml")) == 2


@pytest.mark.parametrize("directive,value,needle", [
    ("SitemapCacheMaxSize", "10x", "a size from 1M to 1T"),
    ("SitemapCacheMaxSize", "0", "a size from 1M to 1T"),
    ("SitemapCacheMaxSize", "2T", "a size from 1M to 1T"),
    ("SitemapCacheMaxSize", "-5M", "a size from 1M to 1T"),
    ("SitemapCacheMaxSize", "1MB", "a size from 1M to 1T"),
    ("SitemapCache", "/var/cache/x/", "no trailing '/'"),
])
def test_bad_cache_directives_stop_startup(make_server, directive, value, needle):
    srv = make_server()
    srv.config_fails(directive, value, needle, conf=f"{directive} {value}\n")
