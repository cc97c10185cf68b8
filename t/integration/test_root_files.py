# SPDX-License-Identifier: Apache-2.0
"""Root never follows a link another user planted (issue 21, item 1), and
the store's directory must be reachable by httpd's User (issue 20).

The store's directory belongs to httpd's User: anything running as that
user can put a symbolic or hard link where the root parent (at start-up
and at every graceful restart) or sitemapctl run as root expects the store
or its journals.  Each test plants one, runs root's code, and checks that
the root file the link leads to keeps its owner and content, that nothing
was created through the link, and that the refusal is logged with the path
and the reason."""
import os
import time
import subprocess

import pytest

from conftest import IS_ROOT, RUN_GID, RUN_UID, SITEMAPCTL, pid_alive

BASE = "https://www.example.com"

pytestmark = pytest.mark.skipif(not IS_ROOT, reason="root's behaviour: needs root")


def victim(srv, name="etc-shadow"):
    """A root-only file standing for /etc/shadow."""
    p = srv.write(f"victim/{name}", "root:secret\n", mode=0o600)
    os.chown(p, 0, 0)
    return p


def unchanged(path):
    st = os.lstat(path)
    assert (st.st_uid, st.st_gid) == (0, 0), f"{path} was given away: {st}"
    with open(path) as f:
        assert f.read() == "root:secret\n", f"{path} was written"


def plant(link, target):
    """As the User would: a link in the User's own directory."""
    if os.path.lexists(link):
        os.unlink(link)
    os.symlink(target, link)
    os.lchown(link, RUN_UID, RUN_GID)


def test_store_symlink_at_start(make_server):
    srv = make_server()
    v = victim(srv)
    plant(srv.db_path, v)
    srv.expect_log(r"sitemap\.db' is left as it is, not given to the "
                   r"server's User: it is a symbolic link")
    srv.expect_log(r"sitemap")        # the children cannot use it either
    srv.start()
    srv.get_ok("/page.html")
    srv.stop()
    unchanged(v)
    assert os.path.islink(srv.db_path)
    assert srv.log_lines("sitemap", "error")


def test_journal_symlink_at_graceful_restart(make_server):
    """(The old generation's last connection may remove the journals
    before the parent re-reads its configuration.)"""
    srv = make_server()
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    v = victim(srv)
    plant(srv.db_path + "-wal", v)
    srv.expect_log(r"sitemap\.db-wal' is left as it is, not given to "
                   r"the server's User: it is a symbolic link")
    srv.expect_log(r"sitemap")
    srv.graceful()
    still_there = os.path.islink(srv.db_path + "-wal")
    srv.get_ok("/index.html")
    srv.stop()
    unchanged(v)
    if still_there:     # else SQLite removed it first: nothing to refuse
        assert srv.log_lines("sitemap", "error")


@pytest.mark.parametrize("journal", ["-wal", "-shm"])
def test_journal_symlink_at_start(make_server, journal):
    srv = make_server()
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    srv.stop()
    v = victim(srv)
    plant(srv.db_path + journal, v)
    srv.expect_log(rf"sitemap\.db{journal}' is left as it is, not given to "
                   r"the server's User: it is a symbolic link")
    srv.expect_log(r"sitemap")
    srv.restart()
    srv.get_ok("/index.html")
    srv.stop()
    unchanged(v)
    assert srv.log_lines("sitemap", "error")


def test_store_hard_link_at_start(make_server):
    srv = make_server()
    v = victim(srv)
    # root plants it here; the User could, where fs.protected_hardlinks
    # is off
    os.link(v, srv.db_path)
    srv.expect_log(r"sitemap\.db' is left as it is, not given to the "
                   r"server's User: it has 2 hard links")
    srv.expect_log(r"sitemap")
    srv.start()
    srv.stop()
    unchanged(v)


def test_directory_symlink_is_not_followed(make_server):
    """db/ is the User's: a link there to a root directory is refused, and
    nothing is made in that directory."""
    srv = make_server(sitemap=False)
    rootdir = srv.path("victim/dir")
    os.makedirs(rootdir)
    plant(srv.path("db/sub"), rootdir)
    srv.config_fails("SitemapDatabase", "db/sub", "symbolic link in a "
                     "directory other users can write",
                     conf="Sitemap On\nSitemapDatabase db/sub/x/sitemap.db\n")
    assert os.listdir(rootdir) == []


def test_place_problems_on_a_restart_are_errors(make_server):
    """The User owns the directory: changing it must not stop a running
    server.  `-t` (which Debian's apache2ctl graceful runs first) refuses,
    naming the problem; `-k graceful` itself restarts with the problem
    logged as an error, and `-k stop` stops (it never checks)."""
    srv = make_server(db="db/a/sitemap.db")
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    os.chmod(srv.path("db/a"), 0o500)       # as the User could
    r = srv.ctl("-t")
    assert r.returncode != 0 and "cannot write into the directory" in r.stderr, r
    srv.get_ok("/page.html")
    srv.expect_log(r"cannot write into the directory .*db/a'")
    before = srv.restarts()
    r = srv.ctl("-k", "graceful")
    assert r.returncode == 0, r
    deadline = time.monotonic() + 20
    while srv.restarts() == before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.restarts() > before, srv.log_tail()
    srv.get_ok("/index.html")
    assert srv.log_lines("sitemap", "error")
    srv.stop(timeout=15)
    os.chmod(srv.path("db/a"), 0o750)


def test_stop_with_an_unreachable_directory(make_server):
    """`-k stop` reads the configuration before it signals: a store
    directory the User can no longer reach must not refuse it."""
    srv = make_server(db="db/a/sitemap.db")
    # A child may look at its store before the stop reaches it: the store
    # is gone for it, as it should say (once, rate-limited).
    srv.expect_log(r"store .*/db/a/sitemap\.db was removed or replaced")
    srv.expect_log(r"store .*/db/a/sitemap\.db: cannot open: ")
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    os.chown(srv.path("db"), 0, 0)
    os.chmod(srv.path("db"), 0o700)         # root's, closed to the User
    r = srv.ctl("-k", "stop")
    assert r.returncode == 0, r
    deadline = time.monotonic() + 15
    while pid_alive(srv.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pid_alive(srv.pid), "the server did not stop"
    os.chown(srv.path("db"), RUN_UID, RUN_GID)
    os.chmod(srv.path("db"), 0o750)


def test_made_directories_belong_to_the_user(make_server):
    srv = make_server(db="db/a/b/sitemap.db")
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")
    for d in ("db/a", "db/a/b"):
        st = os.stat(srv.path(d))
        assert (st.st_uid, st.st_gid) == (RUN_UID, RUN_GID), d
    st = os.stat(srv.db_path)
    assert (st.st_uid, st.st_gid) == (RUN_UID, RUN_GID)


def test_root_store_is_given_to_the_user(make_server):
    """A store root made (an older module, sitemapctl as root in a root
    directory) is still handed over: what is refused is only what is not
    a plain file of root's or the User's."""
    srv = make_server()
    with open(srv.db_path, "wb"):
        pass
    os.chown(srv.db_path, 0, 0)
    srv.start()
    st = os.stat(srv.db_path)
    assert (st.st_uid, st.st_gid) == (RUN_UID, RUN_GID)
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")


# ---------------------------------------------------------------------------
# sitemapctl as root

def ctl(*args):
    return subprocess.run([SITEMAPCTL, *map(str, args)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=60)


@pytest.fixture
def open_tmp():
    """A directory the User can reach (pytest's tmp_path is in a 0700
    directory of root's)."""
    import pathlib
    import shutil
    import tempfile
    d = tempfile.mkdtemp(prefix="sitemap-root-")
    os.chmod(d, 0o755)
    yield pathlib.Path(d)
    shutil.rmtree(d, ignore_errors=True)


def user_dir(tmp_path):
    d = tmp_path / "state"
    d.mkdir()
    os.chown(d, RUN_UID, RUN_GID)
    return d


def root_file(tmp_path):
    p = tmp_path / "etc-shadow"
    p.write_text("root:secret\n")
    os.chmod(p, 0o600)
    return str(p)


@pytest.mark.parametrize("cmd", ["add", "import", "stats", "check", "export"])
def test_sitemapctl_store_symlink(open_tmp, cmd):
    tmp_path = open_tmp
    d = user_dir(tmp_path)
    v = root_file(tmp_path)
    db = d / "sitemap.db"
    plant(str(db), v)
    args = {"add": ("--site", BASE, "/x"), "import": ("--site", BASE, "/dev/null"),
            "stats": (), "check": (), "export": ("--site", BASE, tmp_path / "out")}[cmd]
    r = ctl(cmd, db, *args)
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert f"{db}: it is a symbolic link" in r.stderr, r.stderr
    unchanged(v)


@pytest.mark.parametrize("journal", ["-wal", "-shm"])
def test_sitemapctl_journal_symlink(open_tmp, journal):
    tmp_path = open_tmp
    d = user_dir(tmp_path)
    v = root_file(tmp_path)
    db = d / "sitemap.db"
    r = ctl("add", db, "--site", BASE, "/x")
    assert r.returncode == 0, r.stderr
    assert os.stat(db).st_uid == RUN_UID
    plant(str(db) + journal, v)
    r = ctl("add", db, "--site", BASE, "/y")
    assert r.returncode == 3, (r.returncode, r.stderr)
    assert f"{db}{journal}: it is a symbolic link" in r.stderr, r.stderr
    unchanged(v)


@pytest.mark.parametrize("reachable", [True, False])
def test_sitemapctl_acts_as_the_store_owner(open_tmp, tmp_path, reachable):
    """Whatever SQLite creates as sitemapctl works (journals included)
    belongs to the store's owner, not to root.  When the owner cannot
    reach the directory (tmp_path is under a 0700 directory of root's),
    root refuses it and makes nothing there (issue 33: it would otherwise
    parse the owner's file with root's rights)."""
    d = user_dir(open_tmp if reachable else tmp_path)
    db = d / "sitemap.db"
    r = ctl("add", db, "--site", BASE, *[f"/p{i}" for i in range(50)])
    if not reachable:
        assert r.returncode == 3, (r.returncode, r.stderr)
        assert "cannot reach" in r.stderr, r.stderr
        assert os.listdir(d) == []
        return
    assert r.returncode == 0, r.stderr
    for f in os.listdir(d):
        st = os.stat(d / f)
        assert (st.st_uid, st.st_gid) == (RUN_UID, RUN_GID), f


def test_sitemapctl_takes_over_a_root_store(open_tmp):
    """A store of root's in the User's directory (an older sitemapctl left
    it): a command that writes gives it to the directory's owner and works
    as them; one that reads leaves it as it is."""
    d = user_dir(open_tmp)
    db = d / "sitemap.db"
    r = ctl("add", db, "--site", BASE, "/x")
    assert r.returncode == 0, r.stderr
    for f in os.listdir(d):
        os.chown(d / f, 0, 0)
    assert ctl("stats", db).returncode == 0
    assert os.stat(db).st_uid == 0
    r = ctl("add", db, "--site", BASE, "/y")
    assert r.returncode == 0, r.stderr
    for f in os.listdir(d):
        st = os.stat(d / f)
        assert (st.st_uid, st.st_gid) == (RUN_UID, RUN_GID), f


# ---------------------------------------------------------------------------
# issue 20: a directory the User cannot reach

def test_unreachable_directory_is_refused(make_server):
    """A 0700 directory of root's above the store (as /root is): `-t` and
    the start-up name the path and the User."""
    srv = make_server(sitemap=False)
    locked = srv.path("locked")
    os.makedirs(os.path.join(locked, "state"))
    os.chmod(locked, 0o700)
    os.chown(os.path.join(locked, "state"), RUN_UID, RUN_GID)
    srv.config_fails("SitemapDatabase", "locked/state/sitemap.db",
                     "www-data", f"cannot reach '{locked}'",
                     conf="Sitemap On\nSitemapDatabase locked/state/sitemap.db\n")
    assert os.listdir(os.path.join(locked, "state")) == []


def test_unwritable_directory_is_refused(make_server):
    srv = make_server(sitemap=False)
    d = srv.path("ro")
    os.makedirs(d)
    os.chmod(d, 0o755)             # root's: the User may enter, not write
    srv.config_fails("SitemapDatabase", "www-data", f"cannot write into the "
                     f"directory '{d}'",
                     conf="Sitemap On\nSitemapDatabase ro/sitemap.db\n")


def test_group_access_counts(make_server):
    """Reachable through the Group only (root:www-data 0750): accepted."""
    srv = make_server(sitemap=False)
    d = srv.path("grp")
    os.makedirs(os.path.join(d, "state"))
    os.chown(d, 0, RUN_GID)
    os.chmod(d, 0o750)
    os.chown(os.path.join(d, "state"), RUN_UID, RUN_GID)
    srv.conf_text = "Sitemap On\nSitemapDatabase grp/state/sitemap.db\n"
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html", db=srv.path("grp/state/sitemap.db"))
