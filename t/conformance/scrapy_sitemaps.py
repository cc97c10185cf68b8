# SPDX-License-Identifier: Apache-2.0
"""t/conformance/scrapy_sitemaps.py: the page URLs Scrapy's SitemapSpider
finds when started from a live server's robots.txt.

    /usr/bin/python3 scrapy_sitemaps.py ROBOTS_URL

Runs two crawls in one CrawlerProcess: "gzip" (Scrapy's default
HttpCompressionMiddleware: Accept-Encoding: gzip, deflate) and "identity"
(COMPRESSION_ENABLED False: no Accept-Encoding).  The spider follows
robots.txt to the sitemaps and indexes as Scrapy does, and records the page
requests it yields instead of fetching them.  Prints one JSON object:
{crawl: {"urls": [...], "sitemaps": [...], "accept_encoding": [...],
"warnings": N, "errors": N}}."""
import json
import sys

from scrapy.crawler import CrawlerProcess
from scrapy.spiders import SitemapSpider


def spider_class(name, robots_url, compression, out):
    class Spider(SitemapSpider):
        sitemap_urls = [robots_url]
        custom_settings = {"COMPRESSION_ENABLED": compression}

        def _parse_sitemap(self, response):
            out["sitemaps"].append(response.url)
            ae = response.request.headers.get("Accept-Encoding")
            out["accept_encoding"].append(ae.decode() if ae else None)
            for req in super()._parse_sitemap(response):
                if getattr(req.callback, "__name__", "") == "_parse_sitemap":
                    yield req
                else:
                    out["urls"].append(req.url)

    Spider.name = name
    return Spider


def main():
    robots_url = sys.argv[1]
    results = {}
    process = CrawlerProcess(settings={
        "LOG_LEVEL": "WARNING",
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "RETRY_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 15,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    })
    crawlers = {}
    for name, compression in (("gzip", True), ("identity", False)):
        out = results[name] = {"urls": [], "sitemaps": [], "accept_encoding": []}
        crawler = process.create_crawler(spider_class(name, robots_url, compression, out))
        crawlers[name] = crawler
        process.crawl(crawler)
    process.start()
    for name, crawler in crawlers.items():
        stats = crawler.stats.get_stats()
        results[name]["warnings"] = stats.get("log_count/WARNING", 0)
        results[name]["errors"] = stats.get("log_count/ERROR", 0)
    sys.stdout.write(json.dumps(results) + "\n")


if __name__ == "__main__":
    main()
