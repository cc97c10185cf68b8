# SPDX-License-Identifier: Apache-2.0
"""What a test process starts (httpd, mariadbd, PostgreSQL) is stopped
when that process ends, also when its tests never reach their teardown:
a SIGTERM or SIGHUP (a timeout(1), make or CI killing the run) is turned
into KeyboardInterrupt, so pytest ends the session and runs the
fixtures' finalizers, and an atexit hook stops whatever is still
registered.  Only SIGKILL can leave a server behind."""
import atexit
import signal
import threading

_stops = {}
_lock = threading.Lock()


def register(key, stop):
    """stop() runs at exit unless unregister(key) came first."""
    with _lock:
        _stops[key] = stop


def unregister(key):
    with _lock:
        _stops.pop(key, None)


def _reap():
    with _lock:
        stops = list(_stops.values())
        _stops.clear()
    for stop in stops:
        try:
            stop()
        except Exception:   # noqa: BLE001 (stop what can be stopped)
            pass


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


atexit.register(_reap)
if threading.current_thread() is threading.main_thread():
    for _sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(_sig) == signal.SIG_DFL:
            signal.signal(_sig, _interrupt)
