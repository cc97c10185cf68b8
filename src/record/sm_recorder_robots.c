/* SPDX-License-Identifier: Apache-2.0 */
/* sm_recorder_robots.c: the writer's side of the site's robots.txt
 * (issue 31): what a process read or served goes to the store
 * (SM_CHANGE_ROBOTS, sm_recorder_robots); the rules stored there are
 * read back before every batch that may add a URL (their hashes; a body
 * only when it changed) and every SM_REC_ROBOTS_CHECK meanwhile, and
 *   - handed to the process (sm_recorder_robots_watch), so that a process
 *     that never served an application's robots.txt follows it too, also
 *     after a restart;
 *   - applied to every URL the writer adds: one the stored rules disallow
 *     is removed instead, with the verdict sitemapctl why shows, so a
 *     process with stale rules never adds it;
 *   - swept over the site's stored URLs when they change: in URL order,
 *     SM_REC_ROBOTS_CHUNK URLs at a time between batches (the writer
 *     loop), the cursor kept in the store, so a huge site never holds up
 *     a batch or a stop, and a sweep cut short goes on where it was.
 * Only the writer's thread (write_lock) touches this state, after
 * sm_recorder_robots_watch (before the writer starts). */
#include "record/sm_recorder_int.h"
#include "record/sm_robots_rules.h"

#include <apr_hash.h>
#include <apr_strings.h>

#include <stdlib.h>
#include <string.h>

typedef struct {
    apr_pool_t *pool;           /* the rules', replaced with them */
    sm_robots_rules *rules;     /* NULL: none stored */
    apr_int64_t hash;           /* of the stored body, 0: none */
    char *sweep;                /* malloc'd cursor; NULL: none due */
} site_robots;

struct sm_rec_robots {
    apr_pool_t *pool;           /* own allocator: entries and their rules */
    apr_hash_t *sites;          /* base -> site_robots */
    apr_time_t checked;         /* when the store was last asked */
    int sweeping;               /* some site has a sweep due */
    sm_recorder_robots_fn *fn;
    void *baton;
};

/* The cursors are malloc'd (they change with every chunk): freed with
 * the pool. */
static apr_status_t free_cursors(void *data)
{
    sm_rec_robots *r = data;
    apr_hash_index_t *hi;

    for (hi = apr_hash_first(NULL, r->sites); hi; hi = apr_hash_next(hi)) {
        site_robots *e = apr_hash_this_val(hi);
        free(e->sweep);
        e->sweep = NULL;
    }
    return APR_SUCCESS;
}

sm_rec_robots *sm_rec_robots_make(apr_pool_t *p)
{
    sm_rec_robots *r = apr_pcalloc(p, sizeof(*r));

    if (sm_private_pool(&r->pool, p) != APR_SUCCESS)
        return NULL;
    r->sites = apr_hash_make(r->pool);
    apr_pool_cleanup_register(r->pool, r, free_cursors,
                              apr_pool_cleanup_null);
    return r;
}

void sm_recorder_robots_watch(sm_recorder *rec, sm_recorder_robots_fn *fn,
                              void *baton)
{
    if (!rec->robots)
        return;
    rec->robots->fn = fn;
    rec->robots->baton = baton;
}

/* A robots.txt's key in the queue: one per site, the latest wins. */
#define ROBOTS_KEY_MIX APR_UINT64_C(0x165667b19e3779f9)

void sm_recorder_robots(sm_recorder *rec, const sm_change *c)
{
    sm_writer *w = rec->w;
    apr_uint64_t key = sm_rec_change_key(rec, c) ^ ROBOTS_KEY_MIX;

    /* Never waits, and is never refused for a full queue: one item per
     * site at most, and a robots.txt lost would not be handed over again
     * until it changes. */
    apr_thread_mutex_lock(w->lock);
    sm_rec_batch_put(w->pending, rec, c, key ? key : 1, apr_time_now());
    if (w->running && w->pending->items->nelts == 1)
        apr_thread_cond_signal(w->wake);
    apr_thread_mutex_unlock(w->lock);
}

static site_robots *entry(sm_rec_robots *r, const char *base)
{
    site_robots *e = apr_hash_get(r->sites, base, APR_HASH_KEY_STRING);

    if (!e) {
        e = apr_pcalloc(r->pool, sizeof(*e));
        apr_hash_set(r->sites, apr_pstrdup(r->pool, base),
                     APR_HASH_KEY_STRING, e);
    }
    return e;
}

static void set_sweep(sm_rec_robots *r, site_robots *e, const char *cursor)
{
    free(e->sweep);
    e->sweep = cursor ? strdup(cursor) : NULL;
    if (e->sweep)
        r->sweeping = 1;
}

/* New rules for site (body NULL: none), handed to the process.  What the
 * memory says was written of rec is forgotten: a URL swept out, or
 * refused, is written again at its next offer once allowed (rules change
 * rarely: the cost is one write of each URL, as after a restart). */
static void install(sm_recorder *rec, const sm_site_conf *site,
                    site_robots *e, const char *body, apr_int64_t hash)
{
    sm_rec_robots *r = rec->robots;
    apr_pool_t *p = NULL;

    if (body && sm_private_pool(&p, r->pool) != APR_SUCCESS)
        return;
    if (e->pool)
        apr_pool_destroy(e->pool);
    e->pool = p;
    e->rules = body ? sm_robots_rules_parse(p, body, strlen(body)) : NULL;
    e->hash = body ? hash : 0;
    apr_thread_mutex_lock(rec->w->lock);
    sm_rec_forget_locked(rec);
    apr_thread_mutex_unlock(rec->w->lock);
    if (r->fn)
        r->fn(r->baton, site, body, body ? strlen(body) : 0);
}

/* Read the stored rules of rec's sites (their bodies only when changed). */
static apr_status_t refresh(sm_recorder *rec, apr_pool_t *p, apr_time_t now)
{
    sm_rec_robots *r = rec->robots;
    apr_array_header_t *rows;
    apr_hash_t *by_base = apr_hash_make(p);
    apr_status_t rv;
    int i, n = sm_rec_sites_now(rec);

    r->checked = now;
    if ((rv = sm_store_robots_list(rec->store, p, &rows)) != APR_SUCCESS)
        return rv;
    for (i = 0; i < rows->nelts; i++) {
        sm_robots_row *row = &APR_ARRAY_IDX(rows, i, sm_robots_row);
        apr_hash_set(by_base, row->base, APR_HASH_KEY_STRING, row);
    }
    r->sweeping = 0;
    for (i = 0; i < n; i++) {
        const sm_site_conf *site = rec->site_v[i];
        sm_robots_row *row = apr_hash_get(by_base, site->base,
                                          APR_HASH_KEY_STRING);
        site_robots *e = entry(r, site->base);

        if (!row && e->hash)
            install(rec, site, e, NULL, 0);
        else if (row && row->hash != e->hash) {
            sm_robots_row full;
            if ((rv = sm_store_robots_body(rec->store, p, site->base,
                                           &full)) != APR_SUCCESS)
                return rv;
            if (full.body)
                install(rec, site, e, full.body, full.hash);
        }
        set_sweep(r, e, row ? row->sweep : NULL);
    }
    return APR_SUCCESS;
}

static const char *verdict(apr_pool_t *p, const site_robots *e,
                           const char *url)
{
    const char *agent = NULL;
    int line = 0;

    if (!e || !e->rules
        || !sm_robots_disallows_any(e->rules, url, &agent, &line))
        return NULL;
    return apr_psprintf(p, "robots.txt line %d disallows it for %s", line,
                        agent);
}

apr_status_t sm_rec_robots_filter(sm_recorder *rec, apr_pool_t *p,
                                  sm_change *changes, int n, apr_time_t now)
{
    sm_rec_robots *r = rec->robots;
    int i, adds = 0;

    if (!r)
        return APR_SUCCESS;
    for (i = 0; i < n && !adds; i++)
        adds = changes[i].op == SM_CHANGE_RECORD
               || changes[i].op == SM_CHANGE_SEED;
    /* A batch that may add URLs reads the stored rules first (their
     * hashes: one small query; a body only when it changed), so another
     * process's robots.txt stored a moment ago is obeyed at once.  Rules
     * that cannot be read fail the write (retried as any failed write):
     * a URL they disallow must not go in meanwhile. */
    if ((adds || now - r->checked >= SM_REC_ROBOTS_CHECK)
        && refresh(rec, p, now) != APR_SUCCESS) {
        r->checked = 0;
        apr_snprintf(rec->reason, sizeof(rec->reason), "cannot read the "
                     "robots.txt rules: %s", sm_store_error(rec->store));
        return APR_EGENERAL;
    }
    for (i = 0; i < n; i++) {
        sm_change *c = &changes[i];
        const char *why;

        if (c->op == SM_CHANGE_ROBOTS) {
            /* What the store keeps once this batch is in: the URLs
             * after it in the batch already follow it. */
            const char *body = c->detail ? c->detail : "";
            apr_int64_t h = sm_robots_hash(body);
            site_robots *e = entry(r, c->site->base);
            if (h != e->hash) {
                install(rec, c->site, e, body, h);
                set_sweep(r, e, "");
                /* the sweep starts at the writer's next pass */
                rec->next_due = now;
                apr_thread_mutex_lock(rec->w->lock);
                rec->w->next_upkeep = now;
                apr_thread_mutex_unlock(rec->w->lock);
            }
            continue;
        }
        if (c->op != SM_CHANGE_RECORD && c->op != SM_CHANGE_SEED)
            continue;
        why = verdict(p, apr_hash_get(r->sites, c->site->base,
                                      APR_HASH_KEY_STRING), c->url);
        if (!why)
            continue;
        c->op = SM_CHANGE_FORGET;
        c->why = why;
        c->detail = NULL;
        c->same_as = NULL;
        /* Not remembered as recorded: offered again once allowed, it is
         * written (changes[i] is rec->out[i]'s). */
        if (rec->out && i < rec->out_n) {
            apr_thread_mutex_lock(rec->w->lock);
            sm_memory_drop(&rec->w->memory,
                           sm_rec_memory_key(rec, rec->out[i]->key));
            apr_thread_mutex_unlock(rec->w->lock);
        }
    }
    return APR_SUCCESS;
}

/* One chunk of site's sweep: 1 when it is done. */
static int sweep_chunk(sm_recorder *rec, apr_pool_t *p,
                       const sm_site_conf *site, site_robots *e,
                       apr_time_t now)
{
    apr_array_header_t *urls;
    sm_change *changes;
    sm_apply_stats stats;
    const char *upto;
    int i, k = 0;

    if (sm_store_robots_urls(rec->store, p, site->base, e->sweep,
                             SM_REC_ROBOTS_CHUNK, &urls) != APR_SUCCESS)
        return -1;
    changes = apr_pcalloc(p, sizeof(*changes) * (apr_size_t)(urls->nelts + 1));
    for (i = 0; i < urls->nelts; i++) {
        const char *url = APR_ARRAY_IDX(urls, i, const char *);
        const char *why = verdict(p, e, url);
        if (!why)
            continue;
        changes[k].op = SM_CHANGE_FORGET;
        changes[k].site = site;
        changes[k].url = url;
        changes[k].seen = now;
        changes[k].why = why;
        k++;
    }
    if (k && sm_store_apply(rec->store, changes, k, &stats) != APR_SUCCESS)
        return -1;
    rec->last_used = now;       /* not closed as idle mid-sweep */
    upto = urls->nelts < SM_REC_ROBOTS_CHUNK ? NULL
           : APR_ARRAY_IDX(urls, urls->nelts - 1, const char *);
    if (sm_store_robots_swept(rec->store, site->base, e->hash, upto)
        != APR_SUCCESS)
        return -1;
    if (k)
        sm_log(rec->conf.log, SM_LOG_INFO, 0, "%s: %d stored URLs removed: "
               "the site's robots.txt disallows them", site->base, k);
    set_sweep(rec->robots, e, upto);
    return !upto;
}

apr_time_t sm_rec_robots_upkeep(sm_recorder *rec, apr_time_t now)
{
    sm_rec_robots *r = rec->robots;
    apr_pool_t *p;
    int i, n, done = 0, pending = 0;

    if (!r || !rec->store)
        return now + SM_REC_LOG_EVERY;
    if (apr_pool_create(&p, r->pool) != APR_SUCCESS)
        return now + SM_REC_ROBOTS_CHECK;
    if (now - r->checked >= SM_REC_ROBOTS_CHECK
        && refresh(rec, p, now) != APR_SUCCESS)
        goto failed;
    /* One chunk of one site's sweep a pass: the writer loop takes the
     * batches due in between. */
    n = sm_rec_sites_now(rec);
    for (i = 0; i < n; i++) {
        const sm_site_conf *site = rec->site_v[i];
        site_robots *e = apr_hash_get(r->sites, site->base,
                                      APR_HASH_KEY_STRING);
        if (!e || !e->sweep)
            continue;
        if (done) {
            pending = 1;        /* another site's, next pass */
            break;
        }
        done = 1;
        if (sweep_chunk(rec, p, site, e, now) < 0)
            goto failed;
        pending = e->sweep != NULL;
    }
    r->sweeping = pending;
    apr_pool_destroy(p);
    return r->sweeping ? now + SM_REC_ROBOTS_PAUSE
                       : r->checked + SM_REC_ROBOTS_CHECK;

failed:
    sm_log(rec->conf.log, SM_LOG_DEBUG, 0, "store %s: robots.txt rules: %s; "
           "again in %d s", rec->conf.db_path, sm_store_error(rec->store),
           (int)apr_time_sec(SM_REC_ROBOTS_CHECK));
    r->checked = now;
    apr_pool_destroy(p);
    return now + SM_REC_ROBOTS_CHECK;
}
