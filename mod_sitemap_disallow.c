/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_disallow.c: the site's own robots.txt rules, so that no URL
 * "*", Googlebot or Bingbot may not fetch is listed (issue 31).
 *
 * Where the rules come from, without ever running an application at log
 * time:
 *   - a robots.txt served from a file (the usual case) is read from that
 *     file: a lookup subrequest (no handler runs) finds it, and it is read
 *     again when its modification time or size change;
 *   - a robots.txt an application makes (WordPress's) is learned when this
 *     process serves it: the robots.txt filter hands its body over
 *     (sitemap_disallow_learn).
 * Whatever a process reads or serves that changed its rules it hands to
 * the writer (sm_recorder_robots), which keeps it in the store; the writer
 * reads the stored rules back every few seconds and hands them here
 * (stored_rules), so a process that never served an application's
 * robots.txt, or one started after it was served, follows it too.  The
 * writer also applies the stored rules itself: it never adds a URL they
 * disallow, and sweeps the stored URLs when they change (record/
 * sm_recorder_robots.c).
 * Per process and per site, checked at most every CHECK_INTERVAL; when the
 * rules change the process's generation moves, which makes every response
 * a non-repeat once (mod_sitemap_record.c folds it into the raw facts), so
 * a URL allowed again comes back at its next request. */
#include "mod_sitemap_record.h"

#include "http_log.h"
#include "http_request.h"

#include <apr_atomic.h>
#include <apr_file_io.h>
#include <apr_hash.h>
#include <apr_strings.h>
#include <apr_thread_mutex.h>

#include "util/sm_hash.h"
#include "record/sm_memory.h"
#include "record/sm_recorder.h"
#include "record/sm_robots_rules.h"

#include <string.h>

APLOG_USE_MODULE(sitemap);

#define CHECK_INTERVAL SITEMAP_DISALLOW_CHECK
#define ROBOTS_PATH "/robots.txt"

typedef struct {
    apr_pool_t *pool;           /* the rules', replaced with them */
    sm_robots_rules *rules;     /* NULL: none known */
    apr_uint64_t hash;          /* of the body they came from */
    apr_time_t checked;
    apr_time_t mtime;           /* the file's, when from a file */
    apr_off_t size;
    int from_file;
} site_rules;

struct sitemap_disallow {
    apr_thread_mutex_t *lock;
    apr_pool_t *pool;           /* the table's, its own allocator */
    apr_hash_t *sites;          /* sm_site_conf * -> site_rules * */
};

volatile apr_uint32_t sitemap_disallow_generation;

/* One table per process, for every vhost (keyed by site): the writer's
 * stored rules name a site, not a vhost. */
static sitemap_disallow *process_table;

static void stored_rules(void *baton, const sm_site_conf *site,
                         const char *body, apr_size_t len);

apr_status_t sitemap_disallow_child_init(apr_pool_t *pchild,
                                         sitemap_server_conf *conf)
{
    sitemap_disallow *d = process_table;
    apr_pool_t *p;
    apr_status_t rv;

    if (!d) {
        if ((rv = sm_private_pool(&p, pchild)) != APR_SUCCESS)
            return rv;
        d = apr_pcalloc(p, sizeof(*d));
        d->pool = p;
        d->sites = apr_hash_make(p);
        if ((rv = apr_thread_mutex_create(&d->lock, APR_THREAD_MUTEX_DEFAULT,
                                          p)) != APR_SUCCESS)
            return rv;
        process_table = d;
    }
    conf->proc->disallow = d;
    if (conf->proc->recorder)
        sm_recorder_robots_watch(conf->proc->recorder, stored_rules, d);
    return APR_SUCCESS;
}

static site_rules *entry(sitemap_disallow *d, const sm_site_conf *site)
{
    site_rules *e = apr_hash_get(d->sites, &site, sizeof(site));

    if (!e) {
        e = apr_pcalloc(d->pool, sizeof(*e));
        apr_hash_set(d->sites, apr_pmemdup(d->pool, &site, sizeof(site)),
                     sizeof(site), e);
    }
    return e;
}

/* New rules for e from body (NULL: none), under the lock.  The generation
 * moves when they differ from the old ones: 1 then. */
static int install(sitemap_disallow *d, site_rules *e, const char *body,
                   apr_size_t len)
{
    apr_uint64_t h = body ? sm_hash_bytes(SM_HASH_SEED, body, len) : 0;
    apr_pool_t *p = NULL;

    if (h == e->hash)
        return 0;
    if (body && sm_private_pool(&p, d->pool) != APR_SUCCESS)
        return 0;
    if (e->pool)
        apr_pool_destroy(e->pool);
    e->pool = p;
    e->rules = body ? sm_robots_rules_parse(p, body, len) : NULL;
    e->hash = h;
    apr_atomic_inc32(&sitemap_disallow_generation);
    return 1;
}

/* The writer's stored rules of site (its thread): followed unless the
 * site's robots.txt is a file, whose own rules this process reads. */
static void stored_rules(void *baton, const sm_site_conf *site,
                         const char *body, apr_size_t len)
{
    sitemap_disallow *d = baton;
    site_rules *e;

    apr_thread_mutex_lock(d->lock);
    e = entry(d, site);
    if (!e->from_file)
        install(d, e, body, len);
    apr_thread_mutex_unlock(d->lock);
}

/* Rules that changed in this process go to the writer, for the store and
 * so for every other process (len bytes of body; "" for a file that went:
 * no rules). */
static void hand_over(request_rec *r, const sm_site_conf *site,
                      const char *body, apr_size_t len)
{
    sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    sm_change c;

    if (!conf->proc->recorder)
        return;
    memset(&c, 0, sizeof(c));
    c.op = SM_CHANGE_ROBOTS;
    c.site = site;
    c.url = ROBOTS_PATH;
    c.detail = apr_pstrmemdup(r->pool, body, len < SM_ROBOTS_BODY_MAX
                                             ? len : SM_ROBOTS_BODY_MAX);
    c.seen = r->request_time;
    sm_recorder_robots(conf->proc->recorder, &c);
}

/* Read a robots.txt file of size bytes (at most SM_ROBOTS_RULES_MAX of
 * them) into p; NULL when it cannot be read (an empty file is "").  */
static char *read_file(apr_pool_t *p, const char *path, apr_off_t size,
                       apr_size_t *len)
{
    apr_file_t *f;
    apr_status_t rv;
    char *buf;

    *len = size < SM_ROBOTS_RULES_MAX ? (apr_size_t)size
                                      : SM_ROBOTS_RULES_MAX;
    if (apr_file_open(&f, path, APR_FOPEN_READ | APR_FOPEN_BINARY, 0, p)
        != APR_SUCCESS)
        return NULL;
    buf = apr_palloc(p, *len + 1);
    rv = apr_file_read_full(f, buf, *len, len);
    apr_file_close(f);
    return rv == APR_SUCCESS || APR_STATUS_IS_EOF(rv) ? buf : NULL;
}

/* Is the site's robots.txt a file?  Then read it when it changed.  A
 * lookup subrequest maps /robots.txt as a request would (Alias, rewrites
 * in the server, the document root) and runs no handler. */
static void check_file(request_rec *r, sitemap_disallow *d, site_rules *e,
                       const sm_site_conf *site)
{
    request_rec *rr = ap_sub_req_lookup_uri(ROBOTS_PATH, r, NULL);
    int is_file = rr->status == HTTP_OK && rr->finfo.filetype == APR_REG
                  && rr->filename && sitemap_served_as_file(rr);

    if (is_file && (!e->from_file || rr->finfo.mtime != e->mtime
                    || rr->finfo.size != e->size)) {
        apr_size_t len;
        char *body = read_file(r->pool, rr->filename, rr->finfo.size,
                               &len);

        /* A file that cannot be read keeps the rules known so far and is
         * tried again at the next check (never "no rules": that would
         * list what it may disallow). */
        if (!body)
            ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, "robots.txt rules: "
                          "cannot read %s, keeping the rules known",
                          rr->filename);
        else {
            int changed;
            apr_thread_mutex_lock(d->lock);
            changed = install(d, e, body, len);
            e->from_file = 1;
            e->mtime = rr->finfo.mtime;
            e->size = rr->finfo.size;
            apr_thread_mutex_unlock(d->lock);
            if (changed)
                hand_over(r, site, body, len);
        }
    }
    else if (!is_file && e->from_file) {
        /* the file went: rules only from what is served from now on */
        apr_thread_mutex_lock(d->lock);
        install(d, e, NULL, 0);
        e->from_file = 0;
        apr_thread_mutex_unlock(d->lock);
        hand_over(r, site, "", 0);
    }
    ap_destroy_sub_req(rr);
}

/* The site's entry, under the lock; its file looked at when due (the
 * lock let go meanwhile).  Returns with the lock held. */
static site_rules *entry_checked(request_rec *r, sitemap_disallow *d,
                                 const sm_site_conf *site)
{
    site_rules *e;

    apr_thread_mutex_lock(d->lock);
    e = entry(d, site);
    if (r->request_time - e->checked >= CHECK_INTERVAL) {
        e->checked = r->request_time;
        apr_thread_mutex_unlock(d->lock);
        check_file(r, d, e, site);
        apr_thread_mutex_lock(d->lock);
    }
    return e;
}

void sitemap_disallow_refresh(request_rec *r, sitemap_server_conf *conf,
                              const sm_site_conf *site)
{
    sitemap_disallow *d = conf->proc->disallow;

    if (!d)
        return;
    entry_checked(r, d, site);
    apr_thread_mutex_unlock(d->lock);
}

int sitemap_disallowed(request_rec *r, sitemap_server_conf *conf,
                       const sm_site_conf *site, const char *url,
                       const char **why)
{
    sitemap_disallow *d = conf->proc->disallow;
    const char *agent = NULL;
    site_rules *e;
    int line = 0, no;

    if (!d)
        return 0;
    e = entry_checked(r, d, site);
    no = e->rules && sm_robots_disallows_any(e->rules, url, &agent, &line);
    apr_thread_mutex_unlock(d->lock);
    if (no)
        *why = apr_psprintf(r->pool, "robots.txt line %d disallows it for "
                            "%s", line, agent);
    return no;
}

void sitemap_disallow_learn(request_rec *r, const char *body,
                            apr_size_t len)
{
    sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    const sm_site_conf *site;
    sitemap_disallow *d = conf->proc->disallow;
    site_rules *e;
    int changed = 0;

    if (!d || !(site = sitemap_site(r, conf)))
        return;
    apr_thread_mutex_lock(d->lock);
    e = entry(d, site);
    /* a file's rules are read from the file (the same bytes) */
    if (!e->from_file)
        changed = install(d, e, body, len);
    apr_thread_mutex_unlock(d->lock);
    if (changed)
        hand_over(r, site, body, len);
}
