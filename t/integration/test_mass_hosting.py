# SPDX-License-Identifier: Apache-2.0
"""Mass virtual hosting (SitemapSiteFromHost): one <VirtualHost> serving
every hostname (mod_vhost_alias's VirtualDocumentRoot, or a docroot per
host from a RewriteMap) gets one site per allowed hostname: its own URLs,
<loc>s, robots.txt line, views and renditions.  A Host outside the allow
list, in a refused form, or past the cap is never recorded and gets no
sitemap."""
import json
import os
import re
import time
import urllib.robotparser

import pytest

from pg import pg_cluster, pg_db  # noqa: F401 (fixtures)

HTML = "<html><head><title>t</title></head><body>x</body></html>\n"
ALLOW = r"[a-z0-9-]+\.hosted\.test"
HOSTS = ("a.hosted.test", "b.hosted.test", "c.hosted.test")


def mass_vhost(srv, extra="", docroot=None):
    root = docroot or f'VirtualDocumentRoot "{srv.root}/hosts/%0"'
    return f"""
Include /etc/apache2/mods-available/vhost_alias.load
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName mass.test
    ServerAlias *
    UseCanonicalName Off
    {root}
    <Directory "{srv.root}/hosts">
        Require all granted
    </Directory>
    SitemapSiteFromHost "{ALLOW}"
    SitemapRobotsFallback On
    {extra}
</VirtualHost>
"""


def base(srv, host):
    return f"http://{host}:{srv.port}"


def host_pages(srv, names=HOSTS + ("evil.test",)):
    # The same bytes and times everywhere: /shared.html's responses of two
    # hosts differ in nothing but the Host (with FileETag None).
    for name in names:
        srv.write(f"hosts/{name}/only-{name[0]}.html", HTML, mtime=1700000000)
        srv.write(f"hosts/{name}/shared.html", HTML, mtime=1700000000)


def locs(body):
    return re.findall(r"<loc>([^<]*)</loc>", body)


def sentinel(srv, host="a.hosted.test"):
    return srv.sentinel(host=f"{host}:{srv.port}", base=base(srv, host),
                        docroot=srv.path(f"hosts/{host}"))


def test_each_host_has_its_own_site(make_server):
    srv = make_server()
    host_pages(srv)
    srv.conf_text = mass_vhost(srv, "FileETag None\n"
                                    "SitemapHTMLPath /site-map.html\n"
                                    "SitemapTextPath /sitemap.txt\n"
                                    "SitemapCache On")
    srv.start()
    for name in HOSTS:
        srv.get_ok(f"/only-{name[0]}.html", host=f"{name}:{srv.port}")
        srv.get_ok("/shared.html", host=f"{name}:{srv.port}")
    for name in HOSTS:
        srv.wait_recorded(f"/only-{name[0]}.html", "/shared.html",
                          base=base(srv, name))
    s = sentinel(srv)
    assert srv.all_urls() == {
        base(srv, "a.hosted.test"): {"/only-a.html", "/shared.html", s},
        base(srv, "b.hosted.test"): {"/only-b.html", "/shared.html"},
        base(srv, "c.hosted.test"): {"/only-c.html", "/shared.html"},
    }
    # Twice each, in turn: a rendition of one host never answers another.
    for _ in range(2):
        for name in HOSTS:
            b = base(srv, name)
            r = srv.get_ok("/sitemap.xml", host=f"{name}:{srv.port}")
            want = {b + "/only-%s.html" % name[0], b + "/shared.html"}
            if name == "a.hosted.test":
                want.add(b + s)
            assert set(locs(r.body.decode("utf-8", "replace"))) == want, (name, r.body.decode("utf-8", "replace"))
            txt = srv.get_ok("/sitemap.txt", host=f"{name}:{srv.port}").body.decode("utf-8", "replace")
            assert set(txt.split()) == want, (name, txt)
            html = srv.get_ok("/site-map.html", host=f"{name}:{srv.port}").body.decode("utf-8", "replace")
            assert f"only-{name[0]}.html" in html
            assert not any(f"only-{o[0]}.html" in html
                           for o in HOSTS if o != name), html
            robots = srv.get_ok("/robots.txt", host=f"{name}:{srv.port}").body.decode("utf-8", "replace")
            rp = urllib.robotparser.RobotFileParser()
            rp.parse(robots.splitlines())
            assert rp.site_maps() == [b + "/sitemap.xml"], robots


def test_host_outside_allow_list_has_no_site(make_server):
    srv = make_server()
    host_pages(srv)
    srv.conf_text = mass_vhost(srv)
    srv.start()
    evil = f"evil.test:{srv.port}"
    srv.get_ok("/only-e.html", host=evil)
    srv.get_ok("/shared.html", host=evil)
    assert srv.get("/sitemap.xml", host=evil).status == 404
    robots = srv.get("/robots.txt", host=evil)
    assert "sitemap" not in robots.body.decode("utf-8", "replace").lower(), robots.body.decode("utf-8", "replace")
    s = sentinel(srv)
    assert srv.all_urls() == {base(srv, "a.hosted.test"): {s}}


def test_host_variants(make_server):
    """Case, a trailing dot and the vhost's own port name the same site;
    an IP literal, another port, invalid or over-long names have none."""
    srv = make_server()
    host_pages(srv, ("a.hosted.test",))
    srv.conf_text = mass_vhost(srv, docroot=f'DocumentRoot "{srv.root}/hosts/a.hosted.test"')
    srv.start()
    good = ["A.Hosted.TEST", "a.hosted.test.", f"a.hosted.test.:{srv.port}",
            f"A.HOSTED.test:{srv.port}"]
    for i, host in enumerate(good):
        srv.write(f"hosts/a.hosted.test/v{i}.html", HTML)
        srv.get_ok(f"/v{i}.html", host=host)
        srv.wait_recorded(f"/v{i}.html", base=base(srv, "a.hosted.test"))
        r = srv.get_ok("/sitemap.xml", host=host)
        assert all(loc.startswith(base(srv, "a.hosted.test") + "/")
                   for loc in locs(r.body.decode("utf-8", "replace"))), r.body.decode("utf-8", "replace")
    bad = ["127.0.0.1", f"127.0.0.1:{srv.port}", f"[::1]:{srv.port}",
           "a.hosted.test:1", "a.hosted.test:80", "x.a.hosted.test",
           "a_b.hosted.test", "-a.hosted.test", "a..hosted.test",
           "x" * 64 + ".hosted.test", ("a" * 60 + ".") * 5 + "hosted.test",
           "hosted.test", "a.hosted.test.evil.test"]
    for i, host in enumerate(bad):
        srv.write(f"hosts/a.hosted.test/bad{i}.html", HTML)
        srv.get(f"/bad{i}.html", host=host)
        r = srv.get("/sitemap.xml", host=host)
        assert r.status != 200, (host, r.body.decode("utf-8", "replace"))
    s = sentinel(srv)
    assert srv.all_urls() == {
        base(srv, "a.hosted.test"): {f"/v{i}.html" for i in range(len(good))} | {s}}


def test_flood_of_allowed_names_stops_at_the_cap(make_server):
    srv = make_server()
    names = [f"n{i}.hosted.test" for i in range(12)]
    srv.write("hosts/one/page.html", HTML)
    srv.conf_text = mass_vhost(srv, "SitemapSiteFromHostMax 4",
                               docroot=f'DocumentRoot "{srv.root}/hosts/one"')
    srv.expect_log(r"SitemapSiteFromHost: this process has 4 sites")
    srv.start()
    for n in names:
        srv.get_ok("/page.html", host=n)
    srv.wait_recorded("/page.html", base=f"http://n3.hosted.test:{srv.port}")
    # n0..n3 got sites; a sentinel through n0 drains the queue.
    s = srv.sentinel(host="n0.hosted.test", base=f"http://n0.hosted.test:{srv.port}",
                     docroot=srv.path("hosts/one"))
    got = srv.all_urls()
    assert set(got) == {f"http://n{i}.hosted.test:{srv.port}" for i in range(4)}, got
    for n in names[4:]:
        assert srv.get("/sitemap.xml", host=n).status == 404
    warned = [ln for ln in srv.log_text().splitlines()
              if "SitemapSiteFromHost: this process has 4 sites" in ln]
    assert len(warned) == 1, warned
    assert s


def test_docroot_per_host_from_a_rewrite_map(make_server):
    srv = make_server(modules=("rewrite",))
    host_pages(srv, HOSTS[:2])
    srv.write("conf/hosts.map", "".join(
        f"{h} {h}\n" for h in HOSTS[:2]))
    srv.conf_text = mass_vhost(srv, f"""
    RewriteEngine On
    RewriteMap hosts "txt:{srv.root}/conf/hosts.map"
    RewriteCond %{{REQUEST_URI}} !^/(sitemap|robots)
    RewriteCond %{{SERVER_NAME}} ^(.+)$
    RewriteCond ${{hosts:%1|NONE}} ^([a-z0-9.-]+)$
    RewriteRule ^/(.*)$ {srv.root}/hosts/%1/$1 [L]
""", docroot=f'DocumentRoot "{srv.root}/hosts/none"')
    srv.write("hosts/none/x", "")
    srv.start()
    for name in HOSTS[:2]:
        srv.get_ok(f"/only-{name[0]}.html", host=f"{name}:{srv.port}")
    for name in HOSTS[:2]:
        srv.wait_recorded(f"/only-{name[0]}.html", base=base(srv, name))
    s = sentinel(srv)
    assert srv.all_urls() == {
        base(srv, "a.hosted.test"): {"/only-a.html", s},
        base(srv, "b.hosted.test"): {"/only-b.html"},
    }
    r = srv.get_ok("/sitemap.xml", host=f"b.hosted.test:{srv.port}")
    assert locs(r.body.decode("utf-8", "replace")) == [base(srv, "b.hosted.test") + "/only-b.html"]


import pytest  # noqa: E402


@pytest.mark.parametrize("line,needles", [
    ("SitemapSiteFromHostMax 0", ("SitemapSiteFromHostMax", "'0'", "1 to 1000000")),
    ("SitemapSiteFromHostMax 10x", ("SitemapSiteFromHostMax", "'10x'", "1 to 1000000")),
    ("SitemapSiteFromHostMax 1000001", ("SitemapSiteFromHostMax", "1 to 1000000")),
    ("SitemapSiteFromHostMax -1", ("SitemapSiteFromHostMax", "'-1'")),
    ('SitemapSiteFromHost "a)|(b"', ("SitemapSiteFromHost", "a)|(b", "not a valid regular expression")),
    ('SitemapSiteFromHost "("', ("SitemapSiteFromHost", "not a valid regular expression")),
    ('SitemapSiteFromHost ""', ("SitemapSiteFromHost", "takes one argument")),
])
def test_bad_directives_stop_start_up(make_server, line, needles):
    srv = make_server()
    srv.config_fails(*needles, conf=line)


def test_indexnow_refused_with_site_from_host(make_server):
    srv = make_server()
    srv.config_fails("SitemapSiteFromHost", "SitemapIndexNow On",
                     conf=mass_vhost(srv, "SitemapIndexNow On\n"
                                          "SitemapIndexNowKey 0123456789abcdef"))


@pytest.mark.slow
def test_host_sites_expire(make_server):
    """A site made from a Host joins the recorder's sites: its URLs not
    served for SitemapExpire leave the store, the ones served stay."""
    import time
    srv = make_server()
    host_pages(srv, HOSTS[:1])
    srv.conf_text = mass_vhost(srv, "SitemapExpire 4s")
    srv.start()
    h = f"{HOSTS[0]}:{srv.port}"
    b = base(srv, HOSTS[0])
    srv.get_ok("/only-a.html", host=h)
    srv.get_ok("/shared.html", host=h)
    srv.wait_recorded("/only-a.html", "/shared.html", base=b)
    deadline = time.monotonic() + 9
    while time.monotonic() < deadline:
        srv.get_ok("/shared.html", host=h)
        time.sleep(0.25)
    deadline = time.monotonic() + 15
    while "/only-a.html" in srv.all_urls().get(b, set()):
        assert time.monotonic() < deadline, srv.all_urls()
        time.sleep(0.2)
    assert "/shared.html" in srv.all_urls()[b]


def test_spill_of_a_host_not_seen_yet_is_written(make_server):
    """Changes a stopped process kept in a spill file (its store failed at
    the stop) for a host this process has not been asked for yet are
    written, its site made from the base; a base outside the allow-list
    makes no site and is dropped (logged)."""
    import time
    from conftest import IS_ROOT, RUN_UID, RUN_GID
    srv = make_server()
    host_pages(srv, HOSTS[:2])
    srv.conf_text = mass_vhost(srv)
    srv.start()
    srv.get_ok("/only-a.html", host=f"{HOSTS[0]}:{srv.port}")
    srv.wait_recorded("/only-a.html", base=base(srv, HOSTS[0]))
    srv.graceful_stop()
    b = base(srv, HOSTS[1])
    evil = base(srv, "evil.test")
    seen = int(time.time()) * 1000000
    spill = srv.db_path + ".spill-host01"
    with open(spill, "w") as f:
        f.write("mod_sitemap spill 1\n"
                f"R\t{seen}\t0\t{b}\t/only-b.html\t-\n"
                f"R\t{seen}\t0\t{b}\t/shared.html\t-\n"
                f"R\t{seen}\t0\t{evil}\t/planted.html\t-\n"
                "end 3\n")
    os.chmod(spill, 0o600)
    if IS_ROOT:
        os.chown(spill, RUN_UID, RUN_GID)
    srv.expect_log(r"sites this server no longer records")
    srv.start()
    # No request to b after the start: its site comes from the spill.
    srv.wait_recorded("/only-b.html", "/shared.html", base=b, timeout=20)
    srv.wait_log(r"1 changes kept by a stopped process are for sites",
                 module="sitemap")
    assert evil not in srv.all_urls()
    assert not os.path.exists(spill)


STATUS = "<Location /sitemap-status>\n  SetHandler sitemap-status\n</Location>"


def status_entries(srv, host):
    r = srv.get_ok("/sitemap-status?json", host=host)
    return {s["base"]: s for s in json.loads(r.body)["sites"]}


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_status_page_lists_each_hosts_site(make_server, store, request):
    """The status page of a mass vhost lists its hosts' sites (URLs and
    pages each, from the store, every process's): not the names outside
    its allow list (another mass vhost's, in the same store), and not a
    host that has a <VirtualHost> of its own (that vhost's own entry has
    it)."""
    kw = {}
    if store == "postgresql":
        kw["db"] = request.getfixturevalue("pg_db").uri
    srv = make_server(modules=("status",), **kw)
    own, other = "c.hosted.test", "x.other.test"
    host_pages(srv, HOSTS + ("evil.test", other))
    # Before the mass vhost: its "ServerAlias *" takes every name it is
    # asked for first.
    srv.conf_text = f"""
<Directory "{srv.root}/hosts">
    Require all granted
</Directory>
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName {own}
    DocumentRoot "{srv.root}/hosts/{own}"
</VirtualHost>
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName other.test
    ServerAlias *.other.test
    VirtualDocumentRoot "{srv.root}/hosts/%0"
    SitemapSiteFromHost "[a-z]+\\.other\\.test"
</VirtualHost>
""" + mass_vhost(srv, STATUS + "\n<Location /server-status>\n"
                        "  SetHandler server-status\n</Location>")
    srv.start()
    mass = f"mass.test:{srv.port}"
    for name in ("a.hosted.test", "b.hosted.test", own, "evil.test", other):
        srv.get_ok(f"/only-{name[0]}.html", host=f"{name}:{srv.port}")
    srv.get_ok("/shared.html", host=f"a.hosted.test:{srv.port}")
    want = {base(srv, "a.hosted.test"): 2, base(srv, "b.hosted.test"): 1}
    deadline = time.monotonic() + 30
    while True:
        sites = status_entries(srv, mass)
        hosts = sites[f"http://mass.test:{srv.port}"]["hosts"]
        others = sites[f"http://other.test:{srv.port}"]["hosts"]
        if {h["base"]: h["urls"] for h in hosts} == want \
                and sites[base(srv, own)]["urls"] == 1 \
                and [h["base"] for h in others] == [base(srv, other)]:
            break
        assert time.monotonic() < deadline, sites
        time.sleep(0.2)
    assert [h["base"] for h in hosts] == sorted(want)
    assert all(h["pages"] == 1 for h in hosts), hosts
    # An ordinary vhost's entry has no list of hosts.
    assert "hosts" not in sites[base(srv, own)]

    html = srv.get_ok("/sitemap-status", host=mass).body.decode()
    assert "one per host name (2)" in html, html
    rows = re.findall(r'<tr><th scope="row">([^<]*)</th><td>(\d+)</td>'
                      r'<td>(\d+)</td></tr>', html)
    assert sorted(rows) == sorted([(b, str(n), "1") for b, n in want.items()]
                                  + [(base(srv, other), "1", "1")]), rows
    assert "evil.test" not in html

    # mod_status: a line for the hosts' sites after the vhost's own.
    auto = srv.get_ok("/server-status?auto", host=mass).body.decode()
    assert f"Sitemap http://mass.test:{srv.port}: 2 host sites, 3 URLs\n" \
        in auto, auto

    metrics = srv.get_ok("/sitemap-status?metrics", host=mass).body.decode()
    for b, n in want.items():
        assert f'sitemap_urls{{site="{b}"}} {n}\n' in metrics, metrics
        assert f'sitemap_pages{{site="{b}"}} 1\n' in metrics, metrics
    # One series per site and metric: every entry's and every host's, the
    # own vhost's site not repeated among the hosts.
    series = re.findall(r'^sitemap_(?:urls|pages)\{site="([^"]*)"\}', metrics,
                        re.M)
    assert sorted(series) == sorted(
        2 * (list(sites) + list(want) + [base(srv, other)])), series


def test_status_lists_a_host_site_once(make_server):
    """Two mass vhosts whose patterns overlap, on one store: a host's site
    is listed once (one JSON entry, one metrics series)."""
    srv = make_server()
    host_pages(srv)
    srv.conf_text = f"""
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName other.test
    ServerAlias *.other.test
    VirtualDocumentRoot "{srv.root}/hosts/%0"
    SitemapSiteFromHost "[a-z]+\\.(other|hosted)\\.test"
</VirtualHost>
""" + mass_vhost(srv, STATUS)
    srv.start()
    mass = f"mass.test:{srv.port}"
    for name in HOSTS[:2]:
        srv.get_ok(f"/only-{name[0]}.html", host=f"{name}:{srv.port}")
    want = sorted(base(srv, name) for name in HOSTS[:2])
    deadline = time.monotonic() + 30
    while True:
        listed = [h["base"] for s in status_entries(srv, mass).values()
                  for h in s.get("hosts", [])]
        if sorted(set(listed)) == want:
            break
        assert time.monotonic() < deadline, listed
        time.sleep(0.2)
    assert sorted(listed) == want, listed
    metrics = srv.get_ok("/sitemap-status?metrics", host=mass).body.decode()
    series = re.findall(r"^sitemap_urls\{[^}]*\}", metrics, re.M)
    assert len(series) == len(set(series)), series


def test_status_host_given_its_own_vhost_later(make_server):
    """A host recorded by the mass vhost, then given a <VirtualHost> (and
    a store) of its own: listed once, as that vhost's entry, not among the
    mass vhost's sites (one metrics series)."""
    srv = make_server()
    host_pages(srv)
    srv.conf_text = mass_vhost(srv, STATUS)
    srv.start()
    own = "c.hosted.test"
    for name in ("a.hosted.test", own):
        srv.get_ok(f"/only-{name[0]}.html", host=f"{name}:{srv.port}")
        srv.wait_recorded(f"/only-{name[0]}.html", base=base(srv, name))
    srv.stop()
    srv.conf_text = f"""
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName {own}
    DocumentRoot "{srv.root}/hosts/{own}"
    SitemapDatabase db/own.db
    <Directory "{srv.root}/hosts/{own}">
        Require all granted
    </Directory>
</VirtualHost>
""" + mass_vhost(srv, STATUS)
    srv.restart()
    mass = f"mass.test:{srv.port}"
    sites = status_entries(srv, mass)
    assert [h["base"] for h in sites[f"http://mass.test:{srv.port}"]["hosts"]] \
        == [base(srv, "a.hosted.test")], sites
    assert base(srv, own) in sites
    metrics = srv.get_ok("/sitemap-status?metrics", host=mass).body.decode()
    series = re.findall(r"^sitemap_urls\{[^}]*\}", metrics, re.M)
    assert len(series) == len(set(series)), series


def flood(srv, names):
    """Requests for names with nothing behind them (no docroot): a 404
    page, /sitemap.xml, robots.txt, HEAD, in turn."""
    for i, n in enumerate(names):
        kind = i % 4
        if kind == 0:
            assert srv.get(f"/missing-{i}.html", host=n).status == 404
        elif kind == 1:
            assert srv.get("/sitemap.xml", host=n).status == 404
        elif kind == 2:
            r = srv.get("/robots.txt", host=n)
            assert r.status == 404, r.body
        else:
            assert srv.request("HEAD", "/", host=n).status == 404


def robots_sitemaps(srv, name):
    rp = urllib.robotparser.RobotFileParser()
    rp.parse(srv.get_ok("/robots.txt", host=f"{name}:{srv.port}")
             .body.decode().splitlines())
    return rp.site_maps()


def host_rows(srv):
    """The bases of the hosts' sites in the store's sites table."""
    return sorted(b for (b,) in srv.query(
        "SELECT base FROM sites WHERE base LIKE '%.hosted.test:%'"))


def test_flood_of_invented_names_locks_no_one_out(make_server):
    """200 invented names (no docroot: a 404 for everything) under
    SitemapSiteFromHostMax 50 take no place and get no row: a customer's
    name that comes after them is recorded, gets its sitemap and its
    robots.txt line; after a graceful restart and a second flood, too, and
    a name recorded before the restart is served from the store before it
    has a place in the new process.  The status page lists no flood."""
    srv = make_server()
    host_pages(srv, HOSTS[:2])
    srv.conf_text = mass_vhost(srv, "SitemapSiteFromHostMax 50\n" + STATUS)
    srv.start()
    flood(srv, [f"x{i}.hosted.test" for i in range(200)])
    a, b = HOSTS[0], HOSTS[1]
    srv.get_ok("/only-a.html", host=f"{a}:{srv.port}")
    srv.wait_recorded("/only-a.html", base=base(srv, a))
    r = srv.get_ok("/sitemap.xml", host=f"{a}:{srv.port}")
    assert locs(r.body.decode()) == [base(srv, a) + "/only-a.html"]
    assert robots_sitemaps(srv, a) == [base(srv, a) + "/sitemap.xml"]
    assert host_rows(srv) == [base(srv, a)]

    srv.graceful()
    # a has no place in the new process: served from the store.
    r = srv.get_ok("/sitemap.xml", host=f"{a}:{srv.port}")
    assert locs(r.body.decode()) == [base(srv, a) + "/only-a.html"]
    assert robots_sitemaps(srv, a) == [base(srv, a) + "/sitemap.xml"]
    flood(srv, [f"y{i}.hosted.test" for i in range(200)])
    srv.get_ok("/only-b.html", host=f"{b}:{srv.port}")
    srv.wait_recorded("/only-b.html", base=base(srv, b))
    assert robots_sitemaps(srv, b) == [base(srv, b) + "/sitemap.xml"]
    s = sentinel(srv)
    assert srv.all_urls() == {base(srv, a): {"/only-a.html", s},
                              base(srv, b): {"/only-b.html"}}
    assert host_rows(srv) == [base(srv, a), base(srv, b)]
    assert "this process has 50 sites" not in srv.log_text()
    # The status page lists the two customers, nothing of the floods.
    mass = f"mass.test:{srv.port}"
    entry = status_entries(srv, mass)[f"http://mass.test:{srv.port}"]
    assert [h["base"] for h in entry["hosts"]] == [base(srv, a), base(srv, b)]
    assert entry["hosts_total"] == 2, entry
    metrics = srv.get_ok("/sitemap-status?metrics", host=mass).body
    assert metrics.count(b"hosted.test") == 4, metrics  # urls, pages
    html = srv.get_ok("/sitemap-status", host=mass).body
    assert b"x1.hosted" not in html and b"y1.hosted" not in html


def test_status_lists_at_most_100_host_sites(make_server):
    """130 host sites recorded: the status page (HTML, ?json, ?metrics)
    lists the 100 with most URLs, most first, and counts all 130."""
    srv = make_server()
    srv.write("hosts/one/page.html", HTML)
    srv.write("hosts/one/more.html", HTML)
    srv.conf_text = mass_vhost(srv, STATUS + "\nSitemapSiteFromHostMax 200",
                               docroot=f'DocumentRoot "{srv.root}/hosts/one"')
    srv.start()
    names = [f"n{i:03d}.hosted.test" for i in range(130)]
    for n in names:
        srv.get_ok("/page.html", host=n)
    big = names[-1]
    srv.get_ok("/more.html", host=big)
    mass = f"mass.test:{srv.port}"
    srv.sentinel(host=big, base=f"http://{big}:{srv.port}",
                 docroot=srv.path("hosts/one"))
    deadline = time.monotonic() + 30
    while sum(len(u) for u in srv.all_urls().values()) < 132:
        got = srv.all_urls()
        assert time.monotonic() < deadline, (
            len(got), {b: u for b, u in got.items() if len(u) != 1})
        time.sleep(0.2)
    entry = status_entries(srv, mass)[f"http://mass.test:{srv.port}"]
    assert entry["hosts_total"] == 130, entry
    assert entry["hosts_urls"] == 132, entry
    hosts = [h["base"] for h in entry["hosts"]]
    assert len(hosts) == 100, hosts
    # big has 3 URLs (page, more, the sentinel): first; then by name.
    assert hosts == [f"http://{n}:{srv.port}" for n in [big] + names[:99]]
    html = srv.get_ok("/sitemap-status", host=mass).body.decode()
    assert "one per host name (130)" in html
    assert "all 130 have 132 URLs" in html, html
    assert len(re.findall(r"\.hosted\.test:\d+</th>", html)) == 100
    metrics = srv.get_ok("/sitemap-status?metrics", host=mass).body.decode()
    assert len(re.findall(r'^sitemap_urls\{site="http://n\d+\.hosted',
                          metrics, re.M)) == 100
    assert f'sitemap_host_sites{{site="http://mass.test:{srv.port}"}} 130\n' \
        in metrics, metrics
    assert f'sitemap_host_urls{{site="http://mass.test:{srv.port}"}} 132\n' \
        in metrics, metrics


def plant_host_rows(srv, pgdb, names, other):
    """Rows of sites that never held a URL, as an older module wrote for
    every name asked (and a verdict of the first): names' and other's."""
    bases = [base(srv, n) for n in names] + [base(srv, other)]
    if pgdb:
        for b in bases:
            pgdb.sql("INSERT INTO sitemap_sites(id, base, next_id) SELECT n,"
                     f" '{b}', (n << 40) + 1 FROM nextval('sitemap_site_ids')"
                     " AS n")
        pgdb.sql("INSERT INTO sitemap_verdicts(site_id, url, seq, verdict,"
                 " reason, at) SELECT id, '/x', 1, 'left out', 'status 404',"
                 f" 0 FROM sitemap_sites WHERE base = '{bases[0]}'")
        return
    import sqlite3
    from conftest import as_run_user
    with as_run_user():
        con = sqlite3.connect(srv.db_path)
        with con:
            for b in bases:
                con.execute("INSERT INTO sites(id, base, next_id) SELECT"
                            " max(id) + 1, ?, 0 FROM sites", (b,))
            con.execute("INSERT INTO verdicts(site_id, url, seq, verdict,"
                        " reason, at) SELECT id, '/x', 1, 'left out',"
                        " 'status 404', 0 FROM sites WHERE base = ?",
                        (bases[0],))
        con.close()


@pytest.mark.parametrize("store", ["sqlite", "postgresql"])
def test_host_sites_that_never_held_a_url_are_pruned(make_server, store,
                                                     request):
    """The rows an older module wrote for every invented name (300 here)
    are pruned by the writer's first upkeep, with their verdicts; a host
    site with URLs and rows no host pattern names stay."""
    pgdb = request.getfixturevalue("pg_db") if store == "postgresql" else None
    srv = make_server(**({"db": pgdb.uri} if pgdb else {}))
    host_pages(srv, HOSTS[:1])
    srv.conf_text = mass_vhost(srv)
    srv.start()
    a, other = HOSTS[0], "y.other.test"
    srv.get_ok("/only-a.html", host=f"{a}:{srv.port}")
    if pgdb:
        pgdb.wait_urls(base(srv, a), ["/only-a.html"])
    else:
        srv.wait_recorded("/only-a.html", base=base(srv, a))
    srv.graceful_stop()
    plant_host_rows(srv, pgdb, [f"x{i}.hosted.test" for i in range(300)],
                    other)
    srv.start()
    srv.wait_log(r"300 sites of host names that never held a URL pruned",
                 module="sitemap")
    if pgdb:
        bases = sorted(b for (b,) in pgdb.sql(
            "SELECT base FROM sitemap_sites WHERE base LIKE '%.test:%'"))
        verdicts = pgdb.sql("SELECT count(*) FROM sitemap_verdicts")
    else:
        bases = sorted(b for (b,) in srv.query(
            "SELECT base FROM sites WHERE base LIKE '%.test:%'"))
        verdicts = srv.query("SELECT count(*) FROM verdicts")
    # The vhost's own site ("mass.test") is no host's: it stays too.
    assert bases == sorted([base(srv, a), base(srv, other),
                            base(srv, "mass.test")]), bases
    assert [list(map(int, r)) for r in verdicts] == [[0]], verdicts
