# SPDX-License-Identifier: Apache-2.0
"""tools/demo, run the way a new user runs it: from a checkout in a home
directory the server's User cannot enter (as root: a 0700 directory, as
/root is), and as a user other than root; and it must fail, saying why,
when its result does not hold.

Each test runs the demo in a copy of this (already built) tree, so the demo's
`make` has nothing to rebuild and never touches the tree under test.
"""
import os
import pwd
import re
import shutil
import socket
import stat
import subprocess
import tempfile

import pytest

from conftest import IS_ROOT, TOP_BUILDDIR, TOP_SRCDIR, free_port

pytestmark = pytest.mark.skipif(os.path.realpath(TOP_SRCDIR) != os.path.realpath(TOP_BUILDDIR),
                                reason="the demo runs in a source tree that is also the build tree")


def clean_env(**extra):
    """The environment of a user's shell: nothing of make check's (its
    jobserver, HTTPD, ...)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "HTTPD",
                        "TMPDIR")}
    env.update(extra)
    return env


@pytest.fixture
def closed_home():
    """A directory as /root is: 0700, owned by the one running the tests."""
    home = tempfile.mkdtemp(prefix="demo-home-")
    os.chmod(home, 0o700)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def copy_tree(dest):
    """This built tree, copied with its timestamps (so nothing rebuilds)."""
    subprocess.run(["cp", "-a", TOP_BUILDDIR, dest], check=True)
    return dest


def run_demo(checkout, env, user=None):
    cmd = [os.path.join(checkout, "tools", "demo")]
    if user:
        cmd = ["runuser", "-u", user, "--", "env"] + [f"{k}={v}" for k, v in env.items()] + cmd
        env = None
    return subprocess.run(cmd, cwd="/", env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace", timeout=300)


def assert_demo_ok(r):
    assert r.returncode == 0, r.stdout
    assert "tools/demo: OK" in r.stdout, r.stdout
    assert "-> 403" not in r.stdout, r.stdout


@pytest.mark.skipif(not IS_ROOT, reason="as root only: the checkout's directory is closed to www-data")
def test_demo_as_root_from_closed_home(closed_home):
    checkout = copy_tree(os.path.join(closed_home, "mod_sitemap"))
    assert stat.S_IMODE(os.stat(closed_home).st_mode) == 0o700
    r = run_demo(checkout, clean_env(PORT=str(free_port())))
    assert_demo_ok(r)
    assert "children run as www-data" in r.stdout, r.stdout
    # The demo cleans up after a success: no server, no leftover directory.
    assert not os.path.exists(os.path.join(checkout, "demo"))


@pytest.mark.skipif(not IS_ROOT, reason="needs root to run the demo as another user")
def test_demo_as_another_user():
    user = "nobody"
    pw = pwd.getpwnam(user)
    home = tempfile.mkdtemp(prefix="demo-user-")
    try:
        checkout = copy_tree(os.path.join(home, "mod_sitemap"))
        subprocess.run(["chown", "-R", f"{pw.pw_uid}:{pw.pw_gid}", home], check=True)
        os.chmod(home, 0o700)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
               "PORT": str(free_port())}
        r = run_demo(checkout, env, user=user)
        assert_demo_ok(r)
        assert f"children run as {user}" in r.stdout, r.stdout
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.skipif(not IS_ROOT, reason="needs root to run the demo as another user")
def test_demo_as_another_user_from_a_checkout_it_cannot_write():
    """A built checkout of root's, readable but not writable by the user:
    the demo uses the module built there instead of failing in make."""
    home = tempfile.mkdtemp(prefix="demo-ro-")
    try:
        os.chmod(home, 0o755)
        checkout = copy_tree(os.path.join(home, "mod_sitemap"))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/",
               "PORT": str(free_port())}
        r = run_demo(checkout, env, user="nobody")
        assert_demo_ok(r)
        assert "is not writable by nobody: using the module already built there" in r.stdout, \
            r.stdout
    finally:
        shutil.rmtree(home, ignore_errors=True)


@pytest.mark.slow
def test_demo_fails_when_sitemap_is_wrong(closed_home, tmp_path):
    """An httpd that also excludes /about.html (one more SitemapExclude given
    with -c) makes the sitemap differ from what the demo expects: the demo
    must exit non-zero and name the page."""
    checkout = copy_tree(os.path.join(closed_home, "mod_sitemap"))
    httpd = os.environ.get("HTTPD") or "/usr/sbin/apache2"
    wrapper = tmp_path / "httpd-excluding-about"
    wrapper.write_text(f"#!/bin/sh\nexec {httpd} \"$@\" -c 'SitemapExclude ^/about'\n")
    wrapper.chmod(0o755)
    os.chmod(tmp_path, 0o755)
    port = free_port()
    r = run_demo(checkout, clean_env(PORT=str(port), HTTPD=str(wrapper)))
    kept = re.search(r"tools/demo: the demo's files are kept in (\S+)", r.stdout)
    if kept:
        shutil.rmtree(kept.group(1), ignore_errors=True)
    assert kept, f"the demo does not say where its files are: {r.stdout}"
    assert r.returncode != 0, r.stdout
    assert "tools/demo: FAILED: the sitemap does not list exactly the pages served" in r.stdout, r.stdout
    assert f"missing: http://127.0.0.1:{port}/about.html" in r.stdout, r.stdout
    # and the server was stopped all the same
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0, "the demo left its httpd running"


@pytest.mark.skipif(not IS_ROOT, reason="as root only: www-data is the server's User")
def test_demo_says_when_its_directory_is_closed_to_www_data(closed_home):
    """TMPDIR under a 0700 directory: the demo must say that www-data cannot
    reach the site, not serve 403s and call it a success."""
    checkout = copy_tree(os.path.join(closed_home, "mod_sitemap"))
    tmpdir = os.path.join(closed_home, "tmp")
    os.mkdir(tmpdir, 0o755)
    r = run_demo(checkout, clean_env(PORT=str(free_port()), TMPDIR=tmpdir))
    assert r.returncode != 0, r.stdout
    assert "tools/demo: FAILED: httpd's User www-data cannot read" in r.stdout, r.stdout
    assert "TMPDIR" in r.stdout, r.stdout
