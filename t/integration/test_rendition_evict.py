# SPDX-License-Identifier: Apache-2.0
"""Keeping SitemapCacheMaxSize (issue 33, item 5): a render costs O(1)
amortised, through the renditions directory's index (.index), never a
read of the whole directory; and renditions of sites SitemapSiteFromHost
makes from a Host (which anyone can invent) are evicted before a
configured site's.

Measured with strace attached to the children (getdents64 and
newfstatat calls during one render) and the module's debug line
"N directory entries read"."""
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from conftest import as_run_user, children_of
from test_mass_hosting import mass_vhost
from test_renditions import GZ, add_pages, cache_dir
from test_vhosts import vhost

HTML = "<html><body>x</body></html>\n"
RENDER = re.compile(r"rendered (\S+) as (\S+): .* in (\d+) us; (\d+) old "
                    r"files evicted, (\d+) directory entries read")
STRACE = shutil.which("strace")


def render_lines(srv):
    """(uri, stem, us, evicted, entries read) of each render so far."""
    out = []
    for ln in srv.log_lines("sitemap", "debug"):
        m = RENDER.search(ln)
        if m:
            out.append((m.group(1), m.group(2), int(m.group(3)),
                        int(m.group(4)), int(m.group(5))))
    return out


def prefill(d, n, size=8192):
    """n files at the names the module gives renditions (a 16-hex-digit
    stem, -pN.xml and .xml.gz), sparse, owned as the children's would be."""
    with as_run_user():
        for i in range(n):
            name = f"{i:016x}-p{i // 2 + 1}.xml" + (".gz" if i % 2 else "")
            fd = os.open(os.path.join(d, name),
                         os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640)
            os.ftruncate(fd, size)
            os.close(fd)


class Syscalls:
    """strace -c attached to every child of srv while a block runs:
    calls[name] is how many times the children made that call."""

    def __init__(self, srv, tmp):
        self.srv, self.out, self.calls = srv, tmp, {}

    def __enter__(self):
        pids = children_of(self.srv.pid)
        assert pids
        args = [STRACE, "-f", "-c", "-o", self.out,
                "-e", "trace=getdents64,newfstatat,openat"]
        for p in pids:
            args += ["-p", str(p)]
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
        # attached: strace says so for each process (and its threads)
        seen = set()
        deadline = time.monotonic() + 30
        while seen < set(pids) and time.monotonic() < deadline:
            m = re.search(r"Process (\d+) attached", self.proc.stderr.readline())
            if m:
                seen.add(int(m.group(1)))
        assert seen >= set(pids), (seen, pids)
        return self

    def __exit__(self, *exc):
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=60)
        with open(self.out) as f:
            for ln in f:
                parts = ln.split()
                if len(parts) >= 5 and parts[-1] in ("getdents64", "newfstatat",
                                                      "openat"):
                    self.calls[parts[-1]] = int(parts[3])
        return False


@pytest.mark.skipif(not STRACE, reason="strace is not installed")
def test_first_render_reads_the_directory_once(make_server, tmp_root):
    """The tracer sees a render's directory read: what the 100k test
    below relies on when it sees none (traced here at 2,000 files: at
    100k, strace's stop at each call costs a quarter of a minute)."""
    srv = make_server()
    srv.start()
    add_pages(srv, "a")
    prefill(cache_dir(srv), 2000)
    with Syscalls(srv, os.path.join(tmp_root, "strace-1")) as first:
        assert srv.get("/sitemap.xml").status == 200
    (_, _, _, _, read1), = render_lines(srv)
    assert read1 >= 2000, render_lines(srv)
    assert first.calls.get("newfstatat", 0) >= 2000, first.calls
    assert first.calls.get("getdents64", 0) > 0, first.calls
    # the next render reads none of it
    add_pages(srv, "b")
    with Syscalls(srv, os.path.join(tmp_root, "strace-2")) as second:
        assert srv.get("/sitemap.xml").status == 200
    assert second.calls.get("getdents64", 0) == 0, second.calls
    assert render_lines(srv)[1][4] == 0, render_lines(srv)


@pytest.mark.skipif(not STRACE, reason="strace is not installed")
def test_render_reads_no_directory_at_100k_files(make_server, tmp_root):
    srv = make_server()
    srv.start()
    add_pages(srv, "a")
    d = cache_dir(srv)
    prefill(d, 100000)
    # the first render builds the index: it reads every entry once (the
    # module's own count; the tracer's view of such a read is tested above)
    assert srv.get("/sitemap.xml", timeout=300).status == 200
    (uri, _, us1, _, read1), = render_lines(srv)
    assert read1 >= 100000, render_lines(srv)
    # a changed site: the next render reads none of the directory
    add_pages(srv, "b")
    with Syscalls(srv, os.path.join(tmp_root, "strace-2")) as second:
        r = srv.get("/sitemap.xml", headers=GZ)
        assert r.status == 200 and r.header("Content-Encoding") == "gzip"
    lines = render_lines(srv)
    assert len(lines) == 2 and lines[1][4] == 0, lines
    # (every child is traced: the others' store reads count too)
    assert second.calls.get("getdents64", 0) == 0, second.calls
    assert second.calls.get("newfstatat", 0) < 1000, second.calls
    assert second.calls.get("openat", 0) < 1000, second.calls
    # the tracer saw the render's own calls (its files opened)
    assert second.calls.get("openat", 0) > 0, second.calls
    # the files and the index agree: 100k + the site's two
    names = [n for n in os.listdir(d) if not n.startswith(".")]
    assert len(names) == 100002
    print(f"\nrender at 100k files: {us1} us building the index, "
          f"{lines[1][2]} us after; syscalls then {second.calls}")


def test_forged_hosts_evict_their_own_renditions(make_server):
    srv = make_server()
    srv.write("real.test/a.html", HTML)
    srv.write("hosts/any/x.html", HTML)      # every host serves it
    srv.conf_text = ("SitemapCacheMaxSize 1M\n" + vhost(srv, "real.test")
                     + mass_vhost(srv, docroot=f'DocumentRoot '
                                               f'"{srv.root}/hosts/any"'))
    srv.start()
    real = f"http://real.test:{srv.port}"
    srv.get_ok("/a.html", host="real.test")
    srv.wait_recorded("/a.html", base=real)
    want = srv.get_ok("/sitemap.xml", host="real.test").body
    assert b"/a.html</loc>" in want
    srv.get_ok("/sitemap.xml", host="real.test", headers=GZ)
    d = cache_dir(srv)
    kept = {n for n in os.listdir(d) if not n.startswith(".")}
    assert len(kept) == 2, kept     # its .xml and .xml.gz
    # a flood of invented hosts' sitemaps: ~8.5 KB each, 1.7 MB in all
    n = 200
    hosts = [f"forged{i}.hosted.test:{srv.port}" for i in range(n)]
    for h in hosts:
        srv.get_ok("/x.html", host=h)
    for h in hosts:
        srv.wait_recorded("/x.html", base=f"http://{h}")
        srv.get_ok("/sitemap.xml", host=h)
    names = {n for n in os.listdir(d) if not n.startswith(".")}
    total = sum(os.lstat(os.path.join(d, x)).st_size for x in names)
    assert total <= 1 << 20, total
    assert kept <= names, "a configured site's rendition was evicted"
    assert len(names) < 2 * n, len(names)          # forged ones went
    assert sum(ln[3] for ln in render_lines(srv)) >= 2 * n + 2 - len(names)
    # and it is still served from its files, without a render
    before = len(render_lines(srv))
    assert srv.get_ok("/sitemap.xml", host="real.test").body == want
    assert len(render_lines(srv)) == before
