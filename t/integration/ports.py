# SPDX-License-Identifier: Apache-2.0
"""ports.py: a free port of 127.0.0.1 for a server the tests or the
benchmarks start (httpd, PostgreSQL, tools/demo), shared by conftest.py,
pg.py, test_demo.py and bench/benchlib.py."""
import random
import socket

_GIVEN = set()


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port():
    """A port nothing listens on, chosen below the kernel's range of
    ephemeral ports and never twice by this process.  A port bind(0) hands
    out is one the kernel may give the next client socket (an HTTP request
    of a test, wrk, a readiness probe) or the next bind(0) before the
    server binds it: a bench run of a few hundred servers failed so once
    (2026-11-26, "could not bind to address").  Other processes (pytest's
    other workers) choose at random in the same range, so two rarely
    meet."""
    low = max(_ephemeral_low(), 2048)
    first = 10000 if low > 10000 else 1024
    for _ in range(10000):
        port = random.randrange(first, low)
        if port in _GIVEN:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        _GIVEN.add(port)
        return port
    raise RuntimeError("no free port of 127.0.0.1 below the ephemeral range")
