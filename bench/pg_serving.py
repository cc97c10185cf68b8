#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench/pg_serving.py: serving big sitemaps from a PostgreSQL store
against the same store in SQLite, in the same run (issue 15).  Not part of
bench/run yet: run it by hand after a build, as root (PostgreSQL runs as
the postgres user, httpd's children as www-data):

    bench/pg_serving.py [URLS]        # default 1,000,000

A throwaway PostgreSQL cluster (t/integration/pg.py) and an SQLite file are
filled with the same URLs by bench/fill (sm_store_apply, batches of
10,000); one event-MPM httpd serves each; a single client fetches page 1
(50,000 URLs), the last page and the index in alternating rounds: request
to last byte, medians, renditions off (SitemapCache Off: every fetch
reads the store).  Then N clients read page 1 slowly at once and the
server process's peak resident size is compared with its size before."""

import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "t", "integration"))

from benchlib import (BASE, Build, Httpd, give_to_run_user, http_get,  # noqa
                      median, proc_status_kb, sh)
import pg  # noqa: E402
from serving import slow_fetch  # noqa: E402

PAGE = 50000
ROUNDS = 7


def strip(body):
    return re.sub(rb"<lastmod>[^<]*</lastmod>", b"", body)


def timed(port, path):
    t0 = time.monotonic()
    status, _, body = http_get(port, path)
    assert status == 200, (path, status)
    return (time.monotonic() - t0) * 1000, body


def serve(build, work, label, db, n):
    conf = (f'LoadModule sitemap_module "{build.module}"\n'
            f"Sitemap On\nSitemapDatabase {db}\nSitemapBaseURL {BASE}\n"
            # Every fetch reads the store: no renditions.
            "SitemapCache Off\n")
    srv = Httpd(os.path.join(work, label), "event-1", module_conf=conf)
    srv.start()
    pages = (n + PAGE - 1) // PAGE
    docs = {"page 1": "/sitemap-1.xml", f"last page ({pages})":
            f"/sitemap-{pages}.xml", "index": "/sitemap.xml"}
    lat = {k: [] for k in docs}
    bodies = {}
    try:
        for name, path in docs.items():         # warm-up, and the bytes
            bodies[name] = timed(srv.port, path)[1]
        for rnd in range(ROUNDS):
            for name in (docs if rnd % 2 == 0 else list(docs)[::-1]):
                ms, body = timed(srv.port, docs[name])
                assert body == bodies[name]
                lat[name].append(ms)
        # Memory: a fresh server process, 8 slow readers of page 1.
        srv.stop(graceful=False)
        srv.start()
        pid = srv.children()[0]
        before = proc_status_kb(pid, "VmRSS")
        mem = None
        if n >= PAGE:       # a small page fits the socket buffers at once
            slow_fetch(srv.port, ["/sitemap-1.xml"] * 8, pid)
            mem = (proc_status_kb(pid, "VmHWM") - before) / 8 / 1024
    finally:
        srv.stop(graceful=False)
    return {k: median(v) for k, v in lat.items()}, bodies, mem


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    work = tempfile.mkdtemp(prefix="sitemap-pgbench-")
    os.chmod(work, 0o755)
    build = Build(work)
    build.run()
    cluster = pg.Cluster()
    try:
        db = cluster.new_db()
        lite = os.path.join(work, "stores", "store.db")
        os.makedirs(os.path.dirname(lite))
        os.chmod(os.path.dirname(lite), 0o755)
        give_to_run_user(os.path.dirname(lite))
        fills = {}
        for label, where in (("sqlite", lite), ("postgresql", db.uri)):
            t0 = time.monotonic()
            r = sh([build.fill, where, BASE, str(n), str(PAGE)])
            if r.returncode != 0:
                sys.exit(f"fill {label}: {r.stdout}{r.stderr}")
            fills[label] = time.monotonic() - t0
        give_to_run_user(lite)
        res = {}
        for label, where in (("sqlite", lite), ("postgresql", db.uri)):
            res[label] = serve(build, work, label, where, n)
        # The same documents but for the lastmods (bench/fill dates URLs
        # from when it runs).
        for k, body in res["sqlite"][1].items():
            assert strip(body) == strip(res["postgresql"][1][k]), k
        print(f"| {n:,} URLs | SQLite | PostgreSQL | PostgreSQL / SQLite |")
        print("|---|---|---|---|")
        print(f"| fill (bench/fill) | {fills['sqlite']:.0f} s | "
              f"{fills['postgresql']:.0f} s | "
              f"{fills['postgresql'] / fills['sqlite']:.1f} |")
        for k in res["sqlite"][0]:
            a, b = res["sqlite"][0][k], res["postgresql"][0][k]
            print(f"| {k} | {a:.1f} ms | {b:.1f} ms | {b / a:.2f} |")
        ma, mb = res["sqlite"][2], res["postgresql"][2]
        if ma is not None and mb is not None:
            print(f"| memory per slow page-1 request (8 at once) | "
                  f"{ma:.2f} MB | {mb:.2f} MB | |")
    finally:
        cluster.close()


if __name__ == "__main__":
    main()
