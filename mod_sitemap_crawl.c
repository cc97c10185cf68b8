/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_crawl.c: crawl coverage's glue (issue 36; the core is
 * src/crawl): SitemapCrawler, the ranges files read at start-up (and by
 * -t), a crawler's fetch noted in log_transaction, and the verified,
 * unverified and pending claims counted per vhost and crawler in shared
 * memory for the status page.
 *
 * The request path: sm_crawl_visitor first (the User-Agent field and the
 * pre-check: no regex, no allocation), so an ordinary visitor's request
 * costs 112 instructions more (bench/instr --check fails past 150:
 * bench/RESULTS.md, issue 36); the patterns
 * and the verification only for a User-Agent that may be a crawler's.
 * No DNS lookup runs here: a dns: source is answered from this process's
 * cache, filled off the request path. */
#include "mod_sitemap.h"
#include "mod_sitemap_config.h"
#include "mod_sitemap_record.h"

#include "http_core.h"
#include "http_log.h"
#include "http_main.h"

#include <apr_atomic.h>
#include <apr_shm.h>
#include <apr_strings.h>

#include "crawl/sm_crawl.h"
#include "indexnow/sm_indexnow.h"

APLOG_USE_MODULE(sitemap);

/* This process's DNS answers (sitemap_crawl_child_init, below). */
static sm_crawl_dns *crawl_dns;

const char *sitemap_add_crawler(cmd_parms *cmd, void *dconf, int argc,
                                char *const argv[])
{
    const char *err = sitemap_in_server_only(cmd);
    sitemap_server_conf *conf = SITEMAP_CONF(cmd->server);
    (void)dconf;

    if (err)
        return err;
    if (!conf->crawlers)
        conf->crawlers = sm_crawl_list_make(cmd->pool);
    return sm_crawl_add(conf->crawlers, cmd->pool, argc, argv);
}

/* SitemapIndexNowStale On needs IndexNow: built in, and On. */
int sitemap_indexnow_stale_check(server_rec *s,
                                 const sitemap_server_conf *conf)
{
    const char *missing;

    if (conf->enabled != 1 || conf->indexnow_stale != 1)
        return OK;
    if ((missing = sm_indexnow_endpoint_problem(
             s->process->pconf, SM_INDEXNOW_DEFAULT_ENDPOINT)) != NULL) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "SitemapIndexNowStale "
                     "On: %s", missing);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (conf->indexnow != 1) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "SitemapIndexNowStale "
                     "On needs SitemapIndexNow On (stale URLs are submitted "
                     "with IndexNow); it is Off for %s",
                     conf->site.base ? conf->site.base : s->server_hostname);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

int sitemap_crawl_open(apr_pool_t *p, server_rec *s,
                       sitemap_server_conf *conf)
{
    const char *err;

    if (!conf->crawlers)
        return OK;
    /* The files' state lives as long as the list: in the configuration
     * pool, whichever pool the caller has (check_config's temporary one
     * would leave the list pointing at freed memory). */
    (void)p;
    if ((err = sm_crawl_list_open(conf->crawlers, s->process->pconf,
                                  apr_time_now()))) {
        ap_log_error(APLOG_MARK, APLOG_EMERG, 0, s, "%s", err);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return OK;
}

/* post_config, after the sites are resolved: one shared segment for every
 * vhost's crawlers' counters (as the recorder counters, and for the same
 * reasons: mod_sitemap_status.c).  Made again at each restart. */
int sitemap_crawl_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                              apr_pool_t *ptemp, server_rec *main_s)
{
    apr_size_t n = 0;
    apr_uint32_t *base;
    server_rec *s;
    (void)plog;
    (void)ptemp;

    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_CREATE_PRE_CONFIG)
        return OK;
    for (s = main_s; s; s = s->next) {
        sitemap_server_conf *conf = SITEMAP_CONF(s);
        if (conf->enabled == 1 && conf->crawlers)
            n += (apr_size_t)sm_crawl_count(conf->crawlers);
    }
    if (!n)
        return OK;
    n *= SITEMAP_CRAWL_COUNTS;
    if (!(base = sitemap_shared_zeroed(pconf, main_s,
                                       n * sizeof(apr_uint32_t),
                                       "the crawlers' counters")))
        return OK;
    for (s = main_s; s; s = s->next) {
        sitemap_server_conf *conf = SITEMAP_CONF(s);
        if (conf->enabled != 1 || !conf->crawlers)
            continue;
        conf->proc->crawl_counts = base;
        base += SITEMAP_CRAWL_COUNTS * sm_crawl_count(conf->crawlers);
    }
    return OK;
}

/* The sitemap documents a crawler fetches: the XML (index and pages) and
 * the text and HTML views. */
static int sitemap_document(const request_rec *last)
{
    return last->handler
           && (strcmp(last->handler, SITEMAP_XML_HANDLER) == 0
               || strcmp(last->handler, SITEMAP_VIEW_HANDLER) == 0);
}

void sitemap_crawl_fetch(request_rec *r, sitemap_server_conf *conf,
                         const char *ua)
{
    request_rec *orig = r, *last = r;
    const sm_crawler *c;
    const sm_site_conf *site;
    sm_crawl_result res;
    sm_change change;
    int i;

    if (!(c = sm_crawl_match(conf->crawlers, ua)))
        return;
    while (orig->prev)
        orig = orig->prev;
    while (last->next)
        last = last->next;
    if (orig->main)
        return;
    /* httpd's own client address: mod_remoteip's when it sets one, never
     * a header.  No DNS here: a dns: source answers from the cache. */
    res = sm_crawl_verify(c, crawl_dns, r->useragent_addr, r->request_time);
    if (conf->proc->crawl_counts) {
        for (i = 0; i < sm_crawl_count(conf->crawlers); i++)
            if (sm_crawl_get(conf->crawlers, i) == c)
                break;
        apr_atomic_inc32(conf->proc->crawl_counts
                         + SITEMAP_CRAWL_COUNTS * i
                         + (res == SM_CRAWL_VERIFIED ? 0
                            : res == SM_CRAWL_UNVERIFIED ? 1 : 2));
    }
    if (res != SM_CRAWL_VERIFIED)
        return;
    if (!(site = sitemap_site(r, conf)))
        return;
    memset(&change, 0, sizeof(change));
    change.op = SM_CHANGE_CRAWL;
    change.site = site;
    change.sitemap = sitemap_document(last);
    change.url = change.sitemap ? orig->parsed_uri.path
        : sitemap_crawl_url(r, conf, site, orig, last, last->status);
    if (!change.url)
        return;
    change.seen = r->request_time;
    change.status = last->status;
    change.crawler = c->name;
    if (!sm_recorder_crawl(conf->proc->recorder, &change))
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, "crawl of %s by %s "
                      "not counted: the queue is full", change.url, c->name);
}

/* ---- per child: DNS confirmation and the ranges files' upkeep ----------
 * One cache of DNS answers per process (sm_crawl_dns), read by the request
 * path, and a thread of its own (the resolver may wait: not the writer)
 * that every CRAWL_TICK looks up what the requests queued and looks at
 * the ranges files for a change. */
#define CRAWL_TICK apr_time_from_msec(1000)
#define CRAWL_LOOKUPS 16            /* addresses looked up a tick, at most */

static volatile apr_uint32_t crawl_stopping;

typedef struct {
    server_rec *main_s;
    apr_thread_t *thread;
} crawl_thread_state;

static void refresh_lists(server_rec *main_s, apr_pool_t *p, apr_time_t now)
{
    apr_array_header_t *errs = apr_array_make(p, 2, sizeof(const char *));
    server_rec *s;
    int i;

    for (s = main_s; s; s = s->next) {
        sitemap_server_conf *conf = SITEMAP_CONF(s);
        /* A vhost inheriting the main server's list: looked at once. */
        if (conf->enabled != 1 || !conf->crawlers
            || (s != main_s && conf->crawlers == SITEMAP_CONF(main_s)->crawlers
                && SITEMAP_CONF(main_s)->enabled == 1))
            continue;
        errs->nelts = 0;
        sm_crawl_list_refresh(conf->crawlers, p, now, errs);
        for (i = 0; i < errs->nelts; i++)
            ap_log_error(APLOG_MARK, APLOG_ERR, 0, s, "%s; the ranges read "
                         "before stay in force",
                         APR_ARRAY_IDX(errs, i, const char *));
    }
}

static void *APR_THREAD_FUNC crawl_thread(apr_thread_t *t, void *baton)
{
    crawl_thread_state *ts = baton;
    apr_pool_t *p;
    apr_time_t last = 0;

    /* A pool of the thread's own, never the child's allocator. */
    if (apr_pool_create_unmanaged_ex(&p, NULL, NULL) != APR_SUCCESS)
        return NULL;
    while (!apr_atomic_read32(&crawl_stopping)) {
        apr_time_t now = apr_time_now();
        if (now - last >= CRAWL_TICK || now < last) {
            last = now;
            if (crawl_dns)
                sm_crawl_dns_run(crawl_dns, CRAWL_LOOKUPS, now);
            refresh_lists(ts->main_s, p, now);
            apr_pool_clear(p);
        }
        apr_sleep(apr_time_from_msec(100));
    }
    apr_pool_destroy(p);
    apr_thread_exit(t, APR_SUCCESS);
    return NULL;
}

static apr_status_t crawl_thread_stop(void *baton)
{
    crawl_thread_state *ts = baton;
    apr_status_t rv;

    apr_atomic_set32(&crawl_stopping, 1);
    apr_thread_join(&rv, ts->thread);
    return APR_SUCCESS;
}

void sitemap_crawl_child_init(apr_pool_t *pchild, server_rec *main_s)
{
    crawl_thread_state *ts;
    sm_dns_conf dc;
    const char *err = NULL;
    apr_status_t rv;
    server_rec *s;

    for (s = main_s; s; s = s->next)
        if (SITEMAP_CONF(s)->enabled == 1 && SITEMAP_CONF(s)->crawlers)
            sitemap_crawl_cache_init(pchild, SITEMAP_CONF(s));
    for (s = main_s; s; s = s->next)
        if (SITEMAP_CONF(s)->enabled == 1 && SITEMAP_CONF(s)->crawlers)
            break;
    if (!s)
        return;
    sm_dns_conf_default(&dc);
    dc.reverse = sm_dns_system_reverse;
    dc.forward = sm_dns_system_forward;
    if (!(crawl_dns = sm_crawl_dns_create(pchild, &dc, &err)))
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, main_s, "crawl coverage: %s; "
                     "dns: sources verify nothing in this process", err);
    ts = apr_pcalloc(pchild, sizeof(*ts));
    ts->main_s = main_s;
    apr_atomic_set32(&crawl_stopping, 0);
    rv = apr_thread_create(&ts->thread, NULL, crawl_thread, ts, pchild);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, main_s, "cannot start the "
                     "crawl coverage thread: dns: sources stay pending and "
                     "ranges files are not read again in this process");
        return;
    }
    apr_pool_pre_cleanup_register(pchild, ts, crawl_thread_stop);
}
