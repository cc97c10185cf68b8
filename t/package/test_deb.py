# SPDX-License-Identifier: Apache-2.0
"""The Debian package, installed the way an administrator installs it.

Builds libapache2-mod-sitemap with tools/build-deb (dpkg-buildpackage -us
-uc -b, lintian when installed), installs it with dpkg into a clean Debian 12
root made by debootstrap (minbase, plus apache2) from the Debian mirror this
machine's apt uses, enables it with a2enmod, starts Debian's apache2 in that
root with one vhost saying "Sitemap On" on a free 127.0.0.1 port, and
fetches a valid /sitemap.xml and a robots.txt with the Sitemap line.  Then
removes the package (the store stays) and purges it (the store goes).

The root is cached as a tarball under /var/cache/mod_sitemap-test (outside
the tree, keyed by suite, mirror and packages): the first run costs a
debootstrap (about a minute), later runs only unpack it.  Needs root; run
through t/package/run (tools/check does).
"""
import glob
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import urllib.robotparser

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "t", "integration"))
import sitemap_check  # noqa: E402  (the checks every served sitemap gets)

SUITE = "bookworm"
PACKAGES = ["apache2", "libsqlite3-0", "libpq5"]
CACHE_DIR = "/var/cache/mod_sitemap-test"
STATEDIR = "/var/lib/apache2/sitemap"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (debootstrap, chroot)")


def debian_mirror():
    """The first Debian mirror apt is configured with for SUITE (deb822
    .sources or one-line .list), else deb.debian.org."""
    files = ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")) \
        + sorted(glob.glob("/etc/apt/sources.list.d/*.sources"))
    for path in files:
        try:
            text = open(path, encoding="utf-8", errors="replace").read()
        except OSError:
            continue
        if path.endswith(".sources"):
            for stanza in text.split("\n\n"):
                fields = {}
                for line in stanza.splitlines():
                    if ":" in line and not line.startswith(("#", " ")):
                        k, v = line.split(":", 1)
                        fields[k.strip().lower()] = v.split()
                if "deb" in fields.get("types", []) and SUITE in fields.get("suites", []) \
                        and fields.get("uris") and fields.get("enabled", ["yes"]) != ["no"]:
                    return fields["uris"][0]
        else:
            for line in text.splitlines():
                words = line.split("#", 1)[0].split()
                if words[:1] != ["deb"]:
                    continue
                words = words[1:]
                if words and words[0].startswith("["):
                    while words and not words[0].endswith("]"):
                        words.pop(0)
                    words = words[1:]
                if len(words) >= 2 and words[1] == SUITE:
                    return words[0]
    return "http://deb.debian.org/debian"


def run(*cmd, check=True, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace", **kw)
    if check and r.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {r.returncode}:\n{r.stdout[-4000:]}")
    return r


def cached_root_tarball():
    """A tarball of a fresh debootstrap root; made once per key."""
    mirror = debian_mirror()
    key = hashlib.sha256(repr((SUITE, mirror, PACKAGES, "minbase")).encode()).hexdigest()[:12]
    tarball = os.path.join(CACHE_DIR, f"{SUITE}-minbase-{key}.tar.gz")
    if os.path.isfile(tarball):
        return tarball
    os.makedirs(CACHE_DIR, mode=0o755, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="debootstrap-", dir="/var/tmp") as tmp:
        root = os.path.join(tmp, "root")
        run("debootstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES),
            SUITE, root, mirror, timeout=900)
        run("chroot", root, "apt-get", "clean")
        part = tarball + ".part"
        run("tar", "-C", root, "--numeric-owner", "-czf", part, ".", timeout=600)
        os.replace(part, tarball)
    return tarball


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


@pytest.fixture
def chroot_root():
    tarball = cached_root_tarball()
    tmp = tempfile.mkdtemp(prefix="deb-test-", dir="/var/tmp")
    root = os.path.join(tmp, "root")
    os.mkdir(root)
    run("tar", "-C", root, "--numeric-owner", "-xzf", tarball, timeout=600)
    # No service is started or reloaded by maintainer scripts in here.
    policy = os.path.join(root, "usr/sbin/policy-rc.d")
    with open(policy, "w") as f:
        f.write("#!/bin/sh\nexit 101\n")
    os.chmod(policy, 0o755)
    try:
        yield root
    finally:
        pidfile = os.path.join(root, "run/apache2/apache2.pid")
        if os.path.exists(pidfile):
            chroot_sh(root, "apache2ctl stop", check=False)
            try:
                os.kill(int(open(pidfile).read()), 15)
            except (OSError, ValueError):
                pass
        if not os.environ.get("SITEMAP_TEST_KEEP"):
            shutil.rmtree(tmp, ignore_errors=True)


def chroot_sh(root, script, check=True):
    # apache2ctl would hand "start" to systemctl when PID 1 is systemd:
    # APACHE_STARTED_BY_SYSTEMD keeps it to "apache2 -k start" in here.
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8",
           "APACHE_STARTED_BY_SYSTEMD": "true", "DEBIAN_FRONTEND": "noninteractive"}
    return run("chroot", root, "/bin/sh", "-ec", script, check=check, env=env, timeout=300)


def test_deb_installs_enables_serves_removes_purges(chroot_root, tmp_path):
    root = chroot_root
    # ---- build -----------------------------------------------------------
    out = tmp_path / "debs"
    # The build runs the unit tests (debian/rules: make check-unit), unless
    # DEB_BUILD_OPTIONS says nocheck.
    r = run(os.path.join(TOP, "tools", "build-deb"), str(out), timeout=900)
    print(r.stdout)
    if "nocheck" not in os.environ.get("DEB_BUILD_OPTIONS", ""):
        assert "# FAIL:  0" in (out / "build.log").read_text(), "the unit tests did not run"
    debs = glob.glob(str(out / "libapache2-mod-sitemap_*.deb"))
    assert len(debs) == 1, f"one package expected in {out}: {os.listdir(out)}"
    contents = run("dpkg-deb", "-c", debs[0]).stdout
    for path in ("./usr/lib/apache2/modules/mod_sitemap.so",
                 "./etc/apache2/mods-available/sitemap.load",
                 "./etc/apache2/mods-available/sitemap.conf",
                 "./usr/bin/sitemapctl",
                 "./usr/share/man/man8/sitemapctl.8.gz",
                 "./usr/share/man/man5/mod_sitemap.5.gz"):
        assert path in contents, f"{path} missing from the package:\n{contents}"
    depends = run("dpkg-deb", "-f", debs[0], "Depends").stdout
    assert "apache2-api-20120211" in depends, depends

    # ---- install into the clean root, enable ------------------------------
    shutil.copy(debs[0], os.path.join(root, "tmp", "mod-sitemap.deb"))
    chroot_sh(root, "dpkg -i /tmp/mod-sitemap.deb")
    st = os.stat(os.path.join(root, STATEDIR.lstrip("/")))
    pw = run("chroot", root, "id", "-u", "www-data").stdout.strip()
    assert str(st.st_uid) == pw, f"{STATEDIR} is owned by uid {st.st_uid}, not www-data ({pw})"
    # Installing enables it (dh_apache2's postinst, as Debian's modules do).
    assert os.path.islink(os.path.join(root, "etc/apache2/mods-enabled/sitemap.load")), \
        "the package did not enable the module"
    # The administrator's way: a2enmod (disabled first, so that a2enmod is
    # the one that enables it).
    chroot_sh(root, "a2dismod -q sitemap && a2enmod sitemap")
    assert os.path.islink(os.path.join(root, "etc/apache2/mods-enabled/sitemap.load"))

    port = free_port()
    with open(os.path.join(root, "etc/apache2/ports.conf"), "w") as f:
        f.write(f"Listen 127.0.0.1:{port}\n")
    with open(os.path.join(root, "etc/apache2/sites-available/sitemap-test.conf"), "w") as f:
        f.write(f"""<VirtualHost 127.0.0.1:{port}>
    ServerName 127.0.0.1
    DocumentRoot /var/www/html
    Sitemap On
    SitemapFlushInterval 200ms
</VirtualHost>
""")
    with open(os.path.join(root, "var/www/html/about.html"), "w") as f:
        f.write("<!doctype html><title>about</title><p>about</p>\n")
    chroot_sh(root, "a2dissite -q 000-default && a2ensite -q sitemap-test && apache2ctl -t")

    # ---- serve ---------------------------------------------------------------
    chroot_sh(root, "apache2ctl start")
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            try:
                if get(base + "/")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        assert get(base + "/")[0] == 200
        assert get(base + "/about.html")[0] == 200
        assert get(base + "/missing.html")[0] == 404
        want = {base + "/", base + "/about.html"}
        for _ in range(100):
            status, headers, body = get(base + "/sitemap.xml")
            try:
                if status == 200 and set(sitemap_check.check_document(body, base).locs) == want:
                    break
            except AssertionError:
                pass
            time.sleep(0.1)
        assert status == 200, f"/sitemap.xml answered {status}: {body[:500]!r}"
        doc = sitemap_check.check_document(body, base, kind="urlset")
        sitemap_check.schema_validate(body, "urlset")
        assert set(doc.locs) == want, doc.locs

        status, headers, body = get(base + "/robots.txt")
        assert status == 200, status
        robots = urllib.robotparser.RobotFileParser()
        robots.parse(body.decode("utf-8").splitlines())
        assert robots.site_maps() == [base + "/sitemap.xml"], body

        # sitemapctl, installed in /usr/bin, reads what the module stored.
        listed = chroot_sh(root, f"sitemapctl list {STATEDIR}/sitemap.db --site {base}").stdout
        assert sorted(line.split("\t")[0] for line in listed.splitlines()) == sorted(want), listed
    finally:
        chroot_sh(root, "apache2ctl stop", check=False)
    for _ in range(100):
        if not os.path.exists(os.path.join(root, "run/apache2/apache2.pid")):
            break
        time.sleep(0.1)
    log = open(os.path.join(root, "var/log/apache2/error.log")).read()
    assert "sitemap:error" not in log and "sitemap:warn" not in log, log

    # ---- remove: the module goes, the store and the conffiles stay ---------
    chroot_sh(root, "dpkg --remove libapache2-mod-sitemap")
    assert not os.path.exists(os.path.join(root, "usr/lib/apache2/modules/mod_sitemap.so"))
    assert not os.path.exists(os.path.join(root, "usr/bin/sitemapctl"))
    assert not os.path.lexists(os.path.join(root, "etc/apache2/mods-enabled/sitemap.load"))
    assert os.path.exists(os.path.join(root, "etc/apache2/mods-available/sitemap.load"))
    assert os.path.exists(os.path.join(root, STATEDIR.lstrip("/"), "sitemap.db")), \
        "dpkg --remove deleted the store"

    # ---- purge: the store and the conffiles go ------------------------------
    chroot_sh(root, "dpkg --purge libapache2-mod-sitemap")
    assert not os.path.exists(os.path.join(root, STATEDIR.lstrip("/"))), \
        "dpkg --purge kept the store"
    assert not os.path.exists(os.path.join(root, "etc/apache2/mods-available/sitemap.load"))
