# SPDX-License-Identifier: Apache-2.0
"""Crawl coverage (issue 36): SitemapCrawler, a crawler's verified and
unverified fetches, and the status page's "crawlers" figures."""
import json
import re
import sqlite3
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import SITEMAPCTL, WAIT, as_run_user
from test_browser import CHROMIUM, chromium, png_colours


RANGES = '{"prefixes":[{"ipv4Prefix":"127.0.0.2/32"}]}\n'


def ranges_file(srv, text=RANGES):
    srv.write("ranges/googlebot.json", text)
    return srv.path("ranges/googlebot.json")


BAD_CRAWLERS = [
    ('SitemapCrawler Googlebot "(unclosed" dns:googlebot.com', "(unclosed"),
    ("SitemapCrawler Googlebot googlebot", "one source or more"),
    ("SitemapCrawler Googlebot googlebot relative/path.json",
     "relative/path.json"),
    ("SitemapCrawler Googlebot googlebot dns:", "dns:"),
]


@pytest.mark.parametrize("line,value", BAD_CRAWLERS,
                         ids=[b[0] for b in BAD_CRAWLERS])
def test_bad_crawler_stops_startup(make_server, line, value):
    srv = make_server()
    srv.config_fails("SitemapCrawler", value, conf=line)


def test_missing_ranges_file_stops_startup(make_server):
    srv = make_server()
    path = srv.path("ranges/none.json")
    srv.config_fails("SitemapCrawler", "Googlebot", path,
                     conf=f'SitemapCrawler Googlebot googlebot "{path}"')


def test_invalid_ranges_file_stops_startup(make_server):
    srv = make_server()
    path = ranges_file(srv, '{"prefixes":[{"ipv4Prefix":"127.0.0.2/8"}]}')
    srv.config_fails("SitemapCrawler", "Googlebot", path,
                     conf=f'SitemapCrawler Googlebot googlebot "{path}"')


def test_good_crawler_starts(make_server):
    srv = make_server()
    path = ranges_file(srv)
    srv.conf_text = (f'SitemapCrawler Googlebot googlebot "{path}"\n'
                     'SitemapCrawler Bingbot bingbot dns:search.msn.com\n')
    srv.start()
    srv.get_ok("/page.html")


STATUS = "<Location /sitemap-status>\n  SetHandler sitemap-status\n</Location>\n"
GOOGLEBOT = ("Mozilla/5.0 (compatible; Googlebot/2.1; "
             "+http://www.google.com/bot.html)")
CRAWLER_IP = "127.0.0.2"     # in the ranges file
FAKE_IP = "127.0.0.3"        # the same User-Agent, from elsewhere


def crawler_figures(srv):
    r = srv.get("/sitemap-status?json")
    assert r.status == 200, r
    sites = json.loads(r.body)["sites"]
    assert len(sites) == 1
    crawlers = sites[0]["crawlers"]
    assert [c["name"] for c in crawlers] == ["Googlebot"]
    return crawlers[0]


def wait_figures(srv, **want):
    """Poll the status page until every figure in want holds (a positive
    sentinel: the writer has applied the fetches)."""
    deadline = time.monotonic() + WAIT
    while True:
        c = crawler_figures(srv)
        if all(c[k] == v for k, v in want.items()):
            return c
        if time.monotonic() > deadline:
            raise AssertionError(f"figures {c!r}, wanted {want!r}\n"
                                 f"{srv.log_tail(20)}")
        time.sleep(0.1)


def crawl(srv, target, source, status=200):
    r = srv.get(target, headers={"User-Agent": GOOGLEBOT}, source=source)
    assert r.status == status, (target, r.status)
    return r


def test_coverage_figures(make_server):
    srv = make_server()
    path = ranges_file(srv)
    srv.conf_text = STATUS + f'SitemapCrawler Googlebot googlebot "{path}"\n'
    srv.start()
    srv.write("htdocs/other.html", "<html><body>other</body></html>\n")
    srv.get_ok("/page.html")
    srv.get_ok("/other.html")
    srv.wait_recorded("/page.html", "/other.html")
    listed = len(srv.urls())

    crawl(srv, "/page.html", CRAWLER_IP)
    crawl(srv, "/missing.html", CRAWLER_IP, status=404)
    crawl(srv, "/sitemap.xml", CRAWLER_IP)
    crawl(srv, "/page.html", FAKE_IP)
    crawl(srv, "/other.html", FAKE_IP)
    c = wait_figures(srv, verified_hits=3, unverified_hits=2, crawled_1d=1,
                     unlisted_hits=1, sitemap_fetches=1)
    assert c["listed_urls"] == listed
    assert c["crawled_7d"] == 1 and c["crawled_30d"] == 1
    assert c["never_crawled"] == listed - 1
    assert c["stale"] == 0
    assert c["pending_hits"] == 0
    assert c["last_sitemap_fetch"] != ""

    # The fake's fetch of /other.html changed nothing: still never crawled.
    m = srv.get("/sitemap-status?metrics").body.decode()
    site = srv.base
    assert (f'sitemap_crawler_verified_hits_total{{site="{site}",'
            f'crawler="Googlebot"}} 3') in m
    assert (f'sitemap_crawler_unverified_hits_total{{site="{site}",'
            f'crawler="Googlebot"}} 2') in m
    assert (f'sitemap_crawler_never_crawled{{site="{site}",'
            f'crawler="Googlebot"}} {listed - 1}') in m

    # The page changes after its crawl (a later second: lastmod has
    # seconds): stale until the crawler fetches it again.
    time.sleep(1.1 - (time.time() % 1.0))
    srv.write("htdocs/page.html", "<html><body>changed</body></html>\n")
    srv.get_ok("/page.html")
    wait_figures(srv, stale=1, crawled_1d=1, verified_hits=3)
    assert [r[0] for r in coverage_lines(srv, "--stale")] == \
        [srv.base + "/page.html"]
    crawl(srv, "/page.html", CRAWLER_IP)
    c = wait_figures(srv, stale=0, verified_hits=4, crawled_1d=1)
    assert c["never_crawled"] == listed - 1
    assert c["unverified_hits"] == 2

    # sitemapctl coverage: the same figures by URL.
    rows = coverage_lines(srv)
    assert len(rows) == listed
    fetched = {r[0]: r[2] for r in rows}
    assert fetched[srv.base + "/other.html"] == "-"
    assert fetched[srv.base + "/page.html"] != "-"
    assert all(r[1] != "-" for r in rows)
    assert [r[0] for r in coverage_lines(srv, "--never")] == \
        [u for u, f in fetched.items() if f == "-"]
    assert coverage_lines(srv, "--stale") == []
    unlisted = coverage_lines(srv, "--unlisted")
    assert [(r[0], r[1]) for r in unlisted] == [(srv.base + "/missing.html",
                                                 "-")]
    r = subprocess.run([SITEMAPCTL, "coverage", srv.db_path, "--site",
                        srv.base], capture_output=True, text=True)
    assert r.returncode == 2 and "--crawler" in r.stderr


def coverage_lines(srv, *opts):
    r = subprocess.run([SITEMAPCTL, "coverage", srv.db_path, "--site",
                        srv.base, "--crawler", "Googlebot", *opts],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return [ln.split("\t") for ln in r.stdout.splitlines()]


def poll_until(srv, source, want, timeout=20):
    """Crawl /page.html from source until the figures hold want (each try
    is a fetch, so counts grow: want's values are predicates)."""
    deadline = time.monotonic() + timeout
    while True:
        crawl(srv, "/page.html", source)
        c = crawler_figures(srv)
        if all(f(c[k]) for k, f in want.items()):
            return c
        if time.monotonic() > deadline:
            raise AssertionError(f"figures {c!r}\n{srv.log_tail(20)}")
        time.sleep(0.2)


def test_ranges_file_read_again_when_it_changes(make_server):
    srv = make_server()
    path = ranges_file(srv, '{"prefixes":[{"ipv4Prefix":"127.0.0.4/32"}]}')
    srv.conf_text = STATUS + f'SitemapCrawler Googlebot googlebot "{path}"\n'
    srv.start()
    crawl(srv, "/page.html", CRAWLER_IP)
    c = crawler_figures(srv)
    assert (c["verified_hits"], c["unverified_hits"]) == (0, 1)
    ranges_file(srv, RANGES + " ")
    c = poll_until(srv, CRAWLER_IP, {"verified_hits": lambda v: v >= 1})
    assert c["unverified_hits"] >= 1


def test_dns_source_pending_then_answered(make_server):
    """No resolver the test controls here: 127.0.0.2 has no name, so a
    dns: claim is pending until the child's thread asked, then
    unverified (never verified)."""
    srv = make_server()
    srv.conf_text = STATUS + "SitemapCrawler Googlebot googlebot dns:googlebot.com\n"
    srv.start()
    crawl(srv, "/page.html", CRAWLER_IP)
    c = crawler_figures(srv)
    assert (c["verified_hits"], c["pending_hits"]) == (0, 1)
    c = poll_until(srv, CRAWLER_IP, {"unverified_hits": lambda v: v >= 1})
    assert c["verified_hits"] == 0 and c["crawled_1d"] == 0


def day_name(day):
    return time.strftime("%Y-%m-%d", time.gmtime(day * 86400))


def test_status_html_chart(make_server, tmp_path):
    """The HTML status page: per crawler the ?json figures, and an inline
    SVG chart of coverage over the last 30 days (no script; a <title>, a
    table of the same figures) from the store's days and today's live
    figures.  The writer takes the day that ended at its first upkeep."""
    srv = make_server()
    path = ranges_file(srv)
    srv.conf_text = STATUS + f'SitemapCrawler Googlebot googlebot "{path}"\n'
    srv.start()
    srv.write("htdocs/other.html", "<html><body>other</body></html>\n")
    srv.get_ok("/page.html")
    srv.get_ok("/other.html")
    srv.wait_recorded("/page.html", "/other.html")
    listed = len(srv.urls())
    crawl(srv, "/page.html", CRAWLER_IP)
    crawl(srv, "/page.html", FAKE_IP)
    wait_figures(srv, verified_hits=1, unverified_hits=1, crawled_30d=1)

    today = int(time.time()) // 86400
    # The writer took yesterday's mark (crawler ''), once.
    deadline = time.monotonic() + WAIT
    while not srv.query("SELECT 1 FROM crawl_days WHERE crawler = ''"
                        " AND day = ?", (today - 1,)):
        assert time.monotonic() < deadline, srv.log_tail(20)
        time.sleep(0.1)
    site_id = srv.query("SELECT id FROM sites WHERE base = ?",
                        (srv.base,))[0][0]
    with as_run_user():
        con = sqlite3.connect(srv.db_path, timeout=5)
        con.executemany("INSERT OR REPLACE INTO crawl_days VALUES"
                        " (?, 'Googlebot', ?, ?, ?)",
                        [(site_id, today - 3, 4, 1), (site_id, today - 2, 4, 2),
                         (site_id, today - 40, 4, 4)])
        con.commit()
        con.close()

    r = srv.get("/sitemap-status")
    assert r.status == 200
    html = r.body.decode()
    assert "<script" not in html
    rows = dict(re.findall(r'<tr data-key="(\w+)"><th scope="row">[^<]*</th>'
                           r'<td>([^<]*)</td></tr>', html))
    assert rows["verified_hits"] == "1" and rows["unverified_hits"] == "1"
    assert rows["listed_urls"] == str(listed)
    assert rows["crawled_30d"] == "1" and rows["never_crawled"] == str(listed - 1)
    assert rows["last_sitemap_fetch"] == "never"

    svg = re.search(r'<svg[^>]*aria-labelledby="cov0-0".*?</svg>', html, re.S)
    assert svg, html
    root = ET.fromstring(svg.group(0))          # well-formed SVG
    ns = "{http://www.w3.org/2000/svg}"
    title = root.find(ns + "title").text
    now_pct = f"{100 // listed}%"
    assert title.startswith("Coverage by Googlebot per day, last 30 days")
    assert title.endswith(f"today {now_pct}")
    bars = [r.find(ns + "title").text for r in root.findall(ns + "rect")
            if r.get("class") == "cov"]
    # Day 40 is outside the chart; days without figures have no bar.
    assert bars == [f"{day_name(today - 3)}: 25% (1 of 4)",
                    f"{day_name(today - 2)}: 50% (2 of 4)",
                    f"{day_name(today)}: {now_pct} (1 of {listed})"], bars
    # The text alternative: the same figures, newest first.
    table = re.search(r'<table class="coverage-days">(.*?)</table>', html,
                      re.S).group(1)
    days = re.findall(r'<tr><th scope="row">([\d-]+)</th><td>(\d+)</td>'
                      r'<td>(\d+)</td><td>([^<]+)</td></tr>', table)
    # (Yesterday's was taken at start-up, before Googlebot came: no row.)
    assert [d[0] for d in days] == [day_name(today), day_name(today - 2),
                                    day_name(today - 3)]
    assert days[0][1:] == (str(listed), "1", now_pct)
    assert days[1][1:] == ("4", "2", "50%")

    # In a browser: the chart is drawn (its bars' blue is on the page; a
    # tall window, the chart being below the site's own figures).
    if CHROMIUM:
        shot = tmp_path / "coverage.png"
        chromium(tmp_path, "--window-size=1000,2400", f"--screenshot={shot}",
                 srv.base + "/sitemap-status")
        assert bytes.fromhex("1c7ed6") in png_colours(shot)
