# SPDX-License-Identifier: Apache-2.0
"""bench/instr.py: instructions per request, counted by valgrind (part of
measurements 1 and 3 of bench/run).

On a shared machine requests/s move by tens of per cent from one second to
the next; the number of instructions a request executes does not.  Each
configuration of the overhead runs (no module, mod_sitemap, the naive
module) serves, as one process (`httpd -X`, prefork MPM) under
`valgrind --tool=callgrind`, from one keep-alive client, either the 1,000
pages once and then N of them again (steady), or N new /crawl/ URLs
(crawl); the module's writer thread is given time to write everything
before httpd stops.  The same session with N = 0 is subtracted, so
start-up, warm-up and shutdown cancel out:

    instructions per request = (Ir(N) - Ir(0)) / N

Every thread is counted, the writer thread's SQLite work included; the
kernel's work (network, files, SQLite's writes) is not, so these are not
shares of CPU time: they say where the module's own work goes.
"""

import glob
import http.client
import os
import shutil
import signal
import sqlite3
import subprocess
import time

from benchlib import (BASE, HTTPD, IS_ROOT, RUN_GID, RUN_UID, Failure,
                      Httpd, give_to_run_user, log, port_open, query)
from overhead import (PAGES, VARIANT_CFGS, create_naive_db, make_site,
                      module_conf, variant_module)

def stored(db):
    try:
        rows = query(db, "SELECT url_count FROM sites WHERE base = ?",
                     (BASE,))
    except sqlite3.OperationalError as e:
        # The file exists before the writer has made its tables (a slow
        # httpd under valgrind): nothing stored yet.
        if "no such table" in str(e):
            return 0
        raise
    return rows[0][0] if rows else 0


def client(port, paths):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        for p in paths:
            c.request("GET", p)
            r = c.getresponse()
            r.read()
            if r.status != 200:
                raise Failure(f"instructions: GET {p}: {r.status}")
    finally:
        c.close()


def session(ctx, cfg, kind, n, tag):
    """Total instructions of one httpd -X run under callgrind."""
    root = os.path.join(ctx.work, f"instr-{cfg}-{kind}-{n}")
    shutil.rmtree(root, ignore_errors=True)
    srv = Httpd(root, "prefork", module_conf=module_conf(cfg, ctx.build))
    make_site(srv)
    if cfg == "naive":
        create_naive_db(srv.path("db/naive.db"))
        give_to_run_user(srv.path("db/naive.db"))
    with open(srv.conf_path, "w") as f:
        f.write(srv.config())
    # httpd -X would switch to User after valgrind opened its output file:
    # the whole run is the children's user's.
    for d in ("logs", "run", "db"):
        give_to_run_user(srv.path(d))
    out = srv.path("db/callgrind.out")
    cmd = ["valgrind", "--tool=callgrind", "--vgdb=no",
           "--separate-threads=yes", f"--callgrind-out-file={out}",
           HTTPD, "-X", "-f", srv.conf_path]
    kw = {"user": RUN_UID, "group": RUN_GID} if IS_ROOT else {}
    with open(srv.path("logs/valgrind.log"), "w") as vlog:
        proc = subprocess.Popen(ctx.cpus.server_cmd(cmd),
                                stdout=subprocess.DEVNULL, stderr=vlog, **kw)
    try:
        deadline = time.monotonic() + 120
        while not port_open(srv.port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise Failure(f"instructions: httpd -X under valgrind did "
                              f"not start:\n{srv.log_tail()}")
            time.sleep(0.2)
        db = srv.path("db/sitemap.db")
        pages = [f"/p/{i:04d}.html" for i in range(PAGES)]
        warm = PAGES if kind == "steady" else 0
        if kind == "steady":
            client(srv.port, pages)
            if cfg in ("sitemap", "headoff") + VARIANT_CFGS:
                wait_for(lambda: stored(db) >= PAGES, "the warm-up's pages")
            client(srv.port, [pages[i % PAGES] for i in range(n)])
        else:
            client(srv.port, [f"/crawl/{tag}-{i}.html" for i in range(n)])
            if cfg in ("sitemap", "headoff") + VARIANT_CFGS:
                wait_for(lambda: stored(db) >= n, "the crawl's URLs")
        time.sleep(1.2)     # at most one more flush interval, in every run
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if cfg in ("sitemap", "headoff") + VARIANT_CFGS:
        want = warm + (n if kind == "crawl" else 0)
        if stored(db) != want:
            raise Failure(f"instructions: the store holds {stored(db)} URLs "
                          f"after the {cfg} {kind} session, expected {want}")
    return thread_totals(out)


def thread_totals(out):
    """(every thread, the module's writer threads): callgrind's totals of
    the per-thread files (--separate-threads=yes) out-01, out-02, ..."""
    total = writer = 0
    files = sorted(glob.glob(glob.escape(out) + "-*"))
    for path in files:
        n, is_writer = None, False
        with open(path) as f:
            for ln in f:
                if ln.startswith("totals:") or ln.startswith("summary:"):
                    n = int(ln.split()[1])
                elif "writer_main" in ln and ln.startswith(("fn=", "cfn=")):
                    is_writer = True
        if n is None:
            raise Failure(f"instructions: no totals in {path}")
        total += n
        writer += n if is_writer else 0
    if not files:
        raise Failure(f"instructions: no callgrind output {out}-*")
    return total, writer


def wait_for(cond, what, timeout=60):
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise Failure(f"instructions: the store did not get {what}")
        time.sleep(0.1)


def run(ctx):
    p = ctx.params
    t = ctx.table
    if not shutil.which("valgrind"):
        t.note("valgrind is not installed: no instruction counts")
        return None
    n = p.instr_requests
    configs = tuple(p.instr_configs) + VARIANT_CFGS
    per = {}
    writer = {}
    for kind in p.instr_kinds:
        for cfg in configs:
            t0 = time.monotonic()
            base = session(ctx, cfg, kind, 0, f"{kind}0")
            full = session(ctx, cfg, kind, n, f"{kind}1")
            per[(kind, cfg)] = (full[0] - base[0]) / n
            writer[(kind, cfg)] = (full[1] - base[1]) / n
            log(f"instructions {kind} {cfg}: {per[(kind, cfg)]:,.0f} per "
                f"request, {writer[(kind, cfg)]:,.0f} of them in the "
                f"writer thread ({time.monotonic() - t0:.0f} s)")
        none = per[(kind, "none")]
        for cfg in configs:
            if cfg == "none":
                continue
            x = per[(kind, cfg)]
            name = {"sitemap": "mod_sitemap", "naive": "the naive module",
                    "headoff": "mod_sitemap, SitemapReadHead Off"}.get(
                        cfg) or f"{cfg} {variant_module(cfg)}"
            split = ""
            if cfg != "naive":
                # The writer's share moves with its timer wake-ups in the
                # session: the request threads' part is the steady figure.
                split = (f"; request threads {x - writer[(kind, cfg)]:,.0f}"
                         f" (**{x - writer[(kind, cfg)] - none:+,.0f}**), "
                         f"writer thread {writer[(kind, cfg)]:+,.0f}")
            t.add("1/3 instr", f"{kind}: user-space instructions per request "
                  f"with {name} vs without (valgrind, httpd -X, prefork, "
                  f"{n:,} requests)",
                  f"{x:,.0f} vs {none:,.0f} (**{x - none:+,.0f}**, "
                  f"{(x - none) / none * 100:+.1f}%){split}", "(diagnostic)")
    return per
