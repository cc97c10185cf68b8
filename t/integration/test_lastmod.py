# SPDX-License-Identifier: Apache-2.0
"""lastmod: the response's Last-Modified when it has one; otherwise the time
the URL was first recorded, moved forward when the response's ETag
changes."""
import os
import time

HTML = "<html><body>x</body></html>\n"

# A CGI without Last-Modified whose ETag (if any) is read from a file.
CGI_ETAG = r"""
printf 'Content-Type: text/html\r\n'
if [ -s "{etag_file}" ]; then printf 'ETag: "%s"\r\n' "$(cat "{etag_file}")"; fi
printf '\r\n<html><body>etag</body></html>\n'
"""


def lastmod(srv, url):
    row = srv.row(url)
    assert row is not None, f"{url} not stored"
    return row["lastmod"]


def wait_lastmod(srv, url, pred, timeout=10):
    deadline = time.monotonic() + timeout
    while True:
        row = srv.row(url)
        if row is not None and pred(row["lastmod"]):
            return row["lastmod"]
        if time.monotonic() > deadline:
            raise AssertionError(f"lastmod of {url} never satisfied the test: {row}\n"
                                 f"{srv.log_tail(10)}")
        time.sleep(0.1)


def test_lastmod_from_last_modified(server):
    server.write("htdocs/static.html", HTML, mtime=1600000000)
    r = server.get_ok("/static.html")
    assert r.header("Last-Modified") == "Sun, 13 Sep 2020 12:26:40 GMT"
    server.wait_recorded("/static.html")
    assert lastmod(server, "/static.html") == 1600000000
    # the file changes: the new Last-Modified is taken
    server.write("htdocs/static.html", HTML + "more\n", mtime=1650000000)
    server.get_ok("/static.html")
    wait_lastmod(server, "/static.html", lambda v: v == 1650000000)


def test_lastmod_follows_file_mtime_seconds(server):
    p = server.write("htdocs/now.html", HTML)
    mtime = int(os.stat(p).st_mtime)
    server.get_ok("/now.html")
    server.wait_recorded("/now.html")
    assert lastmod(server, "/now.html") == mtime


def test_lastmod_without_validators_is_first_recorded(make_server):
    srv = make_server()
    srv.cgi("plain.cgi", CGI_ETAG.format(etag_file=srv.path("no-etag")))
    srv.start()
    t0 = int(time.time())
    r = srv.get_ok("/cgi-bin/plain.cgi")
    assert r.header("Last-Modified") is None and r.header("ETag") is None
    srv.wait_recorded("/cgi-bin/plain.cgi")
    t1 = int(time.time())
    first = lastmod(srv, "/cgi-bin/plain.cgi")
    assert t0 <= first <= t1 + 1, (t0, first, t1)
    time.sleep(2.1)
    srv.get_ok("/cgi-bin/plain.cgi")
    srv.sentinel()
    assert lastmod(srv, "/cgi-bin/plain.cgi") == first


def test_lastmod_moves_when_etag_changes(make_server):
    srv = make_server()
    etag_file = srv.write("etag", "v1")
    srv.cgi("etag.cgi", CGI_ETAG.format(etag_file=etag_file))
    srv.start()
    t0 = int(time.time())
    r = srv.get_ok("/cgi-bin/etag.cgi")
    assert r.header("ETag") == '"v1"' and r.header("Last-Modified") is None
    srv.wait_recorded("/cgi-bin/etag.cgi")
    first = lastmod(srv, "/cgi-bin/etag.cgi")
    assert t0 <= first <= int(time.time()) + 1
    # same ETag later: unchanged
    time.sleep(2.1)
    srv.get_ok("/cgi-bin/etag.cgi")
    srv.sentinel()
    assert lastmod(srv, "/cgi-bin/etag.cgi") == first
    # new ETag: moves forward to about now
    srv.write("etag", "v2")
    t2 = int(time.time())
    assert srv.get_ok("/cgi-bin/etag.cgi").header("ETag") == '"v2"'
    second = wait_lastmod(srv, "/cgi-bin/etag.cgi", lambda v: v > first)
    assert t2 <= second <= int(time.time()) + 1, (first, t2, second)


def test_lastmod_etag_set_by_mod_headers(make_server):
    """Header unset Last-Modified + Header set ETag on a static file."""
    srv = make_server(conf="""
SetEnvIf X-Test-ETag "(.+)" TEST_ETAG=$1
<Location /tagged.html>
    Header unset Last-Modified
    Header set ETag "\\"%{TEST_ETAG}e\\"" env=TEST_ETAG
</Location>
""")
    srv.write("htdocs/tagged.html", HTML, mtime=1500000000)
    srv.start()
    t0 = int(time.time())
    r = srv.get_ok("/tagged.html", headers={"X-Test-ETag": "a1"})
    assert r.header("Last-Modified") is None and r.header("ETag") == '"a1"', r
    srv.wait_recorded("/tagged.html")
    first = lastmod(srv, "/tagged.html")
    assert t0 <= first <= int(time.time()) + 1, "lastmod must not come from the file"
    time.sleep(2.1)
    srv.get_ok("/tagged.html", headers={"X-Test-ETag": "a1"})
    srv.sentinel()
    assert lastmod(srv, "/tagged.html") == first
    t2 = int(time.time())
    srv.get_ok("/tagged.html", headers={"X-Test-ETag": "a2"})
    second = wait_lastmod(srv, "/tagged.html", lambda v: v > first)
    assert second >= t2
