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


# program, how many *_pg tests it has
PROGRAMS = [("test_coverage", 6), ("test_store_images", 2),
            ("test_store_expire", 3)]


@pytest.mark.parametrize("name,count", PROGRAMS)
def test_postgresql_variants(pg_db, name, count):
    prog = os.path.join(TOP_BUILDDIR, "t", "unit", name)
    if not os.path.exists(prog):
        pytest.skip(name + " is not built (make check builds it first)")
    r = subprocess.run([os.path.join(TOP_BUILDDIR, "libtool"),
                        "--mode=execute", prog],
                       env=dict(os.environ, SM_UNIT_PG_URI=pg_db.uri),
                       capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    ran = re.findall(r"\[       OK \] (test_\w+_pg)\b", out)
    assert len(ran) == count, out
    assert not re.search(r"SKIPPED", out), out
