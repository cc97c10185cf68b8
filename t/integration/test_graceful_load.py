# SPDX-License-Identifier: Apache-2.0
"""Graceful restarts under load lose no recorded URL.

With a 10 s flush interval the URLs sit in the processes' memory; client
threads request distinct URLs (all rewritten to one file) while the server
is gracefully restarted twice; after a graceful-stop the store must hold
exactly the URLs that were answered 200."""
import threading
import time

import pytest

from conftest import http_request

THREADS = 4
PER_THREAD = 150        # at most; the clients stop 40 requests after the last restart

MPM_CONF = {
    "prefork": ("StartServers 3\nMinSpareServers 2\nMaxSpareServers 4\n"
                "ServerLimit 6\nMaxRequestWorkers 6\n"),
    "worker": ("StartServers 2\nServerLimit 4\nThreadLimit 4\nThreadsPerChild 4\n"
               "MinSpareThreads 4\nMaxSpareThreads 12\nMaxRequestWorkers 12\n"),
    "event": ("StartServers 2\nServerLimit 4\nThreadLimit 4\nThreadsPerChild 4\n"
              "MinSpareThreads 4\nMaxSpareThreads 12\nMaxRequestWorkers 12\n"),
}


@pytest.mark.parametrize("mpm", ["event", "worker", "prefork"])
def test_graceful_restart_under_load(make_server, mpm):
    srv = make_server(mpm=mpm, flush="10s", mpm_conf=MPM_CONF[mpm], conf="""
RewriteEngine On
RewriteRule ^/crawl/ /page.html [L]
""")
    srv.start()
    ok, failed = set(), []
    lock = threading.Lock()
    done = [0]
    stop = threading.Event()

    def client(t):
        for j in range(PER_THREAD):
            if stop.is_set():
                return
            url = f"/crawl/t{t}/u{j}"
            try:
                r = http_request(srv.port, "GET", url, srv.server_name, timeout=10)
                status = r.status
            except (OSError, ValueError) as e:
                status = repr(e)
            with lock:
                done[0] += 1
                if status == 200:
                    ok.add(url)
                else:
                    failed.append((url, status))
            time.sleep(0.005)

    threads = [threading.Thread(target=client, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    at_graceful = []
    try:
        for target in (60, 120):
            deadline = time.monotonic() + 60
            while done[0] < target and time.monotonic() < deadline:
                time.sleep(0.01)
            at_graceful.append(done[0])
            srv.graceful()
            at_graceful.append(done[0])
        deadline = time.monotonic() + 60
        while done[0] < at_graceful[-1] + 40 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        stop.set()
        for th in threads:
            th.join(120)
    total = done[0]
    # the restarts really happened while requests were going on
    assert at_graceful[0] >= 60 and total >= at_graceful[-1] + 40, (at_graceful, total)
    assert len(ok) >= total * 0.9, f"too many failed requests: {failed[:10]}"
    srv.graceful_stop()
    stored = srv.urls()
    assert stored == ok, (f"lost: {sorted(ok - stored)[:10]} ({len(ok - stored)}), "
                          f"extra: {sorted(stored - ok)[:10]}")
