# SPDX-License-Identifier: Apache-2.0
"""Crawl coverage (issue 36): SitemapCrawler, a crawler's verified and
unverified fetches, and the status page's "crawlers" figures."""
import json

import pytest


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
