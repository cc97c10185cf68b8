# SPDX-License-Identifier: Apache-2.0
"""A URL one process forgets is forgotten by every process (prefork, one
memory of repeats per child): the writer that removed its stored row tells
the others through the store's shared memory, so that the page "comes back
on its next GET" whichever child serves it.  The case: a page restored
with the same mtime and size (rsync -a) after a 404, its 404 served by one
child, the GET that brings it back by another that had written it
before."""

import http.client
import os

HTML = "<html><head><title>p</title></head><body>page</body></html>\n"
MTIME = 1_600_000_000


def conn(srv):
    return http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)


def get(c, target):
    c.request("GET", target)
    r = c.getresponse()
    body = r.read()
    return r.status, body


def test_restored_page_comes_back_in_another_child(make_server):
    srv = make_server(mpm="prefork",
                      conf="KeepAlive On\nKeepAliveTimeout 60\n"
                           "MaxKeepAliveRequests 0\n")
    srv.cgi("pid", 'printf "Content-Type: text/plain\\n\\n%s" "$PPID"\n')
    srv.write("htdocs/p.html", HTML, mtime=MTIME)
    srv.start()
    # Two kept-alive connections: each holds its own child.
    a, b = conn(srv), conn(srv)
    try:
        status, pid_a = get(a, "/cgi-bin/pid")
        assert status == 200
        status, pid_b = get(b, "/cgi-bin/pid")
        assert status == 200
        assert pid_a != pid_b, "both connections in one child"
        # Both children serve the page and remember having written it.
        assert get(a, "/p.html")[0] == 200
        srv.wait_recorded("/p.html")
        assert get(b, "/p.html")[0] == 200
        assert get(b, "/p.html")[0] == 200
        # Gone: child a forgets it (its row removed).
        os.unlink(srv.path("htdocs/p.html"))
        assert get(a, "/p.html")[0] == 404
        srv.wait_absent("/p.html")
        # Back, the same bytes and mtime: child b's response is the one
        # it remembers, and must be recorded all the same.
        srv.write("htdocs/p.html", HTML, mtime=MTIME)
        assert get(b, "/p.html")[0] == 200
        srv.wait_recorded("/p.html")
        assert get(b, "/cgi-bin/pid") == (200, pid_b)
        assert get(a, "/cgi-bin/pid") == (200, pid_a)
    finally:
        a.close()
        b.close()
