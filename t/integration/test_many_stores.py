# SPDX-License-Identifier: Apache-2.0
"""Hundreds of vhosts on one server (issue 22): one store file per vhost or
one shared store; each vhost's sitemap lists only its own pages, a child
has one writer thread whatever the number of stores, its descriptors and
memory stay bounded, and a stop writes everything queued into every
store."""
import os
import re
import sqlite3

import pytest

from conftest import PRELOAD, SCHEMA_VERSION, children_of

VHOSTS = 200
THREADS = 8                 # ThreadsPerChild of the tests' event MPM


def vhosts(srv, n, per_vhost, flush="100ms"):
    out = []
    for i in range(n):
        db = f"db/v{i}.db" if per_vhost else "db/shared.db"
        out.append(f"""<VirtualHost 127.0.0.1:{srv.port}>
    ServerName v{i}.test
    SitemapBaseURL http://v{i}.test
    SitemapDatabase {db}
    SitemapFlushInterval {flush}
</VirtualHost>""")
    return "\n".join(out) + "\n"


def make(make_server, per_vhost, n=VHOSTS, flush="100ms"):
    srv = make_server(mpm="event")
    for i in range(n):
        srv.write(f"htdocs/only-{i}.html", f"<html><body>{i}</body></html>\n")
    srv.conf_text = vhosts(srv, n, per_vhost, flush)
    srv.start()
    return srv


def store_of(srv, i, per_vhost):
    return srv.path(f"db/v{i}.db" if per_vhost else "db/shared.db")


def stored(db, base):
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return {u for (u,) in c.execute(
            "SELECT u.url FROM urls u JOIN sites s ON s.id = u.site_id "
            "WHERE s.base = ?", (base,))}


def child(srv):
    kids = [k for k in children_of(srv.pid)
            if os.path.exists(f"/proc/{k}/task")]
    # The event MPM's one child (cgid's daemon has no threads of ours).
    for k in kids:
        if len(os.listdir(f"/proc/{k}/task")) > 2:
            return k
    raise AssertionError(f"no threaded child among {kids}")


def writer_threads(pid):
    n = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{t}/comm") as f:
            n += f.read().strip() == "sitemap-writer"
    return n


def fds_on(pid, prefix):
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            n += os.readlink(f"/proc/{pid}/fd/{fd}").startswith(prefix)
        except OSError:
            pass
    return n


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        kb = int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))
    return kb / 1024


@pytest.mark.parametrize("per_vhost", [True, False],
                         ids=["store-per-vhost", "shared-store"])
def test_hundreds_of_vhosts(make_server, per_vhost):
    srv = make(make_server, per_vhost)
    for i in range(VHOSTS):
        srv.get_ok("/page.html", host=f"v{i}.test")
        srv.get_ok(f"/only-{i}.html", host=f"v{i}.test")
    for i in range(VHOSTS):
        srv.wait_recorded("/page.html", f"/only-{i}.html",
                          base=f"http://v{i}.test",
                          db=store_of(srv, i, per_vhost))
    # Each sitemap lists exactly its own pages.
    for i in range(VHOSTS):
        r = srv.get("/sitemap.xml", host=f"v{i}.test")
        assert r.status == 200, (i, r.status)
        locs = set(re.findall(r"<loc>([^<]*)</loc>", r.body.decode()))
        assert locs == {f"http://v{i}.test/page.html",
                        f"http://v{i}.test/only-{i}.html"}, (i, locs)
        if per_vhost:
            assert stored(store_of(srv, i, True), f"http://v{i}.test") \
                == {"/page.html", f"/only-{i}.html"}
    pid = child(srv)
    # One writer thread, whatever the number of stores; the child's threads
    # are its workers, its listener and a few of httpd's and ours.
    assert writer_threads(pid) == 1
    assert len(os.listdir(f"/proc/{pid}/task")) <= THREADS + 6
    # Descriptors on the stores: at most 32 files for the writer, 16 idle
    # readers for the whole process (3 or 4 descriptors each in WAL mode:
    # SQLite shares some between connections of a process), not one set
    # per store (a reader and the writer for every store: over 1,000).
    n = fds_on(pid, srv.path("db/"))
    if n > (32 + 16) * 4:
        names = sorted(os.readlink(f"/proc/{pid}/fd/{fd}")
                       for fd in os.listdir(f"/proc/{pid}/fd"))
        import collections
        c = collections.Counter(os.path.basename(x).split(".db")[0]
                                for x in names if "/db/" in x)
        raise AssertionError(f"{n} descriptors on {len(c)} stores: "
                             f"{sorted(c.items())[:60]}")
    # Memory: no thread and 512 KiB per store any more (200 stores cost
    # about 155 MB that way); loosely, as other things vary.  Not under
    # AddressSanitizer (t/asan/run): its shadow memory counts too.
    if not PRELOAD:
        assert rss_mb(pid) < 80, rss_mb(pid)


def test_stores_made_at_start(make_server):
    """Every missing store is made at start, before the children (made
    together from the schema's template: not 64 there and the rest by the
    children): each a complete store of its own, in WAL mode, under its
    name, no copy left behind."""
    srv = make_server(mpm="event")
    srv.write("htdocs/only-3.html", "<html><body>3</body></html>\n")
    srv.conf_text = vhosts(srv, VHOSTS, True)
    srv.start()
    assert "stores are missing" not in srv.log_text()
    names = sorted(os.listdir(srv.path("db")))
    assert [n for n in names if ".new-" in n] == []
    ids = set()
    for i in range(VHOSTS):
        with sqlite3.connect(f"file:{store_of(srv, i, True)}?mode=ro",
                             uri=True) as c:
            assert c.execute("PRAGMA user_version").fetchone() == \
                (SCHEMA_VERSION,)
            assert c.execute("PRAGMA journal_mode").fetchone() == ("wal",)
            assert c.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            ids.add(c.execute("SELECT value FROM meta WHERE key ="
                              " 'store_id'").fetchone()[0])
    assert len(ids) == VHOSTS
    srv.get_ok("/only-3.html", host="v3.test")
    srv.wait_recorded("/only-3.html", base="http://v3.test",
                      db=store_of(srv, 3, True))


def test_stop_writes_every_store(make_server):
    """With an hour's flush interval nothing is written before the stop; a
    graceful stop then writes every store's queued pages."""
    n = 100
    srv = make(make_server, True, n=n, flush="1h")
    for i in range(n):
        srv.get_ok(f"/only-{i}.html", host=f"v{i}.test")
    srv.graceful_stop()
    for i in range(n):
        assert stored(store_of(srv, i, True), f"http://v{i}.test") \
            == {f"/only-{i}.html"}, i
