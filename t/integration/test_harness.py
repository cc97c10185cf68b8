# SPDX-License-Identifier: Apache-2.0
"""The harness itself: httpd starts and stops under every MPM without
mod_sitemap, serves files and CGI, and its error log is read."""
import glob
import os
import resource
import shutil
import signal
import subprocess
import time

import pytest

from conftest import CORE_LIMIT, PRELOAD, SITEMAPCTL, children_of


@pytest.mark.parametrize("mpm", ["event", "worker", "prefork"])
def test_httpd_without_module(make_server, mpm):
    srv = make_server(mpm=mpm, load_module=False)
    srv.cgi("hello.cgi", "printf 'Content-Type: text/html\\r\\n\\r\\nhi\\n'\n")
    srv.start()
    assert srv.get("/page.html").status == 200
    assert srv.get("/missing.html").status == 404
    r = srv.get("/cgi-bin/hello.cgi")
    assert r.status == 200 and r.body == b"hi\n", r
    assert srv.get("/").body.startswith(b"<html><body>index")
    srv.graceful()
    assert srv.get("/page.html").status == 200
    srv.graceful_stop()
    srv.restart()
    assert srv.get("/page.html").status == 200
    assert srv.unexpected_log_lines() == []


def test_log_hygiene_catches_errors(make_server):
    srv = make_server(load_module=False)
    srv.cgi("broken.cgi", "echo 'oops on stderr' >&2\nexit 1\n")
    srv.start()
    assert srv.get("/cgi-bin/broken.cgi").status == 500
    srv.wait_log("End of script output")
    assert srv.unexpected_log_lines(), "an error line went unnoticed"
    srv.expect_log("oops on stderr|AH01215|End of script output|malformed header")
    assert srv.unexpected_log_lines() == []


def test_config_fails_helper(make_server):
    srv = make_server(load_module=False)
    srv.config_fails("NoSuchDirective", conf="NoSuchDirective on")


def test_a_crashed_child_leaves_a_backtrace(make_server):
    """A child that crashes leaves a core the teardown turns into
    backtraces (where the kernel writes cores to a file and gdb is here)."""
    if PRELOAD:
        # t/asan/run: the sanitizer's runtime turns core dumps off (its
        # shadow memory would make them huge); a crash still fails the
        # test that ran the server, by its "exit signal" line in the log.
        pytest.skip("no cores under the sanitizer")
    with open("/proc/sys/kernel/core_pattern") as f:
        pattern = f.read().strip()
    if not pattern.startswith("core") or "/" in pattern \
            or not CORE_LIMIT or not shutil.which("gdb"):
        pytest.skip(f"no core file here (core_pattern {pattern!r}, core "
                    f"limit {resource.getrlimit(resource.RLIMIT_CORE)}) "
                    "or no gdb")
    # One child, and it has answered: past its set-up, which a child
    # killed while starting may not be (no core before httpd makes it
    # dumpable again after changing its user).
    srv = make_server(mpm="prefork", load_module=False,
                      mpm_conf="StartServers 1\nMinSpareServers 1\n"
                               "MaxSpareServers 1\nServerLimit 1\n"
                               "MaxRequestWorkers 1\n")
    srv.expect_log(r"AH00161")      # MaxRequestWorkers 1, reached
    srv.start()
    srv.get_ok("/page.html")
    child = children_of(srv.pid)[0]
    os.kill(child, signal.SIGSEGV)
    srv.wait_log(rf"pid {child} exit signal Segmentation fault")
    deadline = time.monotonic() + 10
    while not srv.crash_report() and time.monotonic() < deadline:
        time.sleep(0.2)
    report = srv.crash_report()
    assert "#0 " in report and "Thread 1" in report, report[:2000]
    srv.expect_log(r"exit signal Segmentation fault")
    for core in glob.glob(srv.path("cores/core*")):
        os.unlink(core)


def test_the_sanitizer_is_loaded(server):
    """Under t/asan/run the children run with the sanitizer's runtime
    (the module's instrumented code needs it; without it the module would
    not even load), and the tests run its sitemapctl: make sure the run is
    what it says it is."""
    if not PRELOAD:
        pytest.skip("not under the sanitizer (t/asan/run)")
    server.get_ok("/page.html")
    for pid in children_of(server.pid):
        with open(f"/proc/{pid}/maps") as f:
            assert os.path.basename(PRELOAD).split(".so")[0] in f.read()
    # and sitemapctl is the instrumented build
    r = subprocess.run(["ldd", SITEMAPCTL], stdout=subprocess.PIPE,
                       text=True)
    assert "libasan" in r.stdout, (SITEMAPCTL, r.stdout)


INNER_TEST = '''
import time


def test_killed_while_serving(make_server):
    s = make_server()
    s.start()
    s.get_ok("/page.html")
    with open({out!r}, "w") as f:
        f.write(s.conf_path)
    time.sleep(300)
'''


def test_servers_stopped_when_pytest_is_terminated(tmp_path):
    """A run killed with SIGTERM (timeout(1), make, CI) in the middle of a
    test still stops the httpd it started: no apache2 is left with its
    configuration."""
    out = tmp_path / "conf_path"
    inner = tmp_path / "test_inner.py"
    inner.write_text(INNER_TEST.format(out=str(out)))
    here = os.path.dirname(os.path.abspath(__file__))
    p = subprocess.Popen(
        [os.environ.get("PYTHON3", "/usr/bin/python3"), "-m", "pytest", "-q",
         "-p", "no:cacheprovider", "--rootdir", here, "--confcutdir", here,
         "-c", os.devnull, str(inner)],
        cwd=here, env=dict(os.environ, PYTHONPATH=here),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not out.exists():
            assert p.poll() is None and time.monotonic() < deadline, \
                p.stdout.read() if p.poll() is not None else "no server"
            time.sleep(0.1)
        conf = out.read_text()

        def left():
            r = subprocess.run(["pgrep", "-f", "--", f"-f {conf}"],
                               capture_output=True, text=True)
            return r.stdout.split()
        assert left(), "the inner test's httpd is not running"
        p.send_signal(signal.SIGTERM)
        p.wait(60)
        deadline = time.monotonic() + 10
        while left():
            assert time.monotonic() < deadline, \
                f"httpd left running after SIGTERM: {left()}"
            time.sleep(0.1)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
