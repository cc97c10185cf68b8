# SPDX-License-Identifier: Apache-2.0
"""Rows read back from the store are checked before they reach the XML.

Whoever can write the store (the server's User, an administrator with the
sqlite3 command) controls the stored text.  A row that the URL normaliser
could not have written (a control byte, invalid UTF-8, no leading '/',
a character it always encodes, longer than the 2,048 characters a URL may
have) is left out of the document and logged, at
most once a minute per process; the document stays valid."""
import os
import sqlite3
import subprocess

from conftest import SITEMAPCTL, as_run_user
from sitemap_check import check_document


# (what replaces the URL, by SQL expression)
TAMPERED = {
    "/b.html": "'/b' || char(1) || '.html'",           # a control byte
    "/c.html": "CAST(X'2F63FF2E68746D6C' AS TEXT)",    # invalid UTF-8
    "/d.html": "'d.html'",                              # no leading '/'
    "/e.html": "'/e<x>.html'",                          # never literal
    # longer than any URL stored (base + URL <= 2,048; the schema's limit)
    "/f.html": "'/f' || replace(hex(zeroblob(1500)), '0', 'x') || '.html'",
}
LEFT_OUT = r"store .*: 5 rows of .* left out of /sitemap.xml, not being a URL as the module stores them"


def tamper(srv):
    with as_run_user():
        con = sqlite3.connect(srv.db_path, timeout=5)
        try:
            for url, expr in TAMPERED.items():
                assert con.execute(f"UPDATE urls SET url = {expr} WHERE url = ?",
                                   (url,)).rowcount == 1, url
            con.commit()
        finally:
            con.close()


def test_tampered_rows_are_left_out(make_server):
    srv = make_server(mpm="prefork", mpm_conf="StartServers 1\nMinSpareServers 1\n"
                      "MaxSpareServers 1\nMaxRequestWorkers 1\n")
    srv.expect_log(LEFT_OUT)
    for n in "abcdef":
        srv.write(f"htdocs/{n}.html", "<html></html>\n")
    srv.start()
    for n in "abcdef":
        srv.get_ok(f"/{n}.html")
    srv.wait_recorded(*(f"/{n}.html" for n in "abcdef"))
    tamper(srv)

    for _ in range(5):
        r = srv.get_ok("/sitemap.xml")
        check_document(r.body, srv.base)
        assert r.body.count(b"<url>") == 1, r.body
        assert f"<loc>{srv.base}/a.html</loc>".encode() in r.body
    # logged once (one process, five requests within the minute)
    srv.wait_log(LEFT_OUT, module="sitemap", level="warn")
    assert len([ln for ln in srv.log_lines("sitemap", "warn")
                if "left out" in ln]) == 1
    assert "\\x01" in srv.log_text()    # the first bad row, made printable

    # sitemapctl export writes the same, and says so
    out = os.path.join(srv.root, "export")
    r = subprocess.run([SITEMAPCTL, "export", srv.db_path, "--site", srv.base, out],
                       capture_output=True, text=True, errors="replace")
    assert r.returncode == 0, r.stderr
    assert "5 rows of the store left out" in r.stderr, r.stderr
    with open(os.path.join(out, "sitemap.xml"), "rb") as f:
        assert f.read() == srv.get_ok("/sitemap.xml").body
