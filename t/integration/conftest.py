# SPDX-License-Identifier: Apache-2.0
"""Integration test harness for mod_sitemap.

Every test gets its own httpd: a complete standalone httpd.conf written into
a fresh temporary ServerRoot (no Debian /etc/apache2 configuration at all),
started with `$HTTPD -f conf -k start` and always stopped at teardown.

Environment (set by `make check` through t/integration/run):
  HTTPD            httpd binary              (default /usr/sbin/apache2)
  HTTPD_MODULEDIR  httpd's module directory  (default /usr/lib/apache2/modules)
  MODULE           the built mod_sitemap.so  (default $TOP_BUILDDIR/mod_sitemap.so)
  TOP_SRCDIR, TOP_BUILDDIR
  SITEMAP_TEST_MPM the MPM of tests that do not choose one (default event)
  SITEMAP_TEST_KEEP=1 keeps the temporary directories for post-mortems

Typical use:

    def test_x(make_server):
        srv = make_server(conf="SitemapExclude ^/drafts/")
        srv.write("htdocs/page.html", "<html></html>")
        srv.start()
        assert srv.get("/page.html").status == 200
        srv.wait_recorded("/page.html")

The Server API, in short:
  files     write(rel, text, mode, mtime), cgi(name, sh_script), path(rel),
            docroot, db_path; htdocs/page.html and htdocs/index.html exist
  control   start(), stop(graceful=False), graceful_stop(), graceful(conf=None)
            (rewrites the configuration first when conf is given), restart()
  errors    config_fails(*needles, conf=..., check_syntax=True): `-t` and
            `-k start` must fail and their messages hold every needle
  HTTP      get/get_ok/request(method, raw_target, host=, headers=, body=)
            over a raw socket: the target goes out byte for byte
  store     query(sql), urls(base=None, db=None), all_urls(), row(url),
            wait_recorded(*urls), wait_absent(*urls), sentinel(),
            assert_not_recorded(*urls) (sentinel first; under prefork, or
            with stop=True, a graceful-stop and a new start as well)
  log       expect_log(regex), wait_log(regex, module=, level=),
            log_lines(module, level), unexpected_log_lines()

At teardown every server is stopped and its error log must hold no line
of level error or worse, no sitemap warning and no crashed child, except
what the test declared with expect_log().  The store is always read as the
children's user (www-data when we are root), read-only, so that the test
never leaves files the children cannot write.
"""

import contextlib
import glob
import http.server
import os
import pwd
import re
import resource
import shutil
import signal
import socket
import sqlite3
import subprocess
import tempfile
import threading
import time
import urllib.parse
import warnings

import pytest

from ports import free_port  # noqa: F401 (tests take it from here)
import pg  # noqa: E402 (password_in_logs)
import reaper  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
HTTPD = os.environ.get("HTTPD") or "/usr/sbin/apache2"
MODULEDIR = os.environ.get("HTTPD_MODULEDIR") or "/usr/lib/apache2/modules"
TOP_SRCDIR = os.environ.get("TOP_SRCDIR") or os.path.dirname(os.path.dirname(HERE))
TOP_BUILDDIR = os.environ.get("TOP_BUILDDIR") or TOP_SRCDIR
MODULE = os.environ.get("MODULE") or os.path.join(TOP_BUILDDIR, "mod_sitemap.so")
SITEMAPCTL = os.environ.get("SITEMAPCTL") or os.path.join(TOP_BUILDDIR, "sitemapctl")
DEFAULT_MPM = os.environ.get("SITEMAP_TEST_MPM") or "event"


def _header_int(rel, name):
    with open(os.path.join(TOP_SRCDIR, rel)) as f:
        return int(re.search(r"#define\s+%s\s+(\d+)" % name, f.read()).group(1))


# The schema versions this build writes (SQLite's PRAGMA user_version,
# PostgreSQL's sitemap_meta schema_version), from the headers.
SCHEMA_VERSION = _header_int("src/store/sm_store.h", "SM_SCHEMA_VERSION")
PG_SCHEMA_VERSION = _header_int("src/store/sm_store_backend.h",
                                "SM_PG_SCHEMA_VERSION")


def build_has(feature):
    """Whether this build has a part configure can leave out: "postgresql"
    (--without-postgresql) or "indexnow" (--without-indexnow), as
    sitemapctl --version says."""
    try:
        out = subprocess.run([SITEMAPCTL, "--version"], text=True,
                             stdout=subprocess.PIPE, timeout=30).stdout
    except OSError:
        return True
    for line in out.splitlines():
        if line.startswith("stores:") and feature == "postgresql":
            return feature in line.split()
        if line.startswith("indexnow:") and feature == "indexnow":
            return line.split()[1:] == ["yes"]
    return True


KEEP = os.environ.get("SITEMAP_TEST_KEEP") == "1"
MPMS = ("event", "worker", "prefork")

IS_ROOT = os.geteuid() == 0
RUN_USER = "www-data"
if IS_ROOT:
    _pw = pwd.getpwnam(RUN_USER)
    RUN_UID, RUN_GID = _pw.pw_uid, _pw.pw_gid
else:
    RUN_UID, RUN_GID = os.geteuid(), os.getegid()

# How long to wait for asynchronous recording to show up in the store.
WAIT = 10.0

# Lines of these levels in the error log fail the test unless expected.
BAD_LEVELS = {"emerg", "alert", "crit", "error"}
# The parent gave up after `-k start` had already returned (second pass).
STARTUP_FAILED = re.compile(r"AH0001[3-7]|AH00020|Configuration Failed|"
                            r"Unable to open logs|could not bind|no listening sockets")
LOG_LINE = re.compile(r"^\[[^\]]*\] \[([^:\]]*):(\w+)\] (?:\[pid (\d+)[^\]]*\] )?(.*)$")


def core_limit_prefix():
    """What runs httpd with its core size limit raised to the hard limit
    (util-linux's prlimit), so that a crashed child leaves a core; [] when
    cores are not allowed at all or prlimit is missing."""
    hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
    if hard == 0 or not shutil.which("prlimit"):
        return []
    v = "unlimited" if hard == resource.RLIM_INFINITY else str(hard)
    return ["prlimit", f"--core={v}:{v}"]


CORE_LIMIT = core_limit_prefix()

# SITEMAP_TEST_PRELOAD=/usr/lib/x86_64-linux-gnu/libasan.so.8 (tools/check
# --asan): the sanitizer runtime a MODULE built with -fsanitize=address
# needs, loaded into httpd only (not into the test's own tools).  Every
# report it writes (log_path: the server's sanitizer/ directory) fails the
# test that ran the server.
PRELOAD = os.environ.get("SITEMAP_TEST_PRELOAD", "")


def httpd_env(root):
    """The environment httpd runs in: the caller's, plus the sanitizer's
    runtime and where its reports go when PRELOAD is set."""
    if not PRELOAD:
        return None
    reports = os.path.join(root, "sanitizer")
    return dict(os.environ, LD_PRELOAD=PRELOAD,
                ASAN_OPTIONS=("detect_leaks=0:handle_abort=1:"
                              f"log_path={reports}/asan"),
                UBSAN_OPTIONS=("print_stacktrace=1:halt_on_error=1:"
                               f"log_path={reports}/ubsan"))


def port_open(port, host="127.0.0.1"):
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def pid_alive(pid):
    """True while pid is a live (not zombie) process."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except OSError:
        return False


def children_of(pid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
            if int(rest[1]) == pid and rest[0] not in ("Z", "X"):
                out.append(int(d))
        except (OSError, IndexError, ValueError):
            pass
    return out


@contextlib.contextmanager
def as_run_user():
    """Run a block with the children's uid/gid (when we are root), so that
    files SQLite creates beside the store (-wal, -shm) belong to them."""
    if not IS_ROOT:
        yield
        return
    os.setegid(RUN_GID)
    os.seteuid(RUN_UID)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


def sha_htpasswd(user, password):
    import base64
    import hashlib
    digest = base64.b64encode(hashlib.sha1(password.encode()).digest()).decode()
    return f"{user}:{{SHA}}{digest}\n"


# ---------------------------------------------------------------------------
# HTTP over raw sockets: the request target is sent byte for byte.

class Response:
    def __init__(self, status, reason, headers, body, elapsed):
        self.status = status
        self.reason = reason
        self.headers = headers          # list of (name, value)
        self.body = body
        self.elapsed = elapsed

    def header(self, name, default=None):
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return default

    def __repr__(self):
        return f"<Response {self.status} {self.reason} {self.headers!r}>"


def _dechunk(data):
    out = b""
    while data:
        line, _, data = data.partition(b"\r\n")
        size = int(line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            break
        out += data[:size]
        data = data[size + 2:]
    return out


def http_request(port, method, target, host, headers=None, body=None,
                 timeout=15.0, version="HTTP/1.1", source=None):
    """source: the client's address (another 127.0.0.x: another client)."""
    if isinstance(target, str):
        target = target.encode("utf-8")
    lines = [method.encode() + b" " + target + b" " + version.encode()]
    hdrs = []
    if host is not None:
        hdrs.append(("Host", host))
    hdrs.extend((headers or {}).items() if isinstance(headers, dict) else (headers or []))
    if body is not None:
        if isinstance(body, str):
            body = body.encode()
        hdrs.append(("Content-Length", str(len(body))))
    hdrs.append(("Connection", "close"))
    for k, v in hdrs:
        lines.append(f"{k}: {v}".encode("latin-1"))
    raw = b"\r\n".join(lines) + b"\r\n\r\n" + (body or b"")
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                  source_address=(source, 0) if source
                                  else None) as s:
        s.sendall(raw)
        chunks = []
        while True:
            try:
                b = s.recv(65536)
            except ConnectionResetError:
                break
            if not b:
                break
            chunks.append(b)
    elapsed = time.monotonic() - t0
    data = b"".join(chunks)
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        raise ConnectionError(f"no complete response to {method} {target!r}: {data[:200]!r}")
    hlines = head.decode("latin-1").split("\r\n")
    parts = hlines[0].split(" ", 2)
    status = int(parts[1])
    reason = parts[2] if len(parts) > 2 else ""
    rheaders = []
    for ln in hlines[1:]:
        k, _, v = ln.partition(":")
        rheaders.append((k.strip(), v.strip()))
    resp = Response(status, reason, rheaders, rest, elapsed)
    if method == "HEAD":
        resp.body = b""
    elif (resp.header("Transfer-Encoding") or "").lower() == "chunked":
        resp.body = _dechunk(rest)
    return resp


# ---------------------------------------------------------------------------

class Server:
    """One httpd instance in its own ServerRoot.

    conf         configuration text appended after the module is loaded
    mpm          event, worker or prefork
    sitemap      when true, the main server gets `Sitemap On`, the store
                 `db/sitemap.db` and `SitemapFlushInterval <flush>` (none
                 when flush is None: the module's default)
    mpm_conf     replaces the small default MPM sizing
    server_name  the main server's ServerName (default 127.0.0.1:PORT;
                 False: none)
    """

    def __init__(self, root, mpm=None, conf="", loglevel="warn sitemap:debug",
                 sitemap=True, flush="100ms", db="db/sitemap.db",
                 mpm_conf=None, server_name=None, load_module=True,
                 modules=()):
        self.root = root
        self.mpm = mpm or DEFAULT_MPM
        self.conf_text = conf
        self.loglevel = loglevel
        self.sitemap = sitemap
        self.flush = flush
        self.db = db
        self.mpm_conf = mpm_conf
        self.load_module = load_module
        self.extra_modules = tuple(modules)
        self.port = free_port()
        # server_name=False: no ServerName line (the Host sent is then
        # the address)
        self.server_name_line = server_name is not False
        self.server_name = server_name or f"127.0.0.1:{self.port}"
        self.base = f"http://127.0.0.1:{self.port}"
        self.docroot = os.path.join(root, "htdocs")
        self.conf_path = os.path.join(root, "conf", "httpd.conf")
        self.error_log = os.path.join(root, "logs", "error_log")
        self.pid_file = os.path.join(root, "run", "httpd.pid")
        # httpd's event MPM, not the module, once under load (CI at
        # 0021da3, a CGI test, a graceful stop): a connection's socket
        # gone before its lingering close was queued.  The module never
        # touches a client's socket.
        self.expected = [re.compile(r"AH03092: process_lingering_close")]
        self.started = False
        self.pid = None
        self._sentinels = 0
        for d in ("htdocs", "cgi-bin", "logs", "run", "conf", "db"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
            os.chmod(os.path.join(root, d), 0o755)
        # A crashing child's core (CoreDumpDirectory), for the backtrace
        # the fixture's teardown prints (crash_report).
        os.makedirs(os.path.join(root, "cores"), exist_ok=True)
        os.chmod(os.path.join(root, "cores"), 0o1777)
        os.makedirs(os.path.join(root, "sanitizer"), exist_ok=True)
        os.chmod(os.path.join(root, "sanitizer"), 0o1777)
        if IS_ROOT:
            os.chown(os.path.join(root, "db"), RUN_UID, RUN_GID)
        self.write("htdocs/page.html", "<html><body>page</body></html>\n")
        self.write("htdocs/index.html", "<html><body>index</body></html>\n")

    # -- files -------------------------------------------------------------
    def path(self, rel):
        return os.path.join(self.root, rel)

    def write(self, rel, content, mode=0o644, mtime=None):
        """Write a file under the ServerRoot, creating world-readable
        directories on the way."""
        p = self.path(rel)
        d = os.path.dirname(p)
        if not os.path.isdir(d):
            os.makedirs(d)
        dd = d
        while dd.startswith(self.root) and dd != self.root:
            os.chmod(dd, 0o755)
            dd = os.path.dirname(dd)
        with open(p, "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)
        os.chmod(p, mode)
        if mtime is not None:
            os.utime(p, (mtime, mtime))
        return p

    def cgi(self, name, script):
        """A /bin/sh CGI script in cgi-bin/ (served as /cgi-bin/NAME)."""
        return self.write(os.path.join("cgi-bin", name),
                          "#!/bin/sh\n" + script, mode=0o755)

    @property
    def db_path(self):
        return self.db if os.path.isabs(self.db) else self.path(self.db)

    # -- configuration -----------------------------------------------------
    def default_mpm_conf(self):
        if self.mpm == "prefork":
            return ("StartServers 2\nMinSpareServers 1\nMaxSpareServers 3\n"
                    "ServerLimit 4\nMaxRequestWorkers 4\n"
                    "MaxConnectionsPerChild 0\n")
        # One child process: its recorder queue sees every request in order
        # (a second slot lets a graceful restart start the new generation
        # while the old one finishes).
        return ("StartServers 1\nServerLimit 2\nThreadLimit 8\n"
                "ThreadsPerChild 8\nMinSpareThreads 1\nMaxSpareThreads 8\n"
                "MaxRequestWorkers 8\nMaxConnectionsPerChild 0\n")

    def config(self):
        m = MODULEDIR
        mods = ["authz_core", "authn_core", "authn_file", "authz_user",
                "auth_basic", "mime", "dir", "rewrite", "alias", "headers",
                "setenvif", "include", "env"]
        mods.append("cgi" if self.mpm == "prefork" else "cgid")
        mods.extend(x for x in self.extra_modules if x not in mods)
        load = "\n".join(f"LoadModule {x}_module {m}/mod_{x}.so" for x in mods)
        user = f"User {RUN_USER}\nGroup {RUN_USER}\n" if IS_ROOT else ""
        loglevel = f"{self.loglevel} core:notice mpm_{self.mpm}:notice"
        if not self.load_module:
            loglevel = re.sub(r"\bsitemap:\w+", "", loglevel)
        sm = ""
        if self.load_module:
            # The module's state directory in the test's root: a store
            # given as a URI keeps its spills and renditions there, never
            # in the system's /var/lib/apache2/sitemap.
            sm = (f'LoadModule sitemap_module "{MODULE}"\n'
                  "SitemapStateDir state\n")
            if self.sitemap:
                sm += f"Sitemap On\nSitemapDatabase {self.db}\n"
                if self.flush:
                    sm += f"SitemapFlushInterval {self.flush}\n"
        return f"""# generated by t/integration/conftest.py
ServerRoot "{self.root}"
Listen 127.0.0.1:{self.port}
{"ServerName " + self.server_name if self.server_name_line else ""}
PidFile run/httpd.pid
DefaultRuntimeDir run
ErrorLog logs/error_log
CoreDumpDirectory cores
LoadModule mpm_{self.mpm}_module {m}/mod_mpm_{self.mpm}.so
{load}
{user}
{self.mpm_conf if self.mpm_conf is not None else self.default_mpm_conf()}
GracefulShutdownTimeout 20
Timeout 20
KeepAlive Off
TypesConfig /etc/mime.types
AddType text/html .shtml
AddOutputFilter INCLUDES .shtml
LogFormat "%v %h %l %u [%{{%s}}t] \\"%r\\" %>s %b pid=%P" common
CustomLog logs/access_log common
DocumentRoot "{self.docroot}"
DirectoryIndex index.html
<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "{self.docroot}">
    Options FollowSymLinks Includes
    AllowOverride None
    Require all granted
</Directory>
ScriptAlias /cgi-bin/ "{self.root}/cgi-bin/"
<Directory "{self.root}/cgi-bin">
    Options +ExecCGI
    Require all granted
</Directory>
{sm}
LogLevel {loglevel}
{self.conf_text}
"""

    def write_conf(self, conf=None):
        if conf is not None:
            self.conf_text = conf
        with open(self.conf_path, "w") as f:
            f.write(self.config())
        os.chmod(self.conf_path, 0o644)

    # -- control -----------------------------------------------------------
    def ctl(self, *args, timeout=60):
        return subprocess.run([*CORE_LIMIT, HTTPD, "-f", self.conf_path,
                               *args],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, errors="replace", timeout=timeout,
                              env=httpd_env(self.root))

    def sanitizer_report(self):
        """What the sanitizer runtime (PRELOAD) reported in this server's
        processes: "" when nothing."""
        out = []
        for f in sorted(glob.glob(self.path("sanitizer/*")))[:4]:
            with open(f, errors="replace") as fh:
                out.append(f"--- {f}:\n" + fh.read()[-12000:])
        return "\n".join(out)

    def crash_report(self):
        """Backtraces (gdb) of the cores a crashed child left, if any: where
        the kernel writes cores to a file (core_pattern "core") and gdb is
        installed; "" otherwise."""
        cores = sorted(glob.glob(self.path("cores/core*")))
        if not cores or not shutil.which("gdb"):
            return ""
        out = []
        for core in cores[:2]:
            try:
                r = subprocess.run(["gdb", "-batch", "-nx", "-ex",
                                    "thread apply all bt 25", HTTPD, core],
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True,
                                   errors="replace", timeout=120)
                out.append(f"--- {core}:\n" + r.stdout[-12000:])
            except subprocess.TimeoutExpired:
                out.append(f"--- {core}: gdb took over 120 s")
        return "\n".join(out)

    def log_text(self):
        try:
            with open(self.error_log, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def log_tail(self, n=40):
        return "\n".join(self.log_text().splitlines()[-n:])

    def start(self):
        self.write_conf()
        log_off = len(self.log_text())
        r = self.ctl("-k", "start")
        if r.returncode != 0:
            raise AssertionError(
                f"httpd failed to start (exit {r.returncode})\n"
                f"stdout: {r.stdout}\nstderr: {r.stderr}\n"
                f"error_log:\n{self.log_tail()}")
        self.started = True
        reaper.register(id(self), self._reap)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.pid is None:
                try:
                    with open(self.pid_file) as f:
                        self.pid = int(f.read().strip())
                except (OSError, ValueError):
                    pass
            if self.pid is not None and port_open(self.port):
                return self
            if self.pid is not None and not pid_alive(self.pid):
                break
            if STARTUP_FAILED.search(self.log_text()[log_off:]):
                self.started = False
                raise AssertionError(
                    "httpd exited during start-up (`-k start` itself returned 0)\n"
                    f"error_log:\n{self.log_tail()}")
            time.sleep(0.05)
        raise AssertionError(f"httpd did not come up on port {self.port}\n"
                             f"error_log:\n{self.log_tail()}")

    def _wait_gone(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not pid_alive(self.pid):
                return True
            time.sleep(0.05)
        return False

    def _reap(self):
        """At exit (reaper): stop it, children and all, without waiting."""
        with contextlib.suppress(Exception):
            self.stop(timeout=5)

    def stop(self, graceful=False, timeout=30):
        """Stop httpd (graceful-stop when asked) and wait for the parent
        process to be gone."""
        reaper.unregister(id(self))
        if not self.started:
            return
        pid = self.pid
        self.started = False
        if pid is None:
            return
        r = self.ctl("-k", "graceful-stop" if graceful else "stop")
        if r.returncode != 0:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGWINCH if graceful else signal.SIGTERM)
        if not self._wait_gone(timeout):
            kids = children_of(pid)
            for c in [pid] + kids:
                with contextlib.suppress(OSError):
                    os.kill(c, signal.SIGKILL)
            self._wait_gone(5)
            raise AssertionError(f"httpd (pid {pid}) did not stop in {timeout}s")
        # children of a stopped parent go too (prefork/cgid).
        self.pid = None
        if os.path.exists(self.pid_file):
            with contextlib.suppress(OSError):
                os.unlink(self.pid_file)

    def graceful_stop(self, timeout=30):
        self.stop(graceful=True, timeout=timeout)

    def restarts(self):
        return self.log_text().count("resuming normal operations")

    def graceful(self, conf=None, wait=True):
        """`-k graceful`, after rewriting the configuration (when conf is
        given); waits until the parent has re-read it."""
        assert self.started
        if conf is not None:
            self.conf_text = conf
        self.write_conf()
        before = self.restarts()
        r = self.ctl("-k", "graceful")
        assert r.returncode == 0, f"graceful failed: {r.stdout}{r.stderr}"
        if not wait:
            return
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.restarts() > before and port_open(self.port):
                return
            assert pid_alive(self.pid), f"httpd died on graceful:\n{self.log_tail()}"
            time.sleep(0.05)
        raise AssertionError(f"graceful restart not done:\n{self.log_tail()}")

    def restart(self):
        """Start again after a stop (same port, same ServerRoot)."""
        assert not self.started
        return self.start()

    # -- config errors -----------------------------------------------------
    def config_fails(self, *needles, conf=None, check_syntax=True):
        """Assert that httpd refuses this configuration: `-t` (when
        check_syntax) and `-k start` both fail, and the messages (stdout,
        stderr and the error log) contain every needle."""
        if conf is not None:
            self.conf_text = conf
        self.write_conf()
        msgs = []
        if check_syntax:
            r = self.ctl("-t")
            out = r.stdout + r.stderr
            assert r.returncode != 0, f"httpd -t accepted the configuration:\n{out}"
            msgs.append(out)
        log_off = len(self.log_text())
        r = self.ctl("-k", "start")
        out = r.stdout + r.stderr + self.log_text()
        if r.returncode == 0:
            # `-k start` returned 0: the parent either exits during the
            # second configuration pass (after detaching) or really runs.
            deadline = time.monotonic() + 10
            started = False
            while time.monotonic() < deadline:
                if STARTUP_FAILED.search(self.log_text()[log_off:]):
                    break
                # the listener is bound in the first pass already: only a
                # pid file says that the server really runs
                if os.path.exists(self.pid_file) and port_open(self.port):
                    started = True
                    break
                time.sleep(0.05)
            out = r.stdout + r.stderr + self.log_text()
            if started or not STARTUP_FAILED.search(self.log_text()[log_off:]):
                with contextlib.suppress(OSError, ValueError):
                    with open(self.pid_file) as f:
                        self.pid = int(f.read().strip())
                    self.started = True
                    self.stop()
                raise AssertionError(f"httpd started with a bad configuration:\n{out}")
            warnings.warn("httpd refused the configuration only after `-k start` "
                          "had returned 0 (message in the error log only): "
                          + " ".join(needles))
        msgs.append(out)
        # the refusal itself is logged at emerg: that is expected here
        self.expect_log(".")
        for m in msgs:
            for n in needles:
                assert n in m, f"{n!r} not in httpd's message:\n{m}"
        return msgs

    # -- HTTP --------------------------------------------------------------
    def request(self, method, target, host=None, headers=None, body=None, **kw):
        if host is None:
            host = self.server_name
        return http_request(self.port, method, target, host, headers, body, **kw)

    def get(self, target, **kw):
        return self.request("GET", target, **kw)

    def get_ok(self, target, **kw):
        r = self.get(target, **kw)
        assert r.status == 200, f"GET {target!r}: {r.status} {r.reason}\n{self.log_tail(10)}"
        return r

    # -- the error log -----------------------------------------------------
    def expect_log(self, regex):
        """Declare that error-log lines matching regex are expected."""
        self.expected.append(re.compile(regex))

    def log_lines(self, module=None, level=None):
        out = []
        for ln in self.log_text().splitlines():
            m = LOG_LINE.match(ln)
            if not m:
                continue
            if module and m.group(1) != module:
                continue
            if level and m.group(2) not in (level if isinstance(level, (tuple, set, list)) else (level,)):
                continue
            out.append(ln)
        return out

    def wait_log(self, regex, timeout=WAIT, module=None, level=None):
        rx = re.compile(regex)
        deadline = time.monotonic() + timeout
        while True:
            hits = [ln for ln in self.log_lines(module, level) if rx.search(ln)]
            if hits:
                return hits
            if time.monotonic() > deadline:
                raise AssertionError(f"no error-log line matching {regex!r} "
                                     f"(module={module}, level={level}) in "
                                     f"{timeout}s:\n{self.log_tail()}")
            time.sleep(0.1)

    def unexpected_log_lines(self):
        bad = []
        for ln in self.log_text().splitlines():
            m = LOG_LINE.match(ln)
            if m:
                module, level = m.group(1), m.group(2)
                suspicious = (level in BAD_LEVELS
                              or (module == "sitemap" and level == "warn")
                              or "AH00052" in ln or "exit signal" in ln)
            else:
                suspicious = bool(re.search(r"Segmentation|Aborted|assert|core dumped", ln))
            if suspicious and not any(rx.search(ln) for rx in self.expected):
                bad.append(ln)
        return bad

    # -- the store ---------------------------------------------------------
    def query(self, sql, params=(), db=None):
        """Run sql on the store, read-only, as the children's user.  None
        when the file does not exist (the query never creates it)."""
        path = db or self.db_path
        if not os.path.exists(path):
            return None
        uri = "file:" + urllib.parse.quote(path) + "?mode=ro"
        with as_run_user():
            con = sqlite3.connect(uri, uri=True, timeout=5)
            try:
                return con.execute(sql, params).fetchall()
            finally:
                con.close()

    def try_query(self, sql, params=(), db=None):
        try:
            return self.query(sql, params, db), None
        except sqlite3.Error as e:
            return None, e

    def urls(self, base=None, db=None):
        """The set of URLs stored for base (default: this server's)."""
        rows, err = self.try_query(
            "SELECT u.url FROM urls u JOIN sites s ON s.id = u.site_id "
            "WHERE s.base = ?", (base or self.base,), db)
        return set(r[0] for r in rows or ())

    def all_urls(self, db=None):
        """{base: set(urls)} of the whole store."""
        rows, err = self.try_query(
            "SELECT s.base, u.url FROM urls u JOIN sites s ON s.id = u.site_id", (), db)
        out = {}
        for b, u in rows or ():
            out.setdefault(b, set()).add(u)
        return out

    def row(self, url, base=None, db=None):
        """The urls row of url as a dict (None when absent)."""
        rows, err = self.try_query(
            "SELECT u.* FROM urls u JOIN sites s ON s.id = u.site_id "
            "WHERE s.base = ? AND u.url = ?", (base or self.base, url), db)
        if not rows:
            return None
        cols, _ = self.try_query("SELECT name FROM pragma_table_info('urls')", (), db)
        return dict(zip([c[0] for c in cols], rows[0]))

    def _describe(self, base, db):
        rows, err = self.try_query(
            "SELECT s.base, u.url FROM urls u JOIN sites s ON s.id = u.site_id", (), db)
        return (f"store {db or self.db_path}: {sorted(rows or [])!r}"
                f"{' (error: %s)' % err if err else ''}\nerror_log tail:\n{self.log_tail(25)}")

    def wait_recorded(self, *urls, base=None, db=None, timeout=WAIT):
        want = set(urls)
        deadline = time.monotonic() + timeout
        while True:
            have = self.urls(base, db)
            if want <= have:
                return have
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"not recorded under {base or self.base} within {timeout}s: "
                    f"{sorted(want - have)!r}\n{self._describe(base, db)}")
            time.sleep(0.1)

    def wait_absent(self, *urls, base=None, db=None, timeout=WAIT):
        want = set(urls)
        deadline = time.monotonic() + timeout
        while True:
            rows, err = self.try_query("SELECT 1", (), db)
            have = self.urls(base, db)
            if err is None and not (want & have):
                return have
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"still stored under {base or self.base} after {timeout}s: "
                    f"{sorted(want & have)!r}\n{self._describe(base, db)}")
            time.sleep(0.1)

    def sentinel(self, host=None, base=None, docroot=None, db=None):
        """Request a fresh page that is recorded and wait for it: every
        request this client made before it (on the same process queue) has
        been handled by the writer by then."""
        self._sentinels += 1
        name = f"sentinel-{self._sentinels}.html"
        droot = docroot or self.docroot
        p = os.path.join(droot, name)
        with open(p, "w") as f:
            f.write("<html><body>sentinel</body></html>\n")
        os.chmod(p, 0o644)
        r = self.get("/" + name, host=host)
        assert r.status == 200, f"sentinel /{name}: {r.status}"
        self.wait_recorded("/" + name, base=base, db=db)
        return "/" + name

    def assert_not_recorded(self, *urls, host=None, base=None, docroot=None,
                            db=None, stop=None):
        """Assert that none of urls is stored, after a sentinel request
        (and, under prefork or when stop=True, a graceful-stop, which
        flushes every process's queue; the server is started again)."""
        self.sentinel(host=host, base=base, docroot=docroot, db=db)
        if stop is None:
            stop = self.mpm == "prefork"
        if stop:
            self.graceful_stop()
            self.restart()
        have = self.urls(base, db)
        assert not (set(urls) & have), (
            f"recorded, but should not be: {sorted(set(urls) & have)!r}\n"
            f"{self._describe(base, db)}")


@pytest.fixture
def tmp_root():
    d = tempfile.mkdtemp(prefix="sitemap-it-")
    os.chmod(d, 0o755)          # mkdtemp makes it 0700: www-data must traverse
    yield d
    if not KEEP:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def make_server(tmp_root, request):
    """Factory: make_server(**Server kwargs) -> Server (not started).  Every
    server is stopped at teardown and its error log checked."""
    servers = []

    def factory(**kw):
        n = len(servers)
        root = tmp_root if n == 0 else os.path.join(tmp_root, f"srv{n}")
        if n:
            os.makedirs(root)
            os.chmod(root, 0o755)
        kw.setdefault("mpm", getattr(request, "param", None))
        if kw.get("load_module", True):
            assert os.path.exists(MODULE), f"mod_sitemap is not built: {MODULE}"
        s = Server(root, **kw)
        servers.append(s)
        return s

    yield factory

    problems = []
    rep = getattr(request.node, "rep_call", None)
    call_failed = rep is not None and rep.failed
    for s in servers:
        try:
            s.stop()
        except AssertionError as e:
            problems.append(str(e))
        bad = s.unexpected_log_lines()
        if bad and not call_failed:
            problems.append(f"unexpected error-log lines in {s.error_log}:\n" + "\n".join(bad))
        crashes = s.crash_report()
        if crashes:
            problems.append(crashes)
        reports = s.sanitizer_report()
        if reports:
            problems.append(reports)
        leaks = pg.password_in_logs(s.path("logs"))
        if leaks:
            problems.append("the PostgreSQL test password is in " + ", ".join(leaks))
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)



@pytest.fixture
def http_backend():
    """Factory: http_backend(handler_class, **attrs) starts a
    ThreadingHTTPServer on 127.0.0.1 (a backend for mod_proxy tests) whose
    handler is a subclass of handler_class with attrs set, and returns its
    port; every one is shut down at teardown."""
    servers = []

    def start(handler_class, **attrs):
        handler = type("H", (handler_class,), attrs)
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return httpd.server_address[1]

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


@pytest.fixture
def server(make_server):
    """A started server with the default configuration (Sitemap On in the
    main server, store db/sitemap.db, flush every 100ms)."""
    return make_server().start()


@pytest.fixture(params=MPMS)
def mpm(request):
    return request.param


def pytest_report_header(config):
    have = "present" if os.path.exists(MODULE) else "MISSING"
    return [f"httpd: {HTTPD}; modules: {MODULEDIR}",
            f"mod_sitemap: {MODULE} ({have}); default MPM: {DEFAULT_MPM}; root: {IS_ROOT}"]


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)



def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: takes tens of seconds; run first, so that the "
        "suite's workers (SITEMAP_TEST_JOBS) do not wait for one at the end")


def pytest_collection_modifyitems(config, items):
    # Longest first: a half-minute test collected late would keep one
    # worker busy while the others have nothing left (stable: the same
    # order in every worker, as pytest-xdist requires).
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
