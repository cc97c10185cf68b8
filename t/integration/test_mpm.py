# SPDX-License-Identifier: Apache-2.0
"""Every MPM: recording and forgetting work, and a process's queue is
written on child exit, graceful restart, graceful-stop and stop (so with a
one-hour flush interval nothing waits for the timer)."""
import os

import time

import pytest
from conftest import children_of

HTML = "<html><body>x</body></html>\n"
MPMS = ["event", "worker", "prefork"]


@pytest.mark.parametrize("mpm", MPMS)
def test_record_and_forget(make_server, mpm):
    srv = make_server(mpm=mpm)
    srv.write("htdocs/a.html", HTML)
    srv.write("htdocs/b.txt", "plain\n")
    srv.start()
    srv.get_ok("/a.html")
    srv.get_ok("/")
    srv.wait_recorded("/a.html", "/")
    os.unlink(srv.path("htdocs/a.html"))
    assert srv.get("/a.html").status == 404
    srv.wait_absent("/a.html")
    srv.get_ok("/b.txt")
    srv.request("HEAD", "/page.html")
    srv.assert_not_recorded("/b.txt", "/page.html", "/a.html", stop=True)
    assert srv.urls() >= {"/"}


def threaded_or_prefork(mpm, extra):
    if mpm == "prefork":
        return ("StartServers 2\nMinSpareServers 1\nMaxSpareServers 3\n"
                "ServerLimit 4\nMaxRequestWorkers 4\n" + extra)
    return ("StartServers 1\nServerLimit 2\nThreadLimit 8\nThreadsPerChild 8\n"
            "MinSpareThreads 1\nMaxSpareThreads 16\nMaxRequestWorkers 8\n" + extra)


def wait_child_threads(srv, n, timeout=10):
    """Until a child has n threads (its workers and listener) and a moment
    more.  A threaded MPM's child that reaches MaxConnectionsPerChild wakes
    its main thread with SIGTERM; httpd unblocks that signal only after
    starting the threads, so a connection accepted in between is a lost
    wake-up: the child never exits (seen about once in eight runs here;
    an httpd race, not the module's).  Real children live longer than
    that window."""
    deadline = time.monotonic() + timeout
    while True:
        for pid in children_of(srv.pid):
            try:
                if len(os.listdir(f"/proc/{pid}/task")) >= n:
                    time.sleep(0.2)
                    return
            except OSError:
                pass
        assert time.monotonic() < deadline, f"no child with {n} threads"
        time.sleep(0.05)


@pytest.mark.parametrize("mpm", MPMS)
def test_flush_on_child_exit(make_server, mpm):
    """MaxConnectionsPerChild 1: the child exits after one connection and
    writes its queue, long before the one-hour flush interval."""
    # ServerLimit 4: room for exiting children next to the one at work
    # (MaxRequestWorkers still allows one child of 8 threads).
    srv = make_server(mpm=mpm, flush="1h",
                      mpm_conf=threaded_or_prefork(
                          mpm, "MaxConnectionsPerChild 1\nServerLimit 4\n"))
    srv.write("htdocs/b.txt", "plain\n")
    # Children exit after every connection: the threaded MPMs may still
    # find every slot held by exiting children and say so.
    srv.expect_log(r"AH00288: scoreboard is full")
    srv.expect_log(r"AH03490: scoreboard is full")
    # httpd's own race (see bench/RESULTS.md's history and session 6's
    # note): a threaded child woken by SIGTERM before it unblocked the
    # signal never exits, and the stop kills it.  The assertion below is
    # settled before that.
    srv.expect_log(r"AH00046: child process \d+ still did not exit")
    srv.start()
    if mpm != "prefork":
        wait_child_threads(srv, 8 + 2)
    # The harness's readiness probe (a connection) may have been the first
    # child's one connection: that child is then on its way out, and a
    # threaded one may close a connection it had accepted unanswered (seen
    # once under the sanitizer in a full run).  Ask again; a crash would
    # still fail the test (the error log is checked at its end).
    for attempt in range(20):
        try:
            srv.get_ok("/page.html")
            break
        except ConnectionError:
            if attempt == 19:
                raise
            time.sleep(0.25)
    # The worker MPM notices the limit only when the same child accepts
    # another connection, which may go to the child started next: another
    # (unrecorded) request every few seconds until the first child has
    # exited.  The one-hour flush interval stays far away: only the exit
    # writes.
    deadline = time.monotonic() + 60
    while True:
        srv.get_ok("/b.txt")
        try:
            srv.wait_recorded("/page.html", timeout=4)
            break
        except AssertionError:
            if time.monotonic() > deadline:
                raise


@pytest.mark.parametrize("mpm", MPMS)
def test_flush_on_graceful_restart(make_server, mpm):
    srv = make_server(mpm=mpm, flush="1h", mpm_conf=threaded_or_prefork(mpm, ""))
    srv.start()
    srv.get_ok("/page.html")
    srv.get_ok("/")
    srv.graceful()
    srv.wait_recorded("/page.html", "/", timeout=15)
    assert srv.get("/page.html").status == 200


@pytest.mark.parametrize("mpm", MPMS)
@pytest.mark.parametrize("how", ["stop", "graceful-stop"])
def test_flush_on_stop(make_server, mpm, how):
    srv = make_server(mpm=mpm, flush="1h")
    srv.write("htdocs/a.html", HTML)
    srv.start()
    srv.get_ok("/page.html")
    srv.get_ok("/a.html")
    srv.stop(graceful=(how == "graceful-stop"))
    assert srv.urls() == {"/page.html", "/a.html"}


@pytest.mark.parametrize("mpm", MPMS)
def test_store_survives_restart(make_server, mpm):
    srv = make_server(mpm=mpm)
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    srv.stop()
    srv.start()
    srv.get_ok("/")
    srv.wait_recorded("/", "/page.html")
