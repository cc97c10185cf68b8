# SPDX-License-Identifier: Apache-2.0
"""sitemapctl import shows its progress on a terminal (bytes read of the
total, lines per second, time left) and nothing when standard error is not
a terminal.  The terminal is a real pseudo-terminal (pty); the log is big
enough (about 57 MiB, 600,000 lines) that reading it takes longer than the
meter's first delay."""
import os
import pty
import re
import select
import subprocess

from conftest import SITEMAPCTL

BASE = "http://www.example.com"
LINE = ('192.0.2.1 - - [10/Oct/2026:13:55:36 +0000] "GET /page%d.html HTTP/1.1" 200 2326 '
        '"-" "Mozilla/5.0 (X11; Linux x86_64)"\n')
LINES = 3000000     # long enough to read for more than SM_PROGRESS_DELAY (200 ms)


def big_log(path):
    chunk = "".join(LINE % (i % 2000) for i in range(10000))
    with open(path, "w") as f:
        for _ in range(LINES // 10000):
            f.write(chunk)
    return path


def run_on_pty(args):
    """Run with standard error on a pty; returns (status, stdout, what the
    terminal got)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    seen = b""
    while True:
        r, _, _ = select.select([master], [], [], 120)
        if not r:
            break
        try:
            data = os.read(master, 65536)
        except OSError:         # EIO: the child closed the terminal
            break
        if not data:
            break
        seen += data
    out = p.stdout.read()
    status = p.wait(timeout=120)
    os.close(master)
    return status, out.decode(), seen.decode()


def test_progress_on_a_terminal_only(tmp_path):
    log = big_log(str(tmp_path / "access.log"))
    status, out, tty = run_on_pty([SITEMAPCTL, "import", str(tmp_path / "a.db"), "--site", BASE, log])
    assert status == 0, (out, tty)
    assert f"read {LINES} lines from 1 file" in out
    total = os.path.getsize(log) / (1024 * 1024)
    draws = re.findall(r"\rreading logs: (\d+\.\d) MiB of (\d+\.\d) MiB \((\d+)%\), (\d+) lines/s"
                       r"(?:, (\d+:\d\d) left)?\x1b\[K", tty)
    assert draws, f"no progress on the terminal: {tty!r}"
    for done, of, share, rate, _ in draws:
        assert of == "%.1f" % total
        assert 0 < float(done) <= total and 0 <= int(share) <= 100 and int(rate) > 0
    assert any(left for *_, left in draws), f"no time left shown: {draws}"
    # The meter erases its line at the end; stdout never gets it.
    assert tty.rstrip("\r\n").endswith("\r\x1b[K") or "\r\x1b[K" in tty.split("reading logs")[-1]
    assert "reading logs" not in out

    # Standard error a pipe (a cron job, a log): not a trace of it.
    r = subprocess.run([SITEMAPCTL, "import", str(tmp_path / "b.db"), "--site", BASE, log],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    assert r.returncode == 0, r.stderr
    assert b"reading logs" not in r.stderr and b"\x1b[K" not in r.stderr, r.stderr
    assert b"reading logs" not in r.stdout
    assert f"read {LINES} lines from 1 file".encode() in r.stdout
