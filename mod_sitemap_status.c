/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_status.c: the operators' status page
 * (<Location /sitemap-status> SetHandler sitemap-status), a line per site
 * in mod_status's page, and the recorder counters every process adds to.
 *
 * The counters live in one anonymous shared memory segment (apr_shm,
 * created by the parent in post_config and inherited by every child), one
 * sm_recorder_shared per store file: children add with atomic adds, the
 * status page reads the sums.  Chosen over the store (a write per request
 * would cost what the recorder's memory saves) and over ap_slotmem (a
 * provider module to load, and slots per child that a reader must add
 * up): a segment of fixed size, no file, nothing another user can touch.
 * It is made again at each restart: the counters count since then. */
#include "mod_sitemap.h"

#include "http_core.h"
#include "http_log.h"
#include "http_main.h"
#include "http_protocol.h"
#include "http_request.h"
#include "mod_status.h"

#include <apr_atomic.h>
#include <apr_hash.h>
#include <apr_shm.h>
#include <apr_strings.h>

#include <stdint.h>
#include <stdlib.h>

#include "crawl/sm_crawl.h"
#include "record/sm_sites.h"
#include "serve/sm_status.h"

APLOG_USE_MODULE(sitemap);

static apr_time_t started;

/* Anonymous shared memory of size bytes, zeroed, made in the parent so
 * every child of this generation shares it; NULL (logged, not fatal: the
 * status page then shows none of what) when it cannot be made. */
void *sitemap_shared_zeroed(apr_pool_t *pconf, server_rec *main_s,
                            apr_size_t size, const char *what)
{
    apr_shm_t *shm;
    apr_status_t rv = apr_shm_create(&shm, size, NULL, pconf);
    void *base;

    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, main_s, "cannot create the "
                     "shared memory of %s; the status page shows none",
                     what);
        return NULL;
    }
    base = apr_shm_baseaddr_get(shm);
    memset(base, 0, size);
    return base;
}

int sitemap_status_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                              apr_pool_t *ptemp, server_rec *main_s)
{
    apr_hash_t *slots = apr_hash_make(ptemp);
    sm_recorder_shared *base;
    sm_rec_forget_ring *rings;
    void *raw;
    apr_size_t i, n = 0;
    server_rec *s;
    (void)plog;

    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG)
        return OK;
    started = apr_time_now();
    for (s = main_s; s; s = s->next) {
        sitemap_server_conf *conf = SITEMAP_CONF(s);
        if (conf->enabled == 1 && conf->db_path
            && !apr_hash_get(slots, conf->db_path, APR_HASH_KEY_STRING))
            apr_hash_set(slots, conf->db_path, APR_HASH_KEY_STRING,
                         (void *)++n);
    }
    /* Each store's ring of forgotten URLs, then its counters.  APR's
     * anonymous segment starts 8 bytes into its mapping: a line more, and
     * the rings (their counter on a cache line of its own) start on a
     * line. */
    if (!n || !(raw = sitemap_shared_zeroed(pconf, main_s,
                                            n * (sizeof(sm_rec_forget_ring)
                                                 + sizeof(sm_recorder_shared))
                                            + 64, "the sitemap counters")))
        return OK;
    rings = (sm_rec_forget_ring *)(void *)((char *)raw
                                           + (64 - (uintptr_t)raw % 64) % 64);
    base = (sm_recorder_shared *)(void *)(rings + n);
    for (i = 0; i < n; i++)
        base[i].forget = rings + i;
    for (s = main_s; s; s = s->next) {
        sitemap_server_conf *conf = SITEMAP_CONF(s);
        if (conf->enabled == 1 && conf->db_path)
            conf->proc->shared = base + ((apr_size_t)apr_hash_get(
                slots, conf->db_path, APR_HASH_KEY_STRING) - 1);
    }
    return OK;
}

/* After the recorders are made (mod_sitemap.c's child_init). */
void sitemap_status_child_init(apr_pool_t *pchild, server_rec *main_s)
{
    server_rec *s;
    (void)pchild;

    for (s = main_s; s; s = s->next) {
        sitemap_server_conf *conf = SITEMAP_CONF(s);
        if (conf->enabled == 1 && conf->proc->recorder && conf->proc->shared)
            sm_recorder_share(conf->proc->recorder, conf->proc->shared);
    }
}

/* ---- gathering --------------------------------------------------------------- */

/* Most URLs first, then by base. */
static int by_urls(const void *a, const void *b)
{
    const sm_site_stats *x = a, *y = b;

    if (x->url_count != y->url_count)
        return x->url_count > y->url_count ? -1 : 1;
    return strcmp(x->base, y->base);
}

/* A SitemapSiteFromHost vhost's sites: those of the store whose base is
 * one of its hosts' (sitemap_hosts_owns_base) and not listed yet (a
 * vhost's own, on any store, or another such vhost's host: listed holds
 * their bases, and gets these; the metrics' series are by base).  All are
 * counted in out's totals; out->hosts keeps the SM_STATUS_HOSTS_SHOWN
 * with most URLs, so that a mass vhost's page stays small. */
static apr_status_t host_sites(apr_pool_t *p, const sitemap_server_conf *conf,
                               sm_store *st, apr_hash_t *listed,
                               sm_status_site *out)
{
    apr_array_header_t *all, *own;
    char name[SM_HOST_MAX + 1];
    apr_status_t rv;
    int i;

    if ((rv = sm_store_site_list(st, p, &all)) != APR_SUCCESS)
        return rv;
    own = apr_array_make(p, 16, sizeof(sm_site_stats));
    for (i = 0; i < all->nelts; i++) {
        const sm_site_stats *ss = &APR_ARRAY_IDX(all, i, sm_site_stats);
        const char *key;
        if (!sitemap_hosts_owns_base(conf, ss->base, name))
            continue;
        if (apr_hash_get(listed, ss->base, APR_HASH_KEY_STRING))
            continue;
        key = apr_pstrdup(p, ss->base);
        apr_hash_set(listed, key, APR_HASH_KEY_STRING, key);
        *(sm_site_stats *)apr_array_push(own) = *ss;
        out->hosts_urls += ss->url_count;
        out->hosts_pages += ss->pages;
    }
    out->hosts_total = own->nelts;
    if (own->nelts > 1)
        qsort(own->elts, (size_t)own->nelts, sizeof(sm_site_stats), by_urls);
    if (own->nelts > SM_STATUS_HOSTS_SHOWN)
        own->nelts = SM_STATUS_HOSTS_SHOWN;
    out->hosts = own;
    return APR_SUCCESS;
}

/* SitemapCrawler's crawlers: the store's coverage (cached for up to a
 * minute: mod_sitemap_crawl_cache.c) and this server's counted claims. */
static void gather_crawlers(apr_pool_t *p, const sitemap_server_conf *conf,
                            sm_store *st, apr_time_t now,
                            sm_status_site *out, int with_history)
{
    apr_int64_t since = apr_time_sec(now) / 86400 - SM_CRAWL_DAYS + 1;
    sm_coverage *cov;
    int i, n;

    if (!conf->crawlers)
        return;
    n = sm_crawl_count(conf->crawlers);
    cov = apr_pcalloc(p, sizeof(*cov) * (apr_size_t)n);
    sitemap_crawl_coverage(conf, st, now, cov);
    out->crawlers = apr_array_make(p, n, sizeof(sm_status_crawler));
    for (i = 0; i < n; i++) {
        const sm_crawler *c = sm_crawl_get(conf->crawlers, i);
        sm_status_crawler *sc = apr_array_push(out->crawlers);
        apr_uint32_t *k = conf->proc->crawl_counts
            ? conf->proc->crawl_counts + SITEMAP_CRAWL_COUNTS * i : NULL;

        memset(sc, 0, sizeof(*sc));
        sc->name = c->name;
        sc->cov = cov[i];
        /* The chart's days: a few rows of an index, not cached. */
        if (with_history
            && sm_store_crawl_days(st, p, conf->site.base, c->name, since,
                                   &sc->days) != APR_SUCCESS)
            sc->days = NULL;
        if (k) {
            sc->verified = apr_atomic_read32(k);
            sc->unverified = apr_atomic_read32(k + 1);
            sc->pending = apr_atomic_read32(k + 2);
        }
    }
}

/* with_history: also the newest changes and the URLs added per day (a
 * scan of the site's URLs: the status page and ?json only), and the
 * latest URLs left out (an index range of the verdicts).  listed: the
 * bases listed so far (every vhost's own, and the hosts' sites of
 * SitemapSiteFromHost vhosts gathered before), which host_sites leaves
 * out, so that no host site is listed twice. */
static void gather(apr_pool_t *p, const sitemap_server_conf *conf,
                   apr_hash_t *listed, sm_status_site *out, int with_history)
{
    sm_site_info info;
    apr_array_header_t *days = NULL;
    apr_time_t now = apr_time_now();
    sm_store *st;
    char err[256];
    int i;

    memset(out, 0, sizeof(*out));
    out->base = conf->site.base;
    out->db_path = conf->db_shown;
    if (conf->proc->shared) {
        memcpy(&out->counters, conf->proc->shared, sizeof(out->counters));
        out->counters.last_fault_why[sizeof(out->counters.last_fault_why)
                                     - 1] = '\0';
        out->have_counters = 1;
    }
    if (!(st = sitemap_read_begin(conf, err, sizeof(err)))) {
        out->store_error = apr_pstrdup(p, err);
        sm_status_days(out, NULL, now);
        return;
    }
    if (sm_store_site_info(st, p, conf->site.base, 0, &info) != APR_SUCCESS
        || sm_store_about_file(st, p, &out->about) != APR_SUCCESS
        || (conf->host_re
            && host_sites(p, conf, st, listed, out) != APR_SUCCESS)
        || (with_history
            && sm_store_recent(st, p, conf->site.base, SM_STATUS_RECENT,
                               now - apr_time_from_sec(
                                         SM_STATUS_CHART_DAYS * 86400),
                               &out->recent, &days) != APR_SUCCESS)
        || (with_history
            && sm_store_left_out(st, p, conf->site.base, SM_VERDICTS_SHOWN,
                                 &out->left_out) != APR_SUCCESS)) {
        out->store_error = apr_pstrdup(p, sm_store_error(st));
        sitemap_read_end(conf, st, 0);
        sm_status_days(out, NULL, now);
        return;
    }
    gather_crawlers(p, conf, st, now, out, with_history);
    sitemap_read_end(conf, st, 1);
    out->pages = info.pages->nelts;
    for (i = 0; i < info.pages->nelts; i++)
        out->urls += APR_ARRAY_IDX(info.pages, i, sm_page_info).url_count;
    sm_status_days(out, days, now);
}

/* Every site of the server, once each (vhosts may share a base). */
static apr_array_header_t *all_sites(request_rec *r, int with_history)
{
    apr_array_header_t *sites = apr_array_make(r->pool, 4,
                                               sizeof(sm_status_site));
    apr_hash_t *listed = apr_hash_make(r->pool);
    apr_hash_t *done = apr_hash_make(r->pool);
    server_rec *s;

    for (s = ap_server_conf; s; s = s->next) {
        const sitemap_server_conf *conf = SITEMAP_CONF(s);
        if (conf->enabled == 1 && conf->site.base)
            apr_hash_set(listed, conf->site.base, APR_HASH_KEY_STRING, "");
    }
    for (s = ap_server_conf; s; s = s->next) {
        const sitemap_server_conf *conf = SITEMAP_CONF(s);
        const char *key;
        if (conf->enabled != 1 || !conf->site.base)
            continue;
        key = apr_pstrcat(r->pool, conf->db_path, " ", conf->site.base,
                          NULL);
        if (apr_hash_get(done, key, APR_HASH_KEY_STRING))
            continue;
        apr_hash_set(done, key, APR_HASH_KEY_STRING, "");
        gather(r->pool, conf, listed, apr_array_push(sites), with_history);
    }
    return sites;
}

/* ---- answering ------------------------------------------------------------------ */

static int wants_json(request_rec *r)
{
    const char *accept = apr_table_get(r->headers_in, "Accept");
    if (r->args && strcmp(r->args, "json") == 0)
        return 1;
    return !r->args && accept && ap_strstr_c(accept, "application/json");
}

/* A <Location> that says SetHandler sitemap-status is claimed (by
 * sitemap_translate_name) before the other translate_name hooks
 * (mod_proxy's ProxyPass /, mod_rewrite) and, being no file, before a
 * <Directory>'s or .htaccess's rewrite rules can send it to a front
 * controller.  The location walk that precedes translate_name has already
 * merged that SetHandler into per_dir_config; the access rules of the
 * <Location> still apply. */
int sitemap_status_claim(request_rec *r)
{
    core_dir_config *d = ap_get_core_module_config(r->per_dir_config);
    const char *handler, *err = NULL;

    if (!d || !d->expr_handler)
        return 0;
    handler = ap_expr_str_exec(r, d->expr_handler, &err);
    return !err && handler && strcmp(handler, SITEMAP_STATUS_HANDLER) == 0;
}

typedef enum { STATUS_HTML, STATUS_JSON, STATUS_METRICS } status_form;

/* Never cached, not indexed, by what the client accepts; no validators:
 * a HEAD has the headers alone. */
static int status_head(sitemap_reply *rp)
{
    request_rec *r = rp->r;
    status_form *form = rp->ctx;

    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    apr_table_setn(r->headers_out, "X-Robots-Tag", "noindex");
    apr_table_mergen(r->headers_out, "Vary", "Accept");
    if (r->args && strcmp(r->args, "metrics") == 0)
        *form = STATUS_METRICS;
    else
        *form = wants_json(r) ? STATUS_JSON : STATUS_HTML;
    ap_set_content_type(r, *form == STATUS_METRICS
                           ? "text/plain; version=0.0.4; charset=utf-8"
                           : *form == STATUS_JSON ? "application/json"
                           : "text/html; charset=utf-8");
    return OK;
}

/* The sites' own snapshots are gathered here, a fault of one said on the
 * page (the page itself is no 503). */
static apr_status_t status_body(sitemap_reply *rp, sm_sink *sink,
                                void *baton)
{
    request_rec *r = rp->r;
    status_form form = *(status_form *)rp->ctx;
    apr_array_header_t *sites = all_sites(r, form != STATUS_METRICS);
    const sm_status_site *list = (const sm_status_site *)sites->elts;

    if (form == STATUS_METRICS)
        return sm_status_metrics(r->pool, list, sites->nelts, sink, baton);
    if (form == STATUS_JSON)
        return sm_status_json(r->pool, list, sites->nelts, started, sink,
                              baton);
    return sm_status_html(r->pool, list, sites->nelts, started, sink, baton);
}

static const sitemap_doc_type status_type = { 0, status_head, NULL,
                                              status_body };

int sitemap_status_serve(request_rec *r)
{
    status_form form;

    return sitemap_serve(r, &status_type, 0, &form);
}

/* A line per site in mod_status's page (no history: cheap). */
int sitemap_status_line(request_rec *r, int flags)
{
    apr_array_header_t *sites = all_sites(r, 0);
    int i;

    for (i = 0; i < sites->nelts; i++) {
        const sm_status_site *s = &APR_ARRAY_IDX(sites, i, sm_status_site);
        if (flags & AP_STATUS_SHORT)
            ap_rprintf(r, "Sitemap %s: %" APR_INT64_T_FMT " URLs, %"
                       APR_INT64_T_FMT " pages, %" APR_UINT64_T_FMT
                       " written, %" APR_UINT64_T_FMT " faults, %s\n",
                       s->base, s->urls, s->pages, s->counters.written,
                       s->counters.faults, sm_status_health(s));
        else
            ap_rprintf(r, "<p>Sitemap %s: %" APR_INT64_T_FMT " URLs in %"
                       APR_INT64_T_FMT " pages, %" APR_UINT64_T_FMT
                       " changes written, %" APR_UINT64_T_FMT " store "
                       "faults, %s</p>\n", ap_escape_html(r->pool, s->base),
                       s->urls, s->pages, s->counters.written,
                       s->counters.faults, sm_status_health(s));
        if (!s->hosts)
            continue;
        if (flags & AP_STATUS_SHORT)
            ap_rprintf(r, "Sitemap %s: %" APR_INT64_T_FMT " host sites, %"
                       APR_INT64_T_FMT " URLs\n", s->base, s->hosts_total,
                       s->hosts_urls);
        else
            ap_rprintf(r, "<p>Sitemap %s: %" APR_INT64_T_FMT " sites, one "
                       "per host name, %" APR_INT64_T_FMT " URLs in all</p>\n",
                       ap_escape_html(r->pool, s->base), s->hosts_total,
                       s->hosts_urls);
    }
    return OK;
}

