# SPDX-License-Identifier: Apache-2.0
"""robots.txt: every site with `Sitemap On` advertises its sitemap there.

SitemapRobots (default On) adds `Sitemap: <absolute sitemap URL>` lines
to whatever answers /robots.txt (a file, a CGI, a proxied backend, a body
split over many buckets), once per URL, leaving the rest byte for byte: at
the end of a body of up to 64 KiB, at the start (after a BOM) of a longer
one; SitemapRobotsExtra adds more URLs; SitemapRobotsFallback (default On)
answers a permissive robots.txt when the site has none.

Every answer is checked four ways: the exact bytes (the original body plus
the expected added bytes), Python's urllib.robotparser, Protego and Scrapy's
sitemap_urls_from_robots (all must list the expected sitemap URLs)."""
import gzip
import http.server
import os
import time
import urllib.parse
import urllib.robotparser

import protego
import pytest
from scrapy.utils.sitemap import sitemap_urls_from_robots

PLAIN = b"User-agent: *\nDisallow: /private/\n"
HOLD = 64 * 1024            # SM_ROBOTS_HOLD: longer bodies get the lines first
BOM = b"\xef\xbb\xbf"


# ---------------------------------------------------------------------------
# helpers

def sm_url(srv, host="127.0.0.1", path="/sitemap.xml"):
    return f"http://{host}:{srv.port}{path}"


def appended(original, urls, eol=b"\n"):
    """What the module must serve for original: up to HOLD bytes, a line
    end when the body does not end with one, then one line per URL; a
    longer body gets the lines at its start (after a BOM), ending like its
    first line (eol is then ignored), and after a BOM on a line of their
    own (urllib and Protego would read the BOM as part of the first line)."""
    if len(original) > HOLD:
        first = original.split(b"\n", 1)[0]
        eol = b"\r\n" if first.endswith(b"\r") else b"\n"
        add = b"".join(b"Sitemap: " + u.encode() + eol for u in urls)
        bom = BOM + eol if original.startswith(BOM) else b""
        return bom + add + original[len(bom) and 3:]
    add = b"".join(b"Sitemap: " + u.encode() + eol for u in urls)
    if add and original and not original.endswith(b"\n"):
        add = eol + add
    return original + add


def parsed_sitemaps(body):
    """The sitemaps urllib.robotparser, Protego and Scrapy read in body,
    decoded as each does (UTF-8, a byte order mark kept as a character)."""
    text = body.decode("utf-8")
    rp = urllib.robotparser.RobotFileParser()
    rp.parse(text.splitlines())
    return (list(rp.site_maps() or []), list(protego.Protego.parse(text).sitemaps),
            list(sitemap_urls_from_robots(text)))


def check_parsers(body, urls):
    parsed = parsed_sitemaps(body)
    for u in urls:
        for name, got in zip(("urllib.robotparser", "protego", "scrapy"), parsed):
            # (urllib.robotparser %-decodes every value it reads)
            want = urllib.parse.unquote(u) if name == "urllib.robotparser" else u
            assert want in got, f"{name} does not list {want}: {got}"
    return parsed


def check_length(r):
    cl = r.header("Content-Length")
    if cl is not None:
        assert int(cl) == len(r.body), f"Content-Length {cl} for {len(r.body)} bytes"
    assert r.header("Content-MD5") is None


def check_robots(r, original, urls, eol=b"\n"):
    """The whole answer: 200, the exact bytes, a right Content-Length and
    both parsers listing every URL."""
    assert r.status == 200, r
    want = appended(original, urls, eol)
    assert r.body == want, f"\nwant {want[-300:]!r}\ngot  {r.body[-300:]!r}"
    check_length(r)
    check_parsers(r.body, urls)
    for u in urls:
        assert sitemap_lines(r.body).count(u) == 1, r.body[-300:]


def sitemap_lines(body):
    """The URLs of the body's exact `Sitemap: URL` lines."""
    return [ln[9:].decode() for ln in body.replace(b"\r\n", b"\n").split(b"\n")
            if ln.startswith(b"Sitemap: ")]


def check_untouched(r, original, status=200):
    assert r.status == status, r
    assert r.body == original, f"\nwant {original[-300:]!r}\ngot  {r.body[-300:]!r}"
    check_length(r)


def robots(srv, content, mode=0o644, mtime=None):
    # (a file changed less than a second ago gets a weak ETag from httpd:
    # the conditional tests use an older one)
    return srv.write("htdocs/robots.txt", content, mode=mode, mtime=mtime)


OLD = time.time() - 3600


def headers_but_date(r):
    return sorted((k.lower(), v) for k, v in r.headers if k.lower() != "date")


# ---------------------------------------------------------------------------
# static files

STATIC_CASES = {
    "final-newline": (PLAIN, b"\n"),
    "no-final-newline": (b"User-agent: *\nDisallow: /private/", b"\n"),
    "crlf": (b"User-agent: *\r\nDisallow: /private/\r\n", b"\r\n"),
    "crlf-no-final-newline": (b"User-agent: *\r\nDisallow: /private/", b"\r\n"),
    "bom": (b"\xef\xbb\xbfUser-agent: *\nDisallow: /private/\n", b"\n"),
    "comments-and-groups": (b"# robots\n\nUser-agent: Googlebot\nDisallow: /nogoogle/"
                            b" # trailing\n\nUser-agent: *\nAllow: /\n", b"\n"),
    "one-line-no-newline": (b"User-agent: *", b"\n"),
    "empty": (b"", b"\n"),
}


@pytest.mark.parametrize("case", list(STATIC_CASES))
def test_static_robots_gets_the_line(make_server, case):
    original, eol = STATIC_CASES[case]
    srv = make_server()
    robots(srv, original)
    srv.start()
    url = sm_url(srv)
    r = srv.get("/robots.txt")
    check_robots(r, original, [url], eol)
    assert r.header("Content-Type", "").startswith("text/plain")
    # the resource itself is not changed, and the answer is stable
    with open(srv.path("htdocs/robots.txt"), "rb") as f:
        assert f.read() == original
    assert srv.get("/robots.txt").body == r.body
    # HTTP/1.0 (no chunking possible) gives the same bytes
    r10 = srv.get("/robots.txt", version="HTTP/1.0")
    check_robots(r10, original, [url], eol)


PRESENT_CASES = [
    "Sitemap: {u}\n",
    "sitemap: {u}\n",
    "SITEMAP:{u}\n",
    "SiteMap:  {u}  \n",
    "\t sItEmAp:\t{u}\t\r\n",
    "Sitemap: {u}",                       # last line, no line end
]


@pytest.mark.parametrize("line", PRESENT_CASES)
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_same_sitemap_line_already_present_is_not_added(make_server, line, where):
    srv = make_server()
    url = sm_url(srv)
    mine = line.format(u=url).encode()
    if not mine.endswith(b"\n") and where != "last":
        mine += b"\n"
    parts = {"first": [mine, PLAIN], "middle": [b"User-agent: *\n", mine, b"Disallow: /x\n"],
             "last": [PLAIN, mine]}[where]
    original = b"".join(parts)
    robots(srv, original)
    srv.start()
    r = srv.get("/robots.txt")
    check_untouched(r, original)
    check_parsers(r.body, [url])


# Lines some parser does not read as our Sitemap URL: ours is added.
DOUBTFUL_CASES = {
    "bom": "\ufeffSitemap: {u}\n",                 # urllib, Protego: another field
    "blank-before-colon": "SITEMAP :\t{u}  \n",    # Scrapy skips it
    "tab-before-colon": "Sitemap\t: {u}\n",
    "comment-after": "Sitemap: {u} # ours\n",       # Scrapy keeps the comment
    "no-colon": "Sitemap {u}\n",                    # only Google and Protego
    "vertical-tab": "Sitemap:\v{u}\n",             # Python splits the line there
}


@pytest.mark.parametrize("case", list(DOUBTFUL_CASES))
def test_sitemap_line_some_parser_misreads_gets_ours(make_server, case):
    srv = make_server()
    url = sm_url(srv)
    original = DOUBTFUL_CASES[case].format(u=url).encode() + b"User-agent: *\nDisallow:\n"
    robots(srv, original)
    srv.start()
    r = srv.get("/robots.txt")
    check_robots(r, original, [url])


@pytest.mark.parametrize("other", [
    "Sitemap: http://example.com/other-sitemap.xml\n",
    "Sitemap: {u}.gz\n",                              # a longer URL
    "Sitemap: {u}?page=2\n",
    "Sitemap: https://127.0.0.1:{p}/sitemap.xml\n",   # other scheme
    "# Sitemap: {u}\n",                               # a comment is not a line
    "Disallow: {u}\n",
    "Sitemaps: {u}\n",
])
def test_different_sitemap_line_keeps_ours(make_server, other):
    srv = make_server()
    url = sm_url(srv)
    line = other.format(u=url, p=srv.port).encode()
    original = PLAIN + line
    robots(srv, original)
    srv.start()
    r = srv.get("/robots.txt")
    check_robots(r, original, [url])
    if line.startswith(b"Sitemap: "):
        check_parsers(r.body, [line[9:].decode().strip()])


def test_long_lines_before_the_present_line(make_server):
    srv = make_server()
    url = sm_url(srv)
    original = (PLAIN + b"# " + b"x" * 20000 + b"\n" + b"Disallow: /" + b"y" * 9000
                + b"\nSitemap: " + url.encode() + b"\n" + b"# " + b"z" * 5000)
    robots(srv, original)
    srv.start()
    check_untouched(srv.get("/robots.txt"), original)


def test_query_string_and_other_paths(make_server):
    srv = make_server()
    robots(srv, PLAIN)
    srv.write("htdocs/sub/robots.txt", PLAIN)
    srv.write("htdocs/robots.txt.bak", PLAIN)
    srv.start()
    check_robots(srv.get("/robots.txt?x=1"), PLAIN, [sm_url(srv)])
    check_untouched(srv.get("/sub/robots.txt"), PLAIN)
    check_untouched(srv.get("/robots.txt.bak"), PLAIN)


# ---------------------------------------------------------------------------
# HTTP: ETag, 304, HEAD, Range

def test_etag_conditional_head_and_range(make_server):
    srv = make_server()
    original = PLAIN + b"Allow: /public/\n"
    robots(srv, original, mtime=OLD)
    # a hard link serves the same file unmodified: its ETag is the file's own
    os.link(srv.path("htdocs/robots.txt"), srv.path("htdocs/orig.txt"))
    srv.start()
    url = sm_url(srv)
    want = appended(original, [url])

    orig = srv.get_ok("/orig.txt")
    assert orig.body == original
    file_etag = orig.header("ETag")
    assert file_etag

    r = srv.get("/robots.txt")
    check_robots(r, original, [url])
    etag = r.header("ETag")
    assert etag and etag != file_etag, (etag, file_etag)
    assert etag.startswith('"'), etag
    assert srv.get("/robots.txt").header("ETag") == etag     # stable
    last_modified = r.header("Last-Modified")

    # HEAD: the same headers as GET (Date aside), no body
    h = srv.request("HEAD", "/robots.txt")
    assert h.status == 200
    assert headers_but_date(h) == headers_but_date(r)

    # If-None-Match with our ETag: 304 with that same ETag
    nm = srv.get("/robots.txt", headers={"If-None-Match": etag})
    assert nm.status == 304, nm
    assert nm.body == b""
    assert nm.header("ETag") == etag
    nm = srv.get("/robots.txt", headers={"If-None-Match": f'"nope", {etag}'})
    assert nm.status == 304 and nm.header("ETag") == etag
    # ... with the file's own ETag: it names another body: 200 in full
    full = srv.get("/robots.txt", headers={"If-None-Match": file_etag})
    check_robots(full, original, [url])
    assert full.header("ETag") == etag
    # ... with an unrelated one
    check_robots(srv.get("/robots.txt", headers={"If-None-Match": '"x"'}),
                 original, [url])
    # If-Modified-Since alone still works
    if last_modified:
        ims = srv.get("/robots.txt", headers={"If-Modified-Since": last_modified})
        assert ims.status == 304 and ims.header("ETag") == etag
    # HEAD with If-None-Match
    h304 = srv.request("HEAD", "/robots.txt", headers={"If-None-Match": etag})
    assert h304.status == 304 and h304.header("ETag") == etag

    # Range: bytes of the modified body
    for spec, lo, hi in [("bytes=0-9", 0, 9), (f"bytes={len(original) - 3}-", len(original) - 3, len(want) - 1),
                         ("bytes=-20", len(want) - 20, len(want) - 1)]:
        rr = srv.get("/robots.txt", headers={"Range": spec})
        assert rr.status == 206, (spec, rr)
        assert rr.body == want[lo:hi + 1], (spec, rr.body, want[lo:hi + 1])
        assert rr.header("Content-Range") == f"bytes {lo}-{hi}/{len(want)}", (spec, rr)
        assert int(rr.header("Content-Length")) == hi - lo + 1


def etags(srv, original):
    """(the file's own ETag, the ETag of /robots.txt)"""
    robots(srv, original, mtime=OLD)
    os.link(srv.path("htdocs/robots.txt"), srv.path("htdocs/orig.txt"))
    srv.start()
    file_etag = srv.get_ok("/orig.txt").header("ETag")
    etag = srv.get_ok("/robots.txt").header("ETag")
    assert file_etag and etag and file_etag != etag
    assert not etag.startswith("W/"), etag
    return file_etag, etag


def test_if_range_with_our_etag_gives_the_range(make_server):
    srv = make_server()
    file_etag, etag = etags(srv, PLAIN)
    want = appended(PLAIN, [sm_url(srv)])
    ir = srv.get("/robots.txt", headers={"Range": "bytes=-20", "If-Range": etag})
    assert ir.status == 206 and ir.body == want[-20:], (ir, ir.body)
    assert ir.header("Content-Range") == f"bytes {len(want) - 20}-{len(want) - 1}/{len(want)}"


def test_if_range_with_another_etag_gives_the_whole_body(make_server):
    # the file's own ETag names the body without our line: a client that
    # holds part of that must not be sent a range of ours
    srv = make_server()
    file_etag, etag = etags(srv, PLAIN)
    for other in (file_etag, '"something-else"'):
        ir = srv.get("/robots.txt", headers={"Range": "bytes=-20", "If-Range": other})
        check_robots(ir, PLAIN, [sm_url(srv)])


def test_if_match(make_server):
    srv = make_server()
    file_etag, etag = etags(srv, PLAIN)
    check_robots(srv.get("/robots.txt", headers={"If-Match": etag}), PLAIN, [sm_url(srv)])
    check_robots(srv.get("/robots.txt", headers={"If-Match": "*"}), PLAIN, [sm_url(srv)])
    # no current representation has the file's ETag (nor "x"): 412
    got = {other: srv.get("/robots.txt", headers={"If-Match": other}).status
           for other in (file_etag, '"x"')}
    assert got == {file_etag: 412, '"x"': 412}


def test_etag_changes_with_the_file(make_server):
    srv = make_server()
    robots(srv, PLAIN)
    srv.start()
    a = srv.get("/robots.txt")
    robots(srv, PLAIN + b"Disallow: /more/\n")
    b = srv.get("/robots.txt")
    check_robots(b, PLAIN + b"Disallow: /more/\n", [sm_url(srv)])
    assert a.header("ETag") != b.header("ETag")
    assert srv.get("/robots.txt", headers={"If-None-Match": a.header("ETag")}).status == 200


def test_denied_robots_is_untouched(make_server):
    srv = make_server(conf='<Location "/robots.txt">\n    Require all denied\n</Location>\n'
                           'ErrorDocument 403 "denied here"\n')
    srv.expect_log(r"AH01630: client denied by server configuration: .*/robots\.txt")
    robots(srv, PLAIN)
    srv.start()
    r = srv.get("/robots.txt")
    check_untouched(r, b"denied here", status=403)


def test_error_status_from_a_cgi_is_untouched(make_server):
    srv = make_server()
    srv.conf_text = f'ScriptAlias /robots.txt "{srv.root}/cgi-bin/robots.sh"\n'
    body = "User-agent: *\nDisallow: /\n"
    srv.cgi("robots.sh", "printf 'Status: 503 Busy\\nContent-Type: text/plain\\n\\n'\n"
                         f"printf '{body}'\n")
    srv.start()
    check_untouched(srv.get("/robots.txt"), body.encode(), status=503)


# ---------------------------------------------------------------------------
# Content-Encoding gzip: decoded, the lines added, sent as text (an encoding
# filter after the module compresses it again for the clients that take
# it: see test_every_client.py); other codings pass untouched

GZ = gzip.compress(PLAIN, mtime=0)


def check_decoded(srv, r):
    assert r.header("Content-Encoding") is None, r
    check_robots(r, PLAIN, [sm_url(srv)])


def test_cgi_with_content_encoding_is_decoded(make_server):
    srv = make_server()
    srv.conf_text = f'ScriptAlias /robots.txt "{srv.root}/cgi-bin/robots.sh"\n'
    srv.write("cgi-bin/robots.gz", GZ)
    srv.cgi("robots.sh", "printf 'Content-Type: text/plain\\nContent-Encoding: gzip\\n\\n'\n"
                         f"cat '{srv.root}/cgi-bin/robots.gz'\n")
    srv.start()
    check_decoded(srv, srv.get("/robots.txt"))


def test_static_gzip_by_addencoding_is_decoded(make_server):
    # /robots.txt is a gzip file: mod_mime gives it its Content-Encoding
    # (and mime.types application/gzip, which becomes text/plain)
    srv = make_server()
    srv.write("htdocs/robots.txt.gz", GZ)
    srv.conf_text = (f'Alias /robots.txt "{srv.docroot}/robots.txt.gz"\n'
                     "AddEncoding gzip .gz\n")
    srv.start()
    r = srv.get("/robots.txt")
    check_decoded(srv, r)
    assert r.header("Content-Type").startswith("text/plain"), r.headers


def test_static_gzip_by_multiviews_is_decoded(make_server):
    srv = make_server()
    srv.write("htdocs/robots.txt.gz", GZ)
    srv.conf_text = (f'<Directory "{srv.docroot}">\n    Options +MultiViews\n</Directory>\n'
                     "AddEncoding gzip .gz\n")
    srv.extra_modules = ("negotiation",)
    srv.start()
    check_decoded(srv, srv.get("/robots.txt", headers={"Accept-Encoding": "gzip"}))


def test_other_coding_is_untouched(make_server):
    srv = make_server()
    srv.write("htdocs/robots.txt.br", b"\x0b\x02\x80not-really-brotli")
    srv.conf_text = (f'Alias /robots.txt "{srv.docroot}/robots.txt.br"\n'
                     "AddEncoding br .br\n")
    srv.start()
    r = srv.get("/robots.txt")
    assert r.header("Content-Encoding") == "br", r
    check_untouched(r, b"\x0b\x02\x80not-really-brotli")


def test_static_gzip_by_header_set_is_untouched(make_server):
    srv = make_server()
    robots(srv, GZ)
    srv.conf_text = ('<Location "/robots.txt">\n'
                     '    Header set Content-Encoding gzip\n</Location>\n')
    srv.start()
    r = srv.get("/robots.txt")
    assert r.header("Content-Encoding") == "gzip", r
    check_untouched(r, GZ)
    assert gzip.decompress(r.body) == PLAIN


# ---------------------------------------------------------------------------
# CGI: streamed (chunked), with a Content-Length, as a handler in <Files>

def big_lines(n):
    return b"".join(b"Disallow: /dir-%06d/\n" % i for i in range(n))


def test_cgi_chunked(make_server):
    srv = make_server()
    srv.conf_text = f'ScriptAlias /robots.txt "{srv.root}/cgi-bin/robots.sh"\n'
    n = 6000
    # more than the filter's 64 KB pass size: the answer is streamed
    srv.cgi("robots.sh", "printf 'Content-Type: text/plain\\n\\n'\n"
                         "printf 'User-agent: *\\n'\n"
                         f"seq -f 'Disallow: /dir-%06g/' 0 {n - 1}\n"
                         "printf 'Allow: /end'\n")
    srv.start()
    original = b"User-agent: *\n" + big_lines(n) + b"Allow: /end"
    r = srv.get("/robots.txt")
    assert (r.header("Transfer-Encoding") or "").lower() == "chunked", r
    assert r.header("Content-Length") is None
    check_robots(r, original, [sm_url(srv)])


@pytest.mark.parametrize("before", [1000, 4000], ids=["in-the-held-head", "after-it"])
def test_cgi_chunked_with_the_line_in_the_middle(make_server, before):
    # 1000 lines (20 kB) before the line: it is seen before the lines are
    # placed, and the body is left alone; 4000 (80 kB): the lines went at
    # the start before it came by (a duplicate Sitemap line is harmless)
    srv = make_server()
    srv.conf_text = f'ScriptAlias /robots.txt "{srv.root}/cgi-bin/robots.sh"\n'
    url = sm_url(srv)
    srv.cgi("robots.sh", "printf 'Content-Type: text/plain\\n\\n'\n"
                         f"seq -f 'Disallow: /a-%06g/' 0 {before - 1}\n"
                         f"printf 'sitemap: {url}\\r\\n'\n"
                         "seq -f 'Disallow: /b-%06g/' 0 3999\n")
    srv.start()
    original = (b"".join(b"Disallow: /a-%06d/\n" % i for i in range(before))
                + b"sitemap: " + url.encode() + b"\r\n"
                + b"".join(b"Disallow: /b-%06d/\n" % i for i in range(4000)))
    r = srv.get("/robots.txt")
    if before * 20 < HOLD:
        check_untouched(r, original)
    else:
        check_robots(r, original, [url])
    check_parsers(r.body, [url])


@pytest.mark.parametrize("extra", [0, 1])
def test_lines_at_the_end_up_to_the_hold_then_at_the_start(make_server, extra):
    # a body of exactly HOLD bytes gets the lines at its end, one byte more
    # at its start (after the BOM, ending like the first line)
    srv = make_server()
    url = sm_url(srv)
    head = BOM + b"User-agent: *\r\n"
    filler = b"Disallow: /x\n" * HOLD
    original = head + filler[:HOLD + extra - len(head) - 1] + b"\n"
    assert len(original) == HOLD + extra
    robots(srv, original)
    srv.start()
    r = srv.get("/robots.txt")
    check_robots(r, original, [url])
    line = b"Sitemap: " + url.encode()
    if extra:
        assert r.body.startswith(BOM + b"\r\n" + line + b"\r\n"), r.body[:100]
    else:
        assert r.body.endswith(b"\n" + line + b"\n"), r.body[-100:]


def test_google_reads_the_line_in_its_first_500_kib(make_server):
    # Google reads the first 500 KiB (512,000 bytes) of a robots.txt
    srv = make_server(conf=("SitemapRobotsExtra https://cdn.example.com/more.xml\n"))
    url = sm_url(srv)
    original = b"User-agent: *\n" + big_lines(700 * 1024 // 22)
    robots(srv, original)
    srv.start()
    r = srv.get("/robots.txt")
    check_robots(r, original, [url, "https://cdn.example.com/more.xml"])
    window = r.body[:512000]
    for parsed in parsed_sitemaps(window):
        assert parsed == [url, "https://cdn.example.com/more.xml"], parsed


def test_cgi_with_content_length(make_server):
    srv = make_server()
    srv.conf_text = f'ScriptAlias /robots.txt "{srv.root}/cgi-bin/robots.sh"\n'
    body = b"User-agent: *\nDisallow: /cgi/"
    srv.cgi("robots.sh", "printf 'Content-Type: text/plain\\n"
                         f"Content-Length: {len(body)}\\n\\n'\n"
                         "printf 'User-agent: *\\nDisallow: /cgi/'\n")
    srv.start()
    url = sm_url(srv)
    r = srv.get("/robots.txt")
    check_robots(r, body, [url])
    h = srv.request("HEAD", "/robots.txt")
    assert h.status == 200
    assert headers_but_date(h) == headers_but_date(r), (h, r)


def test_cgi_as_handler_in_files(make_server):
    srv = make_server()
    srv.conf_text = (f'<Directory "{srv.docroot}">\n    Options +ExecCGI\n'
                     '    <Files "robots.txt">\n        AddHandler cgi-script .txt\n'
                     '    </Files>\n</Directory>\n')
    robots(srv, "#!/bin/sh\nprintf 'Content-Type: text/plain\\n\\n'\n"
                "printf 'User-agent: *\\r\\nDisallow: /gen/\\r\\n'\n", mode=0o755)
    srv.start()
    check_robots(srv.get("/robots.txt"), b"User-agent: *\r\nDisallow: /gen/\r\n",
                 [sm_url(srv)], eol=b"\r\n")


@pytest.mark.parametrize("how", ["server-PT", "directory"])
def test_cgi_behind_a_rewrite(make_server, how):
    # robots.txt answered by a script the site rewrites it to (as in the
    # usual "RewriteRule . /index.php" of a CMS that generates robots.txt)
    srv = make_server()
    if how == "server-PT":
        srv.conf_text = ("RewriteEngine On\n"
                         "RewriteRule ^/robots\\.txt$ /cgi-bin/robots.sh [PT]\n")
    else:
        srv.conf_text = (f'<Directory "{srv.docroot}">\n    RewriteEngine On\n'
                         "    RewriteRule ^robots\\.txt$ /cgi-bin/robots.sh [L]\n"
                         "</Directory>\n")
    srv.cgi("robots.sh", "printf 'Content-Type: text/plain\\n\\n'\n"
                         "printf 'User-agent: *\\nDisallow: /rw/\\n'\n")
    srv.start()
    check_robots(srv.get("/robots.txt"), b"User-agent: *\nDisallow: /rw/\n", [sm_url(srv)])


# ---------------------------------------------------------------------------
# a body split over many buckets, brigades and flushes (mod_bucketeer:
# \x02 ends a bucket, \x06 adds a flush, \x10 passes the brigade on; the
# control bytes themselves are dropped)

def test_body_split_over_buckets(make_server):
    srv = make_server(modules=("bucketeer",))
    url = sm_url(srv)
    srv.conf_text = '<Location "/robots.txt">\n    SetOutputFilter BUCKETEER\n</Location>\n'
    clean = (b"User-agent: *\r\nDisallow: /a/\r\n" + b"Disallow: /b/\r\n" * 50
             + b"Allow: /c")
    # a break between every byte of some lines, and flushes/passes elsewhere
    split = bytearray()
    for i, ch in enumerate(clean):
        split.append(ch)
        split += (b"\x02", b"\x06", b"\x10", b"")[i % 4]
    robots(srv, bytes(split))
    srv.start()
    check_robots(srv.get("/robots.txt"), clean, [url], eol=b"\r\n")


def test_present_line_split_over_buckets_is_not_added(make_server):
    srv = make_server(modules=("bucketeer",))
    url = sm_url(srv)
    srv.conf_text = '<Location "/robots.txt">\n    SetOutputFilter BUCKETEER\n</Location>\n'
    line = b"Sitemap: " + url.encode() + b"\r\n"
    clean = PLAIN + line + b"Disallow: /z/"
    split = PLAIN + b"\x02".join(bytes([c]) for c in line) + b"\x06Disallow:\x10 /z/"
    robots(srv, split)
    srv.start()
    check_untouched(srv.get("/robots.txt"), clean)


# ---------------------------------------------------------------------------
# a proxied backend (a Python http.server thread)

class Backend(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    body = PLAIN
    chunked = False
    encoding = None

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        if self.encoding:
            self.send_header("Content-Encoding", self.encoding)
        self.send_header("ETag", '"backend-1"')
        if self.chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(len(self.body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command == "HEAD":
            return
        if self.chunked:
            for i in range(0, len(self.body), 7):
                part = self.body[i:i + 7]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.wfile.write(self.body)

    do_HEAD = do_GET

    def log_message(self, *a):
        pass


@pytest.fixture
def backend(http_backend):
    def start(body, chunked, encoding=None):
        return http_backend(Backend, body=body, chunked=chunked,
                            encoding=encoding)
    return start


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_proxied_backend(make_server, backend, chunked):
    original = b"User-agent: *\nDisallow: /proxied/"
    port = backend(original, chunked)
    srv = make_server(modules=("proxy", "proxy_http"))
    srv.conf_text = f"ProxyPass /robots.txt http://127.0.0.1:{port}/robots.txt\n"
    srv.start()
    url = sm_url(srv)
    r = srv.get("/robots.txt")
    check_robots(r, original, [url])
    assert r.header("ETag") not in (None, '"backend-1"'), r
    check_head(srv, r)


def test_proxied_gzip_is_decoded(make_server, backend):
    port = backend(GZ, False, encoding="gzip")
    srv = make_server(modules=("proxy", "proxy_http"))
    srv.conf_text = f"ProxyPass /robots.txt http://127.0.0.1:{port}/robots.txt\n"
    srv.start()
    r = srv.get("/robots.txt")
    check_decoded(srv, r)
    # the backend's ETag names its gzip bytes, not these
    assert r.header("ETag") not in (None, '"backend-1"'), r


def check_head(srv, get):
    """HEAD: the GET's headers (Date aside); a Content-Length, when there
    is one, is the GET body's (HEAD may leave it out when not known, and
    then has no Transfer-Encoding either: there is no body to chunk)."""
    h = srv.request("HEAD", "/robots.txt")
    assert h.status == 200
    framing = ("content-length", "transfer-encoding")
    hh = [x for x in headers_but_date(h) if x[0] not in framing]
    gh = [x for x in headers_but_date(get) if x[0] not in framing]
    assert hh == gh, (h, get)
    cl = h.header("Content-Length")
    assert cl is None or int(cl) == len(get.body), (
        f"HEAD says Content-Length: {cl}, the GET body has {len(get.body)} bytes")


def test_head_from_a_cgi_that_sends_no_body_for_head(make_server):
    srv = make_server()
    srv.conf_text = f'ScriptAlias /robots.txt "{srv.root}/cgi-bin/robots.sh"\n'
    srv.cgi("robots.sh", "printf 'Content-Type: text/plain\\n\\n'\n"
                         '[ "$REQUEST_METHOD" = HEAD ] && exit 0\n'
                         "printf 'User-agent: *\\nDisallow: /cgi/\\n'\n")
    srv.start()
    r = srv.get("/robots.txt")
    check_robots(r, b"User-agent: *\nDisallow: /cgi/\n", [sm_url(srv)])
    check_head(srv, r)


# ---------------------------------------------------------------------------
# no robots.txt: the fallback

def test_fallback_when_there_is_no_robots_txt(make_server):
    srv = make_server()
    srv.start()
    url = sm_url(srv)
    r = srv.get("/robots.txt")
    check_robots(r, b"User-agent: *\nDisallow:\n", [url])
    assert r.header("Content-Type") == "text/plain; charset=utf-8"
    rp = urllib.robotparser.RobotFileParser()
    rp.parse(r.body.decode().splitlines())
    assert rp.can_fetch("AnyBot", "/any/page.html")
    assert protego.Protego.parse(r.body.decode()).can_fetch("/any/page.html", "AnyBot")
    h = srv.request("HEAD", "/robots.txt")
    assert h.status == 200 and headers_but_date(h) == headers_but_date(r)
    rr = srv.get("/robots.txt", headers={"Range": "bytes=0-12"})
    assert rr.status == 206 and rr.body == b"User-agent: *", rr
    # only /robots.txt
    assert srv.get("/other/robots.txt").status == 404
    assert srv.get("/robots.txt/x").status == 404


def test_fallback_off_gives_404(make_server):
    srv = make_server(conf="SitemapRobotsFallback Off\n")
    srv.start()
    r = srv.get("/robots.txt")
    assert r.status == 404
    assert b"Sitemap:" not in r.body
    # a real file still gets the line
    robots(srv, PLAIN)
    check_robots(srv.get("/robots.txt"), PLAIN, [sm_url(srv)])


def test_fallback_off_with_a_local_error_document(make_server):
    # the 404 page of a site without robots.txt gets no Sitemap line
    srv = make_server(conf="SitemapRobotsFallback Off\nErrorDocument 404 /missing.html\n")
    srv.write("htdocs/missing.html", "<html>not here</html>\n")
    srv.start()
    r = srv.get("/robots.txt")
    check_untouched(r, b"<html>not here</html>\n", status=404)


def test_fallback_with_extra_urls_and_sitemap_path(make_server):
    extra = ["https://cdn.example.com/news-sitemap.xml", "http://example.org/s.xml"]
    srv = make_server(conf="SitemapPath /maps/site.xml\n"
                           + "".join(f"SitemapRobotsExtra {u}\n" for u in extra))
    # a sitemap lists only URLs under its directory: /maps/ is the site
    srv.conf_text = f"SitemapBaseURL {srv.base}/maps/\n" + srv.conf_text
    srv.start()
    urls = [sm_url(srv, path="/maps/site.xml")] + extra
    check_robots(srv.get("/robots.txt"), b"User-agent: *\nDisallow:\n", urls)


# ---------------------------------------------------------------------------
# directives

def test_robots_off_leaves_robots_alone(make_server):
    srv = make_server(conf="SitemapRobots Off\n")
    robots(srv, PLAIN)
    os.link(srv.path("htdocs/robots.txt"), srv.path("htdocs/orig.txt"))
    srv.start()
    r = srv.get("/robots.txt")
    check_untouched(r, PLAIN)
    assert int(r.header("Content-Length")) == len(PLAIN)
    assert r.header("ETag") == srv.get("/orig.txt").header("ETag")
    os.unlink(srv.path("htdocs/robots.txt"))
    assert srv.get("/robots.txt").status == 404        # no fallback either


def test_sitemap_off_leaves_robots_alone(make_server):
    srv = make_server(sitemap=False)
    robots(srv, PLAIN)
    srv.start()
    check_untouched(srv.get("/robots.txt"), PLAIN)


def test_extra_urls(make_server):
    extra = ["https://www.example.com/news-sitemap.xml",
             "http://example.org:8080/a/b.xml?x=1"]
    srv = make_server()
    url = sm_url(srv)
    # our own URL given again is listed once
    srv.conf_text = "".join(f"SitemapRobotsExtra {u}\n" for u in extra + [url, extra[0]])
    # one of the extras is already there
    original = PLAIN + b"SITEMAP: " + extra[1].encode() + b"\n"
    robots(srv, original)
    srv.start()
    r = srv.get("/robots.txt")
    check_robots(r, original, [url, extra[0]])
    assert r.body.count(extra[0].encode()) == 1
    assert r.body.count(extra[1].encode()) == 1
    check_parsers(r.body, [url] + extra)


@pytest.mark.parametrize("value", ["/news-sitemap.xml", "news.xml",
                                   "ftp://example.com/s.xml", "http:///s.xml"])
def test_relative_extra_stops_startup(make_server, value):
    srv = make_server()
    srv.config_fails("SitemapRobotsExtra", value, "absolute http:// or https:// URL",
                     conf=f"SitemapRobotsExtra {value}\n")


# what a robots.txt line cannot carry as a URL: refused, never escaped
@pytest.mark.parametrize("value, why", [
    ("https://cdn.example.com/s.xml#top", "'#' starts a comment"),      # a comment to every parser
    ("https://cdn.example.com/a b.xml", "0x20"),
    ("https://cdn.example.com/a\tb.xml", "0x09"),
    ("https://cdn.example.com/caf\u00e9.xml", "0xC3"),
    ("https://cdn.example.com/<s>.xml", "0x3C"),
    ("https://cdn.example.com/s%g0.xml", "%-escape"),
    ("https://cdn.example.com/" + "a" * 2030, "2,048"),
], ids=["hash", "space", "tab", "non-ascii", "angle", "bad-escape", "too-long"])
def test_extra_a_robots_line_cannot_carry_stops_startup(make_server, value, why):
    srv = make_server()
    # (httpd escapes what it prints: a tab as \t, bytes over 0x7F as \xHH)
    shown = (value.replace("\t", "\\t").encode().decode("ascii", "backslashreplace")
             .replace("\\xe9", "\\xc3\\xa9"))
    srv.config_fails("SitemapRobotsExtra", shown, why, "RFC 3986",
                     conf=f'SitemapRobotsExtra "{value}"\n')


def test_extra_with_escapes_and_sub_delims_is_listed(make_server):
    extra = "https://cdn.example.com/caf%C3%A9/s;v=1.xml?a=b&c=(d)"
    srv = make_server(conf=f"SitemapRobotsExtra {extra}\n")
    srv.start()
    r = srv.get("/robots.txt")
    check_robots(r, b"User-agent: *\nDisallow:\n", [sm_url(srv), extra])


def test_base_url_is_used(make_server):
    srv = make_server(conf="SitemapBaseURL https://www.example.com\n")
    robots(srv, PLAIN)
    srv.start()
    check_robots(srv.get("/robots.txt"), PLAIN, ["https://www.example.com/sitemap.xml"])


def vhost(srv, name, extra=""):
    return f"""
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName {name}
    DocumentRoot "{srv.root}/{name}"
    <Directory "{srv.root}/{name}">
        Require all granted
    </Directory>
{extra}
</VirtualHost>
"""


def test_two_vhosts_get_their_own_line(make_server):
    srv = make_server()
    srv.write("a.test/robots.txt", PLAIN)
    srv.write("b.test/robots.txt", PLAIN)
    srv.write("c.test/robots.txt", PLAIN)
    srv.conf_text = (vhost(srv, "a.test")
                     + vhost(srv, "b.test", "    SitemapPath /b-map.xml\n"
                                            "    SitemapRobotsExtra http://b.example/x.xml\n")
                     + vhost(srv, "c.test", "    SitemapRobots Off\n"))
    srv.start()
    a = srv.get("/robots.txt", host="a.test")
    b = srv.get("/robots.txt", host="b.test")
    check_robots(a, PLAIN, [sm_url(srv, "a.test")])
    check_robots(b, PLAIN, [sm_url(srv, "b.test", "/b-map.xml"), "http://b.example/x.xml"])
    assert a.header("ETag") != b.header("ETag")
    check_untouched(srv.get("/robots.txt", host="c.test"), PLAIN)
    # the Host header never leaks into the line
    os.unlink(srv.path("a.test/robots.txt"))
    check_robots(srv.get("/robots.txt", host="a.test:1"), b"User-agent: *\nDisallow:\n",
                 [sm_url(srv, "a.test")])
    assert b"a.test:1/" not in srv.get("/robots.txt", host="a.test:1").body


# ---------------------------------------------------------------------------
# a 5 MB robots.txt is streamed

def vm_hwm_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for ln in f:
            if ln.startswith("VmHWM:"):
                return int(ln.split()[1])
    raise AssertionError("no VmHWM")


def test_big_robots_is_streamed(make_server):
    from conftest import children_of
    srv = make_server(mpm="prefork", mpm_conf=(
        "StartServers 1\nMinSpareServers 1\nMaxSpareServers 1\nServerLimit 1\n"
        "MaxRequestWorkers 1\nMaxConnectionsPerChild 0\n"))
    # httpd itself maps files of up to 4 MB to read them (page cache, which
    # counts in VmHWM with or without mod_sitemap): read() them instead,
    # so that the high-water mark shows what the process holds
    srv.conf_text = "EnableMMAP Off\n"
    url = sm_url(srv)
    original = b"User-agent: *\n" + big_lines(5 * 1024 * 1024 // 22) + b"# end"
    assert len(original) >= 5 * 1000 * 1000
    robots(srv, original)
    srv.write("htdocs/small.txt", PLAIN * 10)
    srv.start()
    kids = children_of(srv.pid)
    assert len(kids) == 1, kids
    child = kids[0]
    for _ in range(3):                      # warm the child up
        srv.get_ok("/small.txt")
        srv.get_ok("/page.html")
    before = vm_hwm_kb(child)
    r = srv.get("/robots.txt", timeout=30)
    after = vm_hwm_kb(child)
    assert children_of(srv.pid) == [child]
    assert r.status == 200
    assert r.body == appended(original, [url])
    check_length(r)
    assert r.body[:200].count(b"Sitemap: ") == 1
    check_parsers(r.body, [url])
    print(f"VmHWM {before} kB -> {after} kB")
    assert after - before < 3 * 1024, f"VmHWM grew by {after - before} kB"


# ---------------------------------------------------------------------------
# mod_deflate as Debian enables it (deflate.conf: text/plain and more, by
# mod_filter's AddOutputFilterByType): the lines are added before the body
# is compressed, whichever module is loaded first

DEBIAN_MODS = "/etc/apache2/mods-available"


NEWS = "https://cdn.example.com/news-sitemap.xml"


def deflate_server(make_server, order):
    include = f"Include {DEBIAN_MODS}/deflate.conf\nSitemapRobotsExtra {NEWS}\n"
    if order == "deflate-first":
        # LoadModule lines before mod_sitemap's, Debian's .so files
        return make_server(modules=("filter", "deflate"), conf=include)
    # after mod_sitemap's: Debian's own .load files
    return make_server(conf=f"Include {DEBIAN_MODS}/filter.load\n"
                            f"Include {DEBIAN_MODS}/deflate.load\n" + include)


@pytest.mark.parametrize("order", ["deflate-first", "sitemap-first"])
@pytest.mark.parametrize("what", ["file", "fallback", "long-file"])
def test_gzip_clients_get_the_line(make_server, order, what):
    srv = deflate_server(make_server, order)
    url = sm_url(srv)
    original = {"file": PLAIN * 8,        # well over deflate's 68-byte minimum
                "fallback": b"User-agent: *\nDisallow:\n",
                "long-file": b"User-agent: *\n" + big_lines(HOLD // 10)}[what]
    if what != "fallback":
        robots(srv, original, mtime=OLD)
    srv.start()
    urls = [url, NEWS]
    want = appended(original, urls)
    plain = srv.get("/robots.txt")
    check_robots(plain, original, urls)
    assert plain.header("Content-Encoding") is None
    gz = srv.get("/robots.txt", headers={"Accept-Encoding": "gzip"})
    assert gz.status == 200, gz
    assert gz.header("Content-Encoding") == "gzip", gz
    body = gzip.decompress(gz.body)
    assert body == want, f"\nwant {want[-200:]!r}\ngot  {body[-200:]!r}"
    check_parsers(body, urls)
    assert "Accept-Encoding" in (gz.header("Vary") or "")
    # revalidation never answers 304 for a body without the line
    etag = gz.header("ETag")
    if etag:
        assert "sitemap" in etag, etag
        again = srv.get("/robots.txt", headers={"Accept-Encoding": "gzip",
                                                "If-None-Match": etag})
        assert again.status in (200, 304), again
        if again.status == 200:
            assert gzip.decompress(again.body) == want
        else:
            assert again.header("ETag") == etag


# ---------------------------------------------------------------------------
# Last-Modified: the body changed when our lines did, not only when the file
# did; a copy older than the lines is never "not modified"

def http_date(t):
    import email.utils
    return email.utils.formatdate(t, usegmt=True)


def parse_date(s):
    import email.utils
    return email.utils.parsedate_to_datetime(s).timestamp()


def test_last_modified_is_when_the_lines_appeared(make_server):
    # a file an hour old, the lines only since this start: the file's date
    # would let a crawler keep a copy without them
    srv = make_server(conf="SitemapRobots Off\n")
    robots(srv, PLAIN, mtime=OLD)
    srv.start()
    before = srv.get("/robots.txt")
    check_untouched(before, PLAIN)
    assert before.header("Last-Modified") == http_date(int(OLD))
    time.sleep(1.1)
    t0 = int(time.time())
    srv.graceful(conf="SitemapRobots On\n")         # the lines appear
    url = sm_url(srv)
    r = srv.get("/robots.txt")
    check_robots(r, PLAIN, [url])
    lm = parse_date(r.header("Last-Modified"))
    assert t0 <= lm <= time.time(), (r.header("Last-Modified"), t0)
    # the copy from before: its date cannot make a 304
    for ims in (before.header("Last-Modified"), http_date(t0 - 1)):
        again = srv.get("/robots.txt", headers={"If-Modified-Since": ims})
        check_robots(again, PLAIN, [url])
        assert again.header("Last-Modified") == r.header("Last-Modified")
    # ... while the new date does, with the same validators as the 200
    nm = srv.get("/robots.txt", headers={"If-Modified-Since": r.header("Last-Modified")})
    assert nm.status == 304, nm
    assert nm.header("Last-Modified") == r.header("Last-Modified")
    assert nm.header("ETag") == r.header("ETag")
    h = srv.request("HEAD", "/robots.txt", headers={"If-Modified-Since": before.header("Last-Modified")})
    assert h.status == 200 and h.header("Last-Modified") == r.header("Last-Modified")
    # If-Range with the old date names the body without the line: all of it
    ir = srv.get("/robots.txt", headers={"Range": "bytes=0-3",
                                         "If-Range": before.header("Last-Modified")})
    check_robots(ir, PLAIN, [url])


def test_last_modified_moves_when_the_lines_change(make_server):
    srv = make_server()
    robots(srv, PLAIN, mtime=OLD)
    srv.start()
    url = sm_url(srv)
    first = srv.get("/robots.txt")
    check_robots(first, PLAIN, [url])
    assert parse_date(first.header("Last-Modified")) > OLD + 60
    assert srv.get("/robots.txt", headers={
        "If-Modified-Since": first.header("Last-Modified")}).status == 304
    time.sleep(1.1)
    srv.graceful(conf="SitemapRobotsExtra https://cdn.example.com/news.xml\n")
    urls = [url, "https://cdn.example.com/news.xml"]
    r = srv.get("/robots.txt", headers={"If-Modified-Since": first.header("Last-Modified")})
    check_robots(r, PLAIN, urls)
    assert parse_date(r.header("Last-Modified")) > parse_date(first.header("Last-Modified"))


def test_last_modified_of_a_newer_file_is_the_files(make_server):
    srv = make_server()
    srv.start()
    time.sleep(2.1)
    fm = int(time.time()) - 1          # after the start's second
    robots(srv, PLAIN, mtime=fm)
    r = srv.get("/robots.txt")
    check_robots(r, PLAIN, [sm_url(srv)])
    assert r.header("Last-Modified") == http_date(fm)
    nm = srv.get("/robots.txt", headers={"If-Modified-Since": http_date(fm)})
    assert nm.status == 304, nm
    # a copy from before the file changed (but after the lines): the
    # file's date decides
    old = srv.get("/robots.txt", headers={"If-Modified-Since": http_date(fm - 1)})
    check_robots(old, PLAIN, [sm_url(srv)])


def test_last_modified_of_a_cgi(make_server):
    # a script's own Last-Modified (older than the lines) moves up too
    srv = make_server()
    srv.conf_text = f'ScriptAlias /robots.txt "{srv.root}/cgi-bin/robots.sh"\n'
    srv.cgi("robots.sh", "printf 'Content-Type: text/plain\\n"
                         f"Last-Modified: {http_date(int(OLD))}\\n\\n'\n"
                         "printf 'User-agent: *\\nDisallow: /cgi/\\n'\n")
    srv.start()
    url = sm_url(srv)
    r = srv.get("/robots.txt")
    check_robots(r, b"User-agent: *\nDisallow: /cgi/\n", [url])
    assert parse_date(r.header("Last-Modified")) > OLD + 60
    old = srv.get("/robots.txt", headers={"If-Modified-Since": http_date(int(OLD))})
    check_robots(old, b"User-agent: *\nDisallow: /cgi/\n", [url])
