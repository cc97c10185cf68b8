# SPDX-License-Identifier: Apache-2.0
"""Only what an anonymous visitor from anywhere may fetch is recorded
(issue 21, item 4): a section restricted by Require ip, local, host or an
expression on the client is served to 127.0.0.1 (where the tests run) and
still kept out of the sitemap; `Require all granted` is recorded."""
import http.client
import os
import ssl
import subprocess

import pytest

from conftest import free_port

HTML = "<html><body>x</body></html>\n"

SECTIONS = {
    "ip": "Require ip 127.0.0.1",
    "local": "Require local",
    "host": "Require host localhost",
    "expr": "Require expr \"%{REMOTE_ADDR} == '127.0.0.1'\"",
    "anyof": "<RequireAny>\n Require ip 10.0.0.0/8\n Require local\n</RequireAny>",
    "open": "Require all granted",
    "allof": "<RequireAll>\n Require all granted\n Require not ip 10.0.0.0/8\n</RequireAll>",
}


def conf(srv, sections):
    out = []
    for name in sections:
        out.append(f'<Directory "{srv.docroot}/{name}">\n{SECTIONS[name]}\n</Directory>')
    return "\n".join(out) + "\n"


@pytest.fixture
def srv(make_server):
    s = make_server(modules=("authz_host",))
    for name in SECTIONS:
        s.write(f"htdocs/{name}/page.html", HTML)
    s.conf_text = conf(s, SECTIONS)
    s.start()
    return s


def test_restricted_sections_are_not_recorded(srv):
    for name in SECTIONS:
        r = srv.get(f"/{name}/page.html")
        assert r.status == 200, f"{name}: {r.status} (the test needs 127.0.0.1 let in)"
    srv.wait_recorded("/open/page.html", "/allof/page.html")
    srv.assert_not_recorded("/ip/page.html", "/local/page.html", "/host/page.html",
                            "/expr/page.html", "/anyof/page.html")
    # the stand-in's refusals never reach the error log
    assert not [ln for ln in srv.log_text().splitlines() if "192.0.2.1" in ln]


def test_restriction_added_later_forgets(make_server):
    s = make_server(modules=("authz_host",))
    s.write("htdocs/later/page.html", HTML)
    s.start()
    s.get_ok("/later/page.html")
    s.wait_recorded("/later/page.html")
    s.graceful(conf=f'<Directory "{s.docroot}/later">\nRequire local\n</Directory>\n')
    s.get_ok("/later/page.html")
    s.wait_absent("/later/page.html")


def _tls_files(srv):
    """A CA, a server certificate and a client certificate it signed."""
    d = srv.path("tls")
    os.makedirs(d, exist_ok=True)

    def ossl(*args):
        subprocess.run(("openssl",) + args, cwd=d, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    ossl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
         "-subj", "/CN=test CA")
    for name in ("server", "client"):
        ossl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
             "-subj", f"/CN={name}")
        ossl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem",
             "-CAkey", "ca.key", "-CAcreateserial", "-out", f"{name}.pem",
             "-days", "2")
    os.chmod(d, 0o755)
    for f in os.listdir(d):
        os.chmod(os.path.join(d, f), 0o644)
    return d


def _tls_get(port, path, tls_dir, client_cert):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if client_cert:
        ctx.load_cert_chain(os.path.join(tls_dir, "client.pem"),
                            os.path.join(tls_dir, "client.key"))
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=10)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        r.read()
        return r.status
    finally:
        conn.close()


def test_client_certificate_sections_are_not_recorded(make_server):
    """A page served for a client certificate (`Require ssl-verify-client`,
    SSLVerifyClient) is not for anonymous visitors: the stand-in must not
    borrow the visitor's TLS connection, certificate included."""
    s = make_server(modules=("authz_host", "socache_shmcb", "ssl"))
    tls = _tls_files(s)
    port = free_port()
    s.write("htdocs/mtls/page.html", HTML)
    s.write("htdocs/public/page.html", HTML)
    s.conf_text = f"""Listen 127.0.0.1:{port}
<VirtualHost 127.0.0.1:{port}>
ServerName https://127.0.0.1:{port}
SSLEngine on
SSLCertificateFile {tls}/server.pem
SSLCertificateKeyFile {tls}/server.key
SSLCACertificateFile {tls}/ca.pem
SSLVerifyClient optional
<Directory "{s.docroot}/mtls">
Require ssl-verify-client
</Directory>
</VirtualHost>
"""
    s.expect_log(r"AH01630: client denied by server configuration: .*/mtls/page")
    s.start()
    assert _tls_get(port, "/mtls/page.html", tls, client_cert=False) == 403
    assert _tls_get(port, "/mtls/page.html", tls, client_cert=True) == 200
    # after the certificate's request on the same queue: once it is
    # stored, the one before has been decided
    assert _tls_get(port, "/public/page.html", tls, client_cert=False) == 200
    base = f"https://127.0.0.1:{port}"
    have = s.wait_recorded("/public/page.html", base=base)
    assert "/mtls/page.html" not in have
    assert "/mtls/page.html" not in s.urls()
