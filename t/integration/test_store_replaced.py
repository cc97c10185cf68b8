# SPDX-License-Identifier: Apache-2.0
"""A store deleted, or replaced by a broken file and then deleted, while
httpd runs: every process notices it by itself (not only when it has a
new URL to write), forgets what it had written, creates the store again,
and the pages it keeps serving are all back within a few flush intervals;
the sitemap answers 200 again (issue 21, item 5)."""
import os
import time

import pytest

from test_store_faults import (check_fault_logged, fault_server, hold_lock,
                               serve_fast, store_files)

PAGES = [f"/crawl/known-{i}" for i in range(30)]
FLUSH = 0.2                 # the servers' SitemapFlushInterval, in seconds
BACK_WITHIN = 30 * FLUSH    # "a few flush intervals", generously


def delete_store(srv):
    for f in store_files(srv):
        if os.path.exists(f):
            os.unlink(f)


def replace_with_garbage(srv):
    with open(srv.db_path + ".new", "wb") as f:
        f.write(b"this is not an SQLite database!" * 200)
    os.rename(srv.db_path + ".new", srv.db_path)


def serve_all(srv):
    for url in PAGES:
        serve_fast(srv, url)


def started(make_server, mpm):
    srv = fault_server(make_server, mpm=mpm, flush="200ms")
    srv.expect_log(r"answering 503")
    srv.start()
    # every process learns every page (prefork: each child has its own memory)
    for _ in range(3):
        serve_all(srv)
    srv.wait_recorded(*PAGES)
    return srv


def back_in_store(srv):
    """Keep serving the pages until all are back in the store."""
    deadline = time.monotonic() + BACK_WITHIN
    missing = PAGES
    while time.monotonic() < deadline:
        serve_all(srv)
        time.sleep(FLUSH)
        urls = set(srv.urls())
        missing = [u for u in PAGES if u not in urls]
        if not missing:
            break
    assert not missing, f"{len(missing)} of {len(PAGES)} pages not back: {missing[:5]}"
    r = srv.get("/sitemap.xml")
    assert r.status == 200, f"/sitemap.xml: {r.status}"
    assert all(u.encode() in r.body for u in PAGES)


@pytest.mark.parametrize("mpm", ["prefork", "event"])
def test_store_deleted_pages_back(make_server, mpm):
    srv = started(make_server, mpm)
    delete_store(srv)
    # no new URL at all: the processes create the store again by themselves
    deadline = time.monotonic() + BACK_WITHIN
    while time.monotonic() < deadline and not os.path.exists(srv.db_path):
        time.sleep(0.05)
    assert os.path.exists(srv.db_path), "nobody created the deleted store again"
    back_in_store(srv)


@pytest.mark.parametrize("mpm", ["prefork", "event"])
def test_store_replaced_by_garbage_then_deleted(make_server, mpm):
    srv = started(make_server, mpm)
    replace_with_garbage(srv)
    for _ in range(3):
        serve_all(srv)
        time.sleep(FLUSH)
    assert srv.get("/sitemap.xml").status == 503
    delete_store(srv)
    back_in_store(srv)


def test_store_deleted_while_failing(make_server):
    """The store is locked (writes fail and the process closes it), then
    deleted: the process opens a new file without ever seeing the old one
    go, and must still not trust its memory of what it had written."""
    srv = started(make_server, "event")
    con = hold_lock(srv)
    try:
        serve_fast(srv, "/crawl/while-locked")
        check_fault_logged(srv, r"lock|busy", timeout=20)
        delete_store(srv)
    finally:
        con.close()
    back_in_store(srv)
