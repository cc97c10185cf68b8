# SPDX-License-Identifier: Apache-2.0
"""bench/renditions.py: sitemaps sent from their renditions (issue 17),
measurement 4 of bench/run.

One store of 50,001 URLs (page 1 a full page of 50,000) filled by
bench/fill, served by two event-MPM httpd of one process each (pinned to
the server CPU, wrk to the other), both with mod_deflate set up as Debian's
deflate.conf does (application/xml compressed for clients that accept it):

  cached   SitemapCache On (the default): renditions beside the store
  deflate  SitemapCache Off: today's path, page rendered from the store on
           every request and compressed by mod_deflate

  time     wrk -c1, request to last byte, medians over rounds alternating
           their order: the cached page with Accept-Encoding: gzip against
           the same gzip bytes as a static .gz file; without gzip against
           the same plain bytes as a static file
  cpu      the server process's CPU time (schedstat of all its threads)
           over a wrk run, per request: cached with gzip against the
           mod_deflate path
  changed  the first request for a changed page: sitemapctl gives one URL
           of page 1 a new lastmod (the page's version moves), then one
           GET with gzip (render, compress, write both files, send),
           against a plain render as today (deflate server, no gzip); also
           the render time the module logs
  levels   zlib levels 1, 6 and 9 on page 1's bytes: time and size (the
           reason for SM_GZIP_LEVEL)
  memory   serving.memory (slow clients holding N responses open) against
           the cached configuration
"""

import gzip
import os
import re
import time
import zlib

from benchlib import (BASE, Failure, Httpd, give_to_run_user, http_get,
                      loadavg, log, median, sh, wrk)
import serving

DEFLATE_CONF = "/etc/apache2/mods-available/deflate.conf"
GZ = {"Accept-Encoding": "gzip"}
RENDERED = re.compile(r"rendered /sitemap-1\.xml as \S+: \d+ bytes, \d+ gzip,"
                      r" in (\d+) us")


def deflate_conf():
    from benchlib import MODULEDIR
    load = (f"LoadModule filter_module {MODULEDIR}/mod_filter.so\n"
            f"LoadModule deflate_module {MODULEDIR}/mod_deflate.so\n")
    if os.path.exists(DEFLATE_CONF):
        return load + f"Include {DEFLATE_CONF}\n"
    return load + "AddOutputFilterByType DEFLATE application/xml\n"


def server(ctx, name, db, cache):
    conf = serving.module_conf(ctx, db, cache) + (
        "LogLevel warn sitemap:debug\n" if cache else "")
    srv = Httpd(os.path.join(ctx.work, f"rend-{name}"), "event-1",
                module_conf=conf, extra_conf=deflate_conf(), cpus=ctx.cpus)
    return srv


def get(srv, path, headers=None):
    status, hdrs, body = http_get(srv.port, path, headers=headers)
    if status != 200:
        raise Failure(f"{path}: status {status}")
    return hdrs, body


def p50(ctx, srv, path, gz=False):
    args = [path, "gzip"] if gz else [path]
    res = wrk(ctx.cpus, srv.url, "fetch.lua", args,
              duration=ctx.params.serve_duration, threads=1, connections=1)
    return res["p50_us"] / 1000.0


def cpu_per_request(ctx, srv, path, gz):
    before = srv.cpu_ns()
    res = wrk(ctx.cpus, srv.url, "fetch.lua", [path, "gzip"] if gz else [path],
              duration=ctx.params.serve_duration, threads=1, connections=1)
    return (srv.cpu_ns() - before) / res["requests"] / 1e6     # ms


def levels(body):
    out = []
    for level in (1, 6, 9):
        best = None
        for _ in range(3):
            t0 = time.process_time()
            c = zlib.compressobj(level, zlib.DEFLATED, 31)
            z = c.compress(body) + c.flush()
            t = time.process_time() - t0
            best = t if best is None else min(best, t)
        out.append((level, best * 1000, len(z)))
    return out


def run(ctx):
    p = ctx.params
    t = ctx.table
    sec = "4 renditions"
    t.note(f"renditions: load average before: {loadavg()}")
    stores = os.path.join(ctx.stores, "stores")
    os.makedirs(stores, exist_ok=True)
    os.chmod(stores, 0o755)
    give_to_run_user(stores)
    n = serving.PAGE + 1
    db = os.path.join(stores, "store-renditions.db")
    serving.fill(ctx, db, n)
    cached = server(ctx, "cached", db, True)
    plain_srv = server(ctx, "deflate", db, False)
    cached.start()
    plain_srv.start()
    try:
        # Correctness first: the three forms are the same document.
        h, plain = get(cached, "/sitemap-1.xml")
        if h.get("content-length") != str(len(plain)):
            raise Failure("cached page 1: no Content-Length (not a file?)")
        hz, gzipped = get(cached, "/sitemap-1.xml", GZ)
        if hz.get("content-encoding") != "gzip" or \
                gzip.decompress(gzipped) != plain:
            raise Failure("cached page 1 with gzip: not the plain bytes "
                          f"compressed once ({hz})")
        _, today = get(plain_srv, "/sitemap-1.xml")
        if today != plain:
            raise Failure("page 1 differs between the cached and the "
                          "streaming server")
        hd, deflated = get(plain_srv, "/sitemap-1.xml", GZ)
        if hd.get("content-encoding") != "gzip" or \
                gzip.decompress(deflated) != plain:
            raise Failure(f"mod_deflate did not compress page 1 ({hd})")
        for srv in (cached, plain_srv):
            d = os.path.join(srv.htdocs, "static")
            os.makedirs(d, exist_ok=True)
            os.chmod(d, 0o755)
            with open(os.path.join(d, "sitemap-1.xml"), "wb") as f:
                f.write(plain)
            with open(os.path.join(d, "sitemap-1.xml.gz"), "wb") as f:
                f.write(gzipped)
        serving.check_page(cached, n, 1)

        # Time: cached against static, gzip and plain, alternating.
        lat = {k: [] for k in ("gz", "static gz", "plain", "static plain")}
        docs = {"gz": ("/sitemap-1.xml", True),
                "static gz": ("/static/sitemap-1.xml.gz", False),
                "plain": ("/sitemap-1.xml", False),
                "static plain": ("/static/sitemap-1.xml", False)}
        for rnd in range(p.serve_rounds):
            order = list(docs) if rnd % 2 == 0 else list(docs)[::-1]
            for k in order:
                lat[k].append(p50(ctx, cached, *docs[k]))
            log(f"renditions round {rnd + 1}/{p.serve_rounds}: " + ", ".join(
                f"{k} {lat[k][-1]:.2f} ms" for k in docs))
        rg = median([a / b for a, b in zip(lat["gz"], lat["static gz"])])
        rp = median([a / b for a, b in zip(lat["plain"], lat["static plain"])])
        t.add(sec, f"page 1 (50,000 URLs, {len(gzipped) / 1e6:.2f} MB gzip) "
              "with Accept-Encoding: gzip / the same gzip bytes as a static "
              "file", f"**{rg:.2f}x** ({median(lat['gz']):.2f} ms vs "
              f"{median(lat['static gz']):.2f} ms)", "<= 2x", rg <= 2)
        t.add(sec, f"page 1 plain ({len(plain) / 1e6:.1f} MB) / the same "
              "bytes as a static file", f"**{rp:.2f}x** "
              f"({median(lat['plain']):.2f} ms vs "
              f"{median(lat['static plain']):.2f} ms)", "<= 2x", rp <= 2)

        # CPU per request: cached gzip against mod_deflate, alternating.
        cpu_c, cpu_d, cpu_s = [], [], []
        for rnd in range(p.serve_rounds):
            runs = [(cpu_c, cached, "/sitemap-1.xml"),
                    (cpu_d, plain_srv, "/sitemap-1.xml"),
                    (cpu_s, cached, "/static/sitemap-1.xml.gz")]
            for acc, srv, path in (runs if rnd % 2 == 0 else runs[::-1]):
                acc.append(cpu_per_request(ctx, srv, path, True))
        rc = median(cpu_c) / median(cpu_d)
        t.add(sec, "CPU per page 1 request with gzip: from the rendition / "
              "rendered and compressed by mod_deflate (today)",
              f"**{rc * 100:.2f}%** ({median(cpu_c):.3f} ms vs "
              f"{median(cpu_d):.1f} ms; the static .gz file: "
              f"{median(cpu_s):.3f} ms)", "<= 2%", rc <= 0.02)

        # The first request for a changed page, against today's plain
        # render (wrk, request to last byte, as serving.py measures it).
        today_wrk = [p50(ctx, plain_srv, "/sitemap-1.xml")
                     for _ in range(max(1, p.serve_rounds // 2))]
        first, today_ms, logged = [], [], []
        url = serving.url_of(0)[len(BASE):]
        off = len(cached.log_text())
        for rnd in range(max(3, p.serve_rounds)):
            r = sh([ctx.build.ctl, "add", db, "--site", BASE, url,
                    "--lastmod", f"@{1600000000 + rnd * 60}"])
            if r.returncode != 0:
                raise Failure(f"sitemapctl add: {r.stdout}{r.stderr}")
            t0 = time.monotonic()
            _, body = get(cached, "/sitemap-1.xml", GZ)
            first.append((time.monotonic() - t0) * 1000)
            t0 = time.monotonic()
            _, body2 = get(plain_srv, "/sitemap-1.xml")
            today_ms.append((time.monotonic() - t0) * 1000)
            if gzip.decompress(body) != body2:
                raise Failure("changed page 1: the rendition is not the "
                              "fresh render")
        logged = [int(x) / 1000 for x in
                  RENDERED.findall(cached.log_text()[off:])]
        rf = median(first) / median(today_wrk)
        t.add(sec, "first request for a changed page 1 with gzip (render, "
              "compress at level 1, write, send; one GET after sitemapctl "
              "moved a lastmod) / a plain render today (wrk p50)",
              f"**{rf:.2f}x** ({median(first):.1f} ms vs "
              f"{median(today_wrk):.1f} ms; the module logs "
              f"{median(logged) if logged else float('nan'):.1f} ms to "
              "render and write; the same client's plain GET today: "
              f"{median(today_ms):.1f} ms)", "<= 3x", rf <= 3)
        if len(logged) != len(first):
            raise Failure(f"{len(first)} changes of page 1, {len(logged)} "
                          "renders logged")
    finally:
        cached.stop(graceful=False)
        plain_srv.stop(graceful=False)

    lv = levels(plain)
    t.add(sec, f"zlib levels on page 1 ({len(plain) / 1e6:.1f} MB): CPU time,"
          " size", "; ".join(f"level {lvl}: {ms:.0f} ms, {size / 1e6:.2f} MB"
                              for lvl, ms, size in lv),
          "(the reason for level 1)")
    # Every slow client on page 1, the full page (page 2 holds one URL).
    mem = serving.memory(ctx, "renditions", db, serving.PAGE, cache=True)
    worst = max(r[5] for r in mem)
    t.add(sec, "RSS growth per concurrent page request from renditions "
          "(event, 1 process)", "; ".join(
              f"{r[0]} at once: {r[5]:.2f} MB each" for r in mem),
          "< 4 MB each", worst < 4)
    if not p.keep_stores:
        import shutil
        shutil.rmtree(db + ".renditions", ignore_errors=True)
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)
    t.note(f"renditions: load average after: {loadavg()}")
