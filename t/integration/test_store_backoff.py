# SPDX-License-Identifier: Apache-2.0
"""A failing or hung store costs nothing and loses nothing silently
(issue 33): a failing store is retried with a backoff (a few attempts a
minute, the writer asleep in between), a hung PostgreSQL never holds up a
stop past the busy timeout, and what could not be written is kept in a
spill file for the next process."""
import contextlib
import glob
import os
import re
import signal
import socket
import threading
import time

import pytest

from conftest import children_of, pid_alive
from pg import pg_cluster, pg_db  # noqa: F401 (fixtures)
from test_indexnow import corroborate, endpoint, indexnow_conf  # noqa: F401
from test_pg_indexnow import pg_held
from test_store_faults import fault_server, fill, serve_fast, small_fs  # noqa: F401

BASE = "https://www.example.com"
CRAWL = "RewriteEngine On\nRewriteRule ^/crawl/ /page.html [L]\n"
FAULT = r"store postgresql://|SitemapDatabase: 'postgresql://"
# More new URLs than a batch (1,000): before issue 33, a batch kept for
# retry made the writer retry at once, forever.
BATCH_AND_MORE = 1100


def pg_server(make_server, pg_db):
    s = make_server(db=pg_db.uri, conf=f"SitemapBaseURL {BASE}\n{CRAWL}")
    s.expect_log(FAULT)
    s.start()
    s.get_ok("/crawl/first")
    pg_db.wait_urls(BASE, {"/crawl/first"})
    return s


class Listener:
    """Something at the stopped database's port that counts the connections
    made to it (and closes them): the module's connection attempts."""

    def __init__(self, port):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.count = 0
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while self.running:
            try:
                c, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.count += 1
            c.close()

    def close(self):
        self.running = False
        self.thread.join()
        self.sock.close()


def writer_cpu(srv):
    """CPU seconds (user + system) of the sitemap-writer threads of srv's
    children."""
    hz = os.sysconf("SC_CLK_TCK")
    total = 0
    for kid in children_of(srv.pid):
        for stat in glob.glob(f"/proc/{kid}/task/*/stat"):
            try:
                with open(stat) as f:
                    data = f.read()
            except OSError:
                continue
            comm = data[data.index("(") + 1:data.rindex(")")]
            if comm != "sitemap-writer":
                continue
            fields = data[data.rindex(")") + 2:].split()
            total += int(fields[11]) + int(fields[12])
    return total / hz


@pytest.mark.slow
def test_database_down_few_attempts(make_server, pg_db, pg_cluster):
    """PostgreSQL down with a batch and more kept: over 10 s without
    traffic each process tries a few times (1 s, 2 s, 4 s ...), not
    thousands (21,513 in 10 s before), and its writer sleeps; once the
    database is back, what was kept is written and the log says so."""
    s = pg_server(make_server, pg_db)
    s.expect_log(r"works again")
    pg_cluster.stop()
    listener = Listener(pg_cluster.port)
    try:
        served = set()
        for i in range(BATCH_AND_MORE):
            assert s.get(f"/crawl/d{i}").status == 200
            served.add(f"/crawl/d{i}")
        time.sleep(1)
        procs = len(children_of(s.pid))
        n0, cpu0 = listener.count, writer_cpu(s)
        time.sleep(10)
        attempts, cpu = listener.count - n0, writer_cpu(s) - cpu0
        print(f"{attempts} connection attempts in 10 s from {procs} "
              f"processes; writer CPU {cpu:.2f} s")
        assert attempts <= 5 * procs, f"{attempts} attempts in 10 s"
        assert cpu < 0.5, f"the writers used {cpu:.2f} s of CPU in 10 s"
    finally:
        listener.close()
        pg_cluster.start()
    pg_db.wait_urls(BASE, served, timeout=90)
    line = s.wait_log(r"works again; recording resumed: \d+ changes kept "
                      r"while it failed were written, 0 lost",
                      module="sitemap", timeout=10)
    assert line


@pytest.mark.slow
def test_disk_full_writer_sleeps(small_fs, make_server):
    """SQLite on a full disk with a batch and more kept: the writer's CPU
    time over 10 s stays small (a full core before)."""
    srv = fault_server(make_server, db="small/sitemap.db", conf=CRAWL)
    srv.expect_log(r"works again")
    srv.start()
    srv.get_ok("/crawl/before")
    srv.wait_recorded("/crawl/before")
    filler = fill(small_fs)
    for i in range(BATCH_AND_MORE):
        assert srv.get(f"/crawl/full-{i}-{'x' * 100}").status == 200
    time.sleep(1)
    cpu0 = writer_cpu(srv)
    time.sleep(10)
    cpu = writer_cpu(srv) - cpu0
    print(f"writer CPU on a full disk: {cpu:.2f} s in 10 s")
    assert cpu < 0.5, f"the writers used {cpu:.2f} s of CPU in 10 s"
    os.unlink(filler)
    serve_fast(srv, "/crawl/after")
    srv.wait_recorded("/crawl/after", timeout=90)


def pg_processes(cluster):
    """The postmaster and its children (backends, background workers)."""
    with open(os.path.join(cluster.data, "postmaster.pid")) as f:
        pm = int(f.readline())
    return [pm] + children_of(pm)


def test_stop_with_database_hung(make_server, pg_db, pg_cluster):
    """The postmaster and every backend SIGSTOPped (connections stay up:
    the kernel answers for them): `-k stop` finishes by itself within the
    busy timeout (5 s) and a margin, well before httpd's SIGKILL, what was
    queued is kept in a spill file, and the next process writes it in."""
    s = pg_server(make_server, pg_db)
    s.expect_log(r"no answer from the database|works again|spill")
    procs = []
    for p in pg_processes(pg_cluster):
        with contextlib.suppress(ProcessLookupError):   # a backend that ended
            os.kill(p, signal.SIGSTOP)
            procs.append(p)
    try:
        served = set()
        for i in range(50):
            serve_fast(s, f"/crawl/h{i}")
            served.add(f"/crawl/h{i}")
        time.sleep(1.5)         # the writer waits on the hung server now
        pid, kids = s.pid, children_of(s.pid)
        t0 = time.monotonic()
        s.stop(timeout=30)
        took = time.monotonic() - t0
        print(f"-k stop with the database hung: {took:.1f} s")
        assert took < 9, f"the stop took {took:.1f} s"
        assert not pid_alive(pid) and not any(pid_alive(k) for k in kids)
        log = s.log_text()
        assert "SIGKILL" not in log and "exit signal Killed" not in log
        m = re.search(r"stopping with (\d+) changes not written: kept in "
                      r"(\S+)\.spill-\*", log)
        assert m, s.log_tail()
        assert int(m.group(1)) >= len(served)
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGCONT)
    s.start()
    pg_db.wait_urls(BASE, served, timeout=60)


def test_stop_with_database_hung_indexnow(make_server, pg_db, pg_cluster,
                                          endpoint):
    """The same with IndexNow's sender on the store too: its waits on the
    hung database end within the busy timeout of the stop as well."""
    s = make_server(db=pg_db.uri, conf=f"SitemapBaseURL {BASE}\n{CRAWL}"
                                       + indexnow_conf(endpoint))
    s.expect_log(FAULT)
    s.expect_log(r"no answer from the database|works again|spill|IndexNow")
    s.start()
    s.get_ok("/crawl/first")
    corroborate(s, "/crawl/first", held=pg_held(pg_db))
    endpoint.wait_delivered([f"{BASE}/crawl/first"])
    procs = []
    for p in pg_processes(pg_cluster):
        with contextlib.suppress(ProcessLookupError):
            os.kill(p, signal.SIGSTOP)
            procs.append(p)
    try:
        for i in range(20):
            serve_fast(s, f"/crawl/i{i}")
        time.sleep(2)           # the writer and the sender wait on it now
        pid, kids = s.pid, children_of(s.pid)
        t0 = time.monotonic()
        s.stop(timeout=30)
        took = time.monotonic() - t0
        print(f"-k stop with the database hung, IndexNow on: {took:.1f} s")
        assert took < 9, f"the stop took {took:.1f} s"
        assert not pid_alive(pid) and not any(pid_alive(k) for k in kids)
        assert "SIGKILL" not in s.log_text()
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGCONT)


def first_open_server(make_server, uri):
    """A prefork server of one child that has written to the store."""
    s = make_server(db=uri, mpm="prefork",
                    conf=f"SitemapBaseURL {BASE}\n{CRAWL}",
                    mpm_conf="StartServers 1\nMinSpareServers 1\n"
                             "MaxSpareServers 1\nServerLimit 2\n"
                             "MaxRequestWorkers 2\n")
    s.expect_log(FAULT)
    s.expect_log(r"no answer from the database|works again|spill|"
                 r"cannot connect|exit signal Killed")
    s.start()
    s.get_ok("/crawl/first")
    pg_db_urls = {"/crawl/first"}
    return s, pg_db_urls


def replace_child(s):
    """Kill the only child: the parent starts another, whose writer opens
    the store first thing (its first open)."""
    old = children_of(s.pid)
    for k in old:
        os.kill(k, signal.SIGKILL)
    deadline = time.monotonic() + 20
    while True:
        new = [k for k in children_of(s.pid) if k not in old]
        if new:
            return new
        assert time.monotonic() < deadline, "no new child"
        time.sleep(0.1)


@pytest.mark.parametrize("hang", ["postmaster", "statement"])
def test_stop_with_database_hung_at_first_open(make_server, pg_db,
                                               pg_cluster, hang):
    """The database hangs when a child first opens its store: postmaster
    SIGSTOPped (TCP alive: the kernel accepts the connection, nobody
    answers; the URI's connect_timeout is 30 s), or the open's first
    statement blocked (another session holds sitemap_meta's lock).
    `-k stop` ends that open's wait within the busy timeout (5 s) and a
    margin, as it ends waits after the first open (not after
    connect_timeout, nor 35 s); what was queued is kept in a spill file,
    and the next process writes it in."""
    s, first = first_open_server(make_server,
                                 pg_db.uri + "&connect_timeout=30")
    pg_db.wait_urls(BASE, first)
    procs, locker = [], None
    if hang == "postmaster":
        for p in pg_processes(pg_cluster):
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGSTOP)
                procs.append(p)
    else:
        def hold_lock():
            # (ends with an error when cancelled below)
            with contextlib.suppress(Exception):
                pg_db.sql("BEGIN; LOCK TABLE sitemap_meta IN ACCESS"
                          " EXCLUSIVE MODE; SELECT pg_sleep(45); COMMIT")
        locker = threading.Thread(target=hold_lock, daemon=True)
        locker.start()
        deadline = time.monotonic() + 10
        while pg_db.sql("SELECT count(*) FROM pg_locks WHERE mode ="
                        " 'AccessExclusiveLock' AND relation ="
                        " 'sitemap_meta'::regclass") != [["1"]]:
            assert time.monotonic() < deadline, "no lock"
            time.sleep(0.1)
    try:
        replace_child(s)
        served = set()
        for i in range(20):
            serve_fast(s, f"/crawl/f{i}")
            served.add(f"/crawl/f{i}")
        time.sleep(1.5)         # the new child's first open waits on it
        pid, kids = s.pid, children_of(s.pid)
        log_at = len(s.log_text())
        t0 = time.monotonic()
        s.stop(timeout=60)
        took = time.monotonic() - t0
        print(f"-k stop with the database hung ({hang}) at the first open:"
              f" {took:.1f} s")
        assert took < 9, f"the stop took {took:.1f} s"
        assert not pid_alive(pid) and not any(pid_alive(k) for k in kids)
        log = s.log_text()[log_at:]
        assert "SIGKILL" not in log and "exit signal Killed" not in log
        m = re.search(r"stopping with (\d+) changes not written: kept in "
                      r"(\S+)\.spill-\*", log)
        assert m, s.log_tail()
        assert int(m.group(1)) >= len(served)
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGCONT)
        if locker:
            pg_db.sql("SELECT pg_cancel_backend(pid) FROM pg_stat_activity"
                      " WHERE query LIKE '%pg_sleep(45)%' AND pid <>"
                      " pg_backend_pid()")
            locker.join(30)
    s.start()
    pg_db.wait_urls(BASE, served, timeout=60)
