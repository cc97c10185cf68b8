# SPDX-License-Identifier: Apache-2.0
"""What a build says it has, and that a build without an optional part
(configure --without-postgresql, --without-indexnow) refuses to use it,
with the reason,
instead of failing later or taking the URI for a file.  tools/check runs
this file twice: in the normal build (every part) and in one configured
without them (t/features/run)."""
import os
import subprocess

from conftest import SITEMAPCTL, MODULE, build_has

EX_NO_STORE = 3
URI = "postgresql://sitemap@127.0.0.1:1/sitemap"


def version():
    return subprocess.run([SITEMAPCTL, "--version"], text=True,
                          stdout=subprocess.PIPE, check=True).stdout


def linked(lib):
    out = subprocess.run(["ldd", MODULE], text=True,
                         stdout=subprocess.PIPE, check=True).stdout
    return lib in out


def test_version_lists_the_stores():
    stores = [l for l in version().splitlines() if l.startswith("stores:")]
    assert len(stores) == 1, version()
    assert "sqlite" in stores[0].split()
    assert ("postgresql" in stores[0].split()) == build_has("postgresql")
    assert linked("libpq.so") == build_has("postgresql")


def test_postgresql_uri(make_server):
    srv = make_server()
    if build_has("postgresql"):
        # parsed by libpq's own parser at start-up
        srv.config_fails("SitemapDatabase", "cannot be used",
                         conf=f"SitemapDatabase {URI}?nosuch=1\n")
        return
    srv.config_fails("SitemapDatabase", URI, "--without-postgresql",
                     conf=f"SitemapDatabase {URI}\n")
    r = subprocess.run([SITEMAPCTL, "stats", URI], text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode == EX_NO_STORE, (r.returncode, r.stderr)
    assert "--without-postgresql" in r.stderr, r.stderr
    # and nothing was made at a path spelled like the URI
    assert not os.path.exists("postgresql:")


def test_version_says_indexnow():
    lines = [l for l in version().splitlines() if l.startswith("indexnow:")]
    assert lines == ["indexnow: " + ("yes" if build_has("indexnow") else "no")]
    assert linked("libcurl.so") == build_has("indexnow")


def test_indexnow_on(make_server):
    srv = make_server()
    key = "SitemapIndexNowKey 3f1e6c2a9b8d4e7f\n"
    if build_has("indexnow"):
        # a working build starts with it (and refuses a bad endpoint)
        srv.config_fails("SitemapIndexNowEndpoint", "ftp://x",
                         conf=key + "SitemapIndexNowEndpoint ftp://x\n")
        return
    srv.config_fails("SitemapIndexNow", "--without-indexnow",
                     conf="SitemapIndexNow On\n" + key)
    srv.config_fails("SitemapIndexNowEndpoint", "--without-indexnow",
                     conf=key + "SitemapIndexNowEndpoint https://x.example/\n")
