#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench/crawl_rounds.py: what makes the low rounds of the crawl (issue 17).

The crawl of new URLs (bench/overhead.py's "crawl") gives one ratio a round
(requests/s with mod_sitemap / without, the writer's work after the run
counted).  Earlier runs spread from 0.68 to 1.23.  This script runs the
same crawl, two servers (none, sitemap; event MPM, httpd pinned to one CPU,
wrk to the other, balanced A B / B A orders), and records for every round
what could explain its ratio:

  checkpoints  SQLite WAL checkpoints during the module's run and drain
               (the store's main file is written only by a checkpoint in
               WAL mode: a thread samples its mtime every 5 ms)
  writer_us    CPU time of the module's writer thread per request
  position     whether the module's server ran first or second in the round
  rows         URLs in the store when the round started (its growth)
  load         the 1-minute load average before the round (other work on
               this shared machine)
  ctxsw        involuntary context switches of the module's httpd per
               request (the request threads and the writer taking turns on
               one CPU)

and prints the per-round table, the distribution of the ratios (min,
quartiles, max) and each factor's rank correlation with the ratio, as
Markdown for bench/RESULTS.md.

    bench/crawl_rounds.py [--rounds 30] [--duration 2] [--control]

--control runs two servers without the module instead: the spread of
per-round ratios that this machine gives two identical servers.
"""

import argparse
import os
import sys
import tempfile
import threading
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchlib import Build, Cpus, Table, log, query, stop_all  # noqa: E402
from overhead import (AccessLog, balanced_orders, make_servers,  # noqa: E402
                      measure, warm_up)


class CheckpointWatch(threading.Thread):
    """Counts changes of the store file's mtime: in WAL mode only a
    checkpoint writes the main file."""

    def __init__(self, db):
        super().__init__(daemon=True)
        self.db = db
        self.count = 0
        self.stop = threading.Event()

    def run(self):
        last = None
        while not self.stop.is_set():
            try:
                m = os.stat(self.db).st_mtime_ns
            except FileNotFoundError:
                m = None
            if last is not None and m != last:
                self.count += 1
            last = m
            time.sleep(0.005)


def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def involuntary_switches(srv):
    """nonvoluntary_ctxt_switches of every thread of every httpd process."""
    total = 0
    for pid in [srv.pid, *srv.children()]:
        try:
            tasks = os.listdir(f"/proc/{pid}/task")
        except FileNotFoundError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{pid}/task/{tid}/status") as f:
                    for ln in f:
                        if ln.startswith("nonvoluntary_ctxt_switches"):
                            total += int(ln.split()[1])
            except FileNotFoundError:
                pass
    return total


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(xs, ys):
    rx, ry = ranks(xs), ranks(ys)
    n = len(xs)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx) ** 0.5
    vy = sum((b - my) ** 2 for b in ry) ** 0.5
    return cov / (vx * vy) if vx and vy else 0.0


def quantiles(xs):
    s = sorted(xs)
    n = len(s)

    def q(f):
        x = f * (n - 1)
        lo = int(x)
        hi = min(lo + 1, n - 1)
        return s[lo] + (s[hi] - s[lo]) * (x - lo)
    return s[0], q(0.25), q(0.5), q(0.75), s[-1]


def run(ctx, n_rounds, duration, control=False):
    """control: the second server has no module either (a second "none"):
    the spread two identical servers show on this machine."""
    mpm = "event"
    other = "control" if control else "sitemap"
    servers = make_servers(ctx, mpm, ("none", other), "rounds")
    if control:
        servers["sitemap"] = servers.pop("control")
    try:
        logs = {cfg: AccessLog(srv.access_log)
                for cfg, srv in servers.items()}
        db = servers["sitemap"].path("db/sitemap.db")
        if control:
            db = servers["none"].path("db/sitemap.db")  # never written
            open(db, "a").close()
        else:
            warm_up(ctx, servers, mpm, db)
        watch = CheckpointWatch(db)
        watch.start()
        orders = balanced_orders(2)
        rows = []
        for rnd in range(n_rounds):
            order = [("none", "sitemap")[i] for i in orders[rnd % 2]]
            row = {"round": rnd + 1, "position": order.index("sitemap") + 1,
                   "load": load1(),
                   "rows": 0 if control else
                   query(db, "SELECT count(*) FROM urls")[0][0]}
            for cfg in order:
                srv = servers[cfg]
                cp0, sw0 = watch.count, involuntary_switches(srv)
                lines0 = logs[cfg].update().lines
                rps, cpu, writer, drained = measure(
                    ctx, srv, logs[cfg], "crawl.lua", [f"r{rnd}"], duration,
                    ctx.params.connections,
                    drain_db=db if cfg == "sitemap" and not control
                    else None)
                nreq = max(logs[cfg].update().lines - lines0, 1)
                row[cfg] = rps
                if cfg == "sitemap":
                    row.update(checkpoints=watch.count - cp0,
                               writer_us=writer, cpu_us=cpu,
                               ctxsw=(involuntary_switches(srv) - sw0) / nreq,
                               drained=drained)
                else:
                    row["none_cpu_us"] = cpu
            row["ratio"] = row["sitemap"] / row["none"]
            rows.append(row)
            log(f"round {rnd + 1}: ratio {row['ratio']:.3f} (position "
                f"{row['position']}, {row['checkpoints']} checkpoints, writer "
                f"{row['writer_us']:.2f} us/req, {row['rows']:,} rows, load "
                f"{row['load']:.2f})")
        watch.stop.set()
        return rows
    finally:
        stop_all(servers.values(), graceful=True)


def markdown(rows, duration, control=False):
    out = []
    ratios = [r["ratio"] for r in rows]
    mn, q1, med, q3, mx = quantiles(ratios)
    out.append(f"Crawl rounds ({len(rows)} rounds of {duration} s per server, "
               "event MPM, httpd on one CPU, wrk on the other, orders A B / "
               "B A), per-round ratio req/s "
               + ("of the second plain server / the first:" if control
                  else "with mod_sitemap / without:"))
    out.append("")
    out.append(f"min {mn:.3f}, Q1 {q1:.3f}, median {med:.3f}, Q3 {q3:.3f}, "
               f"max {mx:.3f}")
    out.append("")
    out.append("| factor | Spearman's rho with the ratio | split | median "
               "ratio (low / high half of the factor) |")
    out.append("|---|---|---|---|")
    for key, what in (("position", "the module's server ran second"),
                      ("checkpoints", "WAL checkpoints in its run"),
                      ("writer_us", "writer CPU us/request"),
                      ("ctxsw", "involuntary switches/request"),
                      ("rows", "store size (rows) at the round's start"),
                      ("load", "load average before the round"),
                      ("none_cpu_us", "the plain server's CPU us/request")):
        xs = [r[key] for r in rows]
        rho = spearman(xs, ratios)
        cut = sorted(xs)[len(xs) // 2]
        lo = [r["ratio"] for r in rows if r[key] < cut]
        hi = [r["ratio"] for r in rows if r[key] >= cut]
        split = (f"{quantiles(lo)[2]:.3f} / {quantiles(hi)[2]:.3f}"
                 if lo and hi else "-")
        out.append(f"| {what} | {rho:+.2f} | at {cut:g} | {split} |")
    out.append("")
    out.append("| round | ratio | position | checkpoints | writer us/req | "
               "CPU us/req (module / none) | invol. switches/req | rows | "
               "load |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        out.append(f"| {r['round']} | {r['ratio']:.3f} | {r['position']} | "
                   f"{r['checkpoints']} | {r['writer_us']:.2f} | "
                   f"{r['cpu_us']:.1f} / {r['none_cpu_us']:.1f} | "
                   f"{r['ctxsw']:.3f} | {r['rows']:,} | {r['load']:.2f} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--duration", type=int, default=2)
    ap.add_argument("--markdown", help="also write the report to this file")
    ap.add_argument("--control", action="store_true",
                    help="two servers without the module: the spread of "
                         "identical servers")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="sitemap-rounds-")
    os.chmod(work, 0o755)
    ctx = types.SimpleNamespace(
        work=work, stores=work, table=Table(), cpus=Cpus(pin=True),
        params=types.SimpleNamespace(warmup=1, warmup_runs=1,
                                     warm_connections={"event": 8},
                                     connections=8))
    ctx.build = Build(work)
    ctx.build.run()
    rows = run(ctx, args.rounds, args.duration, args.control)
    text = markdown(rows, args.duration, args.control)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
