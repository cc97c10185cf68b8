# SPDX-License-Identifier: Apache-2.0
"""IndexNow: new, changed and removed URLs are POSTed to the endpoint once
each, by one sender across processes and servers sharing a store; the key
is served at /KEY.txt; refusals and failures are handled as documented.

The endpoint is a real HTTP server on 127.0.0.1 written for these tests
(http.server in a thread): it records every body and answers what the test
scripts (200, 202, 429, 500, 403) or hangs."""
import collections
import http.server
import json
import os
import subprocess
import threading
import time

import pytest

from conftest import build_has, IS_ROOT, RUN_GID, RUN_UID, SITEMAPCTL

pytestmark = pytest.mark.skipif(not build_has("indexnow"),
                                reason="built --without-indexnow")

KEY = "3f1e6c2a9b8d4e7f-test"
HTML = "<html><body>x</body></html>\n"


class Endpoint:
    def __init__(self):
        self.posts = []             # (status answered, parsed JSON)
        self.script = collections.deque()   # statuses to answer next
        self.default = 200
        self.delay = 0      # seconds before each answer
        self.hang = threading.Event()       # set: requests hang
        self.release = threading.Event()
        self.lock = threading.Lock()
        ep = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                n = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(n)
                if ep.hang.is_set():
                    ep.release.wait(60)
                time.sleep(ep.delay)
                with ep.lock:
                    status = ep.script.popleft() if ep.script else ep.default
                    ep.posts.append((status, self.headers.get("Content-Type"),
                                     json.loads(raw)))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/indexnow"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def delivered(self):
        """Every URL in an accepted POST, in order, repeats included."""
        with self.lock:
            return [u for st, _, body in self.posts if st in (200, 202)
                    for u in body["urlList"]]

    def wait_delivered(self, urls, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if set(urls) <= set(self.delivered()):
                return self.delivered()
            time.sleep(0.1)
        raise AssertionError(f"not delivered in {timeout}s: "
                             f"{sorted(set(urls) - set(self.delivered()))}; "
                             f"posts: {self.posts}")


@pytest.fixture
def endpoint():
    ep = Endpoint()
    yield ep
    ep.close()


def indexnow_conf(ep, extra=""):
    return (f"SitemapIndexNow On\nSitemapIndexNowKey {KEY}\n"
            f"SitemapIndexNowEndpoint {ep.url}\n"
            f"SitemapIndexNowInterval 200ms\n{extra}")


OTHER = "127.0.0.2"      # a second client


def sqlite_held(srv, base=None):
    def held(path):
        rows = srv.query("SELECT u.held FROM urls u JOIN sites s"
                         " ON s.id = u.site_id WHERE s.base = ? AND u.url = ?",
                         (base or srv.base, path))
        return rows[0][0] if rows else None
    return held


def corroborate(srv, *paths, host=None, held=None, timeout=20):
    """IndexNow submits a new URL only once a second client (or a later UTC
    day) has been served it: serve each of paths (fetched already by the
    first client, 127.0.0.1) to 127.0.0.2 until the store holds it no
    more.  The second fetch counts only once the first is written (before,
    the recorder skips it as a repeat), so it is made again until then.
    held(path): the URL's held value, None while it is not stored
    (default: srv's SQLite store)."""
    held = held or sqlite_held(srv)
    left = list(paths)
    deadline = time.monotonic() + timeout
    while True:
        for p in list(left):
            h = held(p)
            if h == 0:
                left.remove(p)
            elif h is not None:
                srv.get_ok(p, host=host, source=OTHER)
        if not left:
            return
        assert time.monotonic() < deadline, \
            f"still held after {timeout}s: {left}\n{srv.log_tail(20)}"
        time.sleep(0.1)


def settle(ep, seconds=1.5):
    """Give stray senders time to send anything twice."""
    time.sleep(seconds)
    return ep.delivered()


def test_new_changed_removed_sent_once_each(make_server, endpoint):
    srv = make_server(conf=indexnow_conf(endpoint))
    for name in ("a.html", "b.html", "doomed.html"):
        srv.write("htdocs/" + name, HTML, mtime=1_700_000_000)
    srv.start()
    for name in ("a.html", "b.html", "doomed.html"):
        srv.get_ok("/" + name)
    corroborate(srv, "/a.html", "/b.html", "/doomed.html")
    base = srv.base
    endpoint.wait_delivered([base + "/a.html", base + "/b.html",
                             base + "/doomed.html"])
    first = settle(endpoint)
    assert sorted(first) == sorted([base + "/a.html", base + "/b.html",
                                    base + "/doomed.html"])
    # Served again unchanged: nothing to tell.
    srv.get_ok("/a.html")
    srv.sentinel()
    # Changed (Last-Modified moves) and removed (404).
    srv.write("htdocs/b.html", HTML + "more\n", mtime=1_700_100_000)
    srv.get_ok("/b.html")
    os.unlink(srv.path("htdocs/doomed.html"))
    assert srv.get("/doomed.html").status == 404
    srv.wait_absent("/doomed.html")
    endpoint.wait_delivered([base + "/b.html", base + "/doomed.html"])
    after = settle(endpoint)
    sentinels = [u for u in after if "sentinel" in u]
    assert sorted(u for u in after if "sentinel" not in u) == sorted(
        first + [base + "/b.html", base + "/doomed.html"])
    assert len(sentinels) == len(set(sentinels))
    # Well-formed submissions, as the protocol wants them.
    for status, ctype, body in endpoint.posts:
        assert ctype.startswith("application/json")
        assert set(body) == {"host", "key", "keyLocation", "urlList"}
        assert body["host"] == "127.0.0.1"
        assert body["key"] == KEY
        assert body["keyLocation"] == f"{base}/{KEY}.txt"
        assert 1 <= len(body["urlList"]) <= 10000
    # sitemapctl stats tells what was sent and the last answer.
    out = srv_ctl(srv, "stats")
    assert (f"indexnow:       0 pending, {len(after)} sent, 0 dropped"
            in out), out
    assert "last answer:    200 at " in out, out


def srv_ctl(srv, command, *args):
    """sitemapctl COMMAND DB ARGS (as root it acts as the store's owner)."""
    r = subprocess.run([SITEMAPCTL, command,
                        srv.db_path, *args], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr


def test_key_file_served(make_server, endpoint):
    srv = make_server(conf=indexnow_conf(endpoint)).start()
    r = srv.get(f"/{KEY}.txt")
    assert r.status == 200
    assert r.header("Content-Type").startswith("text/plain")
    assert r.body == KEY.encode()
    assert srv.get("/otherkey1234.txt").status == 404
    assert srv.request("HEAD", f"/{KEY}.txt").status == 200


def test_key_file_on_disk_wins(make_server, endpoint):
    srv = make_server(conf=indexnow_conf(endpoint))
    srv.write(f"htdocs/{KEY}.txt", "from the disk\n")
    srv.start()
    assert srv.get(f"/{KEY}.txt").body == b"from the disk\n"


def test_off_by_default_and_key_required(make_server, endpoint):
    srv = make_server()
    # a second site with IndexNow On, posting to the same endpoint: its
    # delivery is the sentinel that the main site's would have come by then
    srv.write("on.test/page.html", HTML)
    srv.conf_text = (f"SitemapIndexNowEndpoint {endpoint.url}\n"
                     f"<VirtualHost 127.0.0.1:{srv.port}>\n"
                     "    ServerName 127.0.0.1\n"
                     f'    DocumentRoot "{srv.root}/htdocs"\n'
                     "</VirtualHost>\n"
                     f"<VirtualHost 127.0.0.1:{srv.port}>\n"
                     f"    ServerName on.test\n"
                     f'    DocumentRoot "{srv.root}/on.test"\n'
                     f'    <Directory "{srv.root}/on.test">\n'
                     f"        Require all granted\n    </Directory>\n"
                     + indexnow_conf(endpoint) + "</VirtualHost>\n")
    srv.start()
    assert srv.get(f"/{KEY}.txt").status == 404
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    srv.get_ok("/page.html", host="on.test")
    on = f"http://on.test:{srv.port}"
    corroborate(srv, "/page.html", host="on.test",
                held=sqlite_held(srv, on))
    endpoint.wait_delivered([on + "/page.html"])
    assert all(p[2]["host"] == "on.test" for p in endpoint.posts), endpoint.posts
    assert srv.base + "/page.html" not in endpoint.delivered()
    srv.stop()
    srv.config_fails("SitemapIndexNow On needs SitemapIndexNowKey",
                     conf="SitemapIndexNow On\n")


@pytest.mark.parametrize("key,why", [
    ("short", "8 to 128"), ("x" * 129, "8 to 128"),
    ("bad_key_underscore", "a-z, A-Z, 0-9 and '-'")])
def test_bad_key_refused(make_server, key, why):
    srv = make_server()
    srv.config_fails("SitemapIndexNowKey", f"'{key}'", why,
                     conf=f"SitemapIndexNow On\nSitemapIndexNowKey {key}\n")


@pytest.mark.parametrize("url", ["ftp://example.com/x", "not a url",
                                 "https://"])
def test_bad_endpoint_refused(make_server, url):
    srv = make_server()
    srv.config_fails("SitemapIndexNowEndpoint", url, "https://",
                     conf=f'SitemapIndexNowEndpoint "{url}"\n')


def test_first_switch_on_sends_only_new_changes(make_server, endpoint):
    srv = make_server()
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    srv.graceful(conf=indexnow_conf(endpoint))
    srv.write("htdocs/new.html", HTML)
    srv.get_ok("/new.html")
    srv.get_ok("/page.html")
    corroborate(srv, "/new.html")
    endpoint.wait_delivered([srv.base + "/new.html"])
    assert settle(endpoint) == [srv.base + "/new.html"]


@pytest.mark.parametrize("failures", [[429], [500, 503]])
def test_retried_then_delivered(make_server, endpoint, failures):
    endpoint.script.extend(failures)
    srv = make_server(conf=indexnow_conf(endpoint))
    srv.expect_log(r"IndexNow .* not accepted by .*HTTP (429|500|503).* "
                   r"retrying in \d+s")
    srv.start()
    srv.get_ok("/page.html")
    corroborate(srv, "/page.html")
    endpoint.wait_delivered([srv.base + "/page.html"], timeout=30)
    assert [p[0] for p in endpoint.posts] == failures + [200]
    assert settle(endpoint) == [srv.base + "/page.html"]


def test_refusal_logged_and_dropped(make_server, endpoint):
    endpoint.script.append(403)
    srv = make_server(conf=indexnow_conf(endpoint))
    srv.expect_log(r"IndexNow .* answered HTTP 403, forbidden: the key is "
                   r"not valid.* 1 URLs dropped")
    srv.start()
    srv.get_ok("/page.html")
    corroborate(srv, "/page.html")
    srv.wait_log(r"answered HTTP 403", level="error")
    srv.write("htdocs/later.html", HTML)
    srv.get_ok("/later.html")                           # the next goes
    corroborate(srv, "/later.html")
    endpoint.wait_delivered([srv.base + "/later.html"])
    # and nothing in between: the refused batch was not retried
    assert [p[0] for p in endpoint.posts] == [403, 200], endpoint.posts
    assert srv.base + "/page.html" not in endpoint.delivered()
    out = srv_ctl(srv, "stats")
    assert "1 dropped" in out, out


def test_hung_endpoint_does_not_slow_pages(make_server, endpoint):
    endpoint.hang.set()
    srv = make_server(conf=indexnow_conf(endpoint))
    srv.start()
    srv.get_ok("/page.html")
    corroborate(srv, "/page.html")
    time.sleep(1)           # the sender's POST is under way, hanging
    assert endpoint.posts == []
    worst = 0
    for i in range(20):
        srv.write(f"htdocs/p{i}.html", HTML)
        t0 = time.monotonic()
        srv.get_ok(f"/p{i}.html")
        worst = max(worst, time.monotonic() - t0)
    # Loose: a request waiting on the hung POST would take its 30s timeout.
    assert worst < 3, worst
    endpoint.release.set()
    endpoint.hang.clear()
    corroborate(srv, *[f"/p{i}.html" for i in range(20)])
    endpoint.wait_delivered([srv.base + f"/p{i}.html" for i in range(20)],
                            timeout=40)


def test_prefork_children_send_each_once(make_server, endpoint):
    # Slow answers: the other children poll while a POST is under way.
    endpoint.delay = 0.5
    srv = make_server(mpm="prefork", conf=indexnow_conf(endpoint),
                      mpm_conf="StartServers 4\nMinSpareServers 4\n"
                               "MaxSpareServers 4\nServerLimit 4\n"
                               "MaxRequestWorkers 4\nMaxConnectionsPerChild 0\n")
    names = [f"/f{i}.html" for i in range(40)]
    for n in names:
        srv.write("htdocs" + n, HTML)
    srv.start()
    for n in names:
        srv.get_ok(n)
    corroborate(srv, *names, timeout=45)
    want = [srv.base + n for n in names]
    try:
        # Four processes' writers and senders share one SQLite file: under
        # a loaded CI machine their busy waits add up (it once missed 20 s).
        endpoint.wait_delivered(want, timeout=45)
    except AssertionError as e:
        # What the next reader of a failure needs: were the URLs stored,
        # still pending, and what did the children log?
        stored = sorted(srv.urls())
        raise AssertionError(f"{e}\nstored: {stored}\nerror log:\n"
                             f"{srv.log_tail(60)}") from None
    got = settle(endpoint, 2)
    assert sorted(got) == sorted(want)


def test_two_servers_one_store_send_each_once(make_server, endpoint, tmp_root):
    endpoint.delay = 0.5
    db = os.path.join(tmp_root, "shared", "sitemap.db")
    os.makedirs(os.path.dirname(db))
    if IS_ROOT:
        os.chown(os.path.dirname(db), RUN_UID, RUN_GID)
    conf = indexnow_conf(endpoint, "SitemapBaseURL http://farm.example\n")
    a = make_server(db=db, conf=conf)
    b = make_server(db=db, conf=conf)
    names = [f"/g{i}.html" for i in range(20)]
    for s in (a, b):
        for n in names:
            s.write("htdocs" + n, HTML, mtime=1_700_000_000)
        s.start()
    for n in names:
        a.get_ok(n)
        b.get_ok(n)
    # both servers saw one client: a second one, on either of them
    corroborate(a, *names, held=sqlite_held(a, "http://farm.example"))
    want = ["http://farm.example" + n for n in names]
    endpoint.wait_delivered(want)
    got = settle(endpoint, 2)
    assert sorted(got) == sorted(want)
    assert all(p[2]["host"] == "farm.example" for p in endpoint.posts)


def test_backlog_delivered_after_restart(make_server, endpoint):
    endpoint.default = 503
    srv = make_server(conf=indexnow_conf(endpoint))
    srv.expect_log(r"IndexNow .* not accepted by .*HTTP 503.* retrying")
    srv.start()
    srv.get_ok("/page.html")
    corroborate(srv, "/page.html")
    deadline = time.monotonic() + 10
    while not endpoint.posts and time.monotonic() < deadline:
        time.sleep(0.1)
    assert endpoint.posts, "no attempt"
    srv.stop()
    assert srv.query("SELECT url FROM indexnow_pending") == [("/page.html",)]
    endpoint.default = 200
    srv.restart()
    endpoint.wait_delivered([srv.base + "/page.html"], timeout=30)
    assert srv.query("SELECT count(*) FROM indexnow_pending") == [(0,)]


def test_sitemapctl_queues_chosen_urls_and_whole_site(make_server, endpoint):
    srv = make_server(conf=indexnow_conf(endpoint))
    srv.write("htdocs/other.html", HTML)
    srv.start()
    srv.get_ok("/page.html")
    srv.get_ok("/other.html")
    corroborate(srv, "/page.html", "/other.html")
    endpoint.wait_delivered([srv.base + "/page.html", srv.base + "/other.html"])
    before = len(settle(endpoint, 1))
    out = srv_ctl(srv, "indexnow", "--site", srv.base, "/page.html")
    assert "1 URL queued" in out, out
    deadline = time.monotonic() + 10
    while len(endpoint.delivered()) < before + 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert settle(endpoint, 1)[before:] == [srv.base + "/page.html"]
    stored = sorted(srv.urls())
    out = srv_ctl(srv, "indexnow", "--site", srv.base, "--all")
    assert f"{len(stored)} URLs queued" in out, out
    deadline = time.monotonic() + 10
    while (len(endpoint.delivered()) < before + 1 + len(stored)
           and time.monotonic() < deadline):
        time.sleep(0.1)
    assert sorted(settle(endpoint, 1)[before + 1:]) == [srv.base + u for u in stored]


# A site that answers 200 for any path: a front controller behind
# FallbackResource (test_front_controller.py's CGI).
CATCH_ALL = """AddHandler cgi-script .cgi
<Directory "{docroot}">
    Options +ExecCGI
    FallbackResource /index.cgi
</Directory>
"""


def test_catch_all_one_client_cannot_push_invented_paths(make_server,
                                                          endpoint):
    from test_front_controller import CONTROLLER
    srv = make_server()
    srv.conf_text = indexnow_conf(endpoint) + CATCH_ALL.format(
        docroot=srv.docroot)
    srv.write("htdocs/index.cgi", CONTROLLER, mode=0o755)
    srv.write("htdocs/real.html", HTML)
    srv.start()
    invented = ["/invented-1", "/no/such/page"]
    for p in invented * 2:
        r = srv.get_ok(p)
        assert b"Page " + p.encode() in r.body
    srv.wait_recorded(*invented)
    # Listed after one client's fetch (a quiet site's pages are listed)...
    body = srv.get_ok("/sitemap.xml").body.decode()
    assert all(f"<loc>{srv.base}{p}</loc>" in body for p in invented), body
    # ... but not submitted: a corroborated page written after them is
    # delivered, they are not.  The same client again changes nothing.
    srv.get_ok(invented[0])
    srv.get_ok("/real.html")
    corroborate(srv, "/real.html")
    endpoint.wait_delivered([srv.base + "/real.html"])
    posted = [u for _, _, b in endpoint.posts for u in b["urlList"]]
    assert not [u for u in posted if "/real.html" not in u], endpoint.posts
    assert all(sqlite_held(srv)(p) for p in invented)
    # A second client: submitted, once.
    corroborate(srv, invented[0])
    endpoint.wait_delivered([srv.base + invented[0]])
    assert sorted(settle(endpoint)) == [srv.base + invented[0],
                                        srv.base + "/real.html"]
