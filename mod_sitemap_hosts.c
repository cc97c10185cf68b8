/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_hosts.c: SitemapSiteFromHost, one site per hostname in a mass
 * virtual host.  The one place the module trusts the request's Host: only
 * a name in its normal form (sm_host_normalise) that the administrator's
 * anchored pattern allows, only for the vhost httpd routed the request to,
 * and at most SitemapSiteFromHostMax sites per process (sm_sites).  Every
 * other request of the vhost has no site: not recorded, no sitemap.
 *
 * A name takes one of the process's places only for a page about to be
 * recorded (sitemap_site_claim): a name with nothing behind it (a 404 for
 * everything, only /sitemap.xml, robots.txt or HEAD asked) never does, so
 * invented names cannot use up the places of real ones.  The places are
 * kept for good, not evicted: a placed site is in the recorder's list of
 * sites, which its writer reads without a lock, and in its memory of
 * responses, keyed by the site.  A name without a place is still served
 * what the store has of it (sitemap_site_to_read, sitemap_site_listed). */
#include "httpd.h"
#include "http_config.h"
#include "http_log.h"
#include "http_main.h"

#include <apr_strings.h>

#include "mod_sitemap_record.h"
#include "store/sm_readers.h"
#include "record/sm_sites.h"

APLOG_USE_MODULE(sitemap);

#define DEFAULT_HOSTS_MAX 1000
/* The cap's warning, at most once per interval per process. */
#define HOSTS_WARN_INTERVAL apr_time_from_sec(300)

/* What cannot go with SitemapSiteFromHost: said at -t and start-up. */
int sitemap_hosts_check(server_rec *s, const sitemap_server_conf *conf)
{
    if (conf->host_re && conf->indexnow == 1) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "SitemapSiteFromHost "
                     "and SitemapIndexNow On cannot be used in the same "
                     "vhost: IndexNow's key file and senders are per "
                     "configured site; turn one of them off");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

int sitemap_hosts_post_config(apr_pool_t *p, server_rec *s,
                              sitemap_server_conf *conf)
{
    const char *base = conf->site.base, *host, *port;
    apr_port_t default_port;

    if (conf->hosts_max < 0)
        conf->hosts_max = DEFAULT_HOSTS_MAX;
    if (!conf->host_re)
        return OK;
    if (sitemap_hosts_check(s, conf) != OK)
        return HTTP_INTERNAL_SERVER_ERROR;
    /* base is "scheme://host[:port]" (checked by SitemapBaseURL or made
     * from ServerName): the name is replaced, scheme and port kept. */
    host = ap_strstr_c(base, "://");
    if (!host)
        return HTTP_INTERNAL_SERVER_ERROR;
    host += 3;
    conf->host_prefix = apr_pstrmemdup(p, base, (apr_size_t)(host - base));
    default_port = apr_uri_port_of_scheme(apr_pstrmemdup(p, base,
                                          (apr_size_t)(host - 3 - base)));
    port = host[0] == '[' ? ap_strchr_c(host, ']') : host;
    port = port ? ap_strchr_c(port, ':') : NULL;
    conf->host_suffix = port ? apr_pstrdup(p, port) : "";
    conf->host_port = port ? atoi(port + 1) : default_port;
    return OK;
}

/* The site of an allowed name, made (and joined to the recorder) if new. */
static const sm_site_conf *site_of_name(const sitemap_server_conf *conf,
                                        const char *name, apr_time_t now,
                                        server_rec *s)
{
    const sm_site_conf *site;
    sm_sites_result res;
    int warn;

    site = sm_sites_get(conf->proc->hosts, name, now, HOSTS_WARN_INTERVAL,
                        &warn, &res);
    if (site && res == SM_SITES_ADDED && conf->proc->recorder)
        sm_recorder_add_site(conf->proc->recorder, site);
    if (warn)
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, s,
                     "SitemapSiteFromHost: this process has %d sites, the "
                     "SitemapSiteFromHostMax; \"%s\" and other new names are "
                     "not recorded and get no sitemap (logged at most every "
                     "%d s)", conf->hosts_max, name,
                     (int)apr_time_sec(HOSTS_WARN_INTERVAL));
    return site;
}

int sitemap_hosts_owns_base(const sitemap_server_conf *conf,
                            const char *base, char *name)
{
    apr_size_t pre = strlen(conf->host_prefix), suf, len = strlen(base);
    char given[SM_HOST_MAX + 1];

    suf = strlen(conf->host_suffix);
    if (len <= pre + suf || len - pre - suf > SM_HOST_MAX
        || strncmp(base, conf->host_prefix, pre) != 0
        || strcmp(base + len - suf, conf->host_suffix) != 0)
        return 0;
    memcpy(given, base + pre, len - pre - suf);
    given[len - pre - suf] = '\0';
    return sm_host_normalise(given, conf->host_port, 0, name) == SM_HOST_OK
           && strcmp(name, given) == 0 && sm_regex_match(conf->host_re, name);
}

/* sm_site_maker_fn: a base kept in a spill file by a stopped process, for
 * a host this process has not been asked for yet. */
static const sm_site_conf *site_for_base(void *baton, const char *base)
{
    const sitemap_server_conf *conf = baton;
    char name[SM_HOST_MAX + 1];

    if (!sitemap_hosts_owns_base(conf, base, name))
        return NULL;
    return site_of_name(conf, name, apr_time_now(), ap_server_conf);
}

/* sm_base_test_fn: one of this vhost's hosts' bases. */
static int owns_base(void *baton, const char *base)
{
    char name[SM_HOST_MAX + 1];

    return sitemap_hosts_owns_base(baton, base, name);
}

apr_status_t sitemap_hosts_child_init(apr_pool_t *p,
                                      sitemap_server_conf *conf)
{
    if (!conf->host_re)
        return APR_SUCCESS;
    /* Each site made from a Host joins the recorder's (expiry, settings,
     * spills): room for all of them now, before its writer starts. */
    sm_recorder_reserve_sites(conf->proc->recorder, conf->hosts_max);
    sm_recorder_site_maker(conf->proc->recorder, site_for_base, owns_base,
                           conf);
    return sm_sites_create(p, conf->hosts_max, &conf->site,
                           conf->host_prefix, conf->host_suffix,
                           &conf->proc->hosts);
}

/* The normal form of r's Host (name: SM_HOST_MAX + 1 bytes) when this
 * mass vhost allows it: 1, else 0. */
static int allowed_name(request_rec *r, const sitemap_server_conf *conf,
                        char *name)
{
    const char *host;

    if (!conf->proc->hosts)
        return 0;
    /* The Host as sent (HTTP/1.1) or the request line's authority (an
     * absolute-form target): r->hostname has already lost the port. */
    host = apr_table_get(r->headers_in, "Host");
    if (r->parsed_uri.hostinfo)
        host = r->parsed_uri.hostinfo;
    return sm_host_normalise(host, conf->host_port, 0, name) == SM_HOST_OK
           && sm_regex_match(conf->host_re, name);
}

/* Asked by up to four hooks of a request (the prefetch, the head
 * filter, log_transaction twice): the Host's normal form, its pattern
 * and the registry's lookup are paid once, the answer kept in r's note
 * (mod_sitemap_record.h) once there is one.  A site lives as long as the
 * registry; no answer (a Host without a place yet) is asked again, as
 * sitemap_site_claim may make one later in the request. */
const sm_site_conf *sitemap_site(request_rec *r,
                                 const sitemap_server_conf *conf)
{
    char name[SM_HOST_MAX + 1];
    sitemap_head_note *note;

    if (!conf->host_re)
        return &conf->site;
    note = sitemap_request_note(r);
    if (!note->site && allowed_name(r, conf, name))
        note->site = sm_sites_find(conf->proc->hosts, name);
    return note->site;
}

const sm_site_conf *sitemap_site_claim(request_rec *r,
                                       const sitemap_server_conf *conf)
{
    char name[SM_HOST_MAX + 1];

    if (!conf->host_re)
        return &conf->site;
    if (!allowed_name(r, conf, name))
        return NULL;
    return site_of_name(conf, name, r->request_time, r->server);
}

const sm_site_conf *sitemap_site_to_read(request_rec *r,
                                         const sitemap_server_conf *conf)
{
    char name[SM_HOST_MAX + 1];
    const sm_site_conf *site;

    if (!conf->host_re)
        return &conf->site;
    if (!allowed_name(r, conf, name))
        return NULL;
    if ((site = sm_sites_find(conf->proc->hosts, name)))
        return site;
    return sm_sites_make(conf->proc->hosts, r->pool, name);
}

/* Has the store any URL of site?  Read once per request (robots.txt asks
 * up to three times), remembered in r's pool. */
static int store_lists(request_rec *r, const sitemap_server_conf *conf,
                       const sm_site_conf *site)
{
    static const char key[] = "sitemap_hosts_listed";
    sm_site_info info;
    sm_store *st;
    void *memo = NULL;
    char err[256];
    int listed = 0;

    apr_pool_userdata_get(&memo, key, r->pool);
    if (memo)
        return memo == (void *)key;
    if (conf->proc->readers
        && (st = sm_readers_acquire(conf->proc->readers, err, sizeof(err)))) {
        if (sm_store_read_begin(st) == APR_SUCCESS
            && sm_store_site_info(st, r->pool, site->base, 0, &info)
               == APR_SUCCESS) {
            listed = info.known && info.pages && info.pages->nelts > 0;
            sm_store_read_end(st);
            sm_readers_release(conf->proc->readers, st);
        }
        else {
            sm_store_read_end(st);
            sm_readers_invalidate(conf->proc->readers, st);
        }
    }
    apr_pool_userdata_setn(listed ? (void *)key : (void *)conf, key, NULL,
                           r->pool);
    return listed;
}

const sm_site_conf *sitemap_site_listed(request_rec *r,
                                        const sitemap_server_conf *conf)
{
    const sm_site_conf *site = sitemap_site(r, conf);

    if (site || !conf->host_re)
        return site;
    site = sitemap_site_to_read(r, conf);
    return site && store_lists(r, conf, site) ? site : NULL;
}

apr_array_header_t *sitemap_robots_urls(request_rec *r,
                                        const sitemap_server_conf *conf,
                                        const sm_site_conf *site)
{
    apr_array_header_t *urls;
    int i;

    if (site == &conf->site)
        return conf->robots_urls;
    if (!site)
        return apr_array_make(r->pool, 1, sizeof(const char *));
    /* The site's own sitemap instead of the vhost's first line. */
    urls = apr_array_copy(r->pool, conf->robots_urls);
    APR_ARRAY_IDX(urls, 0, const char *) =
        apr_pstrcat(r->pool, site->base, conf->sitemap_path, NULL);
    if (conf->news_path)        /* the news sitemap's line, second */
        APR_ARRAY_IDX(urls, 1, const char *) =
            apr_pstrcat(r->pool, site->base, conf->news_path, NULL);
    for (i = 1; i < urls->nelts; i++)
        if (strcmp(APR_ARRAY_IDX(urls, i, const char *),
                   APR_ARRAY_IDX(urls, 0, const char *)) == 0) {
            APR_ARRAY_IDX(urls, i, const char *) =
                APR_ARRAY_IDX(urls, urls->nelts - 1, const char *);
            urls->nelts--;
            break;
        }
    return urls;
}
