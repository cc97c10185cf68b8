# SPDX-License-Identifier: Apache-2.0
"""The unit tests' PostgreSQL variants (t/unit/test_coverage's *_pg
tests), run against the suite's throwaway PostgreSQL server: the unit
programs skip them without SM_UNIT_PG_URI."""
import os
import re
import subprocess

from conftest import TOP_BUILDDIR
from pg import pg_cluster, pg_db  # noqa: F401 (fixtures)


def test_coverage_pg_variants(pg_db):
    prog = os.path.join(TOP_BUILDDIR, "t", "unit", "test_coverage")
    r = subprocess.run([os.path.join(TOP_BUILDDIR, "libtool"),
                        "--mode=execute", prog],
                       env=dict(os.environ, SM_UNIT_PG_URI=pg_db.uri),
                       capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    ran = re.findall(r"\[       OK \] (test_\w+_pg)\b", out)
    assert len(ran) == 4, out
    assert not re.search(r"SKIPPED", out), out
