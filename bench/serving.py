# SPDX-License-Identifier: Apache-2.0
"""bench/serving.py: serving sitemaps from big stores (measurement 2 of
bench/run).

Stores of one site (BASE) are filled without HTTP by bench/fill (the core's
sm_store_apply, batches of 10,000), then served by an event-MPM httpd with
one process (httpd pinned to one CPU, wrk to another):

  time    single client (wrk -c1), request to last byte, medians over
          rounds that alternate: page 1, the same bytes as a static file,
          the last page, the index
  memory  a fresh server process; N clients that read slowly (so that N
          page requests are being streamed at once); the process's peak
          resident size (VmHWM) against its size before (VmRSS)

A store of one page of 50,000 long URLs (about 45 MB of XML, near the
52,428,800-byte limit of a page) shows the memory does not follow the
page's size either.

These servers run with SitemapCache Off: what is measured is a document
made from the store on every request (the figures stay comparable with
earlier runs, and the last page must cost what page 1 costs).  Sending
from renditions is bench/renditions.py's part.
"""

import os
import re
import selectors
import socket
import time
import xml.etree.ElementTree as ET

from benchlib import (BASE, Failure, Httpd, give_to_run_user, http_get,
                      loadavg, log, median, proc_status_kb, sh, wrk)

PAGE = 50000
LONG_PAD = 800      # path length added to the long-URL store's URLs


def url_of(i, pad=0):
    padding = ("/" + "x" * (pad - 1)) if pad else ""
    return f"{BASE}/catalog{padding}/item-{i:09d}.html"


def module_conf(ctx, db, cache=False):
    return (f'LoadModule sitemap_module "{ctx.build.module}"\n'
            f"Sitemap On\nSitemapDatabase {db}\nSitemapBaseURL {BASE}\n"
            f"SitemapCache {'On' if cache else 'Off'}\n")


def fill(ctx, db, count, pad=0):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.unlink(db + suffix)
    t0 = time.monotonic()
    r = sh([ctx.build.fill, db, BASE, str(count), str(PAGE), "0", str(pad)])
    secs = time.monotonic() - t0
    if r.returncode != 0:
        raise Failure(f"fill {db} {count}: {r.stdout}{r.stderr}")
    log(r.stdout.strip())
    give_to_run_user(db, db + "-wal", db + "-shm")
    return secs


LOC = re.compile(rb"<loc>([^<]*)</loc>")


def check_page(srv, n, k, pad=0, parse=False):
    """GET page k of a store of n URLs; it must hold exactly its URLs."""
    status, headers, body = http_get(srv.port, f"/sitemap-{k}.xml")
    first, last = (k - 1) * PAGE, min(k * PAGE, n) - 1
    if status != 200:
        raise Failure(f"/sitemap-{k}.xml: status {status}")
    if not headers.get("content-type", "").startswith("application/xml"):
        raise Failure(f"/sitemap-{k}.xml: Content-Type "
                      f"{headers.get('content-type')}")
    locs = LOC.findall(body)
    want = last - first + 1
    if len(locs) != want or body.count(b"<url>") != want \
            or locs[0].decode() != url_of(first, pad) \
            or locs[-1].decode() != url_of(last, pad) \
            or not body.rstrip().endswith(b"</urlset>"):
        raise Failure(f"/sitemap-{k}.xml: {len(locs)} URLs from "
                      f"{locs[:1]} to {locs[-1:]}; expected {want} from "
                      f"{url_of(first, pad)} to {url_of(last, pad)}")
    if parse:
        root = ET.fromstring(body)
        if len(root) != want:
            raise Failure(f"/sitemap-{k}.xml: {len(root)} elements")
    return body


def check_index(srv, n):
    pages = (n + PAGE - 1) // PAGE
    status, _, body = http_get(srv.port, "/sitemap.xml")
    if status != 200:
        raise Failure(f"/sitemap.xml: status {status}")
    if pages == 1:
        return body
    locs = [x.decode() for x in LOC.findall(body)]
    want = [f"{BASE}/sitemap-{k}.xml" for k in range(1, pages + 1)]
    if b"<sitemapindex" not in body or locs != want:
        raise Failure(f"/sitemap.xml: {len(locs)} sitemaps {locs[:2]}..., "
                      f"expected {pages}")
    return body


def slow_fetch(port, paths, pid, rcvbuf=4096, first=16384, hold=0.5):
    """N requests streamed at once: each client reads its first bytes and
    stops reading (the server's writes block), the process's RSS is taken,
    then all read to the end.  Returns (rss during, bytes per response)."""
    socks = []
    try:
        for p in paths:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            s.settimeout(60)
            s.connect(("127.0.0.1", port))
            s.sendall(f"GET {p} HTTP/1.1\r\nHost: bench.example\r\n"
                      "Connection: close\r\n\r\n".encode())
            socks.append(s)
        got = [bytearray() for _ in socks]
        for s, buf in zip(socks, got):
            while len(buf) < first:
                b = s.recv(first - len(buf))
                if not b:
                    raise Failure("a sitemap response ended early")
                buf += b
        time.sleep(hold)
        during = proc_status_kb(pid, "VmRSS")
        sel = selectors.DefaultSelector()
        for i, s in enumerate(socks):
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ, i)
        tails = [b""] * len(socks)
        sizes = [len(b) for b in got]
        open_ = len(socks)
        deadline = time.monotonic() + 120
        while open_:
            if time.monotonic() > deadline:
                raise Failure("slow clients: responses not finished in 120 s")
            for key, _ in sel.select(timeout=1):
                i = key.data
                try:
                    b = key.fileobj.recv(1 << 20)
                except BlockingIOError:
                    continue
                if not b:
                    sel.unregister(key.fileobj)
                    open_ -= 1
                    continue
                sizes[i] += len(b)
                tails[i] = (tails[i] + b)[-64:]
        for i, tl in enumerate(tails):
            if b"</urlset>" not in tl:
                raise Failure(f"{paths[i]}: incomplete response "
                              f"({sizes[i]} bytes)")
        return during, sizes
    finally:
        for s in socks:
            s.close()


def memory(ctx, label, db, n, pad=0, cache=False):
    """Per concurrent page request growth of the serving process."""
    p = ctx.params
    pages = (n + PAGE - 1) // PAGE
    results = []
    for conc in p.mem_concurrency:
        srv = Httpd(os.path.join(ctx.work, f"mem-{label}-{conc}"), "event-1",
                    module_conf=module_conf(ctx, db, cache),
                    extra_conf="SendBufferSize 65536", cpus=ctx.cpus)
        srv.start()
        try:
            kids = srv.children()
            if len(kids) != 1:
                raise Failure(f"memory: {len(kids)} server processes, "
                              "expected 1")
            pid = kids[0]
            time.sleep(0.3)
            before = proc_status_kb(pid, "VmRSS")
            paths = [f"/sitemap-{(i % pages) + 1}.xml" for i in range(conc)]
            during, sizes = slow_fetch(srv.port, paths, pid)
            hwm = proc_status_kb(pid, "VmHWM")
            after = proc_status_kb(pid, "VmRSS")
            if srv.children() != [pid]:
                raise Failure("memory: the server process changed")
        finally:
            srv.stop(graceful=False)
        per = (hwm - before) / conc / 1024
        results.append((conc, before, during, hwm, after, per,
                        max(sizes)))
        log(f"memory {label} x{conc}: RSS before {before} kB, during "
            f"{during} kB, peak {hwm} kB, after {after} kB: "
            f"{per:.2f} MB per request ({max(sizes):,} bytes each)")
    return results


def timing(ctx, srv, n, pad, static_path):
    """Medians over alternating rounds: page 1, its static copy, the last
    page, the index."""
    p = ctx.params
    pages = (n + PAGE - 1) // PAGE
    docs = {"page 1": "/sitemap-1.xml", "static": static_path,
            "last page": f"/sitemap-{pages}.xml", "index": "/sitemap.xml"}
    names = list(docs)
    lat = {k: [] for k in names}
    r_static, r_last = [], []
    for rnd in range(p.serve_rounds):
        order = names if rnd % 2 == 0 else names[::-1]
        got = {}
        for name in order:
            res = wrk(ctx.cpus, srv.url, "fetch.lua", [docs[name]],
                      duration=p.serve_duration, threads=1, connections=1)
            got[name] = res["p50_us"] / 1000.0
            lat[name].append(got[name])
        r_static.append(got["page 1"] / got["static"])
        r_last.append(got["last page"] / got["page 1"])
        log(f"serving {n:,} round {rnd + 1}/{p.serve_rounds}: " + ", ".join(
            f"{k} {got[k]:.2f} ms" for k in names))
    return lat, r_static, r_last


def human(n):
    for unit, div in (("M", 1_000_000), ("k", 1000)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return f"{n:,}"


def run(ctx):
    p = ctx.params
    t = ctx.table
    stores = os.path.join(ctx.stores, "stores")
    os.makedirs(stores, exist_ok=True)
    os.chmod(stores, 0o755)
    give_to_run_user(stores)
    t.note(f"serving: load average before: {loadavg()}")
    mem_rows = []
    for n in p.store_sizes:
        sec = f"2 {human(n)}"
        db = os.path.join(stores, f"store-{n}.db")
        log(f"filling a store of {n:,} URLs (load {loadavg()})")
        secs = fill(ctx, db, n)
        if n >= 10_000_000:
            t.add(sec, f"fill {n:,} URLs (bench/fill, sm_store_apply, "
                  "batches of 10,000)", f"{secs:.0f} s "
                  f"({n / secs:,.0f} URLs/s; {os.path.getsize(db) / 1e9:.2f}"
                  " GB)", "< 120 s", secs < 120)
        else:
            t.add(sec, f"fill {n:,} URLs", f"{secs:.1f} s "
                  f"({n / secs:,.0f} URLs/s)", "")
        pages = (n + PAGE - 1) // PAGE
        root = os.path.join(ctx.work, f"serve-{n}")
        srv = Httpd(root, "event-1", module_conf=module_conf(ctx, db), cpus=ctx.cpus)
        srv.start()
        try:
            check_index(srv, n)
            body = check_page(srv, n, 1, parse=True)
            check_page(srv, n, pages)
            os.makedirs(os.path.join(srv.htdocs, "static"), exist_ok=True)
            os.chmod(os.path.join(srv.htdocs, "static"), 0o755)
            with open(os.path.join(srv.htdocs, "static", "sitemap-1.xml"),
                      "wb") as f:
                f.write(body)
            lat, r_static, r_last = timing(ctx, srv, n, 0,
                                           "/static/sitemap-1.xml")
            # The store is what it was (nothing expired or rewritten it).
            check_index(srv, n)
            if check_page(srv, n, 1) != body:
                raise Failure(f"/sitemap-1.xml of {n:,} URLs changed while "
                              "it was being measured")
        finally:
            srv.stop(graceful=False)
        rounds = p.serve_rounds
        m1 = median(lat["page 1"])
        t.add(sec, f"page 1 of {pages} (50,000 URLs, {len(body) / 1e6:.1f} "
              "MB): request to last byte, 1 client",
              f"**{m1:.1f} ms** (median of {rounds} run medians)",
              "<= 30 ms", m1 <= 30)
        rs = median(r_static)
        t.add(sec, "page 1 / the same bytes as a static file",
              f"{rs:.1f}x (static {median(lat['static']):.2f} ms)", "(report)")
        rl = median(r_last)
        t.add(sec, f"last page (page {pages}) / page 1",
              f"**{rl:.3f}** (last page {median(lat['last page']):.1f} ms)",
              "<= 1.25", rl <= 1.25)
        mi = median(lat["index"])
        t.add(sec, f"index ({pages} sitemaps)", f"**{mi:.2f} ms**",
              "<= 20 ms" if n >= 10_000_000 else "(report)",
              mi <= 20 if n >= 10_000_000 else None)
        if n in p.mem_sizes:
            mem_rows.append((human(n), memory(ctx, human(n), db, n)))
        if not p.keep_stores:
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(db + suffix):
                    os.unlink(db + suffix)

    # One page of 50,000 long URLs: the biggest page the store makes.
    n, label = p.long_urls, "long"
    db = os.path.join(stores, "store-long.db")
    secs = fill(ctx, db, n, pad=LONG_PAD)
    root = os.path.join(ctx.work, "serve-long")
    srv = Httpd(root, "event-1", module_conf=module_conf(ctx, db), cpus=ctx.cpus)
    srv.start()
    try:
        body = check_page(srv, n, 1, pad=LONG_PAD)
        os.makedirs(os.path.join(srv.htdocs, "static"), exist_ok=True)
        os.chmod(os.path.join(srv.htdocs, "static"), 0o755)
        with open(os.path.join(srv.htdocs, "static", "sitemap-1.xml"),
                  "wb") as f:
            f.write(body)
        lats, stat = [], []
        for rnd in range(p.serve_rounds):
            for name in (("page", "static") if rnd % 2 == 0
                         else ("static", "page")):
                res = wrk(ctx.cpus, srv.url, "fetch.lua",
                          ["/sitemap-1.xml" if name == "page"
                           else "/static/sitemap-1.xml"],
                          duration=p.serve_duration, threads=1, connections=1)
                (lats if name == "page" else stat).append(
                    res["p50_us"] / 1000)
    finally:
        srv.stop(graceful=False)
    t.add("2 long", f"one page of {n:,} URLs of {len(url_of(0, LONG_PAD))} "
          f"characters ({len(body) / 1e6:.1f} MB): request to last byte",
          f"{median(lats):.1f} ms (static file {median(stat):.1f} ms)",
          "(report)")
    mem_rows.append((f"{n:,} long URLs", memory(ctx, label, db, n,
                                                pad=LONG_PAD)))
    if not p.keep_stores:
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)

    worst = 0.0
    for label, res in mem_rows:
        parts = []
        for conc, before, during, hwm, after, per, size in res:
            worst = max(worst, per)
            parts.append(f"{conc} at once: {before / 1024:.1f} -> peak "
                         f"{hwm / 1024:.1f} MB, {per:.2f} MB each")
        t.add("2 memory", f"RSS growth per concurrent page request, store "
              f"{label} (event, 1 process; page of {res[0][6] / 1e6:.1f} MB)",
              "; ".join(parts), "< 4 MB each",
              all(r[5] < 4 for r in res))
    t.note(f"serving: load average after: {loadavg()}")
    return worst
