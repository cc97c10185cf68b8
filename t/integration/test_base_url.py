# SPDX-License-Identifier: Apache-2.0
"""The site's base in real deployments: only a configured host name is
published (no ServerName: refused, also by -t and by `-k graceful`), TLS
on any port is https, names are normalised or refused, and a site under a
path records and lists only what is under it."""
import http.server
import json
import os
import re
import socket
import ssl
import subprocess
import time

import pytest

from conftest import free_port, pid_alive
from sitemap_check import fetch


def robots_lines(srv, host=None):
    r = srv.get("/robots.txt", host=host)
    assert r.status == 200, r
    return re.findall(r"^Sitemap: (\S+)$", r.body.decode(), re.M)


def refused_by_graceful(srv, conf, *needles):
    """`-t` and `-k graceful` both refuse conf, and the running server goes
    on serving under its old configuration."""
    # the start's own "resuming normal operations" may come after its port
    # opened (slow under ASan)
    deadline = time.monotonic() + 10
    while srv.restarts() < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    before = srv.restarts()
    srv.conf_text = conf
    srv.write_conf()
    for args in (("-t",), ("-k", "graceful")):
        r = srv.ctl(*args)
        out = r.stdout + r.stderr
        assert r.returncode != 0, f"httpd {' '.join(args)} accepted it:\n{out}"
        for n in needles:
            assert n in out, f"{n!r} not in the message of {args}:\n{out}"
    assert pid_alive(srv.pid)
    assert srv.restarts() == before
    assert srv.get("/page.html").status == 200
    srv.expect_log(".")


# ---------------------------------------------------------------------------
# 1. No ServerName: refused, never a made-up name

def test_main_server_without_server_name_is_refused(make_server):
    srv = make_server(server_name=False)
    msgs = srv.config_fails("main server", "ServerName", "SitemapBaseURL")
    # the name httpd made up is named as such, never used
    assert any("never published" in m for m in msgs)


def test_ip_vhost_without_server_name_is_refused(make_server):
    srv = make_server(sitemap=False)
    conf = f"""<VirtualHost 127.0.0.1:{srv.port}>
    DocumentRoot "{srv.docroot}"
    Sitemap On
    SitemapDatabase db/v.db
</VirtualHost>
"""
    srv.config_fails(f"<VirtualHost 127.0.0.1:{srv.port}> at {srv.conf_path}:",
                     "ServerName", "SitemapBaseURL", conf=conf)


def test_debian_stock_default_vhost_is_refused(make_server):
    """000-default's shape: <VirtualHost *:80>, no ServerName anywhere."""
    srv = make_server(sitemap=False, server_name=False)
    conf = f"""<VirtualHost *:{srv.port}>
    DocumentRoot "{srv.docroot}"
    Sitemap On
    SitemapDatabase db/v.db
</VirtualHost>
"""
    srv.config_fails(f"<VirtualHost *:{srv.port}> at {srv.conf_path}:", "ServerName",
                     "SitemapBaseURL", conf=conf)


def test_no_server_name_with_base_url_starts(make_server):
    srv = make_server(server_name=False,
                      conf="SitemapBaseURL https://www.example.test\n")
    srv.start()
    assert robots_lines(srv) == ["https://www.example.test/sitemap.xml"]
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html", base="https://www.example.test")


def test_wildcard_vhost_takes_the_main_servers_configured_name(make_server):
    srv = make_server(sitemap=False, server_name="www.example.test")
    srv.start()
    conf = f"""<VirtualHost *:{srv.port}>
    DocumentRoot "{srv.docroot}"
    Sitemap On
    SitemapDatabase db/v.db
</VirtualHost>
"""
    srv.graceful(conf=conf)
    assert robots_lines(srv, host="www.example.test") == [
        f"http://www.example.test:{srv.port}/sitemap.xml"]


def test_graceful_into_a_vhost_without_server_name_is_refused(make_server):
    srv = make_server()
    srv.start()
    refused_by_graceful(srv, f"""<VirtualHost 127.0.0.1:{srv.port}>
    DocumentRoot "{srv.docroot}"
    Sitemap On
</VirtualHost>
""", "ServerName", f"<VirtualHost 127.0.0.1:{srv.port}>")
    assert robots_lines(srv) == [f"{srv.base}/sitemap.xml"]
    # a stop still works with that configuration on disk
    pid = srv.pid
    r = srv.ctl("-k", "stop")
    assert r.returncode == 0, r.stdout + r.stderr
    srv._wait_gone(30)
    assert not pid_alive(pid)
    srv.started = False


# ---------------------------------------------------------------------------
# 2. TLS on any port is https

def make_cert(directory):
    key, crt = os.path.join(directory, "tls.key"), os.path.join(directory, "tls.crt")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-keyout", key, "-out", crt, "-days", "2", "-subj",
                    "/CN=tls.example.test"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(key, 0o644)
    return crt, key


def tls_get(port, path, host, source=None):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=15,
                                  source_address=(source, 0) if source
                                  else None) as raw:
        with ctx.wrap_socket(raw) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n"
                      "Connection: close\r\n\r\n".encode())
            data = b""
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if b"transfer-encoding: chunked" in head.lower():
        out = b""
        while body:
            line, _, body = body.partition(b"\r\n")
            n = int(line.split(b";")[0] or b"0", 16)
            if not n:
                break
            out, body = out + body[:n], body[n + 2:]
        body = out
    return status, body


@pytest.mark.skipif(not os.path.exists("/usr/lib/apache2/modules/mod_ssl.so"),
                    reason="mod_ssl is not installed")
@pytest.mark.parametrize("how", ["SSLEngine", "Listen https"])
def test_tls_vhost_on_a_high_port_is_https(make_server, http_backend, how):
    posts = []

    class Endpoint(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            posts.append(json.loads(self.rfile.read(n)))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

    endpoint = http_backend(Endpoint)
    srv = make_server(sitemap=False, modules=("socache_shmcb", "ssl"))
    crt, key = make_cert(srv.root)
    tls = free_port()
    host = "tls.example.test"
    base = f"https://{host}:{tls}"
    srv.write("tls/index.html", "<html><body>tls</body></html>\n")
    srv.write("tls/page.html", "<html><body>tls page</body></html>\n")
    # a page naming its own https URL as canonical is that page
    srv.write("tls/self.html", f'<html><head><link rel="canonical" '
              f'href="{base}/self.html"></head><body>self</body></html>\n')
    # Debian's ssl.conf (its session cache under APACHE_RUN_DIR, which
    # apache2ctl's envvars would set); SSLEngine on, or (mod_ssl's own
    # default) a listener of protocol https with a certificate and no
    # SSLEngine
    ssl_conf = "/etc/apache2/mods-available/ssl.conf"
    stock = (f'Define APACHE_RUN_DIR "{srv.root}"\nInclude {ssl_conf}\n'
             if os.path.isfile(ssl_conf) else "")
    srv.conf_text = stock + f"""Listen 127.0.0.1:{tls}{" https" if how == "Listen https" else ""}
<VirtualHost 127.0.0.1:{tls}>
    ServerName {host}
    DocumentRoot "{srv.path('tls')}"
    <Directory "{srv.path('tls')}">
        Require all granted
    </Directory>
    {"SSLEngine on" if how == "SSLEngine" else ""}
    SSLCertificateFile {crt}
    SSLCertificateKeyFile {key}
    Sitemap On
    SitemapDatabase db/tls.db
    SitemapFlushInterval 100ms
    SitemapHTMLPath /site-map.html
    SitemapIndexNow On
    SitemapIndexNowKey 0123456789abcdef
    SitemapIndexNowEndpoint http://127.0.0.1:{endpoint}/indexnow
    SitemapIndexNowInterval 100ms
</VirtualHost>
"""
    srv.expect_log(r"AH01909|ssl:warn")
    srv.start()
    status, body = tls_get(tls, "/robots.txt", host)
    assert status == 200
    assert re.findall(r"^Sitemap: (\S+)$", body.decode(), re.M) == [f"{base}/sitemap.xml"]
    assert tls_get(tls, "/page.html", host)[0] == 200
    srv.wait_recorded("/page.html", base=base, db=srv.path("db/tls.db"))
    status, body = tls_get(tls, "/sitemap.xml", host)
    assert status == 200
    assert f"<loc>{base}/page.html</loc>".encode() in body
    assert b"<loc>http://" not in body
    assert tls_get(tls, "/self.html", host)[0] == 200
    srv.wait_recorded("/self.html", base=base, db=srv.path("db/tls.db"))
    status, body = tls_get(tls, "/site-map.html", host)
    assert status == 200
    assert f'<link rel="canonical" href="{base}/site-map.html"'.encode() in body
    # IndexNow: the key's location and the URLs (a new URL is submitted
    # once a second client has been served it: test_indexnow.py)
    deadline = time.monotonic() + 20
    while not posts and time.monotonic() < deadline:
        assert tls_get(tls, "/page.html", host, source="127.0.0.2")[0] == 200
        time.sleep(0.1)
    assert posts, "no IndexNow submission"
    assert posts[0]["keyLocation"] == f"{base}/0123456789abcdef.txt"
    assert posts[0]["urlList"] == [f"{base}/page.html"]


# ---------------------------------------------------------------------------
# 3. Names normalised or refused

def test_trailing_dot_and_case_are_normalised(make_server):
    srv = make_server(sitemap=False)
    port = srv.port
    srv.conf_text = f"""<VirtualHost 127.0.0.1:{port}>
    ServerName WWW.Example.TEST.
    DocumentRoot "{srv.docroot}"
    Sitemap On
    SitemapDatabase db/v.db
    SitemapFlushInterval 100ms
</VirtualHost>
"""
    srv.start()
    base = f"http://www.example.test:{port}"
    assert robots_lines(srv, host="www.example.test") == [f"{base}/sitemap.xml"]
    srv.get_ok("/page.html", host="www.example.test")
    srv.wait_recorded("/page.html", base=base, db=srv.path("db/v.db"))


NAME_CONF = """<VirtualHost 127.0.0.1:{port}>
    ServerName {name}
    DocumentRoot "{docroot}"
    Sitemap On
</VirtualHost>
"""


@pytest.mark.parametrize("name,needle", [("bücher.example", "A-label"),
                                         ("a..example", "empty label")])
def test_bad_server_name_is_refused_by_t_and_graceful(make_server, name, needle):
    srv = make_server()
    conf = NAME_CONF.format(port=srv.port, name=name, docroot=srv.docroot)
    # (httpd's log escapes non-ASCII bytes: b\xc3\xbccher.example)
    shown = name.encode().decode("ascii", "backslashreplace")
    srv.config_fails("ServerName", shown, needle, conf=conf)
    srv.conf_text = ""
    srv.start()
    refused_by_graceful(srv, conf, "ServerName", shown, needle)


@pytest.mark.parametrize("conf,needle", [
    ("SitemapIndexNow On\n", "SitemapIndexNowKey"),
    ("SitemapSiteFromHost ^www\\.\nSitemapIndexNow On\n"
     "SitemapIndexNowKey 0123456789abcdef\n", "SitemapSiteFromHost"),
    ("SitemapCrawler Googlebot googlebot /nonexistent/googlebot.json\n",
     "/nonexistent/googlebot.json"),
], ids=["indexnow-without-key", "indexnow-with-site-from-host", "crawler-file-missing"])
def test_settings_refused_at_start_are_refused_by_graceful(make_server, conf, needle):
    """What stops a start stops `-k graceful` before it signals: the
    running server is never asked to re-read a configuration it exits on."""
    srv = make_server()
    srv.config_fails(needle, conf=conf)
    srv.conf_text = ""
    srv.start()
    refused_by_graceful(srv, conf, needle)


def test_max_urls_beyond_the_index_is_refused_by_t(make_server):
    srv = make_server()
    srv.config_fails("SitemapMaxURLs", "100001", "SitemapPageSize",
                     conf="SitemapPageSize 2\nSitemapMaxURLs 100001\n")


# ---------------------------------------------------------------------------
# 4. A site under a path

def test_site_under_a_path_records_and_lists_only_what_is_under_it(make_server):
    srv = make_server(conf="SitemapBaseURL http://127.0.0.1:{port}/blog/\n")
    srv.conf_text = srv.conf_text.format(port=srv.port)
    srv.write("htdocs/blog/a.html", "<html><body>a</body></html>\n")
    srv.write("htdocs/about.html", "<html><body>about</body></html>\n")
    srv.start()
    # before anything is recorded: no document (404), at the site's path
    assert srv.get("/blog/sitemap.xml").status == 404
    assert robots_lines(srv) == [f"{srv.base}/blog/sitemap.xml"]
    srv.get_ok("/about.html")
    srv.get_ok("/blog/a.html")
    srv.wait_recorded("/blog/a.html")
    # a later page recorded: the earlier /about.html was decided by then
    srv.write("htdocs/blog/b.html", "<html><body>b</body></html>\n")
    srv.get_ok("/blog/b.html")
    srv.wait_recorded("/blog/b.html")
    assert "/about.html" not in srv.urls()
    r = fetch(srv, "/blog/sitemap.xml", kind="urlset")
    assert f"{srv.base}/blog/a.html" in r.doc.locs
    assert all(loc.startswith(srv.base + "/blog/") for loc in r.doc.locs), r.doc.locs
    # the root's /sitemap.xml is not this site's
    assert srv.get("/sitemap.xml").status == 404


@pytest.mark.parametrize("conf,value", [
    ("SitemapPath /blog/sitemap.xml\n", "/blog/sitemap.xml"),
    ("SitemapPath /sitemaps/www.xml\n", "/sitemaps/www.xml"),
    ("SitemapBaseURL http://127.0.0.1/blog/\nSitemapPath /sitemap.xml\n", "/sitemap.xml"),
    ("SitemapBaseURL http://127.0.0.1/blog/\nSitemapPath /blog/x/s.xml\n", "/blog/x/s.xml"),
])
def test_sitemap_path_outside_the_sites_directory_is_refused(make_server, conf, value):
    srv = make_server()
    srv.config_fails("SitemapPath", value, "sitemaps.org", "SitemapBaseURL", conf=conf)


def test_text_path_below_the_sites_directory_is_refused(make_server):
    srv = make_server()
    srv.config_fails("SitemapTextPath", "/maps/urls.txt", "sitemaps.org",
                     conf="SitemapTextPath /maps/urls.txt\n")


@pytest.mark.parametrize("value", ["http://example.test/blog", "http://example.test/a//b/",
                                   "http://example.test/../b/", "http://example.test/a b/"])
def test_base_url_path_must_be_a_directory(make_server, value):
    srv = make_server()
    srv.config_fails("SitemapBaseURL", value, conf=f'SitemapBaseURL "{value}"\n')



def test_two_scopes_of_one_host_in_one_store_are_refused(make_server):
    srv = make_server(sitemap=False)
    vhost = """<VirtualHost 127.0.0.1:{port}>
    ServerName www.example.test
    DocumentRoot "{docroot}"
    Sitemap On
    SitemapDatabase db/shared.db
    SitemapBaseURL http://www.example.test/{path}/
</VirtualHost>
"""
    conf = "".join(vhost.format(port=srv.port, docroot=srv.docroot, path=p)
                   for p in ("blog", "shop"))
    srv.config_fails("SitemapBaseURL", "http://www.example.test/shop/",
                     "SitemapDatabase", conf=conf)
