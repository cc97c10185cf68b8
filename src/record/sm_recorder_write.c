/* SPDX-License-Identifier: Apache-2.0 */
/* sm_recorder_write.c: the writer's side of sm_recorder.h: one thread
 * writes every store's part of each batch, keeps the stores open while they
 * are used (a store file idle for a minute is closed), notices stores that
 * were deleted or replaced, runs expiry, and keeps what could not be
 * written across a stop (sm_spill). */
#include "record/sm_recorder_int.h"
#include "record/sm_spill.h"

#include <apr_strings.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* ---- one store (caller holds write_lock, not lock) ----------------------- */

/* The memory of written URLs vouches for what the store held; once the
 * store was replaced, deleted or failed, nobody knows what it holds:
 * forget, so that every URL of it served from now on is written again
 * (into whatever file is at the path by then). */
static void forget_written(sm_recorder *rec)
{
    rec->synced = 0;
    apr_thread_mutex_lock(rec->w->lock);
    sm_rec_forget_locked(rec);
    apr_thread_mutex_unlock(rec->w->lock);
}

static void drop_store(sm_recorder *rec)
{
    if (rec->store && rec->is_file)
        rec->w->open_files--;
    sm_store_close(rec->store);
    rec->store = NULL;
    if (rec->store_pool)
        apr_pool_destroy(rec->store_pool);
    rec->store_pool = NULL;
}

/* The identity of the file at a store's path: 0 when there is none. */
static int file_identity(sm_recorder *rec, apr_ino_t *ino, apr_dev_t *dev)
{
    apr_finfo_t fi;
    apr_pool_t *p;
    apr_status_t rv;

    if (apr_pool_create(&p, rec->w->thread_pool) != APR_SUCCESS)
        return 0;
    rv = apr_stat(&fi, rec->conf.db_path, APR_FINFO_IDENT, p);
    apr_pool_destroy(p);
    if (rv != APR_SUCCESS && rv != APR_INCOMPLETE)
        return 0;
    *ino = fi.inode;
    *dev = fi.device;
    return 1;
}

/* A store file closed while idle: is the file at the path still the one
 * the memory knows?  If not, forget. */
static int closed_file_is_same(sm_recorder *rec)
{
    apr_ino_t ino;
    apr_dev_t dev;

    if (!rec->closed_idle)
        return 1;
    if (file_identity(rec, &ino, &dev) && ino == rec->ino && dev == rec->dev)
        return 1;
    rec->closed_idle = 0;
    forget_written(rec);
    return 0;
}

/* Not written for a while: give back its descriptors and cache, and
 * remember which file it was. */
static void close_idle(sm_recorder *rec)
{
    rec->closed_idle = file_identity(rec, &rec->ino, &rec->dev);
    if (rec->store)
        rec->store->close_lightly = 1;
    drop_store(rec);
    if (!rec->closed_idle)
        forget_written(rec);
}

/* Room for one more open store file: close the least recently used. */
static void make_room(sm_recorder *rec)
{
    sm_writer *w = rec->w;

    while (w->open_files >= SM_REC_MAX_OPEN_FILES) {
        sm_recorder *lru = NULL;
        int i;
        for (i = 0; i < w->rec_n; i++) {
            sm_recorder *o = w->rec_v[i];
            if (o != rec && o->store && o->is_file
                && (!lru || o->last_used < lru->last_used))
                lru = o;
        }
        if (!lru)
            return;
        close_idle(lru);
    }
}

static apr_status_t ensure_store(sm_recorder *rec, apr_time_t now)
{
    apr_status_t rv;

    if (rec->store && !sm_store_is_current(rec->store)) {
        sm_log(rec->conf.log, SM_LOG_WARN, 0,
               "store %s was removed or replaced; opening it again",
               rec->conf.db_path);
        drop_store(rec);
        forget_written(rec);
    }
    if (rec->store)
        return APR_SUCCESS;
    if (!closed_file_is_same(rec))
        sm_log(rec->conf.log, SM_LOG_WARN, 0,
               "store %s was removed or replaced while closed; opening it "
               "again", rec->conf.db_path);
    if (rec->is_file)
        make_room(rec);
    if ((rv = apr_pool_create(&rec->store_pool, rec->w->thread_pool))
        != APR_SUCCESS) {
        rec->store_pool = NULL;
        apr_cpystrn(rec->reason, "out of memory", sizeof(rec->reason));
        return rv;
    }
    /* A stop cuts a wait on a hung database short (the busy timeout),
     * from the first: its opening included. */
    rv = sm_store_open_stoppable(&rec->store, rec->store_pool,
                                 rec->conf.db_uri ? rec->conf.db_uri
                                                  : rec->conf.db_path,
                                 SM_STORE_CREATE, rec->conf.busy_timeout_ms,
                                 rec->conf.log, &rec->w->stopping,
                                 rec->reason, sizeof(rec->reason));
    /* The sites' rows and settings, so the sitemap's Last-Modified follows
     * configuration changes even before any traffic: once per file (a
     * store closed while idle and opened again is the same file, unless
     * closed_file_is_same said otherwise), and again for sites added
     * since. */
    if (rv == APR_SUCCESS
        && rec->synced != sm_rec_sites_now(rec)
        && sm_store_sync_sites(rec->store, rec->site_v,
                               sm_rec_sites_now(rec)) != APR_SUCCESS) {
        apr_cpystrn(rec->reason, sm_store_error(rec->store),
                    sizeof(rec->reason));
        sm_store_close(rec->store);
        rv = APR_EGENERAL;
    }
    if (rv != APR_SUCCESS) {
        rec->store = NULL;
        apr_pool_destroy(rec->store_pool);
        rec->store_pool = NULL;
        forget_written(rec);
        /* An open the stop cut short (or that failed while stopping) is
         * not tried again by the last write (SM_REC_FLUSH_FINAL): that
         * would wait a busy timeout more on the same hung database. */
        if (__atomic_load_n(&rec->w->stopping, __ATOMIC_RELAXED)) {
            apr_thread_mutex_lock(rec->w->lock);
            rec->faulted = 1;
            apr_thread_mutex_unlock(rec->w->lock);
        }
        return rv;
    }
    rec->last_used = now;
    rec->synced = sm_rec_sites_now(rec);
    if (rec->is_file)
        rec->w->open_files++;
    /* Spills of stopped processes are looked for at the next upkeep. */
    rec->next_spill_scan = 0;
    return APR_SUCCESS;
}

static void run_expiry(sm_recorder *rec, apr_time_t now)
{
    int i, n;

    if (rec->last_expire && now - rec->last_expire < rec->expire_every)
        return;
    rec->last_expire = now;
    n = sm_rec_sites_now(rec);
    for (i = 0; i < n; i++) {
        const sm_site_conf *site = rec->site_v[i];
        int removed = 0;
        if (site->expire <= 0)
            continue;
        if (sm_store_expire(rec->store, site, now, rec->expire_every,
                            &removed) != APR_SUCCESS) {
            sm_log(rec->conf.log, SM_LOG_WARN, 0, "store %s: %s",
                   rec->conf.db_path, sm_store_error(rec->store));
            return;
        }
        if (removed)
            sm_log(rec->conf.log, SM_LOG_INFO, 0,
                   "%s: %d URLs not served for %" APR_TIME_T_FMT
                   " s left the store", site->base, removed,
                   apr_time_sec(site->expire));
    }
}

/* Is base one that rec's site makers would make (sm_base_test_fn)? */
static int made_from_host(void *baton, const char *base)
{
    const sm_recorder *rec = baton;
    int i;

    for (i = 0; i < rec->maker_n; i++)
        if (rec->maker_v[i].owns(rec->maker_v[i].baton, base))
            return 1;
    return 0;
}

/* The rows of the makers' sites that never held a URL go. */
static void run_prune(sm_recorder *rec, apr_time_t now)
{
    int pruned = 0;

    rec->last_prune = now;
    if (sm_store_prune_sites(rec->store, made_from_host, rec, &pruned)
        != APR_SUCCESS)
        sm_log(rec->conf.log, SM_LOG_WARN, 0, "store %s: %s",
               rec->conf.db_path, sm_store_error(rec->store));
    else if (pruned)
        sm_log(rec->conf.log, SM_LOG_INFO, 0, "store %s: %d sites of host "
               "names that never held a URL pruned", rec->conf.db_path,
               pruned);
}

/* Does any site of rec expire URLs? */
static int expires(const sm_recorder *rec)
{
    int i, n = sm_rec_sites_now(rec);

    for (i = 0; i < n; i++)
        if (rec->site_v[i]->expire > 0)
            return 1;
    return 0;
}

/* Write rec's part of a batch (rec->out), in transactions of at most
 * batch_size changes: a queue that grew while the store was slow is not
 * written in one long transaction that holds the store's locks (the site
 * rows, on PostgreSQL) against the other servers of a farm, whose writes
 * would then time out waiting.  Returns how many changes went in (the
 * first ones); *why says why the rest did not. */
static int write_part(sm_recorder *rec, apr_pool_t *p, const char **why,
                      sm_apply_stats *stats)
{
    apr_time_t now = apr_time_now();
    sm_change *changes;
    int i, done, n = rec->out_n, chunk = rec->w->batch_size;

    memset(stats, 0, sizeof(*stats));
    rec->out_tx = 0;
    if (ensure_store(rec, now) != APR_SUCCESS) {
        *why = rec->reason;
        return 0;
    }
    changes = apr_palloc(p, sizeof(*changes) * (apr_size_t)n);
    for (i = 0; i < n; i++)
        changes[i] = rec->out[i]->change;
    if (sm_rec_robots_filter(rec, p, changes, n, now) != APR_SUCCESS) {
        *why = rec->reason;
        return 0;
    }
    rec->out_held = apr_pcalloc(p, (apr_size_t)(unsigned)n + 1);
    rec->out_removed = apr_pcalloc(p, (apr_size_t)(unsigned)n + 1);
    for (done = 0; done < n; done += chunk) {
        sm_apply_stats part;
        int k = n - done < chunk ? n - done : chunk;

        memset(&part, 0, sizeof(part));
        if (sm_store_apply_marks(rec->store, changes + done, k, &part,
                                 rec->out_held + done,
                                 rec->out_removed + done) != APR_SUCCESS) {
            apr_cpystrn(rec->reason, sm_store_error(rec->store),
                        sizeof(rec->reason));
            *why = rec->reason;
            /* Start from a fresh connection next time. */
            drop_store(rec);
            forget_written(rec);
            return done;
        }
        rec->out_tx++;
        sm_rec_forget_publish(rec, done, k);   /* committed: tell all */
        stats->added += part.added;
        stats->updated += part.updated;
        stats->touched += part.touched;
        stats->removed += part.removed;
        stats->refused_full += part.refused_full;
        stats->held += part.held;
    }
    rec->last_used = now;
    run_expiry(rec, now);
    return n;
}

/* ---- settling (caller holds lock) ---------------------------------------- */

static void share_fault(sm_recorder *rec, apr_time_t now, const char *why)
{
    if (!rec->shared)
        return;
    SM_REC_SHARE(rec, faults, 1);
    __atomic_store_n(&rec->shared->last_fault, (apr_uint64_t)now,
                     __ATOMIC_RELAXED);
    apr_cpystrn(rec->shared->last_fault_why, why ? why : "",
                sizeof(rec->shared->last_fault_why));
}

/* After rec's part of a batch (its first done changes went in; tried: 0
 * when it was not tried, its retry not being due): count, log, and put
 * back what did not go in. */
static void settle_part(sm_recorder *rec, int done, const char *why,
                        const sm_apply_stats *stats, apr_time_t now,
                        int tried)
{
    sm_writer *w = rec->w;
    int i, n = rec->out_n, kept = 0, dropped = 0;
    apr_time_t first;

    if (done) {
        rec->stats.written += done - stats->refused_full;
        rec->stats.refused_full += stats->refused_full;
        SM_REC_SHARE(rec, written, done - stats->refused_full);
        SM_REC_SHARE(rec, refused_full, stats->refused_full);
        if (rec->shared)
            __atomic_store_n(&rec->shared->last_write, (apr_uint64_t)now,
                             __ATOMIC_RELAXED);
        w->progress = now;
        rec->stats.batches += (apr_uint64_t)rec->out_tx;
        if (done == n) {
            sm_rec_works(rec, rec->held < done ? rec->held : done);
            rec->held = 0;
        }
        /* A URL held for IndexNow's corroboration: forgotten, so that
         * the next request for it, whoever sends it, is written. */
        for (i = 0; stats->held && rec->out_held && i < done; i++)
            if (rec->out_held[i])
                sm_memory_drop(&w->memory,
                               sm_rec_memory_key(rec, rec->out[i]->key));
        if (stats->refused_full) {
            /* Refused URLs must be offered again once there is room. */
            rec->refused_unlogged += stats->refused_full;
            for (i = 0; i < done; i++)
                sm_memory_drop(&w->memory,
                               sm_rec_memory_key(rec, rec->out[i]->key));
            if (sm_rec_should_log(&rec->last_full_log, now)) {
                sm_log(rec->conf.log, SM_LOG_WARN, 0,
                       "SitemapMaxURLs reached: %" APR_UINT64_T_FMT
                       " new URLs not recorded in the last minute",
                       rec->refused_unlogged);
                rec->refused_unlogged = 0;
            }
        }
        if (done == n)
            return;
    }

    if (tried) {
        sm_rec_failed(rec, now);
        share_fault(rec, now, why);
        rec->faults_unlogged++;
    }
    /* Put back as kept: not new work, so it neither starts the batch's
     * interval nor fills a batch (the writer loop); it waits for rec's
     * retry. */
    first = w->pending->first;
    for (i = done; i < n; i++) {
        sm_rec_item *item = rec->out[i];
        if (sm_rec_batch_find(w->pending, item->key))
            continue;                   /* a newer change is queued */
        if (w->pending->items->nelts < w->queue_max) {
            sm_rec_batch_put(w->pending, rec, &item->change, item->key, now);
            w->pending->kept++;
            kept++;
        }
        else {
            sm_memory_drop(&w->memory, sm_rec_memory_key(rec, item->key));
            dropped++;
        }
    }
    w->pending->first = first;
    rec->held = kept;
    sm_rec_count_lost(rec, (apr_uint64_t)dropped, now);
    if (tried && sm_rec_should_log(&rec->last_fault_log, now)) {
        sm_log(rec->conf.log, SM_LOG_ERR, 0,
               "store %s: %s; %d changes kept for retry (next attempt in %"
               APR_TIME_T_FMT " ms), %" APR_UINT64_T_FMT " failed attempts "
               "in the last minute (pages are served as usual)",
               rec->conf.db_path, why, kept,
               apr_time_as_msec(rec->retry_at - now), rec->faults_unlogged);
        rec->faults_unlogged = 0;
    }
}

/* ---- a batch, store by store ---------------------------------------------- */

int sm_rec_flush_locked(sm_writer *w, int how)
{
    sm_rec_batch *b = w->pending;
    sm_recorder **recs;
    apr_time_t next_retry = 0;
    int i, touched, all_ok = 1;

    w->pending = w->spare;
    w->spare = NULL;
    apr_thread_cond_broadcast(w->room);
    apr_thread_mutex_unlock(w->lock);

    recs = sm_rec_split_batch(b, &touched);
    for (i = 0; i < touched; i++) {
        sm_recorder *rec = recs[i];
        sm_apply_stats stats;
        const char *why = rec->reason;
        int done = 0, tried;

        apr_thread_mutex_lock(w->lock);
        tried = how == SM_REC_FLUSH_FINAL ? !rec->faulted
              : how == SM_REC_FLUSH_THREAD
                ? sm_rec_may_try(rec, apr_time_now()) : 1;
        apr_thread_mutex_unlock(w->lock);
        memset(&stats, 0, sizeof(stats));
        if (tried)
            done = write_part(rec, b->pool, &why, &stats);
        apr_thread_mutex_lock(w->lock);
        settle_part(rec, done, why, &stats, apr_time_now(), tried);
        if (rec->held && (!next_retry || rec->retry_at < next_retry))
            next_retry = rec->retry_at;
        apr_thread_mutex_unlock(w->lock);
        all_ok &= done == rec->out_n;
        rec->out = NULL;
        rec->out_held = rec->out_removed = NULL;
        rec->out_n = 0;
    }

    apr_thread_mutex_lock(w->lock);
    /* What was kept waits for its store's retry (the writer loop). */
    w->retry_at = next_retry;
    sm_rec_batch_reset(b);
    w->spare = b;
    apr_thread_cond_broadcast(w->room);
    return all_ok;
}

/* ---- changes kept across a stop (sm_spill) ------------------------------ */

static const char *spill_path(const sm_recorder *rec)
{
    return rec->conf.spill_path ? rec->conf.spill_path : rec->conf.db_path;
}

typedef struct {
    sm_recorder *rec;
    apr_time_t now;
    int unknown;                /* of sites this process does not serve */
} replay_ctx;

static void replay_one(void *baton, const char *base, const sm_change *c)
{
    replay_ctx *ctx = baton;
    sm_recorder *rec = ctx->rec;
    sm_writer *w = rec->w;
    sm_change copy = *c;
    int i;

    copy.site = NULL;
    for (i = 0; i < sm_rec_sites_now(rec) && !copy.site; i++)
        if (strcmp(rec->site_v[i]->base, base) == 0)
            copy.site = rec->site_v[i];
    /* A site made from a Host that this process has not seen yet. */
    for (i = 0; i < rec->maker_n && !copy.site; i++)
        copy.site = rec->maker_v[i].fn(rec->maker_v[i].baton, base);
    if (!copy.site) {
        ctx->unknown++;
        return;
    }
    apr_thread_mutex_lock(w->lock);
    sm_rec_batch_put(w->pending, rec, &copy, sm_rec_change_key(rec, &copy),
                     ctx->now);
    rec->stats.queued++;
    apr_thread_mutex_unlock(w->lock);
}

/* Queue what stopped processes kept for this store (write_lock held, not
 * lock; the store is open), as far as the queue has room. */
static void take_spills(sm_recorder *rec, apr_time_t now)
{
    replay_ctx ctx = { rec, now, 0 };
    apr_pool_t *p;
    int room, files = 0, changes = 0;

    apr_thread_mutex_lock(rec->w->lock);
    room = rec->w->queue_max - rec->w->pending->items->nelts;
    apr_thread_mutex_unlock(rec->w->lock);
    if (room <= 0 || apr_pool_create(&p, rec->store_pool) != APR_SUCCESS)
        return;
    sm_spill_take(p, spill_path(rec), room, replay_one, &ctx,
                  rec->conf.log, &files, &changes);
    apr_pool_destroy(p);
    if (files)
        sm_log(rec->conf.log, SM_LOG_INFO, 0, "store %s: %d changes that "
               "stopped processes could not write read back from %d files "
               "(%s.spill-*); writing them", rec->conf.db_path, changes,
               files, spill_path(rec));
    if (ctx.unknown)
        sm_log(rec->conf.log, SM_LOG_WARN, 0, "store %s: %d changes kept by "
               "a stopped process are for sites this server no longer "
               "records: dropped", rec->conf.db_path, ctx.unknown);
}

/* At stop: keep what rec could not write (rec->out) in a spill file for
 * the next process, and say exactly what was lost. */
static void spill_part(sm_recorder *rec, apr_pool_t *p)
{
    int i, n = rec->out_n;
    sm_change *changes;
    char err[600];

    if (rec->dropped_unlogged) {
        sm_log(rec->conf.log, SM_LOG_ERR, 0, "store %s: %" APR_UINT64_T_FMT
               " changes were lost while it failed (queue full) since the "
               "last report", rec->conf.db_path, rec->dropped_unlogged);
        rec->dropped_unlogged = 0;
        rec->last_drop_log = apr_time_now();
    }
    if (!n)
        return;
    changes = apr_palloc(p, sizeof(*changes) * (apr_size_t)n);
    /* Verdict notes are not kept across a stop: the next response left
     * out notes its URL again; nor crawlers' fetches (the spill's format
     * has no place for them; a few are lost to a stop that could not
     * write), nor images' changes (seen again with the next fetch). */
    for (i = n = 0; i < rec->out_n; i++)
        if (rec->out[i]->change.op != SM_CHANGE_NOTE
            && rec->out[i]->change.op != SM_CHANGE_CRAWL
            && rec->out[i]->change.op != SM_CHANGE_ROBOTS
            && rec->out[i]->change.op < SM_CHANGE_IMAGE)
            changes[n++] = rec->out[i]->change;
    if (!n)
        return;
    if (sm_spill_write(p, spill_path(rec), changes, n, err, sizeof(err))
        == APR_SUCCESS) {
        sm_log(rec->conf.log, SM_LOG_WARN, 0, "store %s: %s; stopping "
               "with %d changes not written: kept in %s.spill-* for the "
               "next process that opens the store", rec->conf.db_path,
               rec->reason, n, spill_path(rec));
        return;
    }
    rec->stats.dropped += n;
    sm_log(rec->conf.log, SM_LOG_ERR, 0, "store %s: %s; stopping with %d "
           "changes not written, and they cannot be kept (%s): %d changes "
           "lost", rec->conf.db_path, rec->reason, n, err, n);
}

void sm_rec_spill_and_close(sm_writer *w)
{
    sm_rec_batch *b = w->pending;
    int i, touched;

    if (b->items->nelts)
        sm_rec_split_batch(b, &touched);
    for (i = 0; i < w->rec_n; i++) {
        sm_recorder *rec = w->rec_v[i];
        spill_part(rec, b->pool);
        rec->out = NULL;
        rec->out_n = 0;
        if (rec->store)
            drop_store(rec);
    }
    sm_rec_batch_reset(b);
}

/* ---- upkeep of idle stores (write_lock held, not lock) -------------------- */

/* Make sure that the store at the path is open, as a batch would, and take
 * what stopped processes kept for it.  A fault is logged as a failed
 * write, at most once a minute. */
static void check_store(sm_recorder *rec, apr_time_t now)
{
    sm_writer *w = rec->w;

    if (ensure_store(rec, now) == APR_SUCCESS) {
        apr_thread_mutex_lock(w->lock);
        if (rec->held) {
            /* Its kept changes are written now; that write says whether
             * it works again. */
            rec->retry_at = now;
            w->retry_at = now;
            apr_thread_cond_signal(w->wake);
        }
        else
            sm_rec_works(rec, 0);
        apr_thread_mutex_unlock(w->lock);
        if (now >= rec->next_spill_scan) {
            rec->next_spill_scan = now + SM_REC_LOG_EVERY;
            take_spills(rec, now);
        }
        return;
    }
    apr_thread_mutex_lock(w->lock);
    sm_rec_failed(rec, now);
    share_fault(rec, now, rec->reason);
    rec->faults_unlogged++;
    if (sm_rec_should_log(&rec->last_fault_log, now)) {
        sm_log(rec->conf.log, SM_LOG_ERR, 0,
               "store %s: %s; %d changes kept for retry (next attempt in %"
               APR_TIME_T_FMT " ms), %" APR_UINT64_T_FMT " failed attempts "
               "in the last minute (pages are served as usual)",
               rec->conf.db_path, rec->reason, rec->held,
               apr_time_as_msec(rec->retry_at - now), rec->faults_unlogged);
        rec->faults_unlogged = 0;
    }
    apr_thread_mutex_unlock(w->lock);
}

static apr_time_t earliest(apr_time_t a, apr_time_t b)
{
    return a < b ? a : b;
}

/* What is due for one store; sets when it is next due. */
static void upkeep(sm_recorder *rec, apr_time_t now)
{
    sm_writer *w = rec->w;
    int closed_file = !rec->store && rec->is_file && rec->closed_idle;

    if (rec->store && rec->is_file && now - rec->last_used >= w->idle_close) {
        /* Idle: closed, looked at now and then (below). */
        close_idle(rec);
        rec->next_check = now + w->closed_check;
    }
    else if (now >= rec->next_check) {
        /* Look at the store every flush interval even when no new URL
         * comes: a deleted store is created again (the sitemap answers
         * again) and a replaced one noticed (the memory forgotten) without
         * waiting for a write.  A store closed while idle costs a stat:
         * only a deleted one is opened (created) again. */
        if (closed_file) {
            rec->next_check = now + w->closed_check;
            if (!closed_file_is_same(rec))
                check_store(rec, now);
        }
        else {
            int may;
            rec->next_check = now + w->flush_interval;
            apr_thread_mutex_lock(w->lock);
            may = sm_rec_may_try(rec, now);
            apr_thread_mutex_unlock(w->lock);
            if (may)
                check_store(rec, now);
            /* A failing store is looked at again at its retry, no
             * sooner (it backs off). */
            apr_thread_mutex_lock(w->lock);
            if (rec->faulted && rec->retry_at > rec->next_check)
                rec->next_check = rec->retry_at;
            apr_thread_mutex_unlock(w->lock);
        }
    }
    /* Expire old URLs when due (opening a closed store for it). */
    if (expires(rec) && now - rec->last_expire >= rec->expire_every) {
        if (ensure_store(rec, now) == APR_SUCCESS)
            run_expiry(rec, now);
        else
            rec->last_expire = now;     /* the next batch logs it */
    }
    if (rec->maker_n && now - rec->last_prune >= rec->expire_every) {
        if (ensure_store(rec, now) == APR_SUCCESS)
            run_prune(rec, now);
        else
            rec->last_prune = now;
    }
    if (sm_rec_crawl_days_due(rec, now)
        && ensure_store(rec, now) == APR_SUCCESS)
        sm_rec_crawl_days(rec, now);
    rec->next_due = earliest(rec->next_check,
                             sm_rec_robots_upkeep(rec, now));
    if (rec->maker_n)
        rec->next_due = earliest(rec->next_due,
                                 rec->last_prune + rec->expire_every);
    if (expires(rec))
        rec->next_due = earliest(rec->next_due,
                                 rec->last_expire + rec->expire_every);
    if (rec->store && rec->is_file)
        rec->next_due = earliest(rec->next_due, rec->last_used
                                                + w->idle_close);
}

/* A stop is asked for: a pass over thousands of stores ends early (read
 * without the lock: the next pass sees it anyway). */
static int stopping(sm_writer *w)
{
    return __atomic_load_n(&w->stopping, __ATOMIC_RELAXED);
}

/* The upkeep of every store due; returns when the next is due. */
static apr_time_t upkeep_all(sm_writer *w, apr_time_t now)
{
    apr_time_t next = now + SM_REC_LOG_EVERY;
    int i;

    for (i = 0; i < w->rec_n && !stopping(w); i++) {
        sm_recorder *rec = w->rec_v[i];
        if (now >= rec->next_due)
            upkeep(rec, now);
        next = earliest(next, rec->next_due);
    }
    if (w->upkeep_fn) {
        if (now >= w->next_upkeep_fn) {
            w->upkeep_fn(w->upkeep_baton, now);
            w->next_upkeep_fn = now + w->closed_check;
        }
        next = earliest(next, w->next_upkeep_fn);
    }
    return next;
}

void *APR_THREAD_FUNC sm_rec_writer_main(apr_thread_t *thd, void *data)
{
    sm_writer *w = data;
    int i;

#ifdef __linux__
    /* So that top -H, ps -L and the benchmarks can tell it apart. */
    prctl(PR_SET_NAME, "sitemap-writer", 0, 0, 0);
#endif
    apr_thread_mutex_lock(w->write_lock);
    /* Open every store (and store its sites' settings) at start, not at
     * the first batch; a failure here is retried with the first batch. */
    for (i = 0; i < w->rec_n && !stopping(w); i++) {
        sm_recorder *rec = w->rec_v[i];
        apr_time_t now = apr_time_now();
        if (ensure_store(rec, now) != APR_SUCCESS)
            sm_log(rec->conf.log, SM_LOG_DEBUG, 0, "store %s: %s; retrying "
                   "with the first batch", rec->conf.db_path, rec->reason);
        rec->next_check = now + w->flush_interval;
        rec->next_due = rec->next_check;
    }
    apr_thread_mutex_lock(w->lock);
    w->next_upkeep = 0;
    while (!w->stopping) {
        apr_time_t now = apr_time_now(), until;
        sm_rec_batch *b = w->pending;
        /* New work, apart from what failing stores kept: those wait for
         * their retry (w->retry_at), so a failing store with a full batch
         * kept never makes the writer spin. */
        int fresh = b->items->nelts - b->kept;

        if (w->spare
            && (fresh >= w->batch_size
                || (fresh > 0 && now >= b->first + w->flush_interval)
                || (b->kept && now >= w->retry_at))) {
            sm_rec_flush_locked(w, SM_REC_FLUSH_THREAD);
            continue;
        }
        if (w->loss_due && now >= w->loss_due) {
            sm_rec_report_losses(w, now);
            continue;
        }
        if (now >= w->next_upkeep) {
            w->in_upkeep = 1;
            apr_thread_mutex_unlock(w->lock);
            w->next_upkeep = upkeep_all(w, now);
            apr_thread_mutex_lock(w->lock);
            w->in_upkeep = 0;
            continue;
        }
        /* Sleep until work: the batch's interval, a retry, losses to
         * report, or the next upkeep; a stop or new work wakes it. */
        until = w->next_upkeep;
        if (w->spare && fresh > 0)
            until = earliest(until, b->first + w->flush_interval);
        if (w->spare && b->kept)
            until = earliest(until, w->retry_at);
        if (w->loss_due)
            until = earliest(until, w->loss_due);
        apr_thread_cond_timedwait(w->wake, w->lock, until - now);
    }
    apr_thread_mutex_unlock(w->lock);
    apr_thread_mutex_unlock(w->write_lock);
    apr_thread_exit(thd, APR_SUCCESS);
    return NULL;
}
