#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench/many_stores.py: thousands of sites on one server (issue 22).

    bench/many_stores.py [VHOSTS ...]      # default: 1000 10000

For each number of name-based vhosts, three servers with the same vhosts
(event MPM, one child of 25 threads, as bench/run's):
  - none:     without the module;
  - shared:   the module, every vhost's SitemapDatabase one file;
  - per-vhost: the module, one store file per vhost.
Each is started (time from `httpd -k start` until every vhost answers;
the first start creates the stores, a second start finds them),
given traffic to every vhost (three pages and /sitemap.xml each), and then
measured after the writer's flush interval: threads, resident memory
(VmRSS) and open descriptors of the child; then a graceful restart is
timed (until a new child answers every vhost).  The store holds exactly
the pages served afterwards (checked per vhost on a sample).  Not part of
bench/run (it takes minutes): run it by hand after a build; as root or
not."""

import http.client
import os
import sqlite3
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from benchlib import (Build, Failure, Httpd, give_to_run_user,  # noqa: E402
                      loadavg, log, proc_status_kb)

PAGES = 3
FLUSH = 1


def vhosts_conf(n, mode, db_dir, port):
    out = []
    for i in range(n):
        name = f"v{i}.example"
        out.append(f"<VirtualHost 127.0.0.1:{port}>\nServerName {name}")
        if mode != "none":
            db = (f"{db_dir}/shared.db" if mode == "shared"
                  else f"{db_dir}/v{i}.db")
            out.append(f"Sitemap On\nSitemapBaseURL http://{name}\n"
                       f"SitemapDatabase {db}\n"
                       f"SitemapFlushInterval {FLUSH}")
        out.append("</VirtualHost>")
    return "\n".join(out) + "\n"


def get(conn, host, path):
    conn.request("GET", path, headers={"Host": host})
    r = conn.getresponse()
    r.read()
    return r.status


def answers_all(port, n, step):
    """Every step-th vhost (and the last) answers 200 for a page."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for i in list(range(0, n, step)) + [n - 1]:
            if get(conn, f"v{i}.example", "/p0.html") != 200:
                return False
        return True
    except OSError:
        return False
    finally:
        conn.close()


def traffic(port, n):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    for i in range(n):
        host = f"v{i}.example"
        for k in range(PAGES):
            if get(conn, host, f"/p{k}.html") != 200:
                raise Failure(f"{host}/p{k}.html not 200")
        get(conn, host, "/sitemap.xml")
    conn.close()


def timed_start(srv, mode, n, step):
    """From `httpd -k start` until every step-th vhost answers."""
    t0 = time.monotonic()
    srv.start()
    while not answers_all(srv.port, n, step):
        time.sleep(0.05)
        if time.monotonic() - t0 > 600:
            raise Failure(f"{mode} {n}: not answering\n{srv.log_tail()}")
    return time.monotonic() - t0


def child_figures(srv):
    kids = srv.children()
    if len(kids) != 1:
        raise Failure(f"expected one child, found {kids}")
    pid = kids[0]
    threads = len(os.listdir(f"/proc/{pid}/task"))
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return pid, threads, proc_status_kb(pid, "VmRSS") / 1024, fds


def run_one(build, work, n, mode):
    root = os.path.join(work, f"{mode}-{n}")
    db_dir = os.path.join(root, "db")
    srv = Httpd(root, "event", cpus=None)
    module = (f'LoadModule sitemap_module "{build.module}"\n'
              if mode != "none" else "")
    srv.module_conf = module + vhosts_conf(n, mode, db_dir, srv.port)
    for k in range(PAGES):
        with open(os.path.join(srv.htdocs, f"p{k}.html"), "w") as f:
            f.write(f"<!doctype html><title>p{k}</title><p>page {k}\n")
    give_to_run_user(db_dir)
    step = max(1, n // 50)
    start_s = timed_start(srv, mode, n, step)
    # Beyond 64 new stores, the children's writers create the others in
    # the background (their sitemaps answer 503 until then): how long.
    t0 = time.monotonic()
    while mode == "per-vhost" and not all(
            os.path.exists(os.path.join(db_dir, f"v{i}.db"))
            for i in range(n)):
        time.sleep(0.1)
        if time.monotonic() - t0 > 900:
            raise Failure(f"{mode} {n}: stores not created")
    created_s = start_s + time.monotonic() - t0
    try:
        traffic(srv.port, n)
        time.sleep(FLUSH * 3 + 1)
        pid, threads, rss, fds = child_figures(srv)
        # A graceful restart: until a new child answers every vhost.
        t0 = time.monotonic()
        srv_cmd = [os.environ.get("HTTPD", "/usr/sbin/apache2"), "-f",
                   srv.conf_path, "-k", "graceful"]
        os.spawnv(os.P_WAIT, srv_cmd[0], srv_cmd)
        while True:
            kids = srv.children()
            if kids and pid not in kids and answers_all(srv.port, n, step):
                break
            if time.monotonic() - t0 > 600:
                raise Failure(f"{mode} {n}: no new generation")
            time.sleep(0.05)
        graceful_s = time.monotonic() - t0
    finally:
        srv.stop(graceful=True)
    # Started again, the stores now there (what a restart costs).
    again_s = timed_start(srv, mode, n, step)
    srv.stop(graceful=True)
    if mode != "none":
        for i in list(range(0, n, step)):
            db = (os.path.join(db_dir, "shared.db") if mode == "shared"
                  else os.path.join(db_dir, f"v{i}.db"))
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
                got = c.execute(
                    "SELECT count(*) FROM urls u JOIN sites s ON "
                    "u.site_id = s.id WHERE s.base = ?",
                    (f"http://v{i}.example",)).fetchone()[0]
            if got != PAGES:
                raise Failure(f"{mode} {n}: v{i} holds {got} URLs, "
                              f"not {PAGES}")
    problems = srv.problems()
    if problems:
        raise Failure(f"{mode} {n}: error log:\n" + "\n".join(problems[:5]))
    return dict(start=start_s, created=created_s, again=again_s,
                graceful=graceful_s,
                threads=threads,
                rss=rss, fds=fds)


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1000, 10000]
    work = tempfile.mkdtemp(prefix="sitemap-many-")
    os.chmod(work, 0o755)
    build = Build(work)
    build.run()
    print(f"load before: {loadavg()}")
    print("| vhosts | stores | first start | all stores made | "
          "start (stores exist) | "
          "graceful restart | threads per child | RSS per child | open fds "
          "per child |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in counts:
        for mode in ("none", "shared", "per-vhost"):
            log(f"{n} vhosts, {mode}")
            f = run_one(build, work, n, mode)
            label = {"none": "without the module", "shared": "one shared "
                     "file", "per-vhost": "one file per vhost"}[mode]
            print(f"| {n:,} | {label} | {f['start']:.1f} s | "
                  f"{f['created']:.1f} s | {f['again']:.1f} s | "
                  f"{f['graceful']:.1f} s | {f['threads']} | "
                  f"{f['rss']:.1f} MB | {f['fds']} |", flush=True)
    print(f"load after: {loadavg()}")


if __name__ == "__main__":
    main()
