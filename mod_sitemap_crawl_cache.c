/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_crawl_cache.c: the crawlers' coverage figures the status
 * page shows, kept per process and vhost for up to SITEMAP_COVERAGE_TTL
 * (issue 36).  sm_store_coverage scans the site's URLs once per crawler:
 * a monitor polling the page every few seconds would repeat that scan
 * each time.  Memory: one sm_coverage per configured crawler and vhost,
 * made at child_init, nothing more.
 *
 * The figures are at most SITEMAP_COVERAGE_TTL old.  When this server's
 * writers have written since they were read (the shared counters'
 * last_write), they are read again once they are SITEMAP_COVERAGE_FRESH
 * old, so that a crawl or a change on this server shows within seconds;
 * another server of a farm writing the same store is seen within
 * SITEMAP_COVERAGE_TTL.  A graceful restart starts with an empty cache. */
#include "mod_sitemap.h"

#include "http_log.h"

#include <apr_thread_mutex.h>

#include "crawl/sm_crawl.h"

APLOG_USE_MODULE(sitemap);

#define SITEMAP_COVERAGE_TTL apr_time_from_sec(60)
#define SITEMAP_COVERAGE_FRESH apr_time_from_sec(2)

struct sitemap_crawl_cache {
    apr_thread_mutex_t *lock;   /* NULL: no threads, no cache */
    apr_time_t filled;          /* 0: never read */
    apr_uint64_t last_write;    /* the shared last_write when read */
    int n;
    sm_coverage *cov;           /* n, in the crawlers' order */
};

void sitemap_crawl_cache_init(apr_pool_t *pchild, sitemap_server_conf *conf)
{
    struct sitemap_crawl_cache *c;

    if (!conf->crawlers || conf->proc->crawl_cache)
        return;
    c = apr_pcalloc(pchild, sizeof(*c));
    c->n = sm_crawl_count(conf->crawlers);
    c->cov = apr_pcalloc(pchild, sizeof(*c->cov) * (apr_size_t)c->n);
    if (apr_thread_mutex_create(&c->lock, APR_THREAD_MUTEX_DEFAULT, pchild)
        != APR_SUCCESS)
        c->lock = NULL;
    conf->proc->crawl_cache = c;
}

static int still_good(const struct sitemap_crawl_cache *c,
                      apr_uint64_t last_write, apr_time_t now)
{
    apr_time_t age = now - c->filled;

    if (!c->filled || age < 0 || age >= SITEMAP_COVERAGE_TTL)
        return 0;
    return last_write == c->last_write || age < SITEMAP_COVERAGE_FRESH;
}

/* Reads every crawler's figures from st into c->cov; a store that cannot
 * say (APR_ENOTIMPL: a schema before coverage) gives zeros. */
static void fill(struct sitemap_crawl_cache *c, const sitemap_server_conf *conf,
                 sm_store *st, apr_time_t now)
{
    int i;

    for (i = 0; i < c->n; i++) {
        const sm_crawler *cr = sm_crawl_get(conf->crawlers, i);
        if (sm_store_coverage(st, conf->site.base, cr->name, now, &c->cov[i])
            != APR_SUCCESS) {
            memset(&c->cov[i], 0, sizeof(c->cov[i]));
            c->cov[i].crawler = cr->name;
        }
    }
}

void sitemap_crawl_coverage(const sitemap_server_conf *conf, sm_store *st,
                            apr_time_t now, sm_coverage *out)
{
    struct sitemap_crawl_cache *c = conf->proc->crawl_cache;
    apr_uint64_t last_write = conf->proc->shared
        ? __atomic_load_n(&conf->proc->shared->last_write, __ATOMIC_RELAXED)
        : 0;

    if (!c || !c->lock) {
        struct sitemap_crawl_cache once = { 0 };
        once.n = sm_crawl_count(conf->crawlers);
        once.cov = out;
        fill(&once, conf, st, now);
        return;
    }
    apr_thread_mutex_lock(c->lock);
    if (!still_good(c, last_write, now)) {
        fill(c, conf, st, now);
        c->filled = now;
        c->last_write = last_write;
    }
    memcpy(out, c->cov, sizeof(*out) * (apr_size_t)c->n);
    apr_thread_mutex_unlock(c->lock);
}
