# SPDX-License-Identifier: Apache-2.0
"""bench/headscan.py: the head reader's own cost (bench/run's headscan).

Runs bench/head_scan.c (built by benchlib.Build against the core) on
bench/cms_page.html, a page shaped like WordPress's with a 6.7 KB head, and
reports nanoseconds per page and per KB of head, whole (an mmap'd file
bucket) and in 2,000-byte pieces (a CGI's or a proxy's buckets), next to a
bare memchr('<') over the same bytes: the floor of any scanner."""

import os
import re

from benchlib import BENCH, Failure, loadavg, log, sh


def run(ctx):
    t = ctx.table
    page = os.path.join(BENCH, "cms_page.html")
    log(f"headscan (load {loadavg()})")
    r = sh([ctx.build.head_scan, page, str(ctx.params.headscan_pages)])
    if r.returncode != 0:
        raise Failure(f"head_scan failed: {r.stdout}{r.stderr}")
    lines = r.stdout.splitlines()
    t.note(f"headscan: {lines[0]}; load average {loadavg()}")
    for ln in lines[1:]:
        m = re.match(r"(.*?):\s+(\d+) ns/page\s+(\d+) ns/KB", ln)
        if m:
            t.add("headscan", m.group(1).strip(),
                  f"{int(m.group(2)):,} ns/page, {int(m.group(3)):,} ns/KB",
                  "(diagnostic)")
