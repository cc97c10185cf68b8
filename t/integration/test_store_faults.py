# SPDX-License-Identifier: Apache-2.0
"""Store faults never break serving: pages are answered 200 as usual and
quickly (the request path never waits on SQLite), the fault is logged with
the store's path and the reason (at most once a minute per process), and
recording resumes once the fault is gone."""
import errno
import os
import re
import sqlite3
import subprocess
import time

import pytest

from conftest import (IS_ROOT, RUN_GID, RUN_UID, SM_SCHEMA_VERSION,
                      as_run_user)

CRAWL = """
RewriteEngine On
RewriteRule ^/crawl/ /page.html [L]
"""
FAST = 1.5          # seconds a page may take while the store is faulty
LOG_LEVELS = ("warn", "error", "crit", "alert", "emerg")


def fault_server(make_server, **kw):
    kw.setdefault("conf", CRAWL)
    srv = make_server(**kw)
    # whatever the module says about its store is expected here
    srv.expect_log(r"\[sitemap:(warn|error|crit)\].*" + re.escape(srv.db_path))
    return srv


def serve_fast(srv, url):
    r = srv.get(url)
    assert r.status == 200, f"{url}: {r.status} while the store is faulty"
    assert r.elapsed < FAST, f"{url} took {r.elapsed:.2f}s: the request waited on the store"
    return r


def check_fault_logged(srv, reason_rx, timeout=15):
    """A sitemap line names the store and the reason; no process logs the
    fault (level error or worse) more than once (within this minute)."""
    path_rx = re.escape(srv.db_path)
    lines = srv.wait_log(path_rx + r".*(" + reason_rx + r")|(" + reason_rx + r").*" + path_rx,
                         module="sitemap", level=LOG_LEVELS, timeout=timeout)
    assert lines
    return lines


def check_log_once_per_process(srv):
    per_pid = {}
    for ln in srv.log_lines("sitemap", ("error", "crit", "alert", "emerg")):
        m = re.search(r"\[pid (\d+)", ln)
        per_pid.setdefault(m.group(1), []).append(ln)
    for pid, lines in per_pid.items():
        assert len(lines) <= 1, f"process {pid} logged the fault {len(lines)} times:\n" + "\n".join(lines)


def store_files(srv):
    return [srv.db_path + s for s in ("", "-wal", "-shm")]


def test_database_deleted(make_server):
    srv = fault_server(make_server)
    srv.start()
    srv.get_ok("/crawl/before")
    srv.wait_recorded("/crawl/before")
    for f in store_files(srv):
        if os.path.exists(f):
            os.unlink(f)
    serve_fast(srv, "/crawl/after-1")
    srv.wait_recorded("/crawl/after-1", timeout=15)
    assert srv.query("PRAGMA user_version") == [(SM_SCHEMA_VERSION,)]
    serve_fast(srv, "/crawl/after-2")
    srv.wait_recorded("/crawl/after-2")
    assert "/crawl/before" not in srv.urls()
    if IS_ROOT:
        assert os.stat(srv.db_path).st_uid == RUN_UID


def test_database_deleted_known_urls_recorded_again(make_server):
    """A URL recorded into the old file is recorded into the new one when
    it is served again."""
    srv = fault_server(make_server)
    srv.start()
    srv.get_ok("/crawl/known")
    srv.wait_recorded("/crawl/known")
    for f in store_files(srv):
        if os.path.exists(f):
            os.unlink(f)
    serve_fast(srv, "/crawl/new")
    srv.wait_recorded("/crawl/new", timeout=15)
    serve_fast(srv, "/crawl/known")
    srv.wait_recorded("/crawl/known")


def hold_lock(srv):
    """BEGIN EXCLUSIVE on the store from another process's point of view
    (a connection of ours, opened as the children's user)."""
    with as_run_user():
        con = sqlite3.connect(srv.db_path, timeout=10, isolation_level=None)
        con.execute("BEGIN EXCLUSIVE")
    return con


def test_database_locked(make_server):
    srv = fault_server(make_server)
    srv.start()
    srv.get_ok("/crawl/before")
    srv.wait_recorded("/crawl/before")
    con = hold_lock(srv)
    t0 = time.monotonic()
    try:
        i = 0
        while time.monotonic() - t0 < 8:          # longer than the busy timeout
            serve_fast(srv, f"/crawl/locked-{i}")
            i += 1
            time.sleep(0.25)
        check_fault_logged(srv, r"lock|busy", timeout=1)
    finally:
        con.execute("ROLLBACK")
        con.close()
    serve_fast(srv, "/crawl/after")
    srv.wait_recorded("/crawl/after", timeout=20)
    check_log_once_per_process(srv)


def test_database_read_only(make_server):
    """chmod 0444 while running; a graceful restart makes the children open
    the file again (as User, for whom the mode counts)."""
    if not IS_ROOT:
        pytest.skip("needs root: the children must run as another user")
    srv = fault_server(make_server)
    srv.start()
    srv.get_ok("/crawl/before")
    srv.wait_recorded("/crawl/before")
    os.chmod(srv.db_path, 0o444)
    srv.graceful()
    assert os.stat(srv.db_path).st_mode & 0o777 == 0o444, "the module changed the store's mode"
    srv.get_ok("/crawl/warm-up")       # the new generation is serving
    for i in range(4):
        serve_fast(srv, f"/crawl/ro-{i}")
        time.sleep(0.3)
    check_fault_logged(srv, r"read-?only|permission|denied|writ")
    # SQLite made the -wal/-shm files it created meanwhile 0444 too (it
    # copies the database's mode): the fault is gone when all are writable
    for f in store_files(srv):
        if os.path.exists(f):
            os.chmod(f, 0o644)
    serve_fast(srv, "/crawl/after")
    srv.wait_recorded("/crawl/after", timeout=20)
    check_log_once_per_process(srv)


def test_database_corrupt(make_server):
    """The store's header is overwritten with garbage while httpd is down;
    it starts and serves anyway, logs the fault, and records again into a
    new file once the broken one is removed."""
    srv = fault_server(make_server)
    srv.start()
    srv.get_ok("/crawl/before")
    srv.wait_recorded("/crawl/before")
    srv.graceful_stop()
    with open(srv.db_path, "r+b") as f:
        f.write(b"this is not an SQLite database!" * 4)
    srv.start()
    for i in range(4):
        serve_fast(srv, f"/crawl/corrupt-{i}")
        time.sleep(0.2)
    check_fault_logged(srv, r"not a database|malformed|corrupt|encrypted|mod_sitemap store")
    with open(srv.db_path, "rb") as f:
        assert f.read(16) != b"SQLite format 3\0", "the module rewrote the broken file"
    for f in store_files(srv):
        if os.path.exists(f):
            os.unlink(f)
    serve_fast(srv, "/crawl/after")
    srv.wait_recorded("/crawl/after", timeout=20)
    check_log_once_per_process(srv)


def test_database_corrupt_while_running(make_server):
    """Garbage over the header of a live store (after a checkpoint, so the
    children read it from the file)."""
    srv = fault_server(make_server)
    srv.start()
    srv.get_ok("/crawl/before")
    srv.wait_recorded("/crawl/before")
    with as_run_user():
        con = sqlite3.connect(srv.db_path, timeout=10)
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        con.close()
    with open(srv.db_path, "r+b") as f:
        f.write(b"\xde\xad\xbe\xef" * 25)
    for i in range(4):
        serve_fast(srv, f"/crawl/corrupt-{i}")
        time.sleep(0.2)
    check_fault_logged(srv, r"not a database|malformed|corrupt|encrypted|mod_sitemap store")
    for f in store_files(srv):
        if os.path.exists(f):
            os.unlink(f)
    serve_fast(srv, "/crawl/after")
    srv.wait_recorded("/crawl/after", timeout=20)


@pytest.fixture
def small_fs(tmp_root):
    """A 4 MiB tmpfs (owned by the children's user) for the store."""
    mnt = os.path.join(tmp_root, "small")
    os.makedirs(mnt)
    opts = f"size=4m,mode=0755,uid={RUN_UID},gid={RUN_GID}"
    try:
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", mnt],
                           capture_output=True, text=True, timeout=30)
    except OSError as e:
        pytest.skip(f"disk-full test skipped: cannot run mount ({e})")
    if r.returncode != 0:
        pytest.skip("disk-full test skipped: mounting a tmpfs is not permitted here "
                    f"({(r.stderr or r.stdout).strip()})")
    yield mnt
    if subprocess.run(["umount", mnt], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", mnt], capture_output=True)


def fill(directory):
    """Fill the file system of directory; returns the filler's path."""
    p = os.path.join(directory, "filler")
    with open(p, "wb", buffering=0) as f:
        for size in (65536, 4096, 512):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
    return p


def test_disk_full(small_fs, make_server):
    srv = fault_server(make_server, db="small/sitemap.db")
    srv.start()
    srv.get_ok("/crawl/before")
    srv.wait_recorded("/crawl/before")
    filler = fill(small_fs)
    long = "x" * 1500
    # new URLs must need new pages: about 300 KB of them
    for i in range(200):
        serve_fast(srv, f"/crawl/full-{i}-{long}")
    check_fault_logged(srv, r"full|space")
    os.unlink(filler)
    serve_fast(srv, "/crawl/after")
    srv.wait_recorded("/crawl/after", timeout=20)
    check_log_once_per_process(srv)
