#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""bench/instr_wordpress.py: instructions per request of a WordPress post
page, with mod_sitemap on, off, and not loaded (issue 31).

    bench/instr_wordpress.py [--requests 5,25] [--warmup 3]
                             [--configs none,off,on] [--work DIR] [--keep]
                             [--where N]

A throwaway MariaDB and a private WordPress with content (the integration
tests' t/integration/apps.py: its MariaDB, wp-config.php, .htaccess and
seed), served by Debian's mod_php under the prefork MPM.  Each
configuration runs as one process, `httpd -X` under
`valgrind --tool=callgrind` (every thread counted, the module's writer
thread included), and is sent, one request per connection (KeepAlive Off,
as the tests' servers), the same anonymous GET of one post page: --warmup
times, then N times.  Two sessions with different N are subtracted, so
start-up, the warm-up and shutdown cancel out:

    instructions per request = (Ir(N2) - Ir(N1)) / (N2 - N1)

  none  the server without mod_sitemap
  off   mod_sitemap loaded, `Sitemap Off` in the WordPress vhost
  on    mod_sitemap loaded, `Sitemap On` (what test_apps.py serves)

Only the httpd process is counted: PHP runs inside it (mod_php), MariaDB
is another process (its work for the page's queries is not counted).
--where N also prints, for Sitemap On, the N hooks (and filters) of the
module costing the most per request, and the N costliest calls they make
(the call costs of the callgrind files: fingerprinting, head reading, the
repeat check, the periodic robots.txt check).

Needs valgrind and Debian's wordpress, wordpress-theme-twentytwentyone,
mariadb-server, libapache2-mod-php, php-mysql, php-gd (tools/deps); says
which is missing and exits 0 without measuring when one is.  Slow (a few
minutes): not part of bench/run or tools/check.
"""

import argparse
import glob
import gzip
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchlib  # noqa: E402  (puts t/integration on sys.path)
from benchlib import (HTTPD, IS_ROOT, RUN_GID, RUN_UID, Failure,  # noqa: E402
                      give_to_run_user, loadavg, log, machine, port_open)

try:
    import pytest  # noqa: E402  (apps.py skips through pytest.skip)
    import apps  # noqa: E402
except ImportError as e:
    print(f"instr_wordpress: skipped: {e} (apps.py needs python3-pytest)")
    sys.exit(0)

from conftest import MODULE  # noqa: E402
from instr import thread_totals  # noqa: E402

CONFIGS = ("none", "off", "on")
HEADERS = {"Accept-Encoding": "gzip",
           "User-Agent": "Mozilla/5.0 (sitemap-bench) Firefox/128.0"}


def need_everything():
    """Raises pytest's skip exception naming what is missing."""
    if not shutil.which("valgrind"):
        pytest.skip("valgrind is not installed")
    apps.need(HTTPD, "apache2")
    apps.need(apps.MARIADBD, "mariadb-server")
    apps.need(apps.MARIADB_INSTALL_DB, "mariadb-server")
    apps.need(apps.WP_SRC + "/wp-settings.php", "wordpress")
    apps.need(f"{apps.WP_SRC}/wp-content/themes/{apps.WP_THEME}",
              f"wordpress-theme-{apps.WP_THEME}")
    apps.need_php("mysqli")
    apps.need_php("gd")


def make_wordpress(root, mariadb):
    """WordPress as test_apps.py's wp_site makes it (apps.py's pieces);
    returns (server, host, the seed's JSON)."""
    docroot = os.path.join(root, "wordpress")
    shutil.copytree(apps.WP_SRC, docroot, symlinks=True,
                    ignore=shutil.ignore_patterns(".htaccess",
                                                  "wp-config.php"))
    os.makedirs(os.path.join(docroot, "wp-content", "uploads"),
                exist_ok=True)
    srv_root = os.path.join(root, "httpd")
    os.makedirs(srv_root)
    os.chmod(srv_root, 0o755)
    srv = apps.php_server(srv_root, "", loglevel="warn")
    host = f"wp.sitemap.test:{srv.port}"
    mariadb.sql("CREATE DATABASE wordpress CHARACTER SET utf8mb4; "
                "CREATE USER 'wp'@'localhost' IDENTIFIED BY 'wp-test-pw'; "
                "GRANT ALL ON wordpress.* TO 'wp'@'localhost';")
    with open(os.path.join(docroot, "wp-config.php"), "w") as f:
        f.write(apps.WP_CONFIG.format(socket=mariadb.socket,
                                      base=f"http://{host}",
                                      salt=os.path.basename(root)))
    with open(os.path.join(docroot, ".htaccess"), "w") as f:
        f.write(apps.WP_HTACCESS)
    seed = os.path.join(docroot, ".sitemap-bench-seed.php")
    with open(seed, "w") as f:
        f.write(apps.WP_SEED)
    out = apps.run([apps.PHP, seed], cwd=docroot, timeout=300,
                   env=dict(os.environ, WP_TEST_HOST=host))
    os.unlink(seed)
    apps.chown_tree(os.path.join(docroot, "wp-content", "uploads"))
    return srv, host, docroot, json.loads(out[out.index("{"):])


def configure(srv, host, docroot, cfg):
    """The server's configuration for one of CONFIGS."""
    v = apps.vhost("wp.sitemap.test", srv.port, docroot)
    if cfg == "off":
        v = v.replace("    Sitemap On\n", "    Sitemap Off\n")
    elif cfg == "none":
        v = re.sub(r"(?m)^\s*Sitemap\w*\s.*\n", "", v)
    srv.load_module = cfg != "none"
    srv.sitemap = cfg == "on"       # the main server's Sitemap On and store
    srv.conf_text = apps.php_server(srv.root, v, loglevel="warn").conf_text
    srv.write_conf()


def get(port, host, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        c.request("GET", path, headers=dict(HEADERS, Host=host))
        r = c.getresponse()
        body = r.read()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), body
    finally:
        c.close()


def stored(db):
    if not os.path.exists(db):
        return 0
    try:
        return benchlib.query(db, "SELECT COALESCE(SUM(url_count), 0) "
                                  "FROM sites")[0][0]
    except Exception:       # the writer has not made its tables yet
        return 0


def session(srv, host, docroot, cfg, path, warmup, n):
    """Total instructions (every thread, the writer's) of one httpd -X
    run under callgrind: warmup + n GETs of path."""
    configure(srv, host, docroot, cfg)
    for d in ("db", "state"):
        shutil.rmtree(srv.path(d), ignore_errors=True)
        os.makedirs(srv.path(d))
    for old in glob.glob(srv.path("logs/*")):
        os.unlink(old)
    # httpd -X would switch to User after valgrind opened its output file:
    # the whole run is the children's user's.
    for d in ("logs", "run", "db", "state"):
        give_to_run_user(srv.path(d))
    out = srv.path("db/callgrind.out")
    keep = os.path.join(os.path.dirname(srv.root), "callgrind")
    os.makedirs(keep, exist_ok=True)
    cmd = ["valgrind", "--tool=callgrind", "--vgdb=no",
           "--separate-threads=yes", f"--callgrind-out-file={out}",
           HTTPD, "-X", "-f", srv.conf_path]
    kw = {"user": RUN_UID, "group": RUN_GID} if IS_ROOT else {}
    with open(os.path.join(keep, f"valgrind-{cfg}-{n}.log"), "w") as vlog:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                stderr=vlog, **kw)
    try:
        deadline = time.monotonic() + 180
        while not port_open(srv.port):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise Failure(f"httpd -X under valgrind did not start:\n"
                              f"{srv.log_tail()}")
            time.sleep(0.2)
        for i in range(warmup + n):
            status, headers, body = get(srv.port, host, path)
            if status != 200:
                raise Failure(f"GET {path}: {status} {body[:300]!r}")
        if cfg == "on":
            deadline = time.monotonic() + 120
            while stored(srv.path("db/sitemap.db")) < 1:
                if time.monotonic() > deadline:
                    raise Failure(f"the store did not get {path}:\n"
                                  f"{srv.log_tail()}")
                time.sleep(0.2)
        time.sleep(1.2)     # at most one more flush, in every session
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    bad = [ln for ln in srv.log_text().splitlines()
           if re.search(r":(error|crit|alert|emerg)\]|\[sitemap:warn", ln)]
    if bad:
        raise Failure("error-log lines:\n" + "\n".join(bad[:20]))
    files = sorted(glob.glob(glob.escape(out) + "-*"))
    for f in files:
        shutil.copy(f, os.path.join(keep, f"{cfg}-{n}{f[len(out):]}"))
    return thread_totals(out)


PASS = ("ap_pass_brigade", "ap_get_brigade")


def module_cost(path, obj="mod_sitemap.so"):
    """Instructions of one callgrind file spent in the module: the
    inclusive cost of every call into obj from outside it (its hooks and
    filters), less that of its calls on to the next filters
    (ap_pass_brigade, ap_get_brigade); and the same per hook.  A call into
    obj nested in one of its own (a lookup subrequest of its robots.txt
    check runs the module's hooks) counts twice: rare, and small.  Also
    every call the module's functions make, (caller, callee) -> its
    inclusive cost: exact, unlike callgrind_annotate's inclusive figures
    of a recursive function (the fingerprint's byte reader is one)."""
    names = {"ob": {}, "fn": {}}
    ob = cob = fn = cfn = None
    per, calls = {}, {}
    total = 0
    call = False
    with open(path) as f:
        for ln in f:
            if call:
                call = False
                parts = ln.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                callee_ob = cob if cob is not None else ob
                cob = None
                inside = bool(ob and ob.endswith(obj))
                if inside:
                    calls[(fn, cfn)] = calls.get((fn, cfn), 0) + cost
                if bool(callee_ob and callee_ob.endswith(obj)) != inside:
                    if not inside:
                        key = cfn
                    elif cfn.split("'")[0] in PASS:
                        key, cost = fn, -cost
                    else:
                        continue
                    per[key] = per.get(key, 0) + cost
                    total += cost
                continue
            m = re.match(r"(c?)(ob|fn)=\((\d+)\)(?: (.*))?$", ln.rstrip("\n"))
            if m:
                table = names[m.group(2)]
                if m.group(4) is not None:
                    table[m.group(3)] = m.group(4)
                val = table.get(m.group(3))
                if m.group(2) == "ob":
                    if m.group(1):
                        cob = val
                    else:
                        ob = val
                elif m.group(1):
                    cfn = val
                else:
                    fn = val
            elif ln.startswith("calls="):
                call = True
    return total, per, calls


def files(keep, cfg, n):
    return sorted(glob.glob(os.path.join(keep, f"{cfg}-{n}-*")))


def module_per_request(keep, cfg, n1, n2):
    """The module's own instructions per request (module_cost, every
    thread: a writer thread's are all its), per hook, and per call a hook
    makes."""
    def one(n):
        total, per, calls = 0, {}, {}
        for f in files(keep, cfg, n):
            t, writer = thread_totals_one(f)
            if writer:
                total += t
                k = "writer thread (all of it)"
                per[k] = per.get(k, 0) + t
                continue
            t, p, c = module_cost(f)
            total += t
            for k, v in p.items():
                per[k] = per.get(k, 0) + v
            for k, v in c.items():
                if k[0] in p:           # a hook's own calls
                    calls[k] = calls.get(k, 0) + v
        return total, per, calls
    a, b = one(n1), one(n2)

    def diff(x, y):
        return {k: (y.get(k, 0) - x.get(k, 0)) / (n2 - n1)
                for k in set(x) | set(y)}
    return (b[0] - a[0]) / (n2 - n1), diff(a[1], b[1]), diff(a[2], b[2])


def thread_totals_one(path):
    n, writer = 0, False
    with open(path) as f:
        for ln in f:
            if ln.startswith(("totals:", "summary:")):
                n = int(ln.split()[1])
            elif "writer_main" in ln and ln.startswith(("fn=", "cfn=")):
                writer = True
    return n, writer


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", default="5,25",
                    help="the two request counts subtracted (default 5,25)")
    ap.add_argument("--warmup", type=int, default=3,
                    help="requests of the page before the counted ones in "
                    "every session (default 3)")
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--post", type=int, default=2,
                    help="which of the seed's 20 posts (0-based, default 2: "
                    "a post with no comments)")
    ap.add_argument("--work", help="work directory (default: a new one, "
                    "removed at the end unless --keep)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--where", type=int, default=0, metavar="N",
                    help="print the N costliest module functions per "
                    "request (callgrind_annotate)")
    args = ap.parse_args()
    n1, n2 = (int(x) for x in args.requests.split(","))
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    for c in configs:
        if c not in CONFIGS:
            ap.error(f"--configs: {c} is not one of {', '.join(CONFIGS)}")
    if not os.path.isfile(MODULE):
        print(f"instr_wordpress: {MODULE} does not exist: build the "
              "module first (or name one with MODULE=...)", file=sys.stderr)
        return 2
    try:
        need_everything()
    except pytest.skip.Exception as e:
        print(f"instr_wordpress: skipped: {e}")
        return 0

    work = args.work or tempfile.mkdtemp(prefix="sitemap-bench-wp-")
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o755)
    load0 = loadavg()
    m = machine()
    log(f"work directory {work}; module {MODULE}; load {load0}")
    mariadb = srv = None
    per, writer = {}, {}
    try:
        mariadb = apps.MariaDB()
        root = os.path.join(work, "site")
        os.makedirs(root)
        os.chmod(root, 0o755)
        srv, host, docroot, info = make_wordpress(root, mariadb)
        url = info["links"]["posts"][args.post]
        path = url[url.index(host) + len(host):]
        # The first request after the seed makes WordPress's rewrite rules
        # (a database write): once, outside the measured sessions.
        configure(srv, host, docroot, "none")
        srv.start()
        status, headers, body = get(srv.port, host, path)
        srv.stop()
        if status != 200:
            raise Failure(f"GET {path}: {status}")
        size = len(gzip.decompress(body)
                   if headers.get("content-encoding") == "gzip" else body)
        log(f"GET {path}: {len(body):,} bytes "
            f"({headers.get('content-encoding', 'identity')}), {size:,} "
            f"bytes of HTML, ETag {headers.get('etag', 'none')}")
        for cfg in configs:
            t0 = time.monotonic()
            a = session(srv, host, docroot, cfg, path, args.warmup, n1)
            b = session(srv, host, docroot, cfg, path, args.warmup, n2)
            per[cfg] = (b[0] - a[0]) / (n2 - n1)
            writer[cfg] = (b[1] - a[1]) / (n2 - n1)
            log(f"{cfg}: {per[cfg]:,.0f} instructions per request "
                f"({writer[cfg]:,.0f} in the writer thread); Ir({n1}) "
                f"{a[0]:,}, Ir({n2}) {b[0]:,}; {time.monotonic() - t0:.0f} s,"
                f" load {loadavg()}")
    except Failure as e:
        print(f"instr_wordpress: FAILED: {e}", file=sys.stderr)
        return 1
    finally:
        if srv is not None:
            srv.stop()
        if mariadb is not None:
            mariadb.stop()
    print(f"WordPress post page {path}, anonymous GET, steady state "
          f"(valgrind --tool=callgrind, httpd -X, prefork + mod_php; "
          f"(Ir({n2}) - Ir({n1})) / {n2 - n1}; httpd only, not MariaDB)")
    print(f"machine: {m['cores']} cores, {m['model']}; load average "
          f"{load0} at the start, {loadavg()} at the end")
    keep = os.path.join(work, "site", "callgrind")
    own = {cfg: module_per_request(keep, cfg, n1, n2)
           for cfg in configs if cfg != "none"}
    print("instructions per request, the whole httpd process; then the "
          "module's own (its hooks and filters, less the filters after "
          "them, and its writer thread), which PHP's own variation from "
          "session to session does not blur:")
    for cfg in configs:
        line = f"  {cfg:5} {per[cfg]:>14,.0f}"
        if cfg != "none" and "none" in per:
            d = per[cfg] - per["none"]
            line += f"   vs none {d:+,.0f} ({d / per['none'] * 100:+.2f}%)"
        if cfg == "on" and "off" in per:
            d = per["on"] - per["off"]
            line += f"   vs off {d:+,.0f} ({d / per['off'] * 100:+.2f}%)"
        if cfg in own:
            line += (f"   module's own {own[cfg][0]:,.0f} "
                     f"({own[cfg][0] / per[cfg] * 100:.3f}%)")
        print(line)
    if "on" in own and "off" in own:
        d = own["on"][0] - own["off"][0]
        print(f"  added by Sitemap On (module's own, on - off): {d:+,.0f} "
              f"per request, {d / per['off'] * 100:+.3f}% of the page")
    if args.where and "on" in own:
        print("  where (Sitemap On), per hook:")
        for k, v in sorted(own["on"][1].items(),
                           key=lambda kv: -abs(kv[1]))[:args.where]:
            if abs(v) >= 1:
                print(f"    {v:>12,.0f}  {k}")
        print("  the hooks' calls (inclusive; ap_pass_brigade is the filters "
              "after the module's, not the module's):")
        calls = [(v, k) for k, v in own["on"][2].items()
                 if v >= 1 and k[1].split("'")[0] not in PASS]
        for v, (caller, callee) in sorted(calls, reverse=True)[:args.where]:
            print(f"    {v:>12,.0f}  {caller} -> {callee}")
    if args.keep or args.work:
        print(f"callgrind files: {os.path.join(work, 'site', 'callgrind')}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
