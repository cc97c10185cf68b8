# SPDX-License-Identifier: Apache-2.0
"""Crawl coverage (issue 36) across a graceful restart, on a farm of two
servers sharing a PostgreSQL store, behind mod_remoteip, and with a dns:
source answered by a hosts file the test controls (a private mount
namespace in which /etc/hosts is the test's, for httpd alone)."""
import json
import subprocess
import time

import pytest

import conftest
from conftest import SITEMAPCTL, WAIT
from pg import pg_cluster, pg_db  # noqa: F401 (fixtures)
from test_crawl_coverage import (CRAWLER_IP, FAKE_IP, GOOGLEBOT, STATUS,
                                 crawl, crawler_figures, poll_until,
                                 ranges_file, wait_figures)

BASE = "https://www.example.com"
# The figures the store keeps; verified_hits, unverified_hits and
# pending_hits are this server's, in shared memory made at each start.
STORE_FIGURES = ("listed_urls", "crawled_1d", "crawled_7d", "crawled_30d",
                 "never_crawled", "stale", "unlisted_hits", "sitemap_fetches",
                 "last_sitemap_fetch")


def test_graceful_restart_keeps_store_figures(make_server):
    srv = make_server()
    path = ranges_file(srv)
    srv.conf_text = STATUS + f'SitemapCrawler Googlebot googlebot "{path}"\n'
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    crawl(srv, "/page.html", CRAWLER_IP)
    crawl(srv, "/missing.html", CRAWLER_IP, status=404)
    crawl(srv, "/sitemap.xml", CRAWLER_IP)
    crawl(srv, "/page.html", FAKE_IP)
    before = wait_figures(srv, verified_hits=3, unverified_hits=1,
                          crawled_1d=1, unlisted_hits=1, sitemap_fetches=1)
    srv.graceful()
    after = crawler_figures(srv)
    assert {k: after[k] for k in STORE_FIGURES} == \
        {k: before[k] for k in STORE_FIGURES}
    assert (after["verified_hits"], after["unverified_hits"],
            after["pending_hits"]) == (0, 0, 0)


def farm_figures(srv):
    r = srv.get("/sitemap-status?json")
    assert r.status == 200
    (site,) = json.loads(r.body)["sites"]
    (c,) = site["crawlers"]
    return c


def test_farm_shows_the_farms_coverage(make_server, pg_db):  # noqa: F811
    nodes = [make_server(db=pg_db.uri) for _ in range(2)]
    path = ranges_file(nodes[0])
    for s in nodes:
        s.conf_text = (f"SitemapBaseURL {BASE}\n" + STATUS
                       + f'SitemapCrawler Googlebot googlebot "{path}"\n')
        s.write("htdocs/two.html", "<html><body>two</body></html>\n")
        s.start()
    a, b = nodes
    a.get_ok("/page.html")
    a.get_ok("/two.html")
    pg_db.wait_urls(BASE, {"/page.html", "/two.html"})
    crawl(a, "/page.html", CRAWLER_IP)
    wait_figures(a, verified_hits=1, crawled_1d=1, listed_urls=2)
    # b never counted a claim, and reads the farm's store: a's fetch.
    c = farm_figures(b)
    assert (c["verified_hits"], c["crawled_1d"], c["never_crawled"],
            c["listed_urls"]) == (0, 1, 1, 2)
    # b's own crawl: b shows both (its write makes it read again).
    crawl(b, "/two.html", CRAWLER_IP)
    c = wait_figures(b, verified_hits=1, crawled_1d=2)
    assert c["never_crawled"] == 0
    # The writers took yesterday at their start, on PostgreSQL: its mark.
    yesterday = int(time.time()) // 86400 - 1
    deadline = time.monotonic() + WAIT
    while pg_db.sql("SELECT count(*) FROM sitemap_crawl_days"
                    f" WHERE crawler = '' AND day = {yesterday}") != [["1"]]:
        assert time.monotonic() < deadline, pg_db.sql(
            "SELECT * FROM sitemap_crawl_days")
        time.sleep(0.1)
    r = subprocess.run([SITEMAPCTL, "coverage", pg_db.uri, "--site", BASE,
                        "--crawler", "Googlebot"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = [ln.split("\t") for ln in r.stdout.splitlines()]
    assert sorted(u for u, _, f in rows if f != "-") == \
        [BASE + "/page.html", BASE + "/two.html"]


def remoteip_server(make_server, remoteip):
    srv = make_server(modules=["remoteip"] if remoteip else [])
    path = ranges_file(srv)
    srv.conf_text = STATUS + f'SitemapCrawler Googlebot googlebot "{path}"\n'
    if remoteip:
        srv.conf_text += ("RemoteIPHeader X-Forwarded-For\n"
                          "RemoteIPInternalProxy 127.0.0.1\n")
    srv.start()
    return srv


@pytest.mark.parametrize("remoteip", [True, False],
                         ids=["remoteip", "no-remoteip"])
def test_x_forwarded_for_counts_only_through_remoteip(make_server, remoteip):
    """From 127.0.0.1 claiming X-Forwarded-For: 127.0.0.2 (the ranges
    file's address): verified when mod_remoteip trusts 127.0.0.1 as a
    proxy, unverified without it."""
    srv = remoteip_server(make_server, remoteip)
    r = srv.get("/page.html", headers={"User-Agent": GOOGLEBOT,
                                       "X-Forwarded-For": CRAWLER_IP})
    assert r.status == 200
    if remoteip:
        wait_figures(srv, verified_hits=1, unverified_hits=0, crawled_1d=1)
    else:
        c = wait_figures(srv, verified_hits=0, unverified_hits=1)
        assert c["crawled_1d"] == 0


HOSTS_EXTRA = ("127.0.0.2 crawl-127-0-0-2.googlebot.com\n"
               "127.0.0.3 crawl-127-0-0-3.example.net\n")


def private_hosts(tmp_path, monkeypatch):
    """httpd started in a mount namespace of its own where /etc/hosts is
    a copy with HOSTS_EXTRA (the test's resolver); None when this system
    cannot make one."""
    hosts = tmp_path / "hosts"
    with open("/etc/hosts") as f:
        hosts.write_text(f.read() + HOSTS_EXTRA)
    hosts.chmod(0o644)
    probe = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c",
         f'mount --bind "{hosts}" /etc/hosts && getent hosts 127.0.0.2'],
        capture_output=True, text=True)
    if probe.returncode != 0 or "googlebot.com" not in probe.stdout:
        return None
    monkeypatch.setattr(conftest, "CORE_LIMIT", [
        "unshare", "-m", "--propagation", "private", "sh", "-c",
        f'mount --bind "{hosts}" /etc/hosts && exec "$@"', "sh",
        *conftest.CORE_LIMIT])
    return hosts


def test_dns_source_with_a_resolver_the_test_controls(make_server, tmp_path,
                                                      monkeypatch):
    """dns:googlebot.com: 127.0.0.2's name is under it and resolves back
    (verified, after the child's thread asked); 127.0.0.3's is not (never
    verified)."""
    if not private_hosts(tmp_path, monkeypatch):
        pytest.skip("no private mount namespace here (unshare -m)")
    srv = make_server()
    srv.conf_text = STATUS + "SitemapCrawler Googlebot googlebot dns:googlebot.com\n"
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    c = poll_until(srv, CRAWLER_IP, {"verified_hits": lambda v: v >= 1,
                                     "crawled_1d": lambda v: v == 1})
    assert c["unverified_hits"] == 0
    deadline = time.monotonic() + WAIT
    while True:
        crawl(srv, "/page.html", FAKE_IP)
        c = crawler_figures(srv)
        if c["unverified_hits"] >= 1:
            break
        assert time.monotonic() < deadline, c
        time.sleep(0.2)
    # The fake's claims never verified: the verified count is the
    # crawler's alone.
    before = c["verified_hits"]
    crawl(srv, "/page.html", FAKE_IP)
    c = crawler_figures(srv)
    assert c["verified_hits"] == before
    assert c["unverified_hits"] >= 2
