# SPDX-License-Identifier: Apache-2.0
"""A farm through pgbouncer in transaction pooling mode (issue 15): the
README says the module uses only unnamed statements, transaction-scoped
settings and advisory locks, and reads each document in one transaction,
so that a pooler may hand every transaction to another server connection.
Here two httpd servers and sitemapctl share a pool of two server
connections (Debian's pgbouncer, run by the test on 127.0.0.1)."""
import os
import shutil
import subprocess
import tempfile
import time

import pytest

from conftest import free_port, port_open
from pg import IS_ROOT, PASSWORD, ROLE, pg_cluster, pg_db  # noqa: F401
from test_pg_farm import BASE, ctl, farm, locs, sitemap

PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


@pytest.fixture
def bouncer(pg_db):
    if not os.path.exists(PGBOUNCER):
        pytest.fail("pgbouncer is missing: run tools/deps")
    d = tempfile.mkdtemp(prefix="sitemap-bouncer-")
    port = free_port()
    with open(os.path.join(d, "users.txt"), "w") as f:
        f.write(f'"{ROLE}" "{PASSWORD}"\n')
    with open(os.path.join(d, "pgbouncer.ini"), "w") as f:
        f.write(f"""[databases]
{pg_db.name} = host=127.0.0.1 port={pg_db.cluster.port} dbname={pg_db.name}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = scram-sha-256
auth_file = {d}/users.txt
pool_mode = transaction
default_pool_size = 2
max_client_conn = 200
logfile = {d}/pgbouncer.log
pidfile = {d}/pgbouncer.pid
""")
    cmd = [PGBOUNCER, "-d", os.path.join(d, "pgbouncer.ini")]
    if IS_ROOT:     # pgbouncer refuses to run as root
        shutil.chown(d, "postgres")
        for n in os.listdir(d):
            shutil.chown(os.path.join(d, n), "postgres")
        cmd = ["runuser", "-u", "postgres", "--", *cmd]
    subprocess.run(cmd, check=True, timeout=30)
    deadline = time.monotonic() + 10
    while not port_open(port):
        assert time.monotonic() < deadline, open(
            os.path.join(d, "pgbouncer.log")).read()
        time.sleep(0.1)
    uri = (f"postgresql://{ROLE}:{PASSWORD}@127.0.0.1:{port}/{pg_db.name}"
           "?application_name=sitemap-bouncer")
    yield uri
    try:
        with open(os.path.join(d, "pgbouncer.pid")) as f:
            os.kill(int(f.read()), 15)
    except (OSError, ValueError):
        pass
    deadline = time.monotonic() + 10
    while port_open(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    shutil.rmtree(d, ignore_errors=True)


def test_farm_through_pgbouncer_transaction_pooling(make_server, pg_db,
                                                    bouncer, tmp_path):
    pg_db.uri = bouncer         # the servers connect to the pooler
    a, b = farm(make_server, pg_db, conf="SitemapPageSize 5\n"
                                         "SitemapExpire 1d\n")
    for j in range(0, 12):
        a.get_ok(f"/p{j}.html")
    for j in range(6, 20):
        b.get_ok(f"/p{j}.html")
    want = {f"/p{j}.html" for j in range(20)}
    pg_db.wait_urls(BASE, want)
    # A removal seen by one server is gone for both.
    os.unlink(a.path("htdocs/p3.html"))
    assert a.get("/p3.html").status == 404
    deadline = time.monotonic() + 20
    while "/p3.html" in pg_db.urls(BASE):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    # Identical documents from both, page after page (each read is one
    # transaction, a cursor inside it).
    for path in ("/sitemap.xml", "/sitemap-1.xml", "/sitemap-2.xml",
                 "/sitemap-3.xml", "/sitemap-4.xml"):
        ra, rb = sitemap(a, path), sitemap(b, path)
        assert ra.body == rb.body and ra.header("ETag") == rb.header("ETag")
    listed = set()
    for n in range(1, 5):
        listed |= {u[len(BASE):] for u in locs(sitemap(a, f"/sitemap-{n}.xml").body)}
    assert listed == want - {"/p3.html"}
    # sitemapctl through the pooler: check, export byte for byte.
    r = ctl("check", bouncer)
    assert r.returncode == 0, r.stdout + r.stderr
    out = tmp_path / "export"
    r = ctl("export", bouncer, "--site", BASE, str(out))
    assert r.returncode == 0, r.stderr
    assert (out / "sitemap-2.xml").read_bytes() == sitemap(a, "/sitemap-2.xml").body
    # Everything went through the pool of two server connections (the
    # servers alone hold a writer connection per child and readers).
    conns = pg_db.cluster.sql("SELECT count(*) FROM pg_stat_activity"
                              f" WHERE datname = '{pg_db.name}'"
                              f" AND usename = '{ROLE}'")
    assert 1 <= int(conns[0][0]) <= 2, conns
    # Nothing went wrong on either server.
    for s in (a, b):
        assert "[sitemap:error]" not in s.log_text()
        assert "[sitemap:warn]" not in s.log_text()
