# SPDX-License-Identifier: Apache-2.0
"""A store is a file another user may have written (issue 33, item 6).

Its schema runs code: a trigger runs with the rights of whoever writes to
its table, a view with those of whoever reads it.  The module and
sitemapctl refuse a store holding a trigger or view mod_sitemap does not
make, naming it, and the trigger never runs.  sitemapctl run as root
becomes the owner of a store of another user's for good (real, effective
and saved uid and gid, and groups) before SQLite opens it; strace shows
the calls and their order."""
import os
import re
import shutil
import sqlite3
import subprocess
import tempfile

import pytest

from conftest import IS_ROOT, RUN_GID, RUN_UID, SITEMAPCTL, as_run_user
from test_store_faults import CRAWL

BASE = "https://www.example.com"
EX_NO_STORE = 3

EVIL = ("CREATE TABLE pwned(url TEXT);"
        "CREATE TRIGGER evil AFTER INSERT ON urls BEGIN"
        " INSERT INTO pwned VALUES (new.url); END;")
VIEW = "CREATE VIEW everything AS SELECT * FROM urls;"


def ctl(*args):
    return subprocess.run([SITEMAPCTL, *map(str, args)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120)


def sql(path, script):
    con = sqlite3.connect(str(path), timeout=10)
    con.executescript(script)
    con.commit()
    con.close()


def count(path, what):
    con = sqlite3.connect(str(path), timeout=10)
    try:
        return con.execute(f"SELECT count(*) FROM {what}").fetchone()[0]
    finally:
        con.close()


def commands(tmp):
    log = tmp / "access.log"
    log.write_text(f'127.0.0.1 - - [01/Jan/2026:00:00:00 +0000] "GET /logged '
                   f'HTTP/1.1" 200 100 "-" "-"\n')
    return {"add": ("--site", BASE, "/new"),
            "import": ("--site", BASE, log),
            "remove": ("--site", BASE, "/one"),
            "stats": (), "list": ("--site", BASE), "check": (),
            "export": ("--site", BASE, tmp / "out")}


@pytest.mark.parametrize("what", ["trigger", "view"])
def test_sitemapctl_refuses_foreign_objects(tmp_path, what):
    db = tmp_path / "s.db"
    r = ctl("add", db, "--site", BASE, "/one")
    assert r.returncode == 0, r.stderr
    sql(db, EVIL if what == "trigger" else VIEW)
    name = "trigger evil" if what == "trigger" else "view everything"
    for cmd, args in commands(tmp_path).items():
        r = ctl(cmd, db, *args)
        assert r.returncode == EX_NO_STORE, (cmd, r.returncode, r.stderr)
        assert re.search(re.escape(str(db)) + r": not a mod_sitemap store: it "
                         r"holds a " + name, r.stderr), (cmd, r.stderr)
    assert count(db, "urls") == 1
    if what == "trigger":
        assert count(db, "pwned") == 0
    assert not (tmp_path / "out").exists()


def test_module_refuses_a_foreign_trigger(make_server):
    """The store gets a trigger while the server is stopped: the module
    says so, names it, records nothing through it, and the sitemap is not
    served from that store."""
    srv = make_server(conf=CRAWL)
    srv.start()
    srv.get_ok("/crawl/before")
    srv.wait_recorded("/crawl/before")
    srv.stop()
    with as_run_user():
        sql(srv.db_path, EVIL)
    srv.expect_log(r"trigger evil")
    srv.expect_log(re.escape(srv.db_path))
    srv.start()
    for i in range(5):
        srv.get_ok(f"/crawl/after{i}")
    r = srv.get("/sitemap.xml")
    assert r.status != 200 or b"/crawl/after" not in r.body
    srv.stop()
    lines = [ln for ln in srv.log_lines("sitemap") if "trigger evil" in ln]
    assert lines, "the refusal was not logged"
    assert "not a mod_sitemap store" in lines[0], lines[0]
    assert count(srv.db_path, "pwned") == 0
    assert count(srv.db_path, "urls WHERE url LIKE '%after%'") == 0


# ---------------------------------------------------------------------------
# sitemapctl as root

needs_root = pytest.mark.skipif(not IS_ROOT, reason="root's behaviour: needs root")


@pytest.fixture
def user_store():
    """A store of the User's, in a directory of theirs the User can
    reach."""
    import pathlib
    top = pathlib.Path(tempfile.mkdtemp(prefix="sitemap-untrusted-"))
    os.chmod(top, 0o755)
    d = top / "state"
    d.mkdir()
    os.chown(d, RUN_UID, RUN_GID)
    db = d / "s.db"
    r = ctl("add", db, "--site", BASE, "/one")
    assert r.returncode == 0, r.stderr
    assert os.stat(db).st_uid == RUN_UID
    out = top / "out"
    out.mkdir()
    os.chown(out, RUN_UID, RUN_GID)
    yield top, db
    shutil.rmtree(top, ignore_errors=True)


ID_CALLS = "setuid,setgid,setreuid,setregid,setresuid,setresgid,setgroups,setfsuid,setfsgid"


def traced(*args):
    """sitemapctl under strace -f: its exit status, stderr, and the traced
    calls as (pid, call) in order."""
    if not shutil.which("strace"):
        pytest.skip("strace is not installed (tools/deps)")
    with tempfile.NamedTemporaryFile(mode="r", suffix=".strace") as out:
        r = subprocess.run(["strace", "-f", "-qq", "-o", out.name, "-e",
                            "signal=none", "-e", f"trace={ID_CALLS},openat,open",
                            SITEMAPCTL, *map(str, args)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        calls = []
        for ln in out.read().splitlines():
            m = re.match(r"(\d+)\s+(.*)", ln)
            if m:
                calls.append((int(m.group(1)), m.group(2)))
    return r, calls


SQLITE_OPEN = r'open(at)?\(.*"[^"]*s\.db", O_(RDWR|RDONLY)'


def id_calls(calls, pid):
    return [c for p, c in calls if p == pid
            and re.match(r"(" + ID_CALLS.replace(",", "|") + r")\(", c)]


def assert_owner_for_good(calls):
    """Each process that opened the store with SQLite (not sitemapctl's own
    O_NONBLOCK look at it) set every uid and gid and its groups to the
    owner's before, and tried nothing after but setuid(0), refused."""
    u, g = RUN_UID, RUN_GID
    opened = [i for i, (p, c) in enumerate(calls)
              if re.search(SQLITE_OPEN, c) and "O_NONBLOCK" not in c]
    assert opened, calls
    for i in opened:
        pid = calls[i][0]
        before = id_calls(calls[:i], pid)
        after = id_calls(calls[i + 1:], pid)
        assert any(re.match(rf"setresuid\({u}, {u}, {u}\)\s+= 0", c) for c in before), before
        assert any(re.match(rf"setresgid\({g}, {g}, {g}\)\s+= 0", c) for c in before), before
        assert any(re.match(r"setgroups\(\d+, \[[^\]]*\b%d\b[^\]]*\]\)\s+= 0" % g, c)
                   for c in before), before
        assert any(re.match(r"setuid\(0\)\s+= -1 EPERM", c) for c in before), before
        assert all(re.search(r"= -1 EPERM", c) for c in after), after


@needs_root
@pytest.mark.parametrize("cmd", ["add", "import", "remove", "stats", "list",
                                 "check", "export"])
def test_root_becomes_the_owner_for_good(user_store, cmd):
    """sitemapctl as root with a store of the User's: SQLite only ever
    opens it in a process whose uids, gids and groups are all the User's,
    for good (export: a child; its root parent writes the files)."""
    top, db = user_store
    r, calls = traced(cmd, db, *commands(top)[cmd])
    assert r.returncode == 0, r.stderr
    assert_owner_for_good(calls)
    for f in os.listdir(db.parent):
        assert os.stat(db.parent / f).st_uid == RUN_UID, f
    if cmd == "export":
        # the parent, root, wrote them; it never opened the store
        writers = {p for p, c in calls if re.search(r"\.sitemap.*\.tmp", c)}
        readers = {p for p, c in calls if re.search(SQLITE_OPEN, c)}
        assert writers and not writers & readers, (writers, readers)
        for f in os.listdir(top / "out"):
            assert os.stat(top / "out" / f).st_uid == 0, f


@needs_root
def test_root_export_into_a_root_directory(user_store):
    """export of a store of the User's into a directory of root's (a
    document root as Debian makes it): the child reads as the User, root
    writes the files, byte for byte what a plain export writes."""
    top, db = user_store
    d = top / "rootonly"
    d.mkdir()
    os.chmod(d, 0o755)
    r = ctl("export", db, "--site", BASE, d)
    assert r.returncode == 0, r.stderr
    assert sorted(os.listdir(d)) == ["sitemap-1.xml", "sitemap.xml"], os.listdir(d)
    # the User itself, every id theirs (as sudo -u would run it)
    r2 = subprocess.run([SITEMAPCTL, "export", str(db), "--site", BASE,
                         str(top / "out")], stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True, timeout=120,
                        user=RUN_UID, group=RUN_GID, extra_groups=[])
    assert r2.returncode == 0, r2.stderr
    for f in os.listdir(d):
        assert os.stat(d / f).st_uid == 0
        assert (d / f).read_bytes() == (top / "out" / f).read_bytes(), f
    assert r.stdout == r2.stdout.replace(str(top / "out"), str(d))


@needs_root
def test_root_refuses_a_crafted_store_as_the_owner(user_store):
    """The crafted store is refused; strace shows it was looked at with
    the owner's uids only."""
    top, db = user_store
    with as_run_user():
        sql(db, EVIL)
    for cmd in ("add", "export"):
        r, calls = traced(cmd, db, *commands(top)[cmd])
        assert r.returncode == EX_NO_STORE, r.stderr
        assert "trigger evil" in r.stderr
        assert_owner_for_good(calls)
    assert count(db, "pwned") == 0
    assert os.listdir(top / "out") == []
