# SPDX-License-Identifier: Apache-2.0
"""The stores' schema versions as the code under test has them
(src/store/sm_store.h, sm_store_backend.h), so that a test of a migration
or of a fresh store need not change with each schema step."""
import os
import re

_SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                    "src", "store")


def _define(header, name):
    with open(os.path.join(_SRC, header)) as f:
        m = re.search(r"#define\s+%s\s+(\d+)" % name, f.read())
    return int(m.group(1))


SQLITE_VERSION = _define("sm_store.h", "SM_SCHEMA_VERSION")
PG_VERSION = _define("sm_store_backend.h", "SM_PG_SCHEMA_VERSION")
