# SPDX-License-Identifier: Apache-2.0
"""The unit tests' PostgreSQL variants (the *_pg tests of the programs
below), run against the suite's throwaway PostgreSQL server: the unit
programs skip them without SM_UNIT_PG_URI."""
import os
import re
import subprocess

import pytest

from conftest import TOP_BUILDDIR
from pg import pg_cluster, pg_db  # noqa: F401 (fixtures)

# program, the test it runs alone (SM_UNIT_FILTER; None: all), how many
# *_pg tests must pass.  test_robots_store's run one a process: a
# recorder's stop stops every store of its process.
PROGRAMS = [("test_coverage", None, 6), ("test_store_images", None, 2),
            ("test_store_expire", None, 3), ("test_store_newrows", None, 1),
            ("test_recorder_forget", None, 1)] + [
    ("test_robots_store", name, 1)
    for name in ("test_kept_when_changed_pg", "test_urls_after_pg",
                 "test_sweep_and_refuse_pg", "test_other_process_learns_pg")]


@pytest.mark.parametrize("name,only,count", PROGRAMS)
def test_postgresql_variants(pg_db, name, only, count):
    prog = os.path.join(TOP_BUILDDIR, "t", "unit", name)
    if not os.path.exists(prog):
        pytest.skip(name + " is not built (make check builds it first)")
    env = dict(os.environ, SM_UNIT_PG_URI=pg_db.uri)
    if only:
        env["SM_UNIT_FILTER"] = only
    r = subprocess.run([os.path.join(TOP_BUILDDIR, "libtool"),
                        "--mode=execute", prog],
                       env=env, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    ran = re.findall(r"\[       OK \] (test_\w+_pg)\b", out)
    assert len(ran) == count, out
    assert not re.search(r"SKIPPED", out), out
