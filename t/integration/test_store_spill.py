# SPDX-License-Identifier: Apache-2.0
"""A stop while the store fails keeps what was queued: the stopping
processes write it beside the store and the next generation writes it in
(issue 21, item 6)."""
import glob
import os
import stat

import pytest

from conftest import IS_ROOT, RUN_UID
from test_store_faults import check_fault_logged, fault_server, hold_lock, serve_fast

URLS = [f"/crawl/spill-{i}" for i in range(100)]


@pytest.mark.parametrize("mpm", ["event", "prefork"])
def test_stop_while_locked_keeps_changes(make_server, mpm):
    srv = fault_server(make_server, mpm=mpm)
    srv.start()
    srv.get_ok("/crawl/before")
    srv.wait_recorded("/crawl/before")
    con = hold_lock(srv)
    try:
        for u in URLS:
            serve_fast(srv, u)
        check_fault_logged(srv, r"lock|busy", timeout=20)
        srv.graceful_stop()
        spills = glob.glob(srv.db_path + ".spill-*")
        assert spills, "nothing kept beside the store"
        for f in spills:
            st = os.lstat(f)
            assert stat.S_ISREG(st.st_mode) and st.st_mode & 0o777 == 0o600
            if IS_ROOT:
                assert st.st_uid == RUN_UID
        assert not glob.glob(srv.db_path + ".spilling-*")
    finally:
        con.rollback()
        con.close()
    assert not set(URLS) & set(srv.urls())
    srv.start()
    srv.wait_recorded(*URLS, timeout=20)
    assert not glob.glob(srv.db_path + ".spill*") + glob.glob(srv.db_path + ".replaying*")
    assert "/crawl/before" in srv.urls()


def test_foreign_spill_file_is_not_read(make_server, tmp_root):
    """A file that looks like a spill but is not one of ours (a link, or
    not the server user's) is left alone, renamed for an administrator,
    and never written into the store."""
    srv = fault_server(make_server)
    srv.expect_log(r"spill")
    target = os.path.join(tmp_root, "elsewhere")
    with open(target, "w") as f:
        f.write("mod_sitemap spill 1\nR\t1700000000000000\t0\t%s\t/crawl/planted\t-\nend 1\n"
                % srv.base)
    os.symlink(target, srv.db_path + ".spill-aaaaaa")
    garbage = srv.db_path + ".spill-bbbbbb"
    with open(garbage, "w") as f:
        f.write("mod_sitemap spill 1\nnot a change\nend 1\n")
    if IS_ROOT:
        os.chown(garbage, RUN_UID, -1)
    srv.start()
    srv.get_ok("/crawl/after")
    srv.wait_recorded("/crawl/after")
    srv.wait_log(r"spill-aaaaaa", module="sitemap")
    srv.wait_log(r"spill-bbbbbb.*not a complete", module="sitemap")
    assert "/crawl/planted" not in srv.urls()
    assert os.path.exists(srv.db_path + ".spill-bad-aaaaaa")
    assert os.path.exists(srv.db_path + ".spill-bad-bbbbbb")
    with open(target) as f:
        assert "planted" in f.read()
