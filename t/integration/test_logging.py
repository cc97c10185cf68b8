# SPDX-License-Identifier: Apache-2.0
"""The core's messages are logged with the vhost they concern, so that the
vhost's ErrorLog and LogLevel apply (issue 14, item 10)."""
import re
import time

HTML = "<html><body>x</body></html>\n"


def test_store_fault_goes_to_the_vhosts_error_log(make_server):
    srv = make_server(sitemap=False)
    srv.write("a.test/page.html", HTML)
    srv.write("db/a.db", "this is not an SQLite database, not at all!\n" * 40)
    srv.conf_text = f"""
<VirtualHost 127.0.0.1:{srv.port}>
    ServerName a.test
    DocumentRoot "{srv.root}/a.test"
    <Directory "{srv.root}/a.test">
        Require all granted
    </Directory>
    ErrorLog logs/a_error_log
    LogLevel warn sitemap:debug
    Sitemap On
    SitemapDatabase db/a.db
    SitemapFlushInterval 100ms
</VirtualHost>
"""
    srv.start()
    for i in range(3):
        assert srv.get(f"/page.html?{i}", host="a.test").status == 200
    vlog = srv.path("logs/a_error_log")
    deadline = time.monotonic() + 15
    hits = []
    while time.monotonic() < deadline and not hits:
        with open(vlog, errors="replace") as f:
            hits = [ln for ln in f if re.search(r"\[sitemap:\w+\].*a\.db", ln)]
        time.sleep(0.1)
    assert hits, "no store fault in the vhost's ErrorLog"
    # the request-time fault is the vhost's alone: not in the main log
    main = [ln for ln in srv.log_text().splitlines() if "a.db" in ln]
    assert main == [], main
