# SPDX-License-Identifier: Apache-2.0
"""A PostgreSQL store's write batches (issue 35): new URLs go in by COPY,
the stored ones are found by their (site_id, url) index, whose URLs
compare byte by byte (COLLATE "C", as SQLite's do) whatever the
database's collation.  The batch's semantics are t/unit/test_store_batch's
(test_unit_pg.py runs its _pg test); the farm's are test_pg_farm.py's."""
from pg import pg_cluster, pg_db  # noqa: F401 (fixtures)
from test_pg_farm import BASE, ctl


def test_urls_compare_bytes(pg_db):
    urls = ["/b", "/a", "/B", "/%C3%A4", "/a%20b", "/_x"]   # stored forms
    r = ctl("add", pg_db.uri, "--site", BASE, *urls)
    assert r.returncode == 0, r.stderr
    assert pg_db.sql("SELECT collation_name FROM information_schema.columns"
                     " WHERE table_name = 'sitemap_urls'"
                     " AND column_name = 'url'") == [["C"]]
    # byte order, from the index
    got = [u for (u,) in pg_db.sql("SELECT url FROM sitemap_urls"
                                   " ORDER BY site_id, url")]
    assert got == sorted(urls, key=lambda u: u.encode()), got
    # a batch naming them again adds none
    r = ctl("add", pg_db.uri, "--site", BASE, *urls, "/new")
    assert r.returncode == 0, r.stderr
    assert pg_db.sql("SELECT count(*) FROM sitemap_urls") == [["7"]]
    r = ctl("check", pg_db.uri)
    assert r.returncode == 0, r.stdout + r.stderr


def test_batch_over_many_copies(pg_db):
    """A batch of more new URLs than one COPY statement takes (60 rows,
    sm_store_pg_batch.c) goes in by several, every row once, in the
    batch's order (ids in turn), then adds none again."""
    urls = [f"/many/{i:03d}" for i in range(185)]
    r = ctl("add", pg_db.uri, "--site", BASE, *urls)
    assert r.returncode == 0, r.stderr
    got = [u for (u,) in pg_db.sql("SELECT url FROM sitemap_urls"
                                   " ORDER BY id")]
    assert got == urls, got[:5]
    r = ctl("add", pg_db.uri, "--site", BASE, *urls)
    assert r.returncode == 0, r.stderr
    assert pg_db.sql("SELECT count(*) FROM sitemap_urls") == [["185"]]
    r = ctl("check", pg_db.uri)
    assert r.returncode == 0, r.stdout + r.stderr
