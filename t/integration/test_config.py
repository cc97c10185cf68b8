# SPDX-License-Identifier: Apache-2.0
"""Configuration: every bad value stops httpd from starting with a message
naming the directive and the value; good values start."""
import os
import stat

import pytest

from conftest import IS_ROOT, RUN_UID, SM_SCHEMA_VERSION


# (directive line, value that must appear in the message)
BAD_VALUES = [
    ("Sitemap Maybe", None),
    ("SitemapFlushInterval 10x", "10x"),
    ("SitemapFlushInterval abc", "abc"),
    ("SitemapFlushInterval -1", "-1"),
    ("SitemapFlushInterval 99999999999999999999h", "99999999999999999999h"),
    ("SitemapExpire 10x", "10x"),
    ("SitemapExpire -5d", "-5d"),
    ("SitemapExpire 3weeks", "3weeks"),
    ("SitemapExpire 99999999999999999999d", "99999999999999999999d"),
    ("SitemapMaxURLs 10x", "10x"),
    ("SitemapMaxURLs -3", "-3"),
    ("SitemapMaxURLs many", "many"),
    ("SitemapMaxURLs 99999999999999999999999", "99999999999999999999999"),
    ('SitemapExclude "^/(unclosed"', "^/(unclosed"),
    ('SitemapExclude "[z-a]"', "[z-a]"),
    ("SitemapBaseURL https://www.example.com/blog", "https://www.example.com/blog"),
    ("SitemapBaseURL ftp://www.example.com", "ftp://www.example.com"),
    ("SitemapBaseURL www.example.com", "www.example.com"),
    ("SitemapBaseURL http://", "http://"),
    ("SitemapBaseURL http://www.example.com:99999", "http://www.example.com:99999"),
    ("SitemapBaseURL http://www.example.com/?q=1", "http://www.example.com/?q=1"),
    ("SitemapContentTypes html", "html"),
    ('SitemapContentTypes "text/html; charset=utf-8"', "text/html; charset=utf-8"),
    ("SitemapAllowQuery a=b", "a=b"),
    ("SitemapPath /a[1].xml", "/a[1].xml"),
    ("SitemapPath /a]b.xml", "/a]b.xml"),
    ('SitemapPath "/a b.xml"', "/a b.xml"),
    ("SitemapPath /a%zz.xml", "/a%zz.xml"),
    ("SitemapPath /a%41.xml", "/a%41.xml"),
    ("SitemapPath /a?b.xml", "/a?b.xml"),
    ('SitemapPath "/a#b.xml"', "/a#b.xml"),
    ("SitemapPath /a{b}.xml", "/a{b}.xml"),
    ('SitemapStateDir ""', None),
]


@pytest.mark.parametrize("line,value", BAD_VALUES, ids=[b[0] for b in BAD_VALUES])
def test_bad_value_stops_startup(make_server, line, value):
    srv = make_server()
    directive = line.split()[0]
    needles = [directive] + ([value] if value else [])
    srv.config_fails(*needles, conf=line)


def test_sitemap_path_message_says_what_is_allowed(make_server):
    srv = make_server()
    srv.config_fails("SitemapPath", "/a[1].xml", "may only hold letters, digits",
                     "'['", conf="SitemapPath /a[1].xml")


def test_short_base_url_warned(make_server):
    """A <loc> shorter than the official schema's 12 characters: the root
    of http://a.b is http://a.b/ (11).  A warning, not a refusal."""
    srv = make_server(conf="SitemapBaseURL http://a.b\n")
    srv.expect_log(r"SitemapBaseURL http://a.b: the root's <loc>, http://a.b/, "
                   r"has 11 characters, fewer than the 12 the official schema")
    srv.start()
    srv.wait_log(r"fewer than the 12", module="sitemap", level="warn")


def test_base_url_of_twelve_characters_not_warned(make_server):
    """http://ab.c/ has 12 characters: no warning (the harness fails the
    test on any sitemap warning)."""
    srv = make_server(conf="SitemapBaseURL http://ab.c\n")
    srv.start()
    srv.get_ok("/index.html")
    srv.wait_recorded("/index.html", base="http://ab.c")
    assert srv.get("/sitemap.xml").status == 200


@pytest.mark.parametrize("line,value", BAD_VALUES[:3], ids=[b[0] for b in BAD_VALUES[:3]])
def test_bad_value_in_virtualhost_stops_startup(make_server, line, value):
    srv = make_server()
    directive = line.split()[0]
    needles = [directive] + ([value] if value else [])
    srv.config_fails(*needles, conf=f"""
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName vh.test
    {line}
</VirtualHost>
""")


@pytest.mark.parametrize("container", [
    "<Directory {root}/htdocs>\n{line}\n</Directory>",
    "<Location /x>\n{line}\n</Location>",
    "<Files x.html>\n{line}\n</Files>",
])
@pytest.mark.parametrize("line", [
    "Sitemap On",
    "SitemapDatabase db/other.db",
    "SitemapBaseURL http://www.example.com",
    "SitemapContentTypes text/html",
    "SitemapExclude ^/x",
    "SitemapAllowQuery page",
    "SitemapFlushInterval 1s",
    "SitemapExpire 30d",
    "SitemapMaxURLs 10",
])
def test_directive_in_directory_context_stops_startup(make_server, container, line):
    srv = make_server()
    conf = container.format(root=srv.root, line=line)
    srv.config_fails(line.split()[0], conf=conf)


def test_database_location_not_creatable(make_server):
    """/proc cannot hold a new directory, not even for root."""
    srv = make_server(sitemap=False)
    srv.config_fails("SitemapDatabase", "/proc/sitemap-test/sitemap.db",
                     check_syntax=False, conf="""
Sitemap On
SitemapDatabase /proc/sitemap-test/sitemap.db
""")


def test_database_below_a_regular_file(make_server):
    srv = make_server(sitemap=False)
    srv.config_fails("SitemapDatabase", "htdocs/page.html/sitemap.db",
                     check_syntax=False, conf="""
Sitemap On
SitemapDatabase htdocs/page.html/sitemap.db
""")


def test_database_is_a_directory(make_server):
    srv = make_server(sitemap=False)
    os.makedirs(srv.path("db/adir.db"))
    srv.config_fails("SitemapDatabase", "adir.db", conf="""
Sitemap On
SitemapDatabase db/adir.db
""")


GOOD_VALUES = [
    "Sitemap Off", "Sitemap on",
    "SitemapFlushInterval 100ms", "SitemapFlushInterval 500ms",
    "SitemapFlushInterval 1", "SitemapFlushInterval 2s",
    "SitemapFlushInterval 2mi", "SitemapFlushInterval 1h",
    "SitemapExpire 0", "SitemapExpire 30d", "SitemapExpire 365d",
    "SitemapExpire 720h", "SitemapExpire 3600s", "SitemapExpire 90mi",
    "SitemapExpire 86400",
    "SitemapMaxURLs 1", "SitemapMaxURLs 10000000",
    'SitemapExclude "^/private/" ', r'SitemapExclude "\.(bak|old)$"',
    "SitemapBaseURL https://www.example.com",
    "SitemapBaseURL http://www.example.com:8080",
    "SitemapBaseURL HTTPS://WWW.EXAMPLE.COM:443/",
    "SitemapContentTypes text/html",
    "SitemapContentTypes text/html application/xhtml+xml text/plain",
    "SitemapAllowQuery page", "SitemapAllowQuery page lang sort_by",
]


def test_good_values_pass_syntax_check(make_server):
    srv = make_server()
    for line in GOOD_VALUES:
        srv.write_conf(line)
        r = srv.ctl("-t")
        assert r.returncode == 0, f"{line!r} refused:\n{r.stdout}{r.stderr}"


def test_good_config_starts_and_records(make_server):
    srv = make_server(sitemap=False)
    srv.write("vh/page.html", "<html>vh</html>")
    srv.conf_text = f"""
Sitemap On
SitemapDatabase var/lib/sitemap/store.db
SitemapContentTypes text/html application/xhtml+xml text/plain
SitemapExclude ^/private/
SitemapExclude \\.bak$
SitemapAllowQuery page lang
SitemapFlushInterval 100ms
SitemapExpire 30d
SitemapMaxURLs 1000
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName vh.test
    DocumentRoot {srv.root}/vh
    SitemapBaseURL https://www.example.com
    SitemapFlushInterval 200ms
    SitemapExpire 0
    SitemapMaxURLs 10
    <Directory {srv.root}/vh>
        Require all granted
    </Directory>
</VirtualHost>
"""
    srv.db = "var/lib/sitemap/store.db"
    srv.start()
    srv.get_ok("/page.html", host="vh.test")
    srv.wait_recorded("/page.html", base="https://www.example.com")


def test_state_dir_in_a_virtualhost_stops_startup(make_server):
    """SitemapStateDir is the whole server's: not a vhost's."""
    srv = make_server()
    srv.config_fails("SitemapStateDir", "VirtualHost", conf=f"""
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName vh.test
    SitemapStateDir other
</VirtualHost>
""")


def test_state_dir_holds_the_default_store(make_server):
    """Without SitemapDatabase the store is sitemap.db in SitemapStateDir
    (relative to ServerRoot, made at start-up as the store's directory
    would be), not the build's default directory."""
    srv = make_server(sitemap=False, conf="Sitemap On\n"
                      "SitemapFlushInterval 100ms\n"
                      "SitemapStateDir var/sitemap/\n")
    srv.start()
    db = srv.path("var/sitemap/sitemap.db")
    assert os.path.isfile(db), "store not created in SitemapStateDir"
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html", db=db)


def test_database_and_directory_created_at_startup(make_server):
    """The store and its missing directories exist as soon as httpd has
    started, in WAL mode with schema version 8, writable by the children."""
    srv = make_server(db="state/deep/er/sitemap.db")
    srv.start()
    assert os.path.isfile(srv.db_path), "store not created at start-up"
    if IS_ROOT:
        st = os.stat(srv.db_path)
        writable = (st.st_uid == RUN_UID and st.st_mode & stat.S_IWUSR) or \
                   (st.st_mode & stat.S_IWOTH)
        assert writable, f"store not writable by the children: {oct(st.st_mode)} uid {st.st_uid}"
        dst = os.stat(os.path.dirname(srv.db_path))
        assert dst.st_uid == RUN_UID or dst.st_mode & stat.S_IWOTH, \
            "store directory not writable by the children"
    assert srv.query("PRAGMA user_version") == [(SM_SCHEMA_VERSION,)]
    assert srv.query("PRAGMA journal_mode") == [("wal",)]
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html")


def test_default_flush_interval_is_short(make_server):
    """Without SitemapFlushInterval (default 1s) a URL is stored within a
    few seconds, while httpd runs."""
    srv = make_server(flush=None)
    srv.start()
    srv.get_ok("/page.html")
    srv.wait_recorded("/page.html", timeout=4)
