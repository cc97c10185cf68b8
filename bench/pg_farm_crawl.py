#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench/pg_farm_crawl.py: two servers of a farm crawled at once into one
PostgreSQL store (issue 15).  Not part of bench/run (it takes minutes):
run it by hand after a build, as root (PostgreSQL runs as postgres):

    bench/pg_farm_crawl.py [--db-cpu] [URLS]   # default 1,000,000 in all

A throwaway PostgreSQL cluster (t/integration/pg.py: on this machine,
fsync off) and two event-MPM httpd servers recording the same site into
one database (SitemapFlushInterval 1s).  wrk crawls both at once, every
request a URL never asked before (of either server: a balancer sends
each request to one), in runs of 10 s, until the servers
answered URLS distinct URLs together.  Every second the bench compares
what the access logs answered 200 with what the database holds: the lag
is how long ago the access logs had answered as many URLs as the database
holds now (the database keeps up when the lag stays within a few flush
intervals).  After a graceful stop of both, the store must hold exactly the
union of both access logs' 200s.

--db-cpu gives PostgreSQL a CPU of its own (the last one) and runs both
servers and both wrk on the others, as a farm's database runs on its own
machine; without it they all share every CPU, and the crawl starves the
database whenever the servers are faster than it."""

import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "t", "integration"))

from benchlib import (BASE, Build, Cpus, Httpd, Failure, loadavg,  # noqa
                      log, stop_all, wrk_command, wrk_figures)
from overhead import AccessLog, make_site, stored_count, stored_urls  # noqa
import pg  # noqa: E402

RUN_S = 10
FLUSH_S = 1


def crawl_both(cpus, servers, rnd):
    """One wrk per server at once, each with its own URLs (a balancer sends
    each request to one server)."""
    cmds = [wrk_command(s.url, "crawl.lua", [f"r{rnd}{s.name}"], RUN_S, 2, 8)
            for s in servers]
    procs = [subprocess.Popen(cpus.client_cmd(c), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for c in cmds]
    outs = [p.communicate(timeout=RUN_S + 120) for p in procs]
    return [wrk_figures(c, p.returncode, o, e)
            for c, p, (o, e) in zip(cmds, procs, outs)]


class WebCpus(Cpus):
    """Servers and wrk on every CPU but the last (the database's)."""

    def __init__(self):
        super().__init__(pin=True)
        web = sorted(os.sched_getaffinity(0))[:-1]
        self.server = self.client = ",".join(str(c) for c in web)

    def describe(self):
        return f"httpd and wrk on CPU {self.server}"


def pin_database(cluster, cpu):
    """Every process of the cluster (the postmaster first, so that the
    backends it forks later inherit it) on cpu."""
    with open(os.path.join(cluster.data, "postmaster.pid")) as f:
        postmaster = int(f.readline())
    pids = [postmaster]
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == postmaster:
                    pids.append(int(d))
        except (OSError, ValueError, IndexError):
            continue
    for pid in pids:
        os.sched_setaffinity(pid, {cpu})


def main():
    args = sys.argv[1:]
    db_cpu = "--db-cpu" in args
    args = [a for a in args if a != "--db-cpu"]
    want = int(args[0]) if args else 1_000_000
    work = tempfile.mkdtemp(prefix="sitemap-pgfarm-")
    os.chmod(work, 0o755)
    build = Build(work)
    build.run()
    if db_cpu and len(os.sched_getaffinity(0)) < 2:
        raise Failure("--db-cpu needs at least two CPUs")
    cpus = WebCpus() if db_cpu else Cpus(pin=False)
    cluster = pg.Cluster()
    servers = []
    try:
        if db_cpu:
            pin_database(cluster, max(os.sched_getaffinity(0)))
        log(f"CPUs: {cpus.describe()}"
            + (f", PostgreSQL on CPU {max(os.sched_getaffinity(0))}"
               if db_cpu else ""))
        db = cluster.new_db()
        for name in ("www1", "www2"):
            srv = Httpd(os.path.join(work, name), "event",
                        module_conf=(f'LoadModule sitemap_module '
                                     f'"{build.module}"\nSitemap On\n'
                                     f"SitemapDatabase {db.uri}\n"
                                     f"SitemapBaseURL {BASE}\n"
                                     f"SitemapFlushInterval {FLUSH_S}\n"),
                        cpus=cpus)
            srv.name = name
            make_site(srv)
            srv.start()
            servers.append(srv)
        logs = [AccessLog(s.access_log) for s in servers]
        samples = []            # (t, answered 200, stored)
        stop = threading.Event()

        def sampler():
            t0 = time.monotonic()
            while not stop.is_set():
                answered = len(set().union(*(lg.update().ok
                                             for lg in logs)))
                samples.append((time.monotonic() - t0, answered,
                                stored_count(db)))
                stop.wait(1)
        th = threading.Thread(target=sampler, daemon=True)
        th.start()
        log(f"crawling {want:,} URLs over two servers (load {loadavg()})")
        t_start = time.monotonic()
        rnd = 0
        rps = []
        while True:
            crawled = sum(lg.update().crawl for lg in logs)
            if crawled >= want:
                break
            figs = crawl_both(cpus, servers, rnd)
            rps.append(sum(f["requests"] for f in figs) / RUN_S)
            rnd += 1
            log(f"run {rnd}: {rps[-1]:,.0f} req/s, {crawled:,} crawled "
                f"(load {loadavg()})")
        crawl_s = time.monotonic() - t_start
        # Drained: the database holds every URL answered.
        t0 = time.monotonic()
        answered = len(set().union(*(lg.update().ok for lg in logs)))
        while stored_count(db) < answered and time.monotonic() - t0 < 300:
            time.sleep(0.2)
        drain_s = time.monotonic() - t0
        stop.set()
        th.join()
        stop_all(servers, graceful=True)
        ok = set().union(*(lg.update().ok for lg in logs))
        have, other = stored_urls(db)
        missing, extra = ok - have, have - ok
        # Lag: for each sample, how long ago the logs had answered as many.
        lags = []
        for i, (t, _, stored) in enumerate(samples):
            j = i
            while j > 0 and samples[j - 1][1] >= stored:
                j -= 1
            lags.append(t - samples[j][0])
        lags.sort()
        print(f"| URLs crawled (two servers) | {sum(lg.crawl for lg in logs):,}"
              f" in {crawl_s:.0f} s ({len(rps)} runs of {RUN_S} s; "
              f"{min(rps):,.0f}-{max(rps):,.0f} req/s both together) |")
        print(f"| store behind the access logs (1 s samples) | median "
              f"{lags[len(lags) // 2]:.1f} s, 95th {lags[int(len(lags) * .95)]:.1f}"
              f" s, max {lags[-1]:.1f} s (SitemapFlushInterval {FLUSH_S} s)"
              " |")
        print(f"| drained after the crawl | {drain_s:.1f} s |")
        print(f"| store after graceful stop vs access logs | {len(ok):,} "
              f"URLs answered 200, {len(have):,} stored: {len(missing)} "
              f"missing, {len(extra)} extra, {len(other)} other sites |")
        print(f"| CPUs | {cpus.describe()}"
              + (f", PostgreSQL on CPU {max(os.sched_getaffinity(0))}"
                 if db_cpu else ", PostgreSQL unpinned") + " |")
        print(f"| load average | {loadavg()} |")
        if missing or extra or other:
            raise Failure(f"store differs: missing {sorted(missing)[:5]}, "
                          f"extra {sorted(extra)[:5]}")
    finally:
        try:
            stop_all(servers, graceful=False, timeout=60)
        finally:
            cluster.close()


if __name__ == "__main__":
    main()
