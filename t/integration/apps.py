# SPDX-License-Identifier: Apache-2.0
"""apps.py: real applications behind a real httpd with mod_sitemap, for
test_apps.py (issue 31, item 9): WordPress on a throwaway MariaDB and
MediaWiki on SQLite, both served by Debian's mod_php under the prefork MPM,
plus a crawler that works out what a search engine would index.

Debian 12 packages (tools/deps): wordpress, wordpress-theme-twentytwentyone,
mariadb-server, libapache2-mod-php, php-mysql, php-sqlite3, mediawiki.  A
fixture whose package is missing skips its tests, naming the package.

Nothing here writes a system file: WordPress runs from a private copy of
/usr/share/wordpress with its own wp-config.php (Debian's reads
/etc/wordpress/config-HOST.php); MediaWiki runs from a document root of
symbolic links into /usr/share/mediawiki with its own LocalSettings.php
named by MW_CONFIG_FILE (SetEnv for httpd, the environment for php-cli).

Every process started here (mariadbd, httpd, php) is stopped at teardown,
also when a test fails: mariadbd runs in its own process group, killed
as a group when it does not stop on SIGTERM."""

import contextlib
import gzip
import html.parser
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.parse
import urllib.robotparser
import zlib

import pytest

import reaper
from conftest import IS_ROOT, KEEP, RUN_GID, RUN_UID, Server, http_request

PHP = shutil.which("php") or "/usr/bin/php"
LIBPHP = "/usr/lib/apache2/modules/libphp8.2.so"
PHP_CONF = "/etc/apache2/mods-available/php8.2.conf"
DEFLATE_CONF = "/etc/apache2/mods-available/deflate.conf"
WP_SRC = "/usr/share/wordpress"
WP_THEME = "twentytwentyone"
MW_SRC = "/usr/share/mediawiki"
MARIADBD = shutil.which("mariadbd", path="/usr/sbin:/usr/bin") or "/usr/sbin/mariadbd"
MARIADB_INSTALL_DB = shutil.which("mariadb-install-db") or "/usr/bin/mariadb-install-db"
MARIADB = shutil.which("mariadb") or "/usr/bin/mariadb"

# prefork (mod_php is not thread-safe) with one child: the crawler's
# requests are then all handled, and recorded, by one process in order.
ONE_CHILD = ("StartServers 1\nMinSpareServers 1\nMaxSpareServers 2\n"
             "ServerLimit 3\nMaxRequestWorkers 3\nMaxConnectionsPerChild 0\n")


def need(path, package):
    if not os.path.exists(path):
        pytest.skip(f"{path} is missing: install Debian's {package} (tools/deps)")


def need_php(extension):
    need(PHP, "php-cli")
    need(LIBPHP, "libapache2-mod-php")
    r = subprocess.run([PHP, "-m"], stdout=subprocess.PIPE, text=True)
    if extension.lower() not in r.stdout.lower().split():
        pytest.skip(f"PHP has no {extension} extension: install php-{extension} (tools/deps)")


def tmpdir(prefix):
    d = tempfile.mkdtemp(prefix=prefix)
    os.chmod(d, 0o755)          # the children's user must traverse it
    return d


def chown_tree(top):
    """Hand a tree to the children's user (www-data when we are root)."""
    if not IS_ROOT:
        return
    for dirpath, dirs, files in os.walk(top):
        os.chown(dirpath, RUN_UID, RUN_GID)
        for f in files:
            os.lchown(os.path.join(dirpath, f), RUN_UID, RUN_GID)


def run(cmd, timeout=180, **kw):
    """Run a command to completion (killed with its process group on
    timeout); raises with its output when it fails."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, errors="replace", start_new_session=True, **kw)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise AssertionError(f"{cmd[:3]} took over {timeout}s")
    if p.returncode != 0:
        raise AssertionError(f"{cmd} failed ({p.returncode}):\n{out[-4000:]}")
    return out


# ---------------------------------------------------------------------------
# MariaDB

class MariaDB:
    """A throwaway mariadbd: its data directory and socket in a temporary
    directory, no TCP (--skip-networking), stopped by stop()."""

    def __init__(self):
        need(MARIADBD, "mariadb-server")
        need(MARIADB_INSTALL_DB, "mariadb-server")
        self.dir = tmpdir("sitemap-mariadb-")
        self.data = os.path.join(self.dir, "data")
        self.socket = os.path.join(self.dir, "mysqld.sock")
        self.proc = None
        user = ["--user=root"] if IS_ROOT else []
        run([MARIADB_INSTALL_DB, "--no-defaults", f"--datadir={self.data}",
             "--auth-root-authentication-method=socket", "--skip-test-db",
             "--skip-name-resolve", *user], timeout=120)
        self.log = open(os.path.join(self.dir, "mariadbd.log"), "w")
        self.proc = subprocess.Popen(
            [MARIADBD, "--no-defaults", f"--datadir={self.data}",
             f"--socket={self.socket}", "--skip-networking",
             f"--pid-file={self.dir}/mariadbd.pid", "--skip-log-bin",
             "--innodb-flush-log-at-trx-commit=0", "--innodb-buffer-pool-size=32M",
             "--skip-name-resolve", f"--log-error={self.dir}/error.log", *user],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        reaper.register(id(self), self.stop)
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"mariadbd exited ({self.proc.returncode}):\n"
                                     + self.error_log())
            if os.path.exists(self.socket):
                r = subprocess.run([MARIADB, f"--socket={self.socket}", "-uroot",
                                    "-e", "SELECT 1"], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
                if r.returncode == 0:
                    break
            if time.monotonic() > deadline:
                self.stop()
                raise AssertionError("mariadbd did not come up in 60s:\n" + self.error_log())
            time.sleep(0.1)

    def error_log(self):
        with contextlib.suppress(OSError):
            with open(os.path.join(self.dir, "error.log"), errors="replace") as f:
                return f.read()[-4000:]
        return ""

    def sql(self, sql):
        return run([MARIADB, f"--socket={self.socket}", "-uroot", "-N", "-B",
                    "-e", sql], timeout=60)

    def stop(self):
        reaper.unregister(id(self))
        p = self.proc
        if p is not None and p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
        self.proc = None
        self.log.close()
        if not KEEP:
            shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------
# httpd with mod_php

def php_server(root, vhosts, loglevel="warn sitemap:trace1"):
    """A Server (not started) of the harness under prefork with mod_php,
    mod_rewrite, mod_deflate (Debian's deflate.conf) and the given
    <VirtualHost> text."""
    conf = (f"LoadModule php_module {LIBPHP}\n"
            f"Include {PHP_CONF}\n"
            f"Include {DEFLATE_CONF}\n"
            f"{vhosts}\n")
    return Server(root, mpm="prefork", mpm_conf=ONE_CHILD, conf=conf,
                  loglevel=loglevel, modules=("filter", "deflate"))


def stop_server(srv):
    """Stop a session's server; return the error-log lines a test must not
    leave (sitemap warnings, errors, crashed children)."""
    with contextlib.suppress(AssertionError):
        srv.stop()
    bad = []
    for ln in srv.unexpected_log_lines():
        # PHP's own complaints (deprecations of the apps) are the apps'
        if "[php:" in ln and "exit signal" not in ln:
            continue
        bad.append(ln)
    return bad


def vhost(name, port, docroot, body=""):
    return f"""<VirtualHost 127.0.0.1:{port}>
    ServerName {name}:{port}
    DocumentRoot "{docroot}"
    DirectoryIndex index.php index.html
    Sitemap On
    SitemapHTMLPath /site-map.html
    <Directory "{docroot}">
        Options FollowSymLinks
        AllowOverride All
        Require all granted
    </Directory>
{body}
</VirtualHost>
"""


class Site:
    """One application's vhost: its Host header, base URL, docroot and the
    server that serves it."""

    def __init__(self, srv, host, docroot):
        self.srv = srv
        self.host = host                          # name:port
        self.base = f"http://{host}"
        self.docroot = docroot
        self.info = {}

    def get(self, target, headers=None, **kw):
        h = {"Accept-Encoding": "gzip", "User-Agent": "sitemap-test-crawler/1.0"}
        h.update(headers or {})
        r = http_request(self.srv.port, "GET", target, self.host, h, **kw)
        r.text = decode_body(r)
        return r

    def path_of(self, url):
        """The path and query of an absolute URL of this site (None for
        another site)."""
        u = urllib.parse.urlsplit(url)
        if u.scheme != "http" or u.netloc.lower() != self.host.lower():
            return None
        return (u.path or "/") + (f"?{u.query}" if u.query else "")

    def flush(self):
        """Every recorded request is in the store: a graceful stop writes
        every process's queue; the server is started again."""
        self.srv.graceful_stop()
        self.srv.restart()

    def sitemap_paths(self):
        """The paths the sitemap lists (following the index when paged)."""
        from sitemap_check import fetch_all, union_paths
        if self.srv.get("/sitemap.xml", host=self.host).status == 404:
            return set()        # nothing recorded yet
        pages, _ = fetch_all(self.srv, base=self.base, host=self.host)
        return union_paths(pages, self.base)

    def lastmods(self):
        from sitemap_check import fetch_all
        pages, _ = fetch_all(self.srv, base=self.base, host=self.host)
        return {e["loc"][len(self.base):]: e.get("lastmod")
                for d in pages.values() for e in d.entries}

    def html_sitemap_paths(self):
        """The same-site links of the HTML site map (every page of it)."""
        out, todo, seen = set(), ["/site-map.html"], set()
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            r = self.get(p)
            assert r.status == 200, f"GET {p}: {r.status}"
            for link in parse_links(r.text):
                lp = self.path_of(urllib.parse.urljoin(self.base + p, link[1]))
                if lp is None:
                    continue
                lp = lp.split("#")[0]
                if re.match(r"^/site-map(-\d+)?\.html$", lp):
                    todo.append(lp)
                elif not lp.startswith("/sitemap"):
                    out.add(lp)
        return out

    def not_recorded_reasons(self, paths):
        """The module's trace1 "not recorded (why)" lines naming paths."""
        out = {}
        for ln in self.srv.log_lines("sitemap"):
            m = re.search(r"not recorded \(([^)]*)\): (\S+)", ln)
            if m:
                for p in paths:
                    if m.group(2).endswith(p) or m.group(2) == p:
                        out.setdefault(p, set()).add(m.group(1))
        return out


def decode_body(r):
    enc = (r.header("Content-Encoding") or "").lower()
    body = r.body
    if enc == "gzip" and body:
        body = gzip.decompress(body)
    elif enc == "deflate" and body:
        body = zlib.decompress(body)
    ctype = r.header("Content-Type") or ""
    m = re.search(r"charset=([\w-]+)", ctype)
    return body.decode(m.group(1) if m else "utf-8", errors="replace")


# ---------------------------------------------------------------------------
# the crawler

class LinkParser(html.parser.HTMLParser):
    """<a href>, <area href>, <link rel href> and <base href>; the head's
    meta robots and canonical links."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links = []             # (tag/rel, href, type)
        self.robots = []
        self.canonicals = []
        self.base = None
        self.in_head = True

    def handle_starttag(self, tag, attrs):
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag == "body":
            self.in_head = False
        if tag in ("a", "area") and "href" in a:
            # rel=nofollow too: search engines may still find the page
            self.links.append(("a", a["href"], ""))
        elif tag == "link" and "href" in a:
            rels = a.get("rel", "").lower().split()
            for rel in rels:
                self.links.append((rel, a["href"], a.get("type", "").lower()))
            if "canonical" in rels and self.in_head:
                self.canonicals.append(a["href"])
        elif tag == "meta" and self.in_head:
            if a.get("name", "").lower() in ("robots", "googlebot"):
                self.robots.append(a.get("content", "").lower())
        elif tag == "base" and "href" in a and self.base is None:
            self.base = a["href"]


def parse_links(text):
    p = LinkParser()
    p.feed(text)
    return p.links


FOLLOW_RELS = {"a", "next", "prev", "previous", "canonical", "alternate",
               "shortlink", "up", "first", "last"}


def has_noindex(value):
    toks = re.split(r"[\s,]+", (value or "").lower())
    return "noindex" in toks or "none" in toks


def link_header_canonicals(value):
    out = []
    for part in re.split(r",\s*(?=<)", value or ""):
        m = re.match(r'\s*<([^>]*)>(.*)$', part)
        if m and re.search(r'rel\s*=\s*"?[^";]*\bcanonical\b', m.group(2), re.I):
            out.append(m.group(1))
    return out


def norm_path(p):
    """The stored form of a path+query, as the module normalises (escapes
    uppercased, unreserved ones decoded)."""
    def fix(m):
        c = chr(int(m.group(1), 16))
        if c.isalnum() and c.isascii() or c in "-._~":
            return c
        return "%" + m.group(1).upper()
    return re.sub(r"%([0-9A-Fa-f]{2})", fix, p)


class Crawl:
    def __init__(self):
        self.pages = {}         # path -> dict(status, type, indexable, why)
        self.order = []

    @property
    def indexable(self):
        return {p for p, v in self.pages.items() if v["indexable"]}

    def table(self):
        """One line a URL: path, status, type, and why not indexable."""
        return "\n".join(
            f"  {p} {v['status']} {v['type']} "
            f"{'INDEXABLE' if v['indexable'] else v['why']}"
            for p, v in self.pages.items())

    def summary(self):
        skipped = len(self.pages) - len(self.order)
        return (f"{len(self.order)} URLs fetched ({skipped} more disallowed "
                f"by robots.txt), {len(self.indexable)} indexable")


def crawl(site, limit=400, start="/"):
    """Crawl site from start as a search engine would: anonymous (no
    cookies), Accept-Encoding gzip, robots.txt honoured (urllib.robotparser),
    every same-site link of <a>, <area> and <link rel=next/prev/canonical/
    alternate/...>, redirects followed, at most limit URLs.  A page is
    indexable when it answers 200 text/html, with no noindex/none in a meta
    robots/googlebot or X-Robots-Tag, its canonical (head or Link header)
    absent or naming itself, and robots.txt allows it."""
    rp = urllib.robotparser.RobotFileParser()
    r = site.get("/robots.txt")
    rp.parse(r.text.splitlines() if r.status == 200 else [])
    agent = "sitemap-test-crawler"
    c = Crawl()
    c.robots_txt = r.text if r.status == 200 else ""
    queue, seen = [start], {start}
    while queue and len(c.order) < limit:
        path = queue.pop(0)
        if not rp.can_fetch(agent, site.base + path):
            c.pages[path] = dict(status=None, type="", indexable=False,
                                 why="robots.txt")
            continue
        r = site.get(path)
        ctype = (r.header("Content-Type") or "").split(";")[0].strip().lower()
        info = dict(status=r.status, type=ctype, indexable=False, why="",
                    headers=r.headers)
        c.pages[path] = info
        c.order.append(path)
        found = []
        if r.status in (301, 302, 303, 307, 308) and r.header("Location"):
            found.append(r.header("Location"))
            info["why"] = f"{r.status} -> {r.header('Location')}"
        elif r.status != 200:
            info["why"] = f"status {r.status}"
        elif ctype not in ("text/html", "application/xhtml+xml"):
            info["why"] = f"type {ctype}"
        else:
            p = LinkParser()
            p.feed(r.text)
            here = site.base + path
            base = urllib.parse.urljoin(here, p.base) if p.base else here
            for rel, href, typ in p.links:
                if rel in FOLLOW_RELS and not href.startswith(("mailto:", "javascript:")):
                    if typ and typ not in ("text/html", "application/xhtml+xml"):
                        continue        # feeds, oEmbed, the REST API
                    found.append(urllib.parse.urljoin(base, href))
            canon = [urllib.parse.urljoin(base, h) for h in p.canonicals]
            canon += [urllib.parse.urljoin(here, h) for h in
                      link_header_canonicals(",".join(
                          v for k, v in r.headers if k.lower() == "link"))]
            xrt = ",".join(v for k, v in r.headers if k.lower() == "x-robots-tag")
            info["canonical"] = canon
            info["meta_robots"] = p.robots
            if any(has_noindex(v) for v in p.robots):
                info["why"] = "meta robots noindex"
            elif has_noindex(xrt):
                info["why"] = "X-Robots-Tag noindex"
            elif canon and any(site.path_of(u) is None
                               or norm_path(site.path_of(u).split("#")[0]) != norm_path(path)
                               for u in canon):
                info["why"] = f"canonical {canon}"
            else:
                info["indexable"] = True
        for u in found:
            lp = site.path_of(u)
            if lp is None:
                continue
            lp = norm_path(lp.split("#")[0])
            if lp not in seen:
                seen.add(lp)
                queue.append(lp)
    c.truncated = bool(queue)
    return c


def compare(truth, listed, what="sitemap"):
    """A message naming the differences of two sets of paths, "" when equal."""
    missing = sorted(truth - listed)
    extra = sorted(listed - truth)
    if not missing and not extra:
        return ""
    prec = len(truth & listed) / len(listed) if listed else 1.0
    rec = len(truth & listed) / len(truth) if truth else 1.0
    return (f"{what}: precision {prec:.1%}, recall {rec:.1%} "
            f"({len(truth)} indexable, {len(listed)} listed)\n"
            f"  indexable but not listed ({len(missing)}): {missing}\n"
            f"  listed but not indexable ({len(extra)}): {extra}")


# ---------------------------------------------------------------------------
# WordPress

WP_HTACCESS = r"""# BEGIN WordPress
# The directives (lines) between "BEGIN WordPress" and "END WordPress" are
# dynamically generated, and should only be modified via WordPress filters.
# Any changes to the directives between these markers will be overwritten.
<IfModule mod_rewrite.c>
RewriteEngine On
RewriteRule .* - [E=HTTP_AUTHORIZATION:%{HTTP:Authorization}]
RewriteBase /
RewriteRule ^index\.php$ - [L]
RewriteCond %{REQUEST_FILENAME} !-f
RewriteCond %{REQUEST_FILENAME} !-d
RewriteRule . /index.php [L]
</IfModule>

# END WordPress
"""

WP_VHOST_RULES = """    RewriteEngine On
    RewriteCond %{DOCUMENT_ROOT}%{REQUEST_URI} !-f
    RewriteCond %{DOCUMENT_ROOT}%{REQUEST_URI} !-d
    RewriteRule ^/. /index.php [PT,L]
"""

WP_CONFIG = """<?php
/* written by t/integration/apps.py: a test site, not Debian's config */
define('DB_NAME', 'wordpress');
define('DB_USER', 'wp');
define('DB_PASSWORD', 'wp-test-pw');
define('DB_HOST', 'localhost:{socket}');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
define('AUTH_KEY', 'test-auth-key-{salt}');
define('SECURE_AUTH_KEY', 'test-secure-auth-key-{salt}');
define('LOGGED_IN_KEY', 'test-logged-in-key-{salt}');
define('NONCE_KEY', 'test-nonce-key-{salt}');
define('AUTH_SALT', 'test-auth-salt-{salt}');
define('SECURE_AUTH_SALT', 'test-secure-auth-salt-{salt}');
define('LOGGED_IN_SALT', 'test-logged-in-salt-{salt}');
define('NONCE_SALT', 'test-nonce-salt-{salt}');
$table_prefix = 'wp_';
define('WP_HOME', '{base}');
define('WP_SITEURL', '{base}');
define('WP_CONTENT_DIR', __DIR__ . '/wp-content');
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('WP_DEBUG', false);
define('FS_METHOD', 'direct');
if (!defined('ABSPATH')) {{
    define('ABSPATH', __DIR__ . '/');
}}
require_once ABSPATH . 'wp-settings.php';
"""

# Installs the blog and makes its content; prints a JSON object of what
# the tests need (ids, URLs).
WP_SEED = r"""<?php
$_SERVER['HTTP_HOST'] = getenv('WP_TEST_HOST');
$_SERVER['SERVER_NAME'] = preg_replace('/:.*/', '', getenv('WP_TEST_HOST'));
$_SERVER['REQUEST_URI'] = '/';
define('WP_INSTALLING', true);
require __DIR__ . '/wp-load.php';
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/image.php';
$r = wp_install('Sitemap Test Blog', 'admin', 'admin@example.com', true, '', 'admin-test-pw');
update_option('permalink_structure', '/%year%/%monthnum%/%postname%/');
update_option('posts_per_page', 10);
update_option('page_comments', 1);
update_option('comments_per_page', 5);
update_option('default_comments_page', 'oldest');
update_option('thread_comments', 1);
update_option('template', 'twentytwentyone');
update_option('stylesheet', 'twentytwentyone');
update_option('timezone_string', 'UTC');
global $wp_rewrite;
$wp_rewrite->init();
$wp_rewrite->set_permalink_structure('/%year%/%monthnum%/%postname%/');
$out = array();
$editor = wp_insert_user(array('user_login' => 'editor', 'user_pass' => 'editor-test-pw',
    'user_email' => 'editor@example.com', 'role' => 'editor', 'display_name' => 'Eddie Editor'));
$out['editor'] = $editor;
$cats = array();
foreach (array('News', 'Travel', 'Recipes', 'Technology') as $c) {
    $cats[] = wp_insert_term($c, 'category')['term_id'];
}
$words = explode(' ', 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua');
$posts = array();
for ($i = 1; $i <= 20; $i++) {
    $month = 1 + ($i % 6);
    $body = '';
    for ($k = 0; $k < 4; $k++) {
        $body .= '<!-- wp:paragraph --><p>' . ucfirst(implode(' ', array_slice($words, ($i + $k) % 10, 8))) . ".</p><!-- /wp:paragraph -->\n";
    }
    $id = wp_insert_post(array(
        'post_title' => "Post number $i about " . $words[$i % count($words)],
        'post_name' => "post-number-$i",
        'post_content' => $body,
        'post_status' => 'publish',
        'post_author' => ($i % 3 == 0) ? $editor : 1,
        'post_date' => sprintf('2024-%02d-%02d 10:%02d:00', $month, 1 + $i, $i),
        'post_category' => array($cats[$i % 4]),
        'tags_input' => array('tag-' . ($i % 5), 'common'),
    ), true);
    if (is_wp_error($id)) { fwrite(STDERR, $id->get_error_message()); exit(1); }
    $posts[] = $id;
}
$out['posts'] = $posts;
// comments: enough for three comment pages on one post (5 a page)
for ($c = 1; $c <= 12; $c++) {
    wp_insert_comment(array('comment_post_ID' => $posts[0], 'comment_author' => "Reader $c",
        'comment_author_email' => "reader$c@example.com", 'comment_content' => "Comment $c on the first post.",
        'comment_approved' => 1, 'comment_date' => sprintf('2024-03-01 12:%02d:00', $c)));
}
wp_insert_comment(array('comment_post_ID' => $posts[1], 'comment_author' => 'Reader',
    'comment_content' => 'One comment.', 'comment_approved' => 1));
// an uploaded image, attached to the second post and shown in it
$up = wp_upload_dir('2024/02');
$img = imagecreatetruecolor(64, 48);
imagefilledrectangle($img, 0, 0, 63, 47, imagecolorallocate($img, 30, 120, 200));
$file = $up['path'] . '/blue-square.png';
imagepng($img, $file);
$att = wp_insert_attachment(array('post_mime_type' => 'image/png', 'post_title' => 'Blue square',
    'post_name' => 'blue-square', 'post_content' => '', 'post_status' => 'inherit'), $file, $posts[1]);
wp_update_attachment_metadata($att, wp_generate_attachment_metadata($att, $file));
$out['attachment'] = $att;
$p2 = get_post($posts[1]);
wp_update_post(array('ID' => $posts[1], 'post_content' => $p2->post_content .
    '<!-- wp:image --><figure class="wp-block-image"><a href="' . get_attachment_link($att) . '"><img src="' .
    wp_get_attachment_url($att) . '" alt="A blue square"/></a></figure><!-- /wp:image -->'));
// pages
$about = wp_insert_post(array('post_type' => 'page', 'post_title' => 'About us', 'post_name' => 'about',
    'post_content' => '<p>Who we are.</p>', 'post_status' => 'publish'));
$team = wp_insert_post(array('post_type' => 'page', 'post_title' => 'Our team', 'post_name' => 'team',
    'post_parent' => $about, 'post_content' => '<p>The team.</p>', 'post_status' => 'publish'));
$contact = wp_insert_post(array('post_type' => 'page', 'post_title' => 'Contact', 'post_name' => 'contact',
    'post_content' => '<p>Write to us.</p>', 'post_status' => 'publish'));
$privpage = wp_insert_post(array('post_type' => 'page', 'post_title' => 'Staff only page', 'post_name' => 'staff-only',
    'post_content' => '<p>Internal.</p>', 'post_status' => 'private'));
$out['pages'] = array($about, $team, $contact);
$out['private_page'] = $privpage;
// a menu of the pages, as sites have
$menu = wp_create_nav_menu('Main');
foreach (array($about, $team, $contact) as $pg) {
    wp_update_nav_menu_item($menu, 0, array('menu-item-object-id' => $pg, 'menu-item-object' => 'page',
        'menu-item-type' => 'post_type', 'menu-item-status' => 'publish'));
}
set_theme_mod('nav_menu_locations', array('primary' => $menu));
// what must never be listed
$out['draft'] = wp_insert_post(array('post_title' => 'A draft', 'post_name' => 'a-draft',
    'post_content' => '<p>Not yet.</p>', 'post_status' => 'draft'));
$out['private'] = wp_insert_post(array('post_title' => 'A private post', 'post_name' => 'a-private-post',
    'post_content' => '<p>Only for us.</p>', 'post_status' => 'private', 'post_date' => '2024-05-05 10:00:00'));
$out['future'] = wp_insert_post(array('post_title' => 'A scheduled post', 'post_name' => 'a-scheduled-post',
    'post_content' => '<p>Tomorrow.</p>', 'post_status' => 'future', 'post_date' => '2035-01-15 10:00:00'));
$out['protected'] = wp_insert_post(array('post_title' => 'A protected post', 'post_name' => 'a-protected-post',
    'post_content' => '<p>Secret.</p>', 'post_status' => 'publish', 'post_password' => 'letmein',
    'post_date' => '2024-04-04 10:00:00'));
wp_delete_post(1, true);        // "Hello world!"
wp_delete_post(2, true);        // "Sample Page"
// init ran before the permalink structure was set: the rules this
// process would write lack the taxonomies' own; the first web request
// makes them afresh
delete_option('rewrite_rules');
$links = array();
foreach (array('private', 'protected', 'private_page') as $k) {
    $links[$k] = get_permalink($out[$k]);
}
$links['future'] = home_url('/2035/01/a-scheduled-post/');
$links['draft_preview'] = home_url('/?p=' . $out['draft'] . '&preview=true');
$links['posts'] = array_map('get_permalink', $posts);
$links['attachment'] = get_attachment_link($att);
$out['links'] = $links;
echo json_encode($out);
"""


def wp_php(site, code, timeout=120):
    """Run PHP code with WordPress loaded (php-cli, wp-load.php)."""
    path = os.path.join(site.docroot, ".sitemap-test-run.php")
    with open(path, "w") as f:
        f.write("<?php\n$_SERVER['HTTP_HOST'] = getenv('WP_TEST_HOST');\n"
                "require __DIR__ . '/wp-load.php';\n" + code + "\n")
    try:
        return run([PHP, path], cwd=site.docroot, timeout=timeout,
                   env=dict(os.environ, WP_TEST_HOST=site.host))
    finally:
        os.unlink(path)


@pytest.fixture(scope="session")
def mariadb():
    db = MariaDB()
    try:
        yield db
    finally:
        db.stop()


@pytest.fixture(scope="session")
def wp_site(mariadb):
    need(WP_SRC + "/wp-settings.php", "wordpress")
    need(f"{WP_SRC}/wp-content/themes/{WP_THEME}", f"wordpress-theme-{WP_THEME}")
    need_php("mysqli")
    need_php("gd")
    root = tmpdir("sitemap-wp-")
    docroot = os.path.join(root, "wordpress")
    srv = None
    try:
        # a private copy: the vhost needs no /etc/wordpress file
        shutil.copytree(WP_SRC, docroot, symlinks=True,
                        ignore=shutil.ignore_patterns(".htaccess", "wp-config.php"))
        os.makedirs(os.path.join(docroot, "wp-content", "uploads"), exist_ok=True)
        srv_root = os.path.join(root, "httpd")
        os.makedirs(srv_root)
        os.chmod(srv_root, 0o755)
        srv = php_server(srv_root, "")
        host = f"wp.sitemap.test:{srv.port}"
        # WordPress's rules where WordPress writes them (.htaccess), or,
        # with SITEMAP_TEST_WP_RULES=vhost, the same rules in the vhost
        # (no path info: what the module sees past the .htaccess problem)
        rules = ""
        if os.environ.get("SITEMAP_TEST_WP_RULES") == "vhost":
            rules = WP_VHOST_RULES
        srv.conf_text += vhost("wp.sitemap.test", srv.port, docroot, rules)
        site = Site(srv, host, docroot)
        mariadb.sql("CREATE DATABASE wordpress CHARACTER SET utf8mb4; "
                    "CREATE USER 'wp'@'localhost' IDENTIFIED BY 'wp-test-pw'; "
                    "GRANT ALL ON wordpress.* TO 'wp'@'localhost';")
        with open(os.path.join(docroot, "wp-config.php"), "w") as f:
            f.write(WP_CONFIG.format(socket=mariadb.socket, base=site.base,
                                     salt=os.path.basename(root)))
        if not rules:
            with open(os.path.join(docroot, ".htaccess"), "w") as f:
                f.write(WP_HTACCESS)
        seed = os.path.join(docroot, ".sitemap-test-seed.php")
        with open(seed, "w") as f:
            f.write(WP_SEED)
        out = run([PHP, seed], cwd=docroot, timeout=180,
                  env=dict(os.environ, WP_TEST_HOST=host))
        os.unlink(seed)
        site.info = json.loads(out[out.index("{"):])
        chown_tree(os.path.join(docroot, "wp-content", "uploads"))
        srv.start()
        yield site
    finally:
        bad = stop_server(srv) if srv is not None else []
        if not KEEP:
            shutil.rmtree(root, ignore_errors=True)
        if bad:
            pytest.fail("unexpected error-log lines of the WordPress server:\n"
                        + "\n".join(bad), pytrace=False)


def wp_login(site, user="editor", password="editor-test-pw"):
    """Log in through wp-login.php as a browser does; the cookie header of
    the session (name=value; ...)."""
    jar = {"wordpress_test_cookie": "WP%20Cookie%20check"}
    body = urllib.parse.urlencode({"log": user, "pwd": password, "wp-submit": "Log In",
                                   "redirect_to": site.base + "/wp-admin/",
                                   "testcookie": "1"})
    r = http_request(site.srv.port, "POST", "/wp-login.php", site.host,
                     {"Content-Type": "application/x-www-form-urlencoded",
                      "Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())}, body)
    assert r.status == 302, f"wp-login.php: {r.status} {r.body[:500]!r}"
    for k, v in r.headers:
        if k.lower() == "set-cookie":
            name, _, rest = v.partition("=")
            val = rest.split(";")[0]
            if val and val != "deleted":
                jar[name] = val
    assert any(k.startswith("wordpress_logged_in_") for k in jar), r.headers
    return jar


def cookie_header(jar):
    return "; ".join(f"{k}={v}" for k, v in jar.items())


# ---------------------------------------------------------------------------
# MediaWiki

MW_ARTICLES = ["Apple", "Banana", "Cherry", "Date palm", "Elderberry", "Fig",
               "Grape", "Hazelnut", "Kiwi", "Lemon", "Mango", "Nectarine",
               "Olive", "Peach", "Quince", "Raspberry", "Strawberry",
               "Tangerine", "Ugli fruit", "Watermelon"]
MW_CATEGORIES = ["Fruit", "Tropical fruit", "Berries"]
MW_REDIRECTS = {"Apples": "Apple", "Grapes": "Grape", "Kiwifruit": "Kiwi"}


def mw_dump():
    """An XML dump (export-0.11) of the test wiki's pages."""
    from xml.sax.saxutils import escape
    pages = {}
    for i, t in enumerate(MW_ARTICLES):
        nxt = MW_ARTICLES[(i + 1) % len(MW_ARTICLES)]
        prv = MW_ARTICLES[i - 1]
        cats = "[[Category:Fruit]]"
        if i % 3 == 0:
            cats += " [[Category:Tropical fruit]]"
        if t.endswith("berry"):
            cats += " [[Category:Berries]]"
        pages[t] = (f"'''{t}''' is a fruit.\n\n== Description ==\n"
                    f"The {t.lower()} grows on plants. See also [[{nxt}]] and "
                    f"[[{prv}]].\n\n== History ==\nPeople have eaten it for "
                    f"a long time.\n\n{cats}\n")
        if i % 2 == 0:
            pages[f"Talk:{t}"] = f"Is the {t.lower()} really a fruit? --[[User:Admin|Admin]]\n"
    for c in MW_CATEGORIES:
        pages[f"Category:{c}"] = f"Pages about {c.lower()}.\n"
    for src, dst in MW_REDIRECTS.items():
        pages[src] = f"#REDIRECT [[{dst}]]\n"
    main = ("Welcome to the test wiki.\n\n" +
                          "".join(f"* [[{t}]]\n" for t in MW_ARTICLES) +
                          "\n[[Category:Fruit|Fruit]] [[:Category:Fruit|All fruit]] [[Apples]]\n")
    now = time.time()

    def stamp(n):
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 3600 + n))
    out = ['<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">']
    for n, (title, text) in enumerate(pages.items()):
        ns = 1 if title.startswith("Talk:") else 14 if title.startswith("Category:") else 0
        out.append(f"<page><title>{escape(title)}</title><ns>{ns}</ns><revision>"
                   f"<timestamp>{stamp(n)}</timestamp>"
                   "<contributor><username>Admin</username><id>1</id></contributor>"
                   "<model>wikitext</model><format>text/x-wiki</format>"
                   f'<text xml:space="preserve">{escape(text)}</text></revision></page>')
    out.append("</mediawiki>\n")
    return "\n".join(out), main


# What wikis tell crawlers: no edit/history/diff views, no Special pages.
# ("Disallow: /index.php?" would be the short form, but Python's
# robotparser drops a bare trailing "?" and so reads it as /index.php.)
MW_ROBOTS = """User-agent: *
Disallow: /index.php?title=
Disallow: /index.php?oldid=
Disallow: /index.php?curid=
Disallow: /index.php?diff=
Disallow: /index.php?search=
Disallow: /index.php?printable=
Disallow: /index.php/Special:
Disallow: /index.php/Special%3A
Disallow: /wiki/Special:
Disallow: /wiki/Special%3A
Disallow: /api.php
Disallow: /load.php
"""


def mw_maint(site, script, *args, stdin=None, timeout=180):
    env = dict(os.environ, MW_CONFIG_FILE=site.settings, MW_INSTALL_PATH=MW_SRC)
    cmd = [PHP, f"{MW_SRC}/maintenance/{script}", *args]
    if stdin is None:
        return run(cmd, timeout=timeout, env=env)
    p = subprocess.run(cmd, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, env=env, timeout=timeout)
    assert p.returncode == 0, f"{script}: {p.stdout[-3000:]}"
    return p.stdout


@pytest.fixture(scope="session")
def mw_site():
    need(MW_SRC + "/index.php", "mediawiki")
    need_php("sqlite3")
    need_php("intl")
    root = tmpdir("sitemap-mw-")
    docroot = os.path.join(root, "htdocs")
    data = os.path.join(root, "data")
    srv = None
    try:
        os.makedirs(docroot)
        os.makedirs(data)
        os.makedirs(os.path.join(root, "images"))
        for name in os.listdir(MW_SRC):
            if name in ("LocalSettings.php", "images", "config", "mw-config"):
                continue
            os.symlink(os.path.join(MW_SRC, name), os.path.join(docroot, name))
        os.symlink(os.path.join(root, "images"), os.path.join(docroot, "images"))
        with open(os.path.join(docroot, "robots.txt"), "w") as f:
            f.write(MW_ROBOTS)
        srv_root = os.path.join(root, "httpd")
        os.makedirs(srv_root)
        os.chmod(srv_root, 0o755)
        srv = php_server(srv_root, "")
        host = f"wiki.sitemap.test:{srv.port}"
        settings = os.path.join(root, "LocalSettings.php")
        srv.conf_text += vhost("wiki.sitemap.test", srv.port, docroot,
                               f'    SetEnv MW_CONFIG_FILE "{settings}"\n'
                               f'    SetEnv MW_INSTALL_PATH "{MW_SRC}"\n')
        # the short-URL form (mediawiki.org's Manual:Short URL/Apache):
        # /wiki/Title, rewritten in the vhost to index.php, which reads the
        # title from REQUEST_URI
        short = f"wikishort.sitemap.test:{srv.port}"
        srv.conf_text += vhost("wikishort.sitemap.test", srv.port, docroot,
                               f'    SetEnv MW_CONFIG_FILE "{settings}"\n'
                               f'    SetEnv MW_INSTALL_PATH "{MW_SRC}"\n'
                               "    RewriteEngine On\n"
                               "    RewriteRule ^/?wiki(/.*)?$ %{DOCUMENT_ROOT}/index.php [L]\n"
                               "    RewriteRule ^/*$ %{DOCUMENT_ROOT}/index.php [L]\n")
        site = Site(srv, host, docroot)
        site.settings = settings
        site.short = Site(srv, short, docroot)
        env = dict(os.environ, MW_INSTALL_PATH=MW_SRC)
        run([PHP, f"{MW_SRC}/maintenance/install.php", "--dbtype=sqlite",
             f"--dbpath={data}", "--dbname=wiki", f"--server={site.base}",
             "--scriptpath=", "--lang=en", "--pass=Admin-test-pw-1234",
             f"--confpath={root}", "--skins=Vector", "Test Wiki", "Admin"],
            timeout=240, env=env)
        with open(settings, "a") as f:
            f.write("\n# t/integration/apps.py\n$wgJobRunRate = 0;\n"
                    "$wgEnableUploads = false;\n$wgUseInstantCommons = false;\n"
                    "$wgDefaultSkin = 'vector';\n$wgShowExceptionDetails = true;\n"
                    # one rendering for two URL forms: no shared parser cache
                    "$wgParserCacheType = CACHE_NONE;\n"
                    "if (($_SERVER['SERVER_NAME'] ?? '') === 'wikishort.sitemap.test') {\n"
                    f"    $wgServer = 'http://{short}';\n"
                    "    $wgArticlePath = '/wiki/$1';\n}\n"
                    f"$wgUploadDirectory = '{root}/images';\n"
                    f"$wgCacheDirectory = '{root}/cache';\n")
        dump, main = mw_dump()
        mw_maint(site, "importDump.php", "--no-local-users", "--username-prefix=", stdin=dump)
        # the installer's Main Page is newer than any imported revision
        mw_maint(site, "edit.php", "--user=Admin", "--summary=test wiki", "Main Page", stdin=main)
        mw_maint(site, "rebuildrecentchanges.php")
        mw_maint(site, "initSiteStats.php", "--update")
        os.makedirs(os.path.join(root, "cache"), exist_ok=True)
        chown_tree(data)
        chown_tree(os.path.join(root, "cache"))
        chown_tree(os.path.join(root, "images"))
        srv.start()
        yield site
    finally:
        bad = stop_server(srv) if srv is not None else []
        if not KEEP:
            shutil.rmtree(root, ignore_errors=True)
        if bad:
            pytest.fail("unexpected error-log lines of the MediaWiki server:\n"
                        + "\n".join(bad), pytrace=False)
