# SPDX-License-Identifier: Apache-2.0
"""A throwaway PostgreSQL server for the farm tests (SitemapDatabase
postgresql://...), made with Debian's postgresql package (tools/deps).

Once per test session: a fresh cluster (initdb) in a temporary directory,
listening only on 127.0.0.1 at a free port and on a Unix socket in that
directory, stopped and removed at the end.  As root the server runs as the
`postgres` user (initdb refuses root).  Each test gets a database of its
own, owned by a login role with a password (the module connects over TCP
with scram-sha-256, as a farm would), through the `pg_db` fixture:

    def test_x(pg_db, make_server):
        srv = make_server(db=pg_db.uri)
        ...
        pg_db.sql("SELECT count(*) FROM sitemap_urls")   # as the superuser

The cluster object can stop() and start() the server (outage tests)."""

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time

import reaper
from ports import free_port

try:
    import pytest
except ImportError:         # bench/pg_serving.py uses Cluster only
    pytest = None

BIN = os.environ.get("PG_BINDIR") or (
    sorted(glob.glob("/usr/lib/postgresql/*/bin"))[-1:] or [""])[0]
IS_ROOT = os.geteuid() == 0
ROLE, PASSWORD = "sitemap", "s3cret-pw"


class Cluster:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="sitemap-pg-")
        self.data = os.path.join(self.dir, "data")
        self.port = free_port()
        self.dbs = 0
        if IS_ROOT:
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        os.chmod(self.dir, 0o755)
        self._run("initdb", "-D", self.data, "-U", "postgres", "-A", "trust",
                  "--no-sync", "-E", "UTF8", "--locale=C.UTF-8")
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write(f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                    f"unix_socket_directories = '{self.dir}'\n"
                    "fsync = off\nsynchronous_commit = off\n"
                    "full_page_writes = off\nmax_connections = 200\n"
                    "password_encryption = 'scram-sha-256'\n")
        with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
            f.write("local all all trust\n"
                    "host all all 127.0.0.1/32 scram-sha-256\n")
        self.start()
        self.sql(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{PASSWORD}'")

    def _run(self, prog, *args, check=True):
        cmd = [os.path.join(BIN, prog), *args]
        if IS_ROOT:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, check=check,
                              cwd=self.dir, timeout=120)

    def start(self):
        reaper.register(id(self), self.stop)
        self._run("pg_ctl", "-D", self.data, "-l",
                  os.path.join(self.dir, "log"), "-w", "-t", "60", "start")

    def stop(self):
        reaper.unregister(id(self))
        self._run("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop",
                  check=False)

    def sql(self, sql, db="postgres"):
        """Run sql as the superuser; the rows as lists of strings."""
        r = self._run("psql", "-X", "-q", "-A", "-t", "-F", "\t", "-h",
                      self.dir, "-p", str(self.port), "-U", "postgres", "-d",
                      db, "-v", "ON_ERROR_STOP=1", "-c", sql)
        return [ln.split("\t") for ln in r.stdout.splitlines() if ln]

    def new_db(self):
        self.dbs += 1
        name = f"farm{self.dbs}"
        self.sql(f"CREATE DATABASE {name} OWNER {ROLE}")
        return Database(self, name)

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class Database:
    def __init__(self, cluster, name):
        self.cluster = cluster
        self.name = name
        self.uri = (f"postgresql://{ROLE}:{PASSWORD}@127.0.0.1:"
                    f"{cluster.port}/{name}?application_name=sitemap-test")

    def sql(self, sql):
        return self.cluster.sql(sql, self.name)

    def urls(self, base):
        """{url: page} of the site."""
        rows = self.sql("SELECT u.url, u.page FROM sitemap_urls u JOIN "
                        "sitemap_sites s ON s.id = u.site_id WHERE s.base = "
                        f"'{base}'") if self.has_schema() else []
        return {u: int(p) for u, p in rows}

    def has_schema(self):
        return self.sql("SELECT to_regclass('sitemap_urls') IS NOT NULL") \
            == [["t"]]

    def wait_urls(self, base, want, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            have = self.urls(base)
            if set(want) <= set(have):
                return have
            if time.monotonic() > deadline:
                raise AssertionError(f"not stored within {timeout}s: "
                                     f"{sorted(set(want) - set(have))[:20]}")
            time.sleep(0.2)


def password_in_logs(directory):
    """The files under directory (a server's logs) that hold the password
    of the PostgreSQL tests' role: a configured postgresql:// URI must be
    masked in every message (issue 33).  Checked for every server a test
    makes (conftest.py), and for the cluster's own log (pg_cluster)."""
    found = []
    for top, _dirs, files in os.walk(directory):
        for name in files:
            f = os.path.join(top, name)
            try:
                with open(f, "rb") as fh:
                    if PASSWORD.encode() in fh.read():
                        found.append(f)
            except OSError:
                pass
    return found


def _fixture(**kw):
    return pytest.fixture(**kw) if pytest else (lambda f: f)


@_fixture(scope="session")
def pg_cluster():
    from conftest import build_has
    if not build_has("postgresql"):
        pytest.skip("built --without-postgresql")
    if not BIN or not os.path.exists(os.path.join(BIN, "initdb")):
        pytest.fail("PostgreSQL's initdb is missing: run tools/deps")
    c = Cluster()
    yield c
    c.stop()
    # the server's own log (connections, errors) never holds the password
    # either: the module sends it only in the authentication exchange
    with open(os.path.join(c.dir, "log"), "rb") as f:
        leaked = PASSWORD.encode() in f.read()
    c.close()
    assert not leaked, "the PostgreSQL test password is in the server's log"


@_fixture()
def pg_db(pg_cluster):
    return pg_cluster.new_db()
