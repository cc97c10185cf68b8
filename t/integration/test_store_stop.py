# SPDX-License-Identifier: Apache-2.0
"""A store that stays unusable never holds up a stop or a graceful restart
(issue 21, item 10): with the store's path replaced by a directory,
`-k graceful` and `-k stop` work (what is at the path is the store's
state, not configuration), the stop finishes within a bounded time and
no child stays behind."""
import os
import time

import pytest

from conftest import children_of, pid_alive
from test_store_faults import fault_server, serve_fast, store_files

STOP_WITHIN = 10        # seconds: one busy timeout (5 s) and some slack


def replace_with_directory(srv):
    for f in store_files(srv):
        if os.path.exists(f):
            os.unlink(f)
    os.mkdir(srv.db_path)


def serve_some(srv, tag):
    for i in range(40):
        serve_fast(srv, f"/crawl/{tag}-{i}")


@pytest.mark.parametrize("mpm", ["prefork", "event"])
def test_stop_and_graceful_with_store_a_directory(make_server, mpm):
    srv = fault_server(make_server, mpm=mpm)
    srv.expect_log(r"answering 503|not a regular file")
    srv.start()
    srv.get_ok("/crawl/before")
    srv.wait_recorded("/crawl/before")
    replace_with_directory(srv)
    serve_some(srv, "dir")
    gen = srv.restarts()
    r = srv.ctl("-k", "graceful")
    assert r.returncode == 0, f"-k graceful refused: {r.stderr}"
    deadline = time.monotonic() + STOP_WITHIN
    while srv.restarts() == gen and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.restarts() > gen, "no graceful restart happened"
    serve_some(srv, "after-graceful")
    assert srv.get("/sitemap.xml").status == 503
    pid = srv.pid
    kids = children_of(pid)
    assert kids
    t0 = time.monotonic()
    r = srv.ctl("-k", "stop")
    assert r.returncode == 0, f"-k stop refused: {r.stderr}"
    while time.monotonic() - t0 < STOP_WITHIN and (
            pid_alive(pid) or any(pid_alive(k) for k in kids)):
        time.sleep(0.05)
    took = time.monotonic() - t0
    left = [k for k in kids if pid_alive(k)]
    srv.started = pid_alive(pid)
    assert not pid_alive(pid), f"the parent still runs {took:.1f} s after -k stop"
    assert not left, f"children {left} still run {took:.1f} s after -k stop"
    os.rmdir(srv.db_path)
