# SPDX-License-Identifier: Apache-2.0
"""sitemapctl, the administrator's command, against the same store files a
real httpd writes: import of access logs (with the module's rules, also the
running server's own log), add and remove while httpd records, export
compared byte for byte with what the module serves, prune, stats, list,
check, and every error path with its exit status."""
import gzip
import os
import shutil
import sqlite3
import subprocess
import threading
import time

import pytest

from conftest import (IS_ROOT, RUN_GID, RUN_UID, SCHEMA_VERSION, SITEMAPCTL,
                      TOP_SRCDIR)
from sitemap_check import check_document

HTML = "<html><body>x</body></html>\n"
BASE = "https://www.example.com"

EX_OK, EX_CHECK, EX_USAGE, EX_NO_STORE, EX_UNKNOWN_SITE, EX_LOG, EX_STORE, EX_WRITE = range(8)


@pytest.fixture(autouse=True)
def _built():
    assert os.access(SITEMAPCTL, os.X_OK), f"sitemapctl is not built: {SITEMAPCTL}"


def ctl(*args, timeout=60, want=None):
    r = subprocess.run([SITEMAPCTL, *map(str, args)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, errors="replace",
                       timeout=timeout)
    if want is not None:
        assert r.returncode == want, (
            f"sitemapctl {' '.join(map(str, args))}: exit {r.returncode}, "
            f"expected {want}\nstdout: {r.stdout}\nstderr: {r.stderr}")
    return r


def rows(db, base=BASE):
    """{url: (lastmod, page, last_seen)} of a site, read-only."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
    try:
        return {u: (lm, pg, ls) for u, lm, pg, ls in con.execute(
            "SELECT u.url, u.lastmod, u.page, u.last_seen FROM urls u "
            "JOIN sites s ON s.id = u.site_id WHERE s.base = ?", (base,))}
    finally:
        con.close()


def clf(t):
    return time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(t))


def line(t, req, status, user="-", combined=True):
    s = f'192.0.2.7 - {user} [{clf(t)}] "{req}" {status} 512'
    if combined:
        s += ' "https://ref.example/" "Mozilla/5.0 (X11; Linux x86_64)"'
    return s + "\n"


T0 = 1760000000


# ---------------------------------------------------------------------------
# import

def sample_log():
    L = [
        line(T0 + 1, "GET /a.html HTTP/1.1", 200),
        line(T0 + 9, "GET /a.html HTTP/1.1", 200),           # newest wins
        line(T0 + 5, "GET /./a.html HTTP/1.1", 200, combined=False),
        line(T0 + 2, "GET /b//c/../d HTTP/1.1", 200),        # -> /b/d
        line(T0 + 3, "GET /list?page=2&x HTTP/1.1", 200),    # allowed query
        line(T0 + 3, "GET /list?sort=up HTTP/1.1", 200),     # refused query
        line(T0 + 4, "GET /private/x HTTP/1.1", 200),        # excluded
        line(T0 + 4, "GET /style.css HTTP/1.1", 200),        # not a page
        line(T0 + 4, "GET /img/logo.PNG?v=2 HTTP/1.1", 200), # not a page
        line(T0 + 4, "GET /secret HTTP/1.1", 200, user="bob"),
        line(T0 + 4, "POST /form HTTP/1.1", 200),
        line(T0 + 4, "HEAD /head HTTP/1.1", 200),
        line(T0 + 4, "GET /cached HTTP/1.1", 304),
        line(T0 + 4, "GET /caf\\xc3\\xa9 HTTP/1.1", 200),    # escaped by httpd
        line(T0 + 4, 'GET /q\\"uote HTTP/1.1', 200),
        line(T0 + 4, "-", 408),
        "this is not an access log line\n",
        '192.0.2.7 - - [99/Foo/2025:00:00:00 +0000] "GET /x HTTP/1.1" 200 1\n',
        '192.0.2.7 - - [' + clf(T0) + '] "GET /unterminated HTTP/1.1 200 1\n',
        "\n",
        line(T0 + 6, "GET /gone HTTP/1.1", 200),
        line(T0 + 7, "GET /gone HTTP/1.1", 410),             # forgotten after
        line(T0 + 6, "GET /back HTTP/1.1", 404),
        line(T0 + 8, "GET /back HTTP/1.1", 200),             # back again
    ]
    return "".join(L)


def test_import_log_with_rules(tmp_root):
    db = os.path.join(tmp_root, "store.db")
    plain = os.path.join(tmp_root, "access.log")
    with open(plain, "w") as f:
        f.write(sample_log())
    gz = os.path.join(tmp_root, "access.log.2.gz")
    with gzip.open(gz, "wt") as f:
        f.write(line(T0 + 20, "GET /from-gzip HTTP/1.1", 200))
        f.write(line(T0 + 20, "GET /a.html HTTP/1.1", 200))   # newer still
    r = ctl("import", db, "--site", "HTTPS://WWW.Example.com:443/", "--exclude",
            "^/private/", "--allow-query", "page", "--allow-query=x", plain, gz,
            want=EX_OK)
    assert "does not exist: creating a new store" in r.stderr
    got = rows(db)
    assert set(got) == {"/a.html", "/b/d", "/list?page=2&x", "/caf%C3%A9",
                        "/q%22uote", "/from-gzip", "/back"}, got
    assert got["/a.html"][0] == T0 + 20
    assert got["/b/d"][0] == T0 + 2
    assert got["/back"][0] == T0 + 8
    # lines: 24 + 2; malformed: 4 (garbage, bad date, unterminated, empty)
    assert "read 26 lines from 2 files" in r.stdout, r.stdout
    assert "malformed lines: 4" in r.stdout
    assert "access.log:17: no [time]: this is not an access log line" in r.stdout
    assert "excluded 1" in r.stdout and "query 1" in r.stdout
    assert "content type 2" in r.stdout and "authenticated 1" in r.stdout
    assert "not GET 2" in r.stdout and "status 2" in r.stdout
    assert "8 distinct: 7 added, 0 already stored, 0 removed" in r.stdout
    ctl("check", db, want=EX_OK)

    # Again: nothing new, every URL already stored; lastmods stay.
    r = ctl("import", db, "--site", BASE, "--exclude", "^/private/",
            "--allow-query", "page", "--allow-query", "x", plain, gz, want=EX_OK)
    assert "0 added, 7 already stored" in r.stdout
    assert rows(db) == got

    # --all-types: the style sheet is taken for a page; /gone is not stored
    # and stays so; a forgetting line removes a stored URL.
    log2 = os.path.join(tmp_root, "more.log")
    with open(log2, "w") as f:
        f.write(line(T0 + 30, "GET /style.css HTTP/1.1", 200))
        f.write(line(T0 + 30, "GET /b/d HTTP/1.1", 301))
    r = ctl("import", db, "--site", BASE, "--all-types", log2, want=EX_OK)
    assert "1 added, 0 already stored, 1 removed" in r.stdout
    assert "/style.css" in rows(db) and "/b/d" not in rows(db)


def test_import_from_stdin_and_page_size(tmp_root):
    db = os.path.join(tmp_root, "store.db")
    text = "".join(line(T0 + i, f"GET /p{i:02d} HTTP/1.1", 200) for i in range(5))
    r = subprocess.run([SITEMAPCTL, "import", db, "--site", BASE, "--page-size", "2",
                        "-"], input=text, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    got = rows(db)
    assert [got[f"/p{i:02d}"][1] for i in range(5)] == [1, 1, 2, 2, 3]
    # add follows the stored page size; --page-size of a known site is ignored
    r = ctl("add", db, "--site", BASE, "--page-size", "10", "/p05", want=EX_OK)
    assert "ignored" in r.stderr
    assert rows(db)["/p05"][1] == 3


def test_import_the_servers_own_log(make_server):
    """The same requests, recorded live by the module and imported from the
    server's access log by sitemapctl, give the same URLs."""
    srv = make_server(conf="SitemapExclude ^/drafts/\nSitemapAllowQuery page\n")
    for p in ("a.html", "b.html", "drafts/d.html", "style.css", "logo.png",
              "dir/index.html"):
        srv.write("htdocs/" + p, HTML if p.endswith("html") else "x")
    srv.start()
    for p in ("/a.html", "/b.html?page=3", "/b.html?sort=1", "/drafts/d.html",
              "/style.css", "/logo.png", "/dir/", "/nope.html", "/a.html"):
        srv.get(p)
    srv.request("POST", "/a.html", body="x")
    srv.wait_recorded("/a.html", "/b.html?page=3", "/dir/")
    srv.sentinel()
    live = srv.urls()
    srv.stop()
    db = os.path.join(srv.root, "imported.db")
    r = ctl("import", db, "--site", srv.base, "--exclude", "^/drafts/",
            "--allow-query", "page", srv.path("logs/access_log"), want=EX_OK)
    assert "malformed lines: 0" in r.stdout, r.stdout
    assert set(rows(db, srv.base)) == live, (rows(db, srv.base), live)


# ---------------------------------------------------------------------------
# add, remove, list, stats, prune while httpd records

def test_add_remove_while_httpd_records(make_server):
    srv = make_server()
    for i in range(40):
        srv.write(f"htdocs/live{i}.html", HTML)
    srv.start()
    db = srv.db_path
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")

    stop = threading.Event()
    errors = []

    def traffic():
        i = 0
        while not stop.is_set():
            try:
                r = srv.get(f"/live{i % 40}.html")
                if r.status != 200:
                    errors.append(r.status)
            except Exception as e:          # noqa: BLE001
                errors.append(e)
            i += 1

    # recent lines: older ones than SitemapExpire (365d) the module expires
    big = srv.path("big.log")
    t = int(time.time()) - 86400
    with open(big, "w") as f:
        for i in range(110000):
            f.write(line(t + i // 100, f"GET /imported/{i} HTTP/1.1", 200))

    threads = [threading.Thread(target=traffic) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        # three write transactions of up to 50,000 URLs, while httpd writes
        r = ctl("import", db, "--site", srv.base, big, want=EX_OK)
        assert "110000 added" in r.stdout, r.stdout
        for round_ in range(5):
            added = [f"/admin/{round_}/{k}" for k in range(200)]
            ctl("add", db, "--site", srv.base, *added, want=EX_OK)
            ctl("add", db, "--site", srv.base, f"{srv.base}/full/{round_}",
                want=EX_OK)
            r = ctl("remove", db, "--site", srv.base, *added[:100], "/never",
                    want=EX_OK)
            assert "100 removed, 1 not stored" in r.stdout
            ctl("list", db, "--site", srv.base, want=EX_OK)
            ctl("stats", db, want=EX_OK)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not errors, errors[:5]
    have = srv.wait_recorded(*[f"/live{i}.html" for i in range(40)])
    assert {f"/imported/{i}" for i in range(110000)} <= have
    for round_ in range(5):
        assert {f"/admin/{round_}/{k}" for k in range(100, 200)} <= have
        assert not ({f"/admin/{round_}/{k}" for k in range(100)} & have)
        assert f"/full/{round_}" in have
    # the module goes on recording into the same file
    srv.sentinel()
    ctl("check", db, want=EX_OK)


def test_list_stats_prune(make_server):
    srv = make_server(conf="SitemapPageSize 2\n")
    for p in ("one.html", "two.html", "three.html"):
        srv.write("htdocs/" + p, HTML, mtime=T0)
    srv.start()
    for p in ("/one.html", "/two.html", "/three.html"):
        srv.get_ok(p)
        srv.wait_recorded(p)
    db = srv.db_path
    # an old URL, last seen 60 days ago, imported from an old log (within
    # SitemapExpire, so the module's own expiry leaves it alone)
    old = os.path.join(srv.root, "old.log")
    t_old = int(time.time()) - 86400 * 60
    with open(old, "w") as f:
        f.write(line(t_old, "GET /ancient.html HTTP/1.1", 200))
    ctl("import", db, "--site", srv.base, old, want=EX_OK)

    r = ctl("list", db, "--site", srv.base, want=EX_OK)
    lines = r.stdout.splitlines()
    assert lines[:3] == [
        f"{srv.base}/one.html\t2025-10-09T08:53:20+00:00\t1",
        f"{srv.base}/two.html\t2025-10-09T08:53:20+00:00\t1",
        f"{srv.base}/three.html\t2025-10-09T08:53:20+00:00\t2"], lines
    assert lines[3] == (f"{srv.base}/ancient.html\t"
                        f"{time.strftime('%Y-%m-%dT%H:%M:%S+00:00', time.gmtime(t_old))}\t2")
    r = ctl("list", db, "--site", srv.base, "--page", "2", want=EX_OK)
    assert len(r.stdout.splitlines()) == 2
    r = ctl("list", db, "--site", srv.base, "--page", "9", want=EX_OK)
    assert r.stdout == "" and "page 9" in r.stderr

    r = ctl("stats", db, "--site", srv.base, want=EX_OK)
    assert "urls:           4" in r.stdout, r.stdout
    assert "pages:          2 (2 URLs a page" in r.stdout
    assert "oldest lastmod: 2025-10-09T08:53:20+00:00" in r.stdout
    assert "newest lastmod: " + time.strftime('%Y-%m-%dT%H:%M:%S+00:00',
                                              time.gmtime(t_old)) in r.stdout
    assert f"schema version: {SCHEMA_VERSION}" in r.stdout
    r = ctl("stats", db, want=EX_OK)
    assert "sites:          1" in r.stdout

    r = ctl("prune", db, "--site", srv.base, "--older-than", "30d", want=EX_OK)
    assert r.stdout.strip() == "1 removed"
    assert srv.urls() == {"/one.html", "/two.html", "/three.html"}
    r = ctl("prune", db, "--site", srv.base, "--older-than", "90mi", want=EX_OK)
    assert r.stdout.strip() == "0 removed"


# ---------------------------------------------------------------------------
# export: byte for byte what the module serves

# A site under /maps/ (a sitemap lists only URLs under its own directory).
EXPORT_CONF = """SitemapPageSize 2
SitemapPath /maps/site.xml
SitemapChangefreq ^/maps/news/ daily
SitemapChangefreq . monthly
SitemapPriority ^/maps/$ 1.0
SitemapPriority html$ 0.5
RewriteEngine On
RewriteRule ^/maps/news/ /page.html [L]
"""


def served(srv, path):
    r = srv.get(path)
    assert r.status == 200, (path, r.status)
    return r.body


def export_and_compare(srv, sitemap_path, expect_files):
    out = os.path.join(srv.root, "export")
    r = ctl("export", srv.db_path, "--site", srv.base, out, want=EX_OK)
    files = {os.path.relpath(p, out) for p in r.stdout.split()}
    # The module's own stylesheet, when the documents name it, beside them.
    css = os.path.join(os.path.dirname(expect_files[0]), "sitemap.css")
    pi = b'<?xml-stylesheet type="text/css" href="/%s"?>' % css.encode()
    want = set(expect_files) | ({css} if pi in served(srv, sitemap_path)
                                else set())
    assert files == want, files
    for rel in expect_files:
        with open(os.path.join(out, rel), "rb") as f:
            body = f.read()
        assert body == served(srv, "/" + rel), rel
        check_document(body, srv.base)
    if css in want:
        with open(os.path.join(out, css), "rb") as f:
            assert f.read() == srv.get("/" + css).body
    # nothing else: no temporary files left behind
    left = {os.path.relpath(os.path.join(d, n), out)
            for d, _, names in os.walk(out) for n in names}
    assert left == want, left
    return out


def test_export_matches_the_module(make_server):
    srv = make_server(conf=EXPORT_CONF)
    srv.conf_text = f"SitemapBaseURL {srv.base}/maps/\n" + srv.conf_text
    for p in ("index.html", "a.html", "b.html", "c.txt"):
        srv.write("htdocs/maps/" + p, HTML, mtime=T0)
    srv.start()
    paths = ["/maps/", "/maps/a.html", "/maps/news/1", "/maps/news/2?x=1", "/maps/b.html",
             "/maps/news/3"]
    for p in paths:
        if p == "/maps/news/2?x=1":
            continue
        srv.get_ok(p)
        srv.wait_recorded(p)
    # a removal: page 2's lastmod moves to the time of the removal
    os.unlink(srv.path("htdocs/maps/b.html"))
    assert srv.get("/maps/b.html").status == 404
    srv.wait_absent("/maps/b.html")
    export_and_compare(srv, "/maps/site.xml",
                       ["maps/site.xml", "maps/site-1.xml", "maps/site-2.xml",
                        "maps/site-3.xml"])
    body = served(srv, "/maps/site-2.xml")
    assert b"<changefreq>daily</changefreq>" in body
    assert b"<priority>0.5</priority>" in served(srv, "/maps/site-1.xml")

    # the same after sitemapctl changed the store
    ctl("add", srv.db_path, "--site", srv.base, "/maps/news/9", "/maps/z.html", want=EX_OK)
    ctl("remove", srv.db_path, "--site", srv.base, "/maps/", want=EX_OK)
    export_and_compare(srv, "/maps/site.xml",
                       ["maps/site.xml", "maps/site-1.xml", "maps/site-2.xml",
                        "maps/site-3.xml", "maps/site-4.xml"])


def test_export_one_page_and_empty(make_server):
    srv = make_server(conf="SitemapPriority . 0.8\n")
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    out = export_and_compare(srv, "/sitemap.xml", ["sitemap.xml", "sitemap-1.xml"])
    os.unlink(srv.path("htdocs/page.html"))
    assert srv.get("/page.html").status == 404
    srv.wait_absent("/page.html")
    # no URL left: the module answers 404, and export leaves no document
    assert srv.get("/sitemap.xml").status == 404
    r = ctl("export", srv.db_path, "--site", srv.base, out, want=EX_OK)
    assert "no URL yet" in r.stderr, r.stderr
    left = {n for _, _, names in os.walk(out) for n in names}
    assert not left & {"sitemap.xml", "sitemap-1.xml"}, left


def test_export_settings_follow_the_configuration(make_server):
    """The settings the module stores change with its configuration (a
    graceful restart), and export follows."""
    srv = make_server(conf="SitemapPageSize 1\nSitemapChangefreq . weekly\n")
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    export_and_compare(srv, "/sitemap.xml", ["sitemap.xml", "sitemap-1.xml"])
    srv.graceful(conf="SitemapPageSize 1\nSitemapChangefreq . hourly\n"
                      "SitemapPriority ^/index 0.9\n")
    srv.get_ok("/index.html")       # the new generation writes: settings too
    srv.wait_recorded("/index.html")
    out = export_and_compare(srv, "/sitemap.xml",
                             ["sitemap.xml", "sitemap-1.xml", "sitemap-2.xml"])
    with open(os.path.join(out, "sitemap-1.xml"), "rb") as f:
        assert b"hourly" in f.read()
    with open(os.path.join(out, "sitemap-2.xml"), "rb") as f:
        assert b"<priority>0.9</priority>" in f.read()


@pytest.mark.slow
def test_export_index_past_50000_pages(make_server, tmp_root):
    """More non-empty pages than an index may list: the module's index
    lists the first 50,000, and so does the exported one; every page is
    served and exported."""
    srv = make_server(conf="SitemapPageSize 1\n")
    srv.expect_log(r"has 50003 non-empty pages; the index lists the first 50000")
    srv.start()
    srv.get_ok("/page.html")        # the module stores its settings
    srv.wait_recorded("/page.html")
    log = os.path.join(tmp_root, "big.log")
    t = time.time() - 60
    with open(log, "w") as f:
        for i in range(50002):
            f.write(line(t, f"GET /u/{i:05d} HTTP/1.1", 200, combined=False))
    ctl("import", srv.db_path, "--site", srv.base, log, want=EX_OK, timeout=120)
    out = os.path.join(srv.root, "export")
    r = ctl("export", srv.db_path, "--site", srv.base, out, want=EX_OK,
            timeout=120)
    assert "50003 non-empty pages are past" not in r.stderr  # the count left out
    assert "3 non-empty pages are past the 50000 an index may list" in r.stderr, r.stderr
    with open(os.path.join(out, "sitemap.xml"), "rb") as f:
        exported = f.read()
    index = served(srv, "/sitemap.xml")
    assert exported == index
    assert index.count(b"<sitemap>") == 50000
    assert b"/sitemap-50000.xml</loc>" in index
    assert b"/sitemap-50001.xml</loc>" not in index
    for n in (1, 50000, 50001, 50003):
        with open(os.path.join(out, f"sitemap-{n}.xml"), "rb") as f:
            assert f.read() == served(srv, f"/sitemap-{n}.xml"), n
    assert len(os.listdir(out)) == 50004 + 1     # and sitemap.css


@pytest.mark.skipif(not IS_ROOT, reason="needs root")
def test_store_created_by_root_goes_to_the_directory_owner(tmp_root):
    d = os.path.join(tmp_root, "state")
    os.makedirs(d)
    os.chown(d, RUN_UID, RUN_GID)
    db = os.path.join(d, "new.db")
    ctl("add", db, "--site", BASE, "/x", want=EX_OK)
    st = os.stat(db)
    assert (st.st_uid, st.st_gid) == (RUN_UID, RUN_GID)


@pytest.mark.skipif(not IS_ROOT, reason="needs root")
@pytest.mark.parametrize("existing", [True, False], ids=["store", "new"])
def test_root_refuses_a_store_its_owner_cannot_reach(tmp_root, existing):
    """A store of the User's (or a new one in the User's directory) under
    a 0700 directory of root's, which the User cannot pass: root neither
    opens it as root (its content is the User's) nor can it become the
    User and open it (SQLite opens it by its path): every command refuses,
    saying why, with the status of a store not safe to open, and leaves
    it as it was; reachable again, it works, as the User."""
    shut = os.path.join(tmp_root, "shut")
    d = os.path.join(shut, "x")
    os.makedirs(d)
    os.chown(d, RUN_UID, RUN_GID)
    db = os.path.join(d, "s.db")
    if existing:
        ctl("add", db, "--site", BASE, "/one", want=EX_OK)
        assert os.stat(db).st_uid == RUN_UID
        before = {f: os.stat(os.path.join(d, f)).st_mtime_ns
                  for f in os.listdir(d)}
    os.chmod(shut, 0o700)
    for cmd in (["add", "--site", BASE, "/two"], ["list", "--site", BASE],
                ["stats"], ["check"], ["remove", "--site", BASE, "/one"],
                ["export", "--site", BASE, os.path.join(tmp_root, "out")]):
        r = ctl(cmd[0], db, *cmd[1:], want=EX_NO_STORE)
        assert f"refusing the store {db} as root" in r.stderr, r.stderr
        assert f"uid {RUN_UID}, who cannot reach {d}" in r.stderr, r.stderr
    if existing:
        assert {f: os.stat(os.path.join(d, f)).st_mtime_ns
                for f in os.listdir(d)} == before
    else:
        assert os.listdir(d) == []
    os.chmod(shut, 0o755)
    ctl("add", db, "--site", BASE, "/two", want=EX_OK)
    assert set(rows(db)) == ({"/one", "/two"} if existing else {"/two"})
    assert all(os.stat(os.path.join(d, f)).st_uid == RUN_UID
               for f in os.listdir(d))


# ---------------------------------------------------------------------------
# errors and exit statuses

def make_store(tmp_root, *urls):
    db = os.path.join(tmp_root, "store.db")
    ctl("add", db, "--site", BASE, *(urls or ("/x",)), want=EX_OK)
    return db


def test_help():
    r = ctl("--help", want=EX_OK)
    assert "Exit status:" in r.stdout and "sitemapctl import" in r.stdout
    for cmd in ("stats", "list", "import", "add", "remove", "export", "prune", "check"):
        r = ctl(cmd, "--help", want=EX_OK)
        assert r.stdout.startswith(f"Usage: sitemapctl {cmd} "), r.stdout
        assert ctl("help", cmd, want=EX_OK).stdout == r.stdout
    assert ctl("--version", want=EX_OK).stdout.startswith("sitemapctl")


@pytest.mark.parametrize("args,needle", [
    ((), "Usage:"),
    (("frobnicate", "x.db"), "unknown command 'frobnicate'"),
    (("stats",), "no DB"),
    (("stats", "{db}", "--bogus"), "does not take the option --bogus"),
    (("stats", "{db}", "-x"), "unknown option '-x'"),
    (("stats", "{db}", "extra"), "unexpected argument 'extra'"),
    (("list", "{db}"), "needs --site BASE"),
    (("list", "{db}", "--site"), "--site needs a value"),
    (("list", "{db}", "--site", "ftp://x"), "is not a base URL"),
    (("list", "{db}", "--site", "https://x.example/path"), "is not a base URL"),
    (("list", "{db}", "--site", BASE, "--page", "0"), "--page '0'"),
    (("list", "{db}", "--site", BASE, "--site", BASE), "given twice"),
    (("import", "{db}", "--site", BASE), "at least one LOG"),
    (("import", "{db}", "--site", BASE, "--exclude", "(", "x.log"), "not a valid regular expression"),
    (("import", "{db}", "--site", BASE, "--allow-query", "a=b", "x.log"), "--allow-query 'a=b'"),
    (("import", "{db}", "--site", BASE, "--page-size", "50001", "x.log"), "--page-size '50001'"),
    (("import", "{db}", "--site", BASE, "--all-types=1", "x.log"), "takes no value"),
    (("add", "{db}", "--site", BASE), "at least one URL"),
    (("add", "{db}", "--site", BASE, "https://other.example/x"), "is not on the site"),
    (("add", "{db}", "--site", BASE, "relative"), "neither a path"),
    (("add", "{db}", "--site", BASE, "/a%zz"), "hex"),
    (("add", "{db}", "--site", BASE, "--lastmod", "soon", "/x"), "--lastmod 'soon'"),
    (("remove", "{db}", "--site", BASE, "/" + "a" * 2100), "too long"),
    (("export", "{db}", "--site", BASE), "a DIR"),
    (("export", "{db}", "--site", BASE, "d1", "d2"), "unexpected argument 'd2'"),
    (("prune", "{db}", "--site", BASE), "needs --older-than"),
    (("prune", "{db}", "--site", BASE, "--older-than", "0d"), "more than 0"),
    (("prune", "{db}", "--site", BASE, "--older-than", "5m"), "--older-than '5m'"),
    (("check", "{db}", "--site", BASE), "does not take the option --site"),
])
def test_usage_errors(tmp_root, args, needle):
    db = make_store(tmp_root)
    before = rows(db)
    r = ctl(*(a.format(db=db) for a in args), want=EX_USAGE)
    assert needle in r.stderr, r.stderr
    assert rows(db) == before


@pytest.mark.parametrize("cmd", [
    ("stats",), ("list", "--site", BASE), ("export", "--site", BASE, "out"),
    ("remove", "--site", BASE, "/x"), ("prune", "--site", BASE, "--older-than", "1d"),
    ("check",),
])
def test_missing_store_is_never_created(tmp_root, cmd):
    db = os.path.join(tmp_root, "missing.db")
    r = ctl(cmd[0], db, *cmd[1:], want=EX_NO_STORE)
    assert "missing.db" in r.stderr and "No such file" in r.stderr, r.stderr
    assert os.listdir(tmp_root) == []


def test_not_a_store(tmp_root):
    junk = os.path.join(tmp_root, "junk.db")
    with open(junk, "w") as f:
        f.write("just some text, not a database\n" * 100)
    other = os.path.join(tmp_root, "other.db")
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    for path, why, check_why in ((junk, "not a database", "not an SQLite database"),
                                 (other, "not a mod_sitemap store",
                                  "not a mod_sitemap store")):
        with open(path, "rb") as f:
            before = f.read()
        for cmd in (("stats",), ("list", "--site", BASE),
                    ("export", "--site", BASE, os.path.join(tmp_root, "out")),
                    ("add", "--site", BASE, "/x"),
                    ("import", "--site", BASE, "/dev/null")):
            r = ctl(cmd[0], path, *cmd[1:], want=EX_NO_STORE)
            assert why in r.stderr, (cmd, r.stderr)
        with open(path, "rb") as f:
            assert f.read() == before, path
        # not a store at all: cannot be opened (3), not "not sound" (1)
        r = ctl("check", path, want=EX_NO_STORE)
        assert check_why in r.stderr, r.stderr
    ctl("stats", tmp_root, want=EX_NO_STORE)      # a directory


def test_output_lost_is_a_failure(tmp_root):
    """Output that never reached standard output (a full disk) is status 7,
    whatever the command: stdio reports it only at fflush/fclose."""
    db = make_store(tmp_root, *[f"/p/{i}" for i in range(200)])
    for args in (("stats", db), ("list", db, "--site", BASE), ("--help",),
                 ("stats", "--help"), ("--version",)):
        with open("/dev/full", "w") as full:
            r = subprocess.run([SITEMAPCTL, *args], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=60)
        assert r.returncode == EX_WRITE, (args, r.returncode, r.stderr)
        assert "No space left on device" in r.stderr, (args, r.stderr)


def test_closed_pipe_is_a_failure(tmp_root):
    """A reader that went away (`sitemapctl list ... | head`) is status 7,
    as the README says, not death by SIGPIPE (141 in a shell)."""
    db = make_store(tmp_root, *[f"/p/{i}" for i in range(5000)])
    r_fd, w_fd = os.pipe()
    os.close(r_fd)                      # nobody will ever read
    try:
        r = subprocess.run([SITEMAPCTL, "list", db, "--site", BASE],
                           stdout=w_fd, stderr=subprocess.PIPE, text=True,
                           timeout=60)
    finally:
        os.close(w_fd)
    assert r.returncode == EX_WRITE, (r.returncode, r.stderr)
    assert "Broken pipe" in r.stderr, r.stderr


def as_user(uid, gid):
    def drop():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    return drop


@pytest.mark.skipif(not IS_ROOT, reason="needs root to run as another user")
def test_write_without_permission_is_status_3(tmp_root):
    """A store the user may read but not write: add, remove, prune and
    import are refused before anything (3, as for any store that cannot be
    opened), not started and failed at the first write (6)."""
    os.chmod(tmp_root, 0o755)
    # the user may not reach the build tree (a checkout in /root): a copy
    ctl_copy = os.path.join(tmp_root, "sitemapctl")
    shutil.copy(SITEMAPCTL, ctl_copy)
    os.chmod(ctl_copy, 0o755)
    db = make_store(tmp_root, "/x")
    os.chmod(db, 0o644)              # root's, readable by all
    log = os.path.join(tmp_root, "a.log")
    with open(log, "w") as f:
        f.write(line(T0, "GET /new HTTP/1.1", 200))
    os.chmod(log, 0o644)
    for cmd in (("add", "--site", BASE, "/y"), ("remove", "--site", BASE, "/x"),
                ("prune", "--site", BASE, "--older-than", "1s"),
                ("import", "--site", BASE, log)):
        r = subprocess.run([ctl_copy, cmd[0], db, *cmd[1:]],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=60,
                           preexec_fn=as_user(RUN_UID, RUN_GID))
        assert r.returncode == EX_NO_STORE, (cmd, r.returncode, r.stderr)
        assert "for writing: Permission denied" in r.stderr, r.stderr
    # the store file writable, its directory not (no journal can be made)
    os.chown(db, RUN_UID, RUN_GID)
    r = subprocess.run([ctl_copy, "add", db, "--site", BASE, "/y"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60, preexec_fn=as_user(RUN_UID, RUN_GID))
    assert r.returncode == EX_NO_STORE, (r.returncode, r.stderr)
    assert set(rows(db)) == {"/x"}
    # reading needs no write permission
    r = subprocess.run([ctl_copy, "stats", db], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60,
                       preexec_fn=as_user(RUN_UID, RUN_GID))
    assert r.returncode == EX_OK, r.stderr


def test_unknown_site(tmp_root):
    db = make_store(tmp_root)
    other = "https://other.example"
    for cmd in (("stats", "--site", other), ("list", "--site", other),
                ("export", "--site", other, os.path.join(tmp_root, "out")),
                ("remove", "--site", other, "/x"),
                ("prune", "--site", other, "--older-than", "1d")):
        r = ctl(cmd[0], db, *cmd[1:], want=EX_UNKNOWN_SITE)
        assert "has no site https://other.example" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(tmp_root, "out"))
    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM sites").fetchone()[0] == 1
    con.close()


def test_unreadable_logs(tmp_root):
    db = os.path.join(tmp_root, "store.db")
    good = os.path.join(tmp_root, "good.log")
    with open(good, "w") as f:
        f.write(line(T0, "GET /good HTTP/1.1", 200))
    # a missing log: nothing is done at all (not even the store created)
    r = ctl("import", db, "--site", BASE, good, os.path.join(tmp_root, "nope.log"),
            want=EX_LOG)
    assert "nope.log: cannot open: No such file" in r.stderr
    assert not os.path.exists(db)
    r = ctl("import", db, "--site", BASE, tmp_root, want=EX_LOG)
    assert "is a directory" in r.stderr
    # a damaged gzip file: what could be read is imported, exit 5 all the same
    data = gzip.compress("".join(line(T0, f"GET /z{i} HTTP/1.1", 200)
                                 for i in range(3000)).encode())
    cut = os.path.join(tmp_root, "cut.log.gz")
    with open(cut, "wb") as f:
        f.write(data[:len(data) // 2])
    r = ctl("import", db, "--site", BASE, good, cut, want=EX_LOG)
    assert "cut.log.gz: cannot read after line" in r.stderr, r.stderr
    got = rows(db)
    assert "/good" in got and len(got) > 10


def test_store_locked_too_long(tmp_root):
    db = make_store(tmp_root)
    con = sqlite3.connect(db, timeout=1, isolation_level=None)
    con.execute("BEGIN EXCLUSIVE")
    try:
        t0 = time.monotonic()
        r = ctl("add", db, "--site", BASE, "/y", want=EX_STORE)
        assert time.monotonic() - t0 >= 4.5
        assert "locked" in r.stderr, r.stderr
    finally:
        con.execute("ROLLBACK")
        con.close()
    assert "/y" not in rows(db)


def test_export_cannot_write(tmp_root):
    db = make_store(tmp_root)
    blocker = os.path.join(tmp_root, "file")
    with open(blocker, "w") as f:
        f.write("x")
    r = ctl("export", db, "--site", BASE, os.path.join(blocker, "sub"), want=EX_WRITE)
    assert "cannot create" in r.stderr


@pytest.mark.skipif(not IS_ROOT, reason="needs root")
def test_export_as_root_follows_no_planted_link(tmp_root):
    """export run as root into a directory another user owns: links that
    user planted at the temporary names an export used to take
    (<file>.tmp<PID>, for the next PIDs), at the files' own names and at a
    directory on the way are never written through."""
    db = make_store(tmp_root, "/a", "/b")
    victim = os.path.join(tmp_root, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    elsewhere = os.path.join(tmp_root, "elsewhere")
    os.makedirs(elsewhere)
    out = os.path.join(tmp_root, "www")
    os.makedirs(out)
    os.chown(out, RUN_UID, RUN_GID)

    def plant(path, target):
        os.symlink(target, path)
        os.lchown(path, RUN_UID, RUN_GID)

    with open("/proc/sys/kernel/ns_last_pid") as f:
        last = int(f.read())
    for pid in range(last + 1, last + 200):
        for name in ("sitemap.xml", "sitemap-1.xml"):
            plant(os.path.join(out, f"{name}.tmp{pid}"), victim)
    plant(os.path.join(out, "sitemap.xml"), victim)
    plant(os.path.join(out, "sitemap-7.xml"), victim)   # a "stale" page
    ctl("export", db, "--site", BASE, out, want=EX_OK)
    with open(victim) as f:
        assert f.read() == "precious\n"
    assert os.stat(victim).st_uid == 0
    # the document replaced the link; the stale-looking link is not a page
    # file and stays (as any file not a page is)
    assert not os.path.islink(os.path.join(out, "sitemap.xml"))
    with open(os.path.join(out, "sitemap.xml"), "rb") as f:
        assert b"<urlset" in f.read()
    assert os.path.islink(os.path.join(out, "sitemap-7.xml"))

    # a directory on the way that is a link: refused, nothing written there
    con = sqlite3.connect(db)
    con.execute("UPDATE sites SET settings = 'path /maps/site.xml' || char(10)")
    con.commit()
    con.close()
    plant(os.path.join(out, "maps"), elsewhere)
    r = ctl("export", db, "--site", BASE, out, want=EX_WRITE)
    assert "a link is never followed" in r.stderr, r.stderr
    assert os.listdir(elsewhere) == []


def test_check(tmp_root):
    db = make_store(tmp_root, *[f"/some/long/path/number/{i:05d}.html" for i in range(3000)])
    r = ctl("check", db, want=EX_OK)
    assert f": ok (mod_sitemap store, schema version {SCHEMA_VERSION}" in r.stdout
    # summaries that disagree with the URLs
    con = sqlite3.connect(db)
    con.execute("UPDATE pages SET url_count = url_count + 1")
    con.commit()
    con.close()
    r = ctl("check", db, want=EX_CHECK)
    assert "page summaries disagree" in r.stdout
    # URL ids outside their page's range, a site's next id behind its URLs
    for n, sql, needle in (
            (1, "UPDATE pages SET first_id = first_id + 5 WHERE page = 1",
             "URLs are outside their page's range of ids"),
            (2, "UPDATE sites SET next_id = next_id - 2",
             "sites' next ids are not past their URLs")):
        sub = os.path.join(tmp_root, f"ids{n}")
        os.makedirs(sub)
        db_ids = make_store(sub, *[f"/i/{i}" for i in range(5)])
        ctl("check", db_ids, want=EX_OK)
        con = sqlite3.connect(db_ids)
        con.execute(sql)
        con.commit()
        con.close()
        r = ctl("check", db_ids, want=EX_CHECK)
        assert needle in r.stdout, r.stdout
    # damaged b-tree pages
    sub = os.path.join(tmp_root, "x")
    os.makedirs(sub)
    db2 = make_store(sub, *[f"/p/{i:05d}" for i in range(3000)])
    size = os.path.getsize(db2)
    with open(db2, "r+b") as f:
        for off in range(4096 * 3, size - 4096, 4096 * 5):
            f.seek(off + 16)
            f.write(b"\xff" * 8)
    r = ctl("check", db2, want=EX_CHECK)
    assert "integrity_check" in r.stdout or "malformed" in r.stdout, r.stdout


def test_older_schema_is_upgraded_by_a_write(tmp_root):
    """A store of schema 2: the read-only commands say it needs an upgrade
    and leave it as it is; the first command that writes upgrades it, and
    every page keeps its URLs in order."""
    db = os.path.join(tmp_root, "v2.db")
    with open(os.path.join(TOP_SRCDIR, "t", "unit", "fixtures",
                           "store-v2.sql")) as f:
        dump = f.read()
    con = sqlite3.connect(db)
    con.executescript(dump)
    con.close()
    for cmd in (("stats",), ("list", "--site", "http://a.example")):
        r = ctl(cmd[0], db, *cmd[1:], want=EX_NO_STORE)
        assert f"schema version 2 needs an upgrade to {SCHEMA_VERSION}" in r.stderr, r.stderr
    r = ctl("check", db, want=EX_CHECK)
    assert f"schema version 2: this sitemapctl knows {SCHEMA_VERSION}" in r.stdout
    ctl("remove", db, "--site", "http://a.example", "/a1", want=EX_OK)
    r = ctl("check", db, want=EX_OK)
    assert f"schema version {SCHEMA_VERSION}" in r.stdout
    r = ctl("list", db, "--site", "http://a.example", want=EX_OK)
    assert [ln.split("\t")[::2] for ln in r.stdout.splitlines()] == [
        ["http://a.example/a3", "1"], ["http://a.example/a4", "2"],
        ["http://a.example/a6", "2"]], r.stdout
    r = ctl("list", db, "--site", "http://b.example", "--page", "2", want=EX_OK)
    assert [ln.split("\t")[0] for ln in r.stdout.splitlines()] == [
        "http://b.example/b3", "http://b.example/b4"], r.stdout
