/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_base.c: a site's base URL (scheme, public host name, port)
 * and its scope, derived and checked from the whole configuration, the
 * same way for a start, `httpd -t` and every restart.
 *
 * The host name is published only when the administrator gave it
 * (ServerName, or SitemapBaseURL): httpd fills in a name for a server
 * without ServerName (the machine's name, "localhost", 127.0.0.1, the
 * main server's, or one from reverse DNS of a <VirtualHost> address), and
 * after the configuration is read nothing tells that name from a
 * configured one.  So the module watches the ServerName directive itself
 * (a second handler of the same name: httpd runs every module's handler
 * of a directive, see ap_walk_config_sub), and the same for SSLEngine,
 * whose effect mod_ssl keeps to itself until a connection exists. */
#include "mod_sitemap.h"

#include "http_core.h"
#include "http_log.h"
#include "ap_listen.h"

#include <apr_strings.h>

#include "serve/sm_sitemap.h"
#include "util/sm_url.h"

APLOG_USE_MODULE(sitemap);

const char *sitemap_note_server_name(cmd_parms *cmd, void *dconf,
                                     const char *arg)
{
    (void)dconf; (void)arg;
    /* core checks and sets the name; we only note that it was given */
    SITEMAP_CONF(cmd->server)->named = cmd->server;
    return DECLINE_CMD;
}

const char *sitemap_note_ssl_engine(cmd_parms *cmd, void *dconf,
                                    const char *arg)
{
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    (void)dconf;

    /* Without mod_ssl the directive must stay unknown, as httpd says. */
    if (!ap_find_linked_module("mod_ssl.c"))
        return apr_pstrcat(cmd->pool, "Invalid command '", cmd->cmd->name,
                           "', perhaps misspelled or defined by a module "
                           "not included in the server configuration",
                           NULL);
    if (!ap_cstr_casecmp(arg, "on"))
        conf->ssl_engine = 1;
    else if (!ap_cstr_casecmp(arg, "off"))
        conf->ssl_engine = 0;
    else if (!ap_cstr_casecmp(arg, "optional"))
        conf->ssl_engine = 2;
    /* anything else: mod_ssl's handler refuses it */
    return DECLINE_CMD;
}

/* Did the administrator name s?  Its own ServerName, or, for a vhost
 * without one that httpd gave the main server's name (a "*" or
 * _default_ address: ap_fini_vhost_config copies the pointer), the main
 * server's own ServerName.  A vhost struct shared with the main server
 * (no directive of ours in it) has named == main_s, never s. */
static int name_configured(server_rec *main_s, server_rec *s)
{
    if (SITEMAP_CONF(s)->named == s)
        return 1;
    return s != main_s && s->server_hostname == main_s->server_hostname
           && SITEMAP_CONF(main_s)->named == main_s;
}

/* How a message names s: <VirtualHost addr> at file:line, or the main
 * server. */
static const char *server_desc(apr_pool_t *p, const server_rec *s)
{
    const server_addr_rec *a = s->addrs;

    if (!s->is_virtual)
        return "the main server (outside <VirtualHost>)";
    return apr_psprintf(p, "<VirtualHost %s%s> at %s:%u",
                        a && a->virthost ? a->virthost : "?",
                        !a ? "" : a->host_port ? apr_psprintf(p, ":%u",
                                                 (unsigned)a->host_port)
                                               : ":*",
                        s->defn_name ? s->defn_name : "?",
                        s->defn_line_number);
}

/* The port of s's URLs: ServerName's, its <VirtualHost>'s, or the only
 * port the server listens on; 0 when none is known. */
static apr_port_t vhost_port(const server_rec *s)
{
    apr_port_t port = s->port;
    ap_listen_rec *lr;

    if (!port && s->addrs && s->is_virtual)
        port = s->addrs->host_port;
    if (port)
        return port;
    for (lr = ap_listeners; lr; lr = lr->next) {
        if (lr->bind_addr && lr->bind_addr->port) {
            if (port && port != lr->bind_addr->port)
                return 0;
            port = lr->bind_addr->port;
        }
    }
    return port;
}

/* https when ServerName says so, when mod_ssl's SSLEngine is On for s
 * (whatever the port), or, SSLEngine not set, on port 443 or on a
 * listener of protocol https (`Listen 8443 https`: mod_ssl turns TLS on
 * there by itself; the listeners' protocols are known from the MPM's
 * open_logs on, so in post_config, not in -t, where no check needs the
 * scheme). */
static const char *vhost_scheme(server_rec *s,
                                const sitemap_server_conf *conf,
                                apr_port_t port)
{
    const char *proto;

    if (s->server_scheme)
        return s->server_scheme;
    if (conf->ssl_engine == 1)
        return "https";
    if (conf->ssl_engine == 0 || conf->ssl_engine == 2)
        return "http";          /* Optional: TLS by upgrade only */
    if (port == 443)
        return "https";
    proto = ap_get_server_protocol(s);
    return proto && !ap_cstr_casecmp(proto, "https")
           && ap_find_linked_module("mod_ssl.c") ? "https" : "http";
}

const char *sitemap_vhost_base(apr_pool_t *p, server_rec *main_s,
                               server_rec *s, const char **err)
{
    const sitemap_server_conf *conf = SITEMAP_CONF(s);
    apr_port_t port;
    const char *host = s->server_hostname, *base, *why;

    if (conf->base_url)
        return conf->base_url;
    if (!host || !name_configured(main_s, s)) {
        *err = apr_psprintf(p, "Sitemap On in %s: the site's public host "
                            "name is not configured (no ServerName; httpd "
                            "made up '%s', which is never published); set "
                            "ServerName to the site's name, or "
                            "SitemapBaseURL scheme://host[:port]",
                            server_desc(p, s), host ? host : "");
        return NULL;
    }
    port = vhost_port(s);
    if (ap_strchr_c(host, ':') && host[0] != '[')
        host = apr_pstrcat(p, "[", host, "]", NULL);
    base = apr_psprintf(p, "%s://%s", vhost_scheme(s, conf, port), host);
    if (port)
        base = apr_psprintf(p, "%s:%u", base, (unsigned)port);
    if (!(base = sm_url_parse_base(p, base, &why))) {
        *err = apr_psprintf(p, "Sitemap On in %s: ServerName '%s' is not "
                            "allowed as the host of the site's URLs: %s; "
                            "set ServerName or SitemapBaseURL",
                            server_desc(p, s), s->server_hostname, why);
        return NULL;
    }
    return base;
}

const char *sitemap_effective_path(apr_pool_t *p,
                                   const sitemap_server_conf *conf)
{
    if (conf->sitemap_path)
        return conf->sitemap_path;
    return conf->base_path ? apr_pstrcat(p, conf->base_path, "sitemap.xml",
                                         NULL)
                           : "/sitemap.xml";
}

/* A document path's directory, with its final "/". */
static const char *dir_of(apr_pool_t *p, const char *path)
{
    return apr_pstrndup(p, path, (apr_size_t)(strrchr(path, '/') - path)
                                 + 1);
}

/* The sitemaps.org rule: a sitemap lists only URLs under its own
 * directory.  The site's scope (SitemapBaseURL's path, "/" by default)
 * is what is recorded, so SitemapPath must be right in it, and
 * SitemapTextPath in it or above it. */
static const char *scope_problem(apr_pool_t *p,
                                 const sitemap_server_conf *conf)
{
    const char *scope = conf->base_path ? conf->base_path : "/";
    const char *path = sitemap_effective_path(p, conf), *dir;

    if (strcmp(dir_of(p, path), scope) != 0)
        return apr_psprintf(p, "SitemapPath '%s' is not allowed: a sitemap "
                            "may list only URLs under its own directory "
                            "(sitemaps.org), and this site's URLs are "
                            "everything under '%s'; put it in that "
                            "directory (such as %ssitemap.xml), or make "
                            "'%s' the site with SitemapBaseURL "
                            "scheme://host%s", path, scope, scope,
                            dir_of(p, path), dir_of(p, path));
    if (conf->text_path) {
        dir = dir_of(p, conf->text_path);
        if (strncmp(scope, dir, strlen(dir)) != 0)
            return apr_psprintf(p, "SitemapTextPath '%s' is not allowed: "
                                "a sitemap may list only URLs under its "
                                "own directory (sitemaps.org), and this "
                                "site's URLs are everything under '%s'; "
                                "put it in that directory or above it "
                                "(such as %ssitemap.txt)", conf->text_path,
                                scope, scope);
    }
    return NULL;
}

int sitemap_check_sites(apr_pool_t *ptemp, server_rec *main_s)
{
    apr_hash_t *scopes = apr_hash_make(ptemp);
    server_rec *s;

    for (s = main_s; s; s = s->next) {
        const sitemap_server_conf *conf = SITEMAP_CONF(s);
        const char *err = NULL, *problem, *base, *key, *other;
        const char *scope = conf->base_path ? conf->base_path : "/";
        int page_size;

        if (conf->enabled != 1)
            continue;
        if (!(base = sitemap_vhost_base(ptemp, main_s, s, &err))) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "%s", err);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        /* A store keeps one site per base: two vhosts may share it only
         * with the same scope, or one's sitemap would list the other's
         * URLs. */
        key = apr_pstrcat(ptemp, conf->db_path ? conf->db_path
                                 : sitemap_default_db(ptemp, conf),
                          " ", base, NULL);
        other = apr_hash_get(scopes, key, APR_HASH_KEY_STRING);
        if (other && strcmp(other, scope) != 0) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "SitemapBaseURL "
                         "%s%s is not allowed in %s: another vhost has the "
                         "site %s%s in the same store; give each its own "
                         "SitemapDatabase", base, scope,
                         server_desc(ptemp, s), base, other);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        apr_hash_set(scopes, key, APR_HASH_KEY_STRING, scope);
        if ((problem = scope_problem(ptemp, conf)) != NULL
            || (problem = sitemap_news_conf_problem(ptemp, conf)) != NULL) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "%s (in %s)",
                         problem, server_desc(ptemp, s));
            return HTTP_INTERNAL_SERVER_ERROR;
        }
        /* An index lists at most 50,000 pages: a cap set by hand must
         * fit. */
        page_size = conf->page_size < 0 ? SM_PAGE_MAX_URLS : conf->page_size;
        if (conf->max_urls > (apr_int64_t)page_size * 50000) {
            ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "SitemapMaxURLs: %"
                         APR_INT64_T_FMT " is not allowed with SitemapPageSize"
                         " %d: a sitemap index lists at most 50000 pages, so "
                         "at most %" APR_INT64_T_FMT " URLs fit", conf->max_urls,
                         page_size, (apr_int64_t)page_size * 50000);
            return HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    return OK;
}
