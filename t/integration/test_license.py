# SPDX-License-Identifier: Apache-2.0
"""The license: Apache-2.0 (httpd's own) in LICENSE and NOTICE, named in
debian/copyright (DEP-5), and an SPDX line at the top of every source file
(C, headers, Python, shell and Lua scripts, build files, manual pages)."""
import os
import subprocess

import pytest

from conftest import TOP_SRCDIR

SPDX = "SPDX-License-Identifier: Apache-2.0"


def tracked():
    out = subprocess.run(["git", "ls-files"], cwd=TOP_SRCDIR, text=True,
                         stdout=subprocess.PIPE, check=False).stdout
    return out.split()


def is_source(path):
    name = os.path.basename(path)
    if "/corpus/" in path or path.startswith("debian/") and not (
            name in ("rules",) or name.endswith(("postinst", "postrm"))):
        return False
    if path.endswith((".c", ".h", ".py", ".lua", ".mjs", ".sql", ".am", ".ac",
                      ".5", ".8", ".conf", ".load")):
        return True
    with open(os.path.join(TOP_SRCDIR, path), "rb") as f:
        return f.read(2) == b"#!"


def test_license_files():
    with open(os.path.join(TOP_SRCDIR, "LICENSE"), encoding="utf-8") as f:
        assert "Apache License" in f.read(200)
    with open(os.path.join(TOP_SRCDIR, "debian", "copyright"), encoding="utf-8") as f:
        text = f.read()
    assert "License: Apache-2.0" in text and "no-license-stated" not in text
    assert os.path.exists(os.path.join(TOP_SRCDIR, "NOTICE"))


def test_every_source_file_has_an_spdx_line():
    files = [p for p in tracked() if is_source(p)]
    if not files:
        pytest.skip("not a git checkout: no list of tracked files")
    missing = []
    for p in files:
        with open(os.path.join(TOP_SRCDIR, p), encoding="utf-8") as f:
            head = "".join(f.readline() for _ in range(3))
        if SPDX not in head:
            missing.append(p)
    assert not missing, missing
