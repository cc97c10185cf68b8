# SPDX-License-Identifier: Apache-2.0
"""bench/benchlib.py: what the mod_sitemap benchmarks share.

Building the helpers, standalone httpd instances on 127.0.0.1 (a complete
httpd.conf in a fresh ServerRoot, as the integration tests do), wrk runs,
the store, /proc, and the result table.  Used by bench/run.
"""

import contextlib
import os
import pwd
import random
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
import urllib.parse

BENCH = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(BENCH)
# The tests' helpers the bench shares (ports.py, pg.py).
sys.path.insert(0, os.path.join(TOP, "t", "integration"))
from ports import free_port  # noqa: E402
IS_ROOT = os.geteuid() == 0
RUN_USER = "www-data"
if IS_ROOT:
    _pw = pwd.getpwnam(RUN_USER)
    RUN_UID, RUN_GID = _pw.pw_uid, _pw.pw_gid
else:
    RUN_UID, RUN_GID = os.geteuid(), os.getegid()

# The base URL of the bench site, in every vhost (SitemapBaseURL) and in
# the filler: the module's site name must be exactly this.
BASE = "http://bench.example"


class Failure(Exception):
    """Something is functionally broken: bench/run exits non-zero."""


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr,
          flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, errors="replace", **kw)


def apxs(var):
    for tool in ("apxs", "apxs2", "/usr/bin/apxs"):
        if shutil.which(tool):
            r = sh([tool, "-q", var])
            if r.returncode == 0 and r.stdout.strip():
                return r.stdout.strip()
    return None


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def median_ci(xs, level=0.95, n=2000):
    """A bootstrap confidence interval of the median of xs."""
    if len(xs) < 3:
        return min(xs), max(xs)
    rng = random.Random(12345)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs)))
                  for _ in range(n))
    k = int((1 - level) / 2 * n)
    return meds[k], meds[n - 1 - k]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def machine():
    model, cores = "unknown", 0
    with open("/proc/cpuinfo") as f:
        for ln in f:
            if ln.startswith("model name") and model == "unknown":
                model = ln.split(":", 1)[1].strip()
            if ln.startswith("processor"):
                cores += 1
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) // 1024
    return {"cores": cores, "model": model, "mem_mb": mem,
            "kernel": os.uname().release}


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
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
    return sorted(out)


def cpu_ns(pids, thread_name=None):
    """CPU time (ns) used so far by every thread of these processes
    (/proc/PID/task/TID/schedstat), or only by the threads of that name
    (comm, e.g. the module's "sitemap-writer"); the benchmarks' processes
    keep their threads, so differences are exact."""
    total = 0
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                if thread_name is not None:
                    with open(f"/proc/{pid}/task/{tid}/comm") as f:
                        if f.read().strip() != thread_name:
                            continue
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return total


def proc_status_kb(pid, field):
    """VmRSS, VmHWM, ... of a process, in kB."""
    with open(f"/proc/{pid}/status") as f:
        for ln in f:
            if ln.startswith(field + ":"):
                return int(ln.split()[1])
    raise Failure(f"no {field} in /proc/{pid}/status")


@contextlib.contextmanager
def as_run_user():
    """Touch the store as the children's user (when we are root), so that
    files SQLite creates beside it (-wal, -shm) belong to them."""
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


def query(db, sql, params=()):
    if not os.path.exists(db):
        return None
    uri = "file:" + urllib.parse.quote(db) + "?mode=ro"
    with as_run_user():
        con = sqlite3.connect(uri, uri=True, timeout=30)
        try:
            return con.execute(sql, params).fetchall()
        finally:
            con.close()


def give_to_run_user(*paths):
    if not IS_ROOT:
        return
    for p in paths:
        if os.path.exists(p):
            os.chown(p, RUN_UID, RUN_GID)


# ---------------------------------------------------------------------------
# CPU placement: on a machine with two or more CPUs httpd runs on the last
# one and wrk on the first, so the server's throughput (and the module's
# writer thread, which shares the server's CPU) is what is measured.

class Cpus:
    def __init__(self, pin=True):
        cpus = sorted(os.sched_getaffinity(0))
        self.pin = pin and len(cpus) >= 2 and shutil.which("taskset")
        self.server = str(cpus[-1])
        self.client = str(cpus[0])

    def server_cmd(self, cmd):
        return ["taskset", "-c", self.server, *cmd] if self.pin else cmd

    def client_cmd(self, cmd):
        return ["taskset", "-c", self.client, *cmd] if self.pin else cmd

    def describe(self):
        if not self.pin:
            return "not pinned"
        return f"httpd on CPU {self.server}, wrk on CPU {self.client}"


# ---------------------------------------------------------------------------
# Building

class Build:
    """The module under test, copied once (other engineers may rebuild the
    tree meanwhile), and the bench's own helpers, built from bench/."""

    def __init__(self, work):
        self.dir = os.path.join(work, "bin")
        os.makedirs(self.dir, exist_ok=True)
        self.module = os.path.join(self.dir, "mod_sitemap.so")
        self.naive = os.path.join(self.dir, "mod_sitemap_naive.so")
        self.fill = os.path.join(self.dir, "fill")
        self.ctl = os.path.join(self.dir, "sitemapctl")
        self.head_scan = os.path.join(self.dir, "head_scan")

    def run(self):
        builddir = os.environ.get("TOP_BUILDDIR") or TOP
        module = os.environ.get("MODULE") or os.path.join(builddir,
                                                          "mod_sitemap.so")
        if not os.path.isfile(module):
            raise Failure(f"{module} does not exist: build the module first "
                          "(autoreconf -fi && ./configure && make)")
        # The tree's own module must be its sources' (a stale build, say
        # one left by an experiment with other flags, measured as the
        # tree's once): make's question mode says whether it is.
        if not os.environ.get("MODULE") \
                and os.path.isfile(os.path.join(builddir, "Makefile")) \
                and sh(["make", "-q", "-C", builddir,
                        "mod_sitemap.la"]).returncode != 0:
            raise Failure(f"{module} is older than its sources: run make "
                          "first (or name a build with MODULE=...)")
        shutil.copy2(module, self.module)
        os.chmod(self.module, 0o755)

        ctl = os.path.join(builddir, "sitemapctl")
        if os.path.isfile(ctl):
            shutil.copy2(ctl, self.ctl)
        pkgs = ["apr-1", "apr-util-1", "sqlite3", "libpq", "libpcre2-8", "zlib",
                "libidn2"]
        r = sh(["pkg-config", "--cflags", "--libs", *pkgs])
        if r.returncode != 0:
            raise Failure(f"pkg-config {' '.join(pkgs)}: {r.stderr.strip()}")
        cflags = sh(["pkg-config", "--cflags", *pkgs]).stdout.split()
        libs = sh(["pkg-config", "--libs", *pkgs]).stdout.split()
        cc = os.environ.get("CC", "gcc")
        srcdir = os.path.join(TOP, "src")

        # The filler links the core exactly as built for the module (the
        # libtool convenience archive); without it, the core's sources.
        archive = os.path.join(builddir, "src", ".libs", "libsitemap.a")
        if os.path.isfile(archive):
            local = os.path.join(self.dir, "libsitemap.a")
            shutil.copy2(archive, local)
            core = [local]
        else:
            core = sorted(os.path.join(srcdir, d, f)
                          for d in os.listdir(srcdir) if d != "ctl"
                          and os.path.isdir(os.path.join(srcdir, d))
                          for f in os.listdir(os.path.join(srcdir, d))
                          if f.endswith(".c") and not f.endswith("_none.c"))
        self._cc([cc, "-O2", "-Wall", "-Wextra", "-I", srcdir, *cflags,
                  "-o", self.fill, os.path.join(BENCH, "fill.c"), *core,
                  *libs, "-lpthread"], "fill")
        self._cc([cc, "-O2", "-Wall", "-Wextra", "-I", srcdir, *cflags,
                  "-o", self.head_scan, os.path.join(BENCH, "head_scan.c"),
                  *core, *libs, "-lpthread"], "head_scan")

        incdir = apxs("INCLUDEDIR") or "/usr/include/apache2"
        self._cc([cc, "-O2", "-Wall", "-Wextra", "-fPIC", "-shared",
                  "-I", incdir, *cflags, "-o", self.naive,
                  os.path.join(BENCH, "naive", "mod_sitemap_naive.c"),
                  "-lsqlite3"], "the naive module")
        for p in (self.dir, self.naive, self.fill, self.head_scan):
            os.chmod(p, 0o755)

    @staticmethod
    def _cc(cmd, what):
        r = sh(cmd)
        if r.returncode != 0:
            raise Failure(f"cannot build {what}:\n{' '.join(cmd)}\n"
                          f"{r.stdout}{r.stderr}")


# ---------------------------------------------------------------------------
# httpd

HTTPD = os.environ.get("HTTPD") or (
    os.path.join(apxs("SBINDIR"), apxs("TARGET"))
    if apxs("SBINDIR") and apxs("TARGET") else "/usr/sbin/apache2")
MODULEDIR = os.environ.get("HTTPD_MODULEDIR") or apxs("LIBEXECDIR") \
    or "/usr/lib/apache2/modules"

MPM_CONF = {
    # A fixed number of processes: none is started or stopped while
    # measuring, so every process's memory of recorded URLs stays warm.
    "event": """StartServers 1
ServerLimit 1
ThreadLimit 25
ThreadsPerChild 25
MinSpareThreads 1
MaxSpareThreads 25
MaxRequestWorkers 25
MaxConnectionsPerChild 0
""",
    "prefork": """StartServers 10
MinSpareServers 1
MaxSpareServers 10
ServerLimit 10
MaxRequestWorkers 10
MaxConnectionsPerChild 0
""",
    # Serving: one process, so that its memory is the server's.
    "event-1": """StartServers 1
ServerLimit 1
ThreadLimit 16
ThreadsPerChild 16
MinSpareThreads 1
MaxSpareThreads 16
MaxRequestWorkers 16
MaxConnectionsPerChild 0
""",
}

STARTUP_FAILED = re.compile(r"AH0001[3-7]|AH00020|Configuration Failed|"
                            r"Unable to open logs|could not bind|"
                            r"no listening sockets")


class Httpd:
    """One httpd in its own ServerRoot (root/), on a free port.

    module_conf: the lines that differ between configurations compared
    (LoadModule of the module under test and its directives); everything
    else, access logging included, is the same."""

    def __init__(self, root, mpm, module_conf="", extra_conf="", cpus=None):
        self.root = root
        self.mpm = mpm
        self.module_conf = module_conf
        self.extra_conf = extra_conf
        self.cpus = cpus
        self.port = free_port()
        self.htdocs = os.path.join(root, "htdocs")
        self.conf_path = os.path.join(root, "conf", "httpd.conf")
        self.error_log = os.path.join(root, "logs", "error_log")
        self.access_log = os.path.join(root, "logs", "access_log")
        self.pid_file = os.path.join(root, "run", "httpd.pid")
        self.pid = None
        for d in ("", "htdocs", "logs", "run", "conf", "db"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
            os.chmod(os.path.join(root, d), 0o755)
        give_to_run_user(os.path.join(root, "db"))

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def path(self, rel):
        return os.path.join(self.root, rel)

    def config(self):
        m = MODULEDIR
        mpm = self.mpm.split("-")[0]
        user = f"User {RUN_USER}\nGroup {RUN_USER}\n" if IS_ROOT else ""
        return f"""# generated by bench/benchlib.py
ServerRoot "{self.root}"
Listen 127.0.0.1:{self.port}
ServerName bench.example
PidFile run/httpd.pid
DefaultRuntimeDir run
ErrorLog logs/error_log
LogLevel warn
LoadModule mpm_{mpm}_module {m}/mod_mpm_{mpm}.so
LoadModule authz_core_module {m}/mod_authz_core.so
LoadModule mime_module {m}/mod_mime.so
LoadModule dir_module {m}/mod_dir.so
LoadModule rewrite_module {m}/mod_rewrite.so
{user}
{MPM_CONF[self.mpm]}
GracefulShutdownTimeout 300
Timeout 60
KeepAlive On
KeepAliveTimeout 60
MaxKeepAliveRequests 0
TypesConfig /etc/mime.types
LogFormat "%>s %U" bench
CustomLog logs/access_log bench
DocumentRoot "{self.htdocs}"
DirectoryIndex index.html
<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "{self.htdocs}">
    AllowOverride None
    Require all granted
</Directory>
RewriteEngine On
RewriteRule ^/crawl/ /page.html [L]
{self.extra_conf}
# ---- the configuration under test
{self.module_conf}
"""

    def log_text(self):
        try:
            with open(self.error_log, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def log_tail(self, n=30):
        return "\n".join(self.log_text().splitlines()[-n:])

    def problems(self):
        """Error-log lines that say something went wrong."""
        bad = []
        for ln in self.log_text().splitlines():
            if "AH00161" in ln:     # MaxRequestWorkers reached: the
                continue            # warm-up keeps every process busy
            if re.search(r"\[[^\]]*:(emerg|alert|crit|error)\]|"
                         r"\[sitemap:warn\]|exit signal|Segmentation", ln):
                bad.append(ln)
        return bad

    def start(self):
        with open(self.conf_path, "w") as f:
            f.write(self.config())
        os.chmod(self.conf_path, 0o644)
        off = len(self.log_text())
        cmd = [HTTPD, "-f", self.conf_path, "-k", "start"]
        if self.cpus:
            cmd = self.cpus.server_cmd(cmd)
        r = sh(cmd, timeout=60)
        if r.returncode != 0:
            raise Failure(f"httpd did not start ({self.conf_path}): "
                          f"{r.stdout}{r.stderr}\n{self.log_tail()}")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.pid is None:
                with contextlib.suppress(OSError, ValueError):
                    with open(self.pid_file) as f:
                        self.pid = int(f.read().strip())
            if self.pid is not None and port_open(self.port) \
                    and self.children():
                return self
            if self.pid is not None and not pid_alive(self.pid):
                break
            if STARTUP_FAILED.search(self.log_text()[off:]):
                break
            time.sleep(0.05)
        raise Failure(f"httpd did not come up ({self.conf_path}):\n"
                      f"{self.log_tail()}")

    def children(self):
        return children_of(self.pid) if self.pid else []

    def cpu_ns(self, thread_name=None):
        return (cpu_ns([self.pid, *self.children()], thread_name)
                if self.pid else 0)

    def stop(self, graceful=True, timeout=300):
        stop_all([self], graceful, timeout)


def stop_all(servers, graceful=True, timeout=300):
    """Stop the servers at once (graceful-stop: children finish their
    requests and the module writes what is pending), and wait for them."""
    pids = []
    for srv in servers:
        pid, srv.pid = srv.pid, None
        if pid is None:
            continue
        r = sh([HTTPD, "-f", srv.conf_path, "-k",
                "graceful-stop" if graceful else "stop"], timeout=60)
        if r.returncode != 0:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGWINCH if graceful else signal.SIGTERM)
        pids.append(pid)
    deadline = time.monotonic() + timeout
    for pid in pids:
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if pid_alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            for c in children_of(pid):
                with contextlib.suppress(OSError):
                    os.kill(c, signal.SIGKILL)
            raise Failure(f"httpd (pid {pid}) did not stop in {timeout} s")
        # the children of a stopped parent go too
        d2 = time.monotonic() + 30
        while children_of(pid) and time.monotonic() < d2:
            time.sleep(0.05)


def http_get(port, path, timeout=60, headers=None):
    """GET path with HTTP/1.0 semantics: (status, headers dict, body)."""
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: bench.example\r\n{extra}"
                  "Connection: close\r\n\r\n".encode())
        chunks = []
        while True:
            b = s.recv(1 << 20)
            if not b:
                break
            chunks.append(b)
    data = b"".join(chunks)
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        headers[k.strip().lower()] = v.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        out, rest = [], body
        while rest:
            line, _, rest = rest.partition(b"\r\n")
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                break
            out.append(rest[:size])
            rest = rest[size + 2:]
        body = b"".join(out)
    return status, headers, body


# ---------------------------------------------------------------------------
# wrk

WRK = os.environ.get("WRK") or "wrk"
LUA = os.path.join(BENCH, "lua")
BENCH_LINE = re.compile(r"^BENCH (.*)$", re.M)


def wrk_command(url, script, args=(), duration=3, threads=1, connections=8):
    cmd = [WRK, "-t", str(threads), "-c", str(connections),
           "-d", f"{duration}s", "--timeout", "30s",
           "-s", os.path.join(LUA, script), url]
    if args:
        cmd += ["--", *map(str, args)]
    return cmd


def wrk_figures(cmd, returncode, stdout, stderr, allow_status_errors=False):
    """The figures of wrk's summary line (requests, rps, p50_us, ...).
    Non-2xx/3xx answers or connection failures mean the server is broken
    (Failure)."""
    m = BENCH_LINE.search(stdout)
    if returncode != 0 or not m:
        raise Failure(f"wrk failed: {' '.join(cmd)}\n{stdout}{stderr}")
    out = {}
    for kv in m.group(1).split():
        k, _, v = kv.partition("=")
        out[k] = float(v) if "." in v else int(v)
    out["rps"] = out["requests"] / (out["duration_us"] / 1e6)
    if out["requests"] == 0:
        raise Failure(f"wrk got no answer: {' '.join(cmd)}\n{stdout}")
    if out["connect"] or (out["status"] and not allow_status_errors):
        raise Failure(f"wrk: {out['status']} error statuses, "
                      f"{out['connect']} connect errors: {' '.join(cmd)}\n"
                      f"{stdout}")
    return out


def wrk(cpus, url, script, args=(), duration=3, threads=1, connections=8,
        allow_status_errors=False):
    """Run wrk; returns the figures of its summary line (wrk_figures)."""
    cmd = wrk_command(url, script, args, duration, threads, connections)
    r = sh(cpus.client_cmd(cmd), timeout=duration + 120)
    return wrk_figures(cmd, r.returncode, r.stdout, r.stderr,
                       allow_status_errors)


def wrk_together(cpus, urls, script, args=(), duration=3, threads=1,
                 connections=8):
    """One wrk per URL, all at once (on the client CPU); their figures, in
    the order of urls."""
    cmds = [wrk_command(u, script, args, duration, threads, connections)
            for u in urls]
    procs, done = [], []
    try:
        for c in cmds:
            procs.append(subprocess.Popen(
                cpus.client_cmd(c), stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, errors="replace"))
        deadline = time.monotonic() + duration + 120
        for c, p in zip(cmds, procs):
            try:
                done.append(p.communicate(
                    timeout=max(1, deadline - time.monotonic())))
            except subprocess.TimeoutExpired:
                raise Failure(f"wrk did not finish: {' '.join(c)}") from None
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return [wrk_figures(c, p.returncode, out, err)
            for c, p, (out, err) in zip(cmds, procs, done)]


# ---------------------------------------------------------------------------
# The result table

class Table:
    def __init__(self):
        self.rows = []      # (section, what, result, target, verdict)
        self.notes = []
        self.failures = []

    def add(self, section, what, result, target="", ok=None):
        verdict = "" if ok is None else ("ok" if ok else "MISS")
        self.rows.append((section, what, result, target, verdict))
        log(f"{section} | {what} | {result} | {target} | {verdict}")

    def note(self, text):
        self.notes.append(text)
        log("note: " + text)

    def fail(self, text):
        self.failures.append(text)
        log("FAILURE: " + text)

    def markdown(self):
        out = ["| # | Measurement | Result | Target | |",
               "|---|---|---|---|---|"]
        for r in self.rows:
            out.append("| " + " | ".join(str(x).replace("|", "\\|")
                                         for x in r) + " |")
        return "\n".join(out)
