# SPDX-License-Identifier: Apache-2.0
"""bench/overhead.py: what recording costs per request (measurements 1 and
3 of bench/run).

For each MPM, four httpd instances with the same configuration except the
module lines run side by side (httpd pinned to one CPU, wrk to another):

  none     no module
  sitemap  mod_sitemap, `Sitemap On`
  headoff  the same with `SitemapReadHead Off`: the head reader's own cost
  naive    bench/naive/mod_sitemap_naive.c: a synchronous SQLite upsert in
           every request's log_transaction
  control  a second server without the module: its ratio to "none" shows
           how far two identical servers differ on this (shared) machine
  pg       with BENCH_PG=1: mod_sitemap on a PostgreSQL store (issue 15),
           each instance a fresh database of one throwaway cluster on this
           machine (t/integration/pg.py: fsync off, unpinned), compared
           with "none" and with "sitemap" (SQLite) in the same rounds

They are driven in turn, in orders that give each configuration every
position and every predecessor equally often (balanced_orders), for as many
rounds as asked, spread over several fresh instances of the servers,
created and started in a rotated order (each set runs its steady rounds,
then its share of the crawl).  Each round gives the
ratio of each configuration's requests/s to the plain server's, and the
ratio of their CPU time per request (every thread of every httpd process,
the module's writer thread included, from /proc/PID/task/TID/schedstat),
which other load on the machine disturbs far less than throughput.  The
medians of those ratios are the results.

steady  a static site of 1,000 HTML pages shaped like WordPress's
        (bench/cms_page.html: a 6.7 KB head), all recorded before measuring
crawl   every request a URL never seen before (/crawl/TAG-THREAD-N.html,
        mapped to one file by an internal rewrite), until the module's
        servers have answered the target number of distinct URLs (each set
        its share); after each set's graceful stop its store must hold
        exactly the URLs its access log shows answered 200.
"""

import os
import sqlite3
import time

from benchlib import (BASE, Failure, Httpd, as_run_user, loadavg, log,
                      median, median_ci, query, stop_all, wrk,
                      wrk_together)

PAGES = 1000
WRITER_THREAD = "sitemap-writer"   # the recorder names its thread (Linux)
# A page as WordPress with an SEO plugin writes it: a 6.7 KB head (14 meta
# and 23 link tags, inline scripts and styles, a self-referencing
# canonical) that SitemapReadHead reads for every new URL.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "cms_page.html")) as _f:
    PAGE_HTML = _f.read()


def page_html(n, m):
    return PAGE_HTML.replace("@N@", n).replace("@M@", m)


# For experiments: BENCH_VARIANT_MODULE=/path/to/mod_sitemap.so adds a
# configuration "variant", mod_sitemap built differently, to the same runs;
# a comma-separated list adds "variant1", "variant2"... (the differences
# between builds are often smaller than between two runs: compare them in
# one).
VARIANTS = [v for v in os.environ.get("BENCH_VARIANT_MODULE", "").split(",")
            if v]
VARIANT_CFGS = tuple("variant" if len(VARIANTS) == 1
                     else f"variant{i + 1}" for i in range(len(VARIANTS)))


def variant_module(cfg):
    """The module file of a variant configuration, None for the others."""
    return (VARIANTS[VARIANT_CFGS.index(cfg)] if cfg in VARIANT_CFGS
            else None)
# BENCH_PG=1 adds "pg": mod_sitemap with a PostgreSQL store.
PG = bool(os.environ.get("BENCH_PG"))


def module_conf(cfg, build, db="db/sitemap.db"):
    if cfg in ("sitemap", "headoff", "pg") + VARIANT_CFGS:
        path = variant_module(cfg) or build.module
        return (f'LoadModule sitemap_module "{path}"\n'
                f"Sitemap On\nSitemapDatabase {db}\n"
                f"SitemapBaseURL {BASE}\n"
                + ("SitemapReadHead Off\n" if cfg == "headoff" else ""))
    if cfg == "naive":
        return (f'LoadModule naive_sitemap_module "{build.naive}"\n'
                "NaiveSitemapDatabase db/naive.db\n"
                f"NaiveSitemapBaseURL {BASE}\n")
    return ""


def make_site(srv):
    """The 1,000 pages, and /page.html for the crawl.  Their mtime is a day
    old, as on a real site: httpd gives a file changed in the last second
    a weak ETag, and the module would see each page change once."""
    old = time.time() - 86400
    os.makedirs(os.path.join(srv.htdocs, "p"), exist_ok=True)
    os.chmod(os.path.join(srv.htdocs, "p"), 0o755)
    files = []
    for i in range(PAGES):
        files.append(os.path.join(srv.htdocs, "p", f"{i:04d}.html"))
        with open(files[-1], "w") as f:
            f.write(page_html(f"{i:04d}", f"{(i + 1) % PAGES:04d}"))
    files.append(os.path.join(srv.htdocs, "page.html"))
    with open(files[-1], "w") as f:
        # Served for every /crawl/ URL: its canonical (empty: the page
        # itself) names each of them.
        f.write(page_html("crawl", "0000").replace(
            'rel="canonical" href="/p/crawl.html"', 'rel="canonical" href=""'))
    for f in files:
        os.utime(f, (old, old))


def create_naive_db(path):
    """The naive module's table, in WAL mode, made by the children's user
    before the start (its children would otherwise race to create it)."""
    with as_run_user():
        con = sqlite3.connect(path)
        try:
            con.execute("PRAGMA journal_mode = WAL")
            con.execute("CREATE TABLE IF NOT EXISTS urls(site TEXT NOT NULL,"
                        " url TEXT NOT NULL, first_seen INTEGER NOT NULL,"
                        " last_seen INTEGER NOT NULL, PRIMARY KEY(site, url))")
            con.commit()
        finally:
            con.close()


class AccessLog:
    """The distinct URLs a server answered 200 ("%>s %U" lines), read
    incrementally."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.ok = set()
        self.other = 0
        self.crawl = 0
        self.lines = 0

    def update(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return self
        end = data.rfind(b"\n") + 1
        self.offset += end
        for ln in data[:end].decode("latin-1").splitlines():
            self.lines += 1
            status, _, url = ln.partition(" ")
            if status == "200":
                if url not in self.ok:
                    self.ok.add(url)
                    if url.startswith("/crawl/"):
                        self.crawl += 1
            else:
                self.other += 1
        return self


def stored_count(db):
    """URLs of the bench's site in db: a SQLite path or a pg.Database."""
    if hasattr(db, "sql"):
        rows = db.sql("SELECT url_count FROM sitemap_sites WHERE base = "
                      f"'{BASE}'") if db.has_schema() else []
        return int(rows[0][0]) if rows else 0
    rows = query(db, "SELECT url_count FROM sites WHERE base = ?", (BASE,))
    return rows[0][0] if rows else 0


def stored_urls(db):
    if hasattr(db, "sql"):
        rows = db.sql("SELECT s.base, u.url FROM sitemap_urls u JOIN "
                      "sitemap_sites s ON s.id = u.site_id") \
            if db.has_schema() else []
    else:
        rows = query(db, "SELECT s.base, u.url FROM urls u JOIN sites s"
                         " ON s.id = u.site_id") or []
    other = {b for b, _ in rows if b != BASE}
    return {u for b, u in rows if b == BASE}, other


def wait_drained(alog, db, timeout=60):
    """Wait until the store holds as many URLs as the server answered 200
    (the writer has caught up): seconds waited, None after timeout."""
    t0 = time.monotonic()
    time.sleep(0.02)        # log lines of requests in flight at wrk's end
    while True:
        alog.update()
        if stored_count(db) >= len(alog.ok):
            return time.monotonic() - t0
        if time.monotonic() - t0 > timeout:
            return None
        time.sleep(0.02)


def fmt_rps(x):
    return f"{x:,.0f}"


def measure(ctx, srv, alog, script, args, duration, connections,
            drain_db=None):
    """One wrk run: (requests/s, µs of the server's CPU per request, µs of
    it in the module's writer threads, drained).

    The CPU time of every thread of every httpd process is counted, the
    module's writer thread included.  With drain_db (mod_sitemap in the
    crawl) the count goes on until the store holds every URL answered (the
    writer writes what is left at the next SitemapFlushInterval), and the
    requests/s wrk saw are scaled down by the share of the server's CPU
    time that came after wrk's run: on a saturated CPU that work would have
    displaced requests.  Without it, work left to the writer would be
    hidden from the figures; with it, the flush interval's idle wait is
    not counted against the module."""
    alog.update()
    lines0, cpu0 = alog.lines, srv.cpu_ns()
    writer0 = srv.cpu_ns(WRITER_THREAD)
    res = wrk(ctx.cpus, srv.url, script, args, duration=duration,
              connections=connections)
    cpu_run = srv.cpu_ns()
    drained = True
    if drain_db:
        drained = wait_drained(alog, drain_db) is not None
    else:
        time.sleep(0.05)    # requests in flight when wrk stopped
    alog.update()
    cpu1 = srv.cpu_ns()
    writer = srv.cpu_ns(WRITER_THREAD) - writer0
    n = max(alog.lines - lines0, 1)
    rps = res["rps"]
    if drain_db and cpu1 > cpu0:
        rps *= (cpu_run - cpu0) / (cpu1 - cpu0)
    return rps, (cpu1 - cpu0) / 1000.0 / n, writer / 1000.0 / n, drained


def warm_up(ctx, servers, mpm, sm_db):
    """Until every page is recorded: one wrk thread per connection, each
    walking all the pages, and as many connections as prefork has
    processes (each holds one), so that every process has seen every
    page.  The servers run at once, sharing the server's CPU; a run counts
    for a server when it answered every connection's walk (n x PAGES
    requests), and each server runs until p.warmup_runs runs counted (the
    slower ones alone at the end, each extra run longer than the one
    before)."""
    p = ctx.params
    n = p.warm_connections[mpm]
    counted = {cfg: 0 for cfg in servers}
    for attempt in range(3 * p.warmup_runs):
        todo = [cfg for cfg in servers if counted[cfg] < p.warmup_runs]
        if not todo:
            break
        figs = wrk_together(ctx.cpus, [servers[cfg].url for cfg in todo],
                            "cycle.lua", [PAGES],
                            duration=p.warmup * max(1, attempt + 2
                                                    - p.warmup_runs),
                            threads=n, connections=n)
        for cfg, f in zip(todo, figs):
            counted[cfg] += f["requests"] >= n * PAGES
    short = [cfg for cfg in servers if counted[cfg] < p.warmup_runs]
    if short:   # a slow machine: the rounds may see first sightings
        ctx.table.note(f"{mpm}: the warm-up did not walk every page on "
                       f"every connection of {', '.join(short)} in "
                       f"{3 * p.warmup_runs} runs")
    warm_up_wait(mpm, sm_db)
    time.sleep(1.2)     # every process's first sightings written
    # The new sites' files, the stores and the logs go to disk now, not
    # (by the kernel's flusher, on the server's CPU) during the rounds.
    os.sync()


def warm_up_wait(mpm, db):
    """Until the store (a SQLite path or a pg.Database) holds every page."""
    pages = {f"/p/{i:04d}.html" for i in range(PAGES)}
    deadline = time.monotonic() + 30
    while True:
        have, _ = stored_urls(db)
        if have == pages:
            return
        if time.monotonic() > deadline:
            raise Failure(f"{mpm}: after the warm-up the store holds "
                          f"{len(have & pages)} of the {PAGES} pages "
                          f"and {len(have - pages)} other URLs")
        time.sleep(0.2)


def balanced_orders(n):
    """Orders of n configurations in which each comes in every position,
    and right after every other one, equally often (a Williams design).
    A B C, C B A runs A and C twice in a row and B never: whatever a run
    leaves behind for the next one (warm caches, a neighbour's writes to
    disk) would not fall on all configurations alike."""
    first, lo, hi = [0], 1, n - 1
    while len(first) < n:
        first.append(lo if len(first) % 2 else hi)
        if len(first) % 2:
            hi -= 1
        else:
            lo += 1
    orders = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2:
        orders += [o[::-1] for o in orders]
    return orders


def rounds(ctx, servers, logs, cfgs, script, duration, more, drain=None,
           start=0):
    """Run every configuration once a round, in balanced orders (round
    start, start + 1, ... of balanced_orders), while more(round) says so;
    returns {cfg: [(rps, cpu_us, writer_us), ...]}, the rounds done and
    how many drains timed out.
    drain: {cfg: store} of the configurations whose writer's work after
    each run is counted (see measure)."""
    p = ctx.params
    got = {cfg: [] for cfg in cfgs}
    orders = balanced_orders(len(cfgs))
    undrained = 0
    rnd = 0
    while more(rnd):
        order = [cfgs[i] for i in orders[(start + rnd) % len(orders)]]
        for cfg in order:
            rps, cpu, writer, drained = measure(
                ctx, servers[cfg], logs[cfg], script,
                [f"r{rnd}"] if script == "crawl.lua" else [PAGES], duration,
                p.connections, drain_db=(drain or {}).get(cfg))
            undrained += not drained
            got[cfg].append((rps, cpu, writer))
        rnd += 1
        log(f"{script} round {rnd}: " + ", ".join(
            f"{c} {fmt_rps(got[c][-1][0])}/s {got[c][-1][1]:.1f} us"
            for c in cfgs) + f" (load {loadavg()})")
    return got, rnd, undrained


def report(t, sec, what, got, cfg, base, target=None, n_rounds=0):
    """A table row: the median of the rounds' req/s ratios (with a 95%
    bootstrap interval), and the median ratio of CPU time per request
    (base's / cfg's)."""
    rps_r = [a[0] / b[0] for a, b in zip(got[cfg], got[base])]
    cpu_r = [b[1] / a[1] for a, b in zip(got[cfg], got[base])]
    r, c = median(rps_r), median(cpu_r)
    lo, hi = median_ci(rps_r)
    text = (f"**{r:.3f}** (95% CI {lo:.3f}..{hi:.3f}; "
            f"{fmt_rps(median([x[0] for x in got[cfg]]))} vs "
            f"{fmt_rps(median([x[0] for x in got[base]]))} req/s); "
            f"CPU/request {median([x[1] for x in got[cfg]]):.1f} vs "
            f"{median([x[1] for x in got[base]]):.1f} us ({c:.3f}); "
            f"{n_rounds} rounds")
    writer = median([x[2] for x in got[cfg]])
    if writer > 0:
        text += (f"; of the CPU/request, {writer:.1f} us in the writer "
                 "threads")
    if target is None:
        t.add(sec, what, text, "(comparison)")
    else:
        t.add(sec, what, text, f">= {target:.2f}", r >= target)
    return r, c


class CrawlCheck:
    """After each set of servers' graceful stop, its module's stores
    against its access logs (every URL answered 200 stored, nothing else),
    and the naive module's table; summed over the sets for the report."""

    def __init__(self):
        self.stores = {}        # cfg: [crawl URLs, URLs 200, stored, ...]
        self.problems = []

    def finish_set(self, t, mpm, servers, logs):
        check_servers(t, mpm, servers, logs)
        stop_all(servers.values(), graceful=True)
        for cfg in ("sitemap",) + (("pg",) if PG else ()):
            db = (servers[cfg].path("db/sitemap.db") if cfg == "sitemap"
                  else servers[cfg].pg_db)
            alog = logs[cfg].update()
            have, other_sites = stored_urls(db)
            missing, extra = alog.ok - have, have - alog.ok
            sums = self.stores.setdefault(cfg, [0, 0, 0, 0, 0])
            for i, v in enumerate((alog.crawl, len(alog.ok), len(have),
                                   len(missing), len(extra))):
                sums[i] += v
            if missing or extra or other_sites:
                self.problems.append(
                    f"crawl {mpm} {cfg} ({servers[cfg].root}): the store is "
                    f"not the access log's 200s: missing "
                    f"{sorted(missing)[:5]}, extra {sorted(extra)[:5]}, "
                    f"other sites {sorted(other_sites)}")
        nlog = logs["naive"].update()
        nrows = query(servers["naive"].path("db/naive.db"),
                      "SELECT count(*) FROM urls")
        nrows = nrows[0][0] if nrows else 0
        if nrows != len(nlog.ok):
            t.note(f"naive {mpm}: its table holds {nrows:,} URLs for "
                   f"{len(nlog.ok):,} answered 200 (upserts that failed, "
                   "e.g. SQLITE_BUSY, are in its error log)")

    def report(self, t, sec, mpm, asked, max_rounds):
        for cfg, (crawl, ok, have, missing, extra) in self.stores.items():
            store = "PostgreSQL store" if cfg == "pg" else "store"
            t.add(sec, f"crawl, {mpm}: {store} after graceful stop vs "
                  "access log (each set's)",
                  f"{crawl:,} distinct crawl URLs ({ok:,} URLs in all) "
                  f"answered 200; {have:,} stored: {missing} missing, "
                  f"{extra} extra", "exact", not missing and not extra)
        for msg in self.problems:
            t.fail(msg)
        crawled = self.stores.get("sitemap", [0])[0]
        if crawled < asked:
            t.note(f"crawl {mpm}: only {crawled:,} of the {asked:,} "
                   f"distinct URLs asked for in {max_rounds} rounds")


def make_servers(ctx, mpm, cfgs, tag):
    """Fresh servers of the configurations cfgs, each in its own root with
    its own site (and store), created and started in that order."""
    servers = {}
    for cfg in cfgs:
        db = "db/sitemap.db"
        if cfg == "pg":
            ctx.pg_db = ctx.pg_cluster.new_db()
            db = ctx.pg_db.uri
        # Roots of one length: no configuration's paths are longer.
        srv = Httpd(os.path.join(ctx.work,
                                 f"overhead-{mpm}-{tag}-{cfg:-<8}"),
                    mpm, module_conf=module_conf(cfg, ctx.build, db),
                    cpus=ctx.cpus)
        if cfg == "pg":
            srv.pg_db = ctx.pg_db
        make_site(srv)
        servers[cfg] = srv
    if "naive" in servers:
        create_naive_db(servers["naive"].path("db/naive.db"))
    started = []
    try:
        for srv in servers.values():
            srv.start()
            started.append(srv)
    except BaseException:
        # the caller never sees this set: stop what did start
        try:
            stop_all(started, graceful=False, timeout=60)
        except Failure as e:
            log(str(e))
        raise
    return servers


def check_servers(t, mpm, servers, logs):
    """Answers other than 200, and error-log lines that say something went
    wrong: the module's fail the run, the others' are noted."""
    for cfg, lg in logs.items():
        lg.update()
        if lg.other:
            t.fail(f"{mpm} {cfg}: {lg.other} answers other than 200")
    for cfg, srv in servers.items():
        bad = srv.problems()
        if bad:
            msg = f"{mpm} {cfg}: {len(bad)} error-log lines, e.g. {bad[0]}"
            if cfg in ("sitemap", "pg"):
                t.fail(msg)
            else:
                t.note(msg)


def run(ctx, mpm):
    p = ctx.params
    t = ctx.table
    sec = f"1/3 {mpm}"
    log(f"overhead, {mpm} MPM (load {loadavg()})")
    t.note(f"{mpm}: load average before: {loadavg()}")
    servers = {}
    # "control" is a second server without the module: its ratio to
    # "none" shows how far two identical servers differ on this machine.
    all_cfgs = ("none", "sitemap", "headoff", "naive") \
        + (("control",) if p.control else ()) \
        + VARIANT_CFGS + (("pg",) if PG else ())
    if PG and not getattr(ctx, "pg_cluster", None):
        import sys
        sys.path.insert(0, os.path.join(os.path.dirname(
            os.path.abspath(__file__)), "..", "t", "integration"))
        import pg
        ctx.pg_cluster = pg.Cluster()
    try:
        # Two identical servers differ by 1-2% for as long as they run: each
        # instance carries an offset of its own that all its rounds share
        # (and the slot a server was created and started in once made a
        # difference too).  So the rounds are spread over fresh instances
        # of all the servers (new roots, sites and stores), created and
        # started in a rotated order: by default four per configuration,
        # so that each is created first four times, second four times,
        # ...; every instance runs the same number of steady rounds (at
        # least p.rounds in all), then its share of the crawl (the crawl
        # on one set alone carried that set's offsets: up to 3 us a
        # request between two builds of one code, 2026-11-26).
        crawl_cfgs = ("none", "sitemap", "headoff", "naive") \
            + VARIANT_CFGS + (("pg",) if PG else ())
        got, n = {cfg: [] for cfg in all_cfgs}, 0
        cgot, cn, undrained = {cfg: [] for cfg in crawl_cfgs}, 0, 0
        check, logs = CrawlCheck(), {}
        instances = max(1, min(p.instances or 4 * len(all_cfgs), p.rounds))
        per_instance = -(-p.rounds // instances)
        crawl_share = -(-p.crawl_urls // instances)
        crawl_min = -(-p.crawl_min_rounds // instances)
        crawl_max = max(crawl_min, -(-p.crawl_max_rounds // instances))
        for inst in range(instances):
            if servers:
                check.finish_set(t, mpm, servers, logs)
            rot = inst % len(all_cfgs)
            servers = make_servers(ctx, mpm, all_cfgs[rot:] + all_cfgs[:rot],
                                   f"{inst + 1}")
            logs = {cfg: AccessLog(srv.access_log)
                    for cfg, srv in servers.items()}
            warm_up(ctx, servers, mpm, servers["sitemap"].path(
                "db/sitemap.db"))
            if PG:
                warm_up_wait(mpm, ctx.pg_db)
            part, k, _ = rounds(ctx, servers, logs, all_cfgs, "cycle.lua",
                                p.duration, lambda r: r < per_instance,
                                start=n)
            for cfg in all_cfgs:
                got[cfg] += part[cfg]
            n += k

            def more(rnd):
                if rnd < crawl_min:
                    return True
                return (logs["sitemap"].update().crawl < crawl_share
                        and rnd < crawl_max)
            drain = {cfg: servers[cfg].path("db/sitemap.db")
                     for cfg in ("sitemap", "headoff") + VARIANT_CFGS}
            if PG:
                drain["pg"] = ctx.pg_db
            part, k, u = rounds(ctx, servers, logs, crawl_cfgs, "crawl.lua",
                                p.crawl_duration, more, drain=drain,
                                start=cn)
            for cfg in crawl_cfgs:
                cgot[cfg] += part[cfg]
            cn += k
            undrained += u
        check.finish_set(t, mpm, servers, logs)
        if instances > 1:
            t.note(f"{mpm}: {n} steady rounds and {cn} crawl rounds over "
                   f"{instances} instances of the servers, each created and "
                   "started in a rotated order")
        report(t, sec, f"steady state, {mpm}: req/s with mod_sitemap / "
               "without", got, "sitemap", "none", 0.98, n)
        report(t, sec, f"steady state, {mpm}: req/s with the naive module "
               "/ without", got, "naive", "none", None, n)
        report(t, sec, f"steady state, {mpm}: req/s with SitemapReadHead On "
               "/ Off", got, "sitemap", "headoff", None, n)
        if p.control:
            report(t, sec, f"steady state, {mpm}: control: req/s of a 2nd "
                   "server without the module / the first", got, "control",
                   "none", None, n)
        for cfg in VARIANT_CFGS:
            report(t, sec, f"steady state, {mpm}: {cfg} "
                   f"{variant_module(cfg)} / without", got, cfg, "none",
                   None, n)
        if PG:
            report(t, sec, f"steady state, {mpm}: req/s with mod_sitemap "
                   "on PostgreSQL / without", got, "pg", "none", 0.98, n)
            report(t, sec, f"steady state, {mpm}: req/s with mod_sitemap "
                   "on PostgreSQL / on SQLite", got, "pg", "sitemap", None,
                   n)

        # ---- crawl ----------------------------------------------------------
        report(t, sec, f"crawl, {mpm}: req/s with mod_sitemap / without "
               "(its writer's work after each run included)", cgot,
               "sitemap", "none", 0.90, cn)
        report(t, sec, f"crawl, {mpm}: req/s with the naive module / "
               "without", cgot, "naive", "none", None, cn)
        report(t, sec, f"crawl, {mpm}: req/s with SitemapReadHead On / Off "
               "(the head reader's own cost)", cgot, "sitemap", "headoff",
               0.95, cn)
        for cfg in VARIANT_CFGS:
            report(t, sec, f"crawl, {mpm}: {cfg} / without", cgot, cfg,
                   "none", None, cn)
            report(t, sec, f"crawl, {mpm}: {cfg} / SitemapReadHead Off",
                   cgot, cfg, "headoff", None, cn)
        if PG:
            report(t, sec, f"crawl, {mpm}: req/s with mod_sitemap on "
                   "PostgreSQL / without (its writer's work after each run "
                   "included)", cgot, "pg", "none", 0.90, cn)
            report(t, sec, f"crawl, {mpm}: req/s with mod_sitemap on "
                   "PostgreSQL / on SQLite", cgot, "pg", "sitemap", None, cn)
        if undrained:
            t.note(f"crawl {mpm}: the writer had not caught up 60 s after "
                   f"{undrained} of the module's runs")
        check.report(t, sec, mpm, p.crawl_urls, instances * crawl_max)
        t.note(f"{mpm}: load average after: {loadavg()}")
    finally:
        try:
            stop_all(servers.values(), graceful=False, timeout=60)
        except Failure as e:
            log(str(e))
        if getattr(ctx, "pg_cluster", None):
            ctx.pg_cluster.close()
            ctx.pg_cluster = None
