# SPDX-License-Identifier: Apache-2.0
"""The site's own robots.txt: a URL that "*", Googlebot or Bingbot may not
fetch is never listed (RFC 9309 matching); the rules are followed when
they change, from a file or from an application that makes robots.txt."""
import os
import time

import pytest
from protego import Protego

HTML = "<html><head><title>x</title></head><body>x</body></html>\n"

ROBOTS = """User-agent: *
Disallow: /private/
Allow: /private/open.html
Disallow: /*.cgi$

User-agent: Googlebot
Disallow: /nogoogle/
Disallow: /private/
Allow: /private/open
"""

PAGES = ["/private/a.html", "/private/open.html", "/nogoogle/a.html",
         "/public/a.html", "/index.html"]


def site(make_server, robots=ROBOTS):
    s = make_server()
    for p in PAGES:
        s.write("htdocs" + p, HTML)
    if robots is not None:
        s.write("htdocs/robots.txt", robots)
    return s


def test_disallowed_pages_not_listed(make_server):
    s = site(make_server)
    s.loglevel = "warn sitemap:trace1"
    s.start()
    for p in PAGES:
        s.get_ok(p)
    s.wait_recorded("/public/a.html", "/index.html", "/private/open.html")
    s.assert_not_recorded("/private/a.html", "/nogoogle/a.html")
    # the same verdicts as an RFC 9309 parser nobody here wrote (Protego;
    # urllib.robotparser takes the first match, not the longest)
    rp = Protego.parse(ROBOTS)
    for p in PAGES:
        listed = p in s.urls()
        assert listed == all(rp.can_fetch(s.base + p, a)
                             for a in ("*", "Googlebot", "bingbot")), p
    # the reason is logged (trace1, as every verdict)
    s.wait_log(r"robots\.txt line \d+ disallows it for (\*|googlebot)")


@pytest.mark.slow
def test_rules_followed_when_they_change(make_server):
    s = site(make_server, robots="User-agent: *\nDisallow:\n").start()
    s.get_ok("/public/a.html")
    s.wait_recorded("/public/a.html")
    # the file changes: the stored URL goes at its next request
    time.sleep(1.1)
    s.write("htdocs/robots.txt", "User-agent: bingbot\nDisallow: /public/\n")
    deadline = time.monotonic() + 15
    while "/public/a.html" in s.urls() and time.monotonic() < deadline:
        s.get_ok("/public/a.html")
        time.sleep(0.5)
    assert "/public/a.html" not in s.urls(), s.log_tail(20)
    # and comes back when allowed again (an empty robots.txt allows all)
    time.sleep(1.1)
    s.write("htdocs/robots.txt", "")
    deadline = time.monotonic() + 15
    while "/public/a.html" not in s.urls() and time.monotonic() < deadline:
        s.get_ok("/public/a.html")
        time.sleep(0.5)
    assert "/public/a.html" in s.urls(), s.log_tail(20)


# robots.txt made by an application (as WordPress's is), through a rewrite
ROBOTS_CGI = r"""
printf 'Content-Type: text/plain\r\n\r\n'
printf 'User-agent: *\nDisallow: /private/\n'
"""


def test_rules_of_a_generated_robots_txt(make_server):
    s = site(make_server, robots=None)
    s.conf_text = ("RewriteEngine On\n"
                   "RewriteRule ^/robots\\.txt$ /cgi-bin/robots.cgi [PT]\n")
    s.cgi("robots.cgi", ROBOTS_CGI)
    s.start()
    r = s.get_ok("/robots.txt")
    assert b"Disallow: /private/" in r.body and b"Sitemap:" in r.body, r.body
    s.get_ok("/private/a.html")
    s.get_ok("/public/a.html")
    s.wait_recorded("/public/a.html")
    s.assert_not_recorded("/private/a.html")


def test_no_robots_txt_lists_everything(make_server):
    s = site(make_server, robots=None).start()
    for p in PAGES:
        s.get_ok(p)
    s.wait_recorded(*PAGES)
    assert not os.path.exists(s.path("htdocs/robots.txt"))
