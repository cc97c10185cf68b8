/* sm_recorder.c: see sm_recorder.h. */
#include "sm_recorder.h"
#include "sm_hash.h"
#include "sm_hot.h"
#include "sm_memory.h"
#include "sm_spill.h"

#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include <stddef.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* A URL is written again after this long even when nothing changed, so its
 * last_seen stays fresh for SitemapExpire (at most once an hour per process). */
#define REFRESH_SEC 3600
/* How often problems are logged, and expiry runs. */
#define LOG_EVERY apr_time_from_sec(60)
#define EXPIRE_EVERY apr_time_from_sec(3600)

typedef struct {
    sm_change change;
    apr_uint64_t key;
} pending_item;

/* An entry of a batch's index: key and position side by side. */
typedef struct {
    apr_uint64_t key;
    apr_size_t pos;             /* 1 + position in items; 0: empty */
} batch_slot_t;

/* A batch owns a pool with its own allocator: filled by request threads
 * under the lock, written by the writer thread after the swap. */
typedef struct {
    apr_pool_t *pool;
    /* key -> 1 + position in items: open addressing, kept at most half
     * full (apr_hash costs twice as much and allocates per entry). */
    batch_slot_t *slots;
    apr_size_t mask;
    apr_array_header_t *items;  /* pending_item */
    apr_time_t first;           /* when the oldest item arrived */
} batch;

struct sm_recorder {
    /* What every request reads (sm_recorder_repeat, and the lock of its
     * rarer paths), in one cache line: the recorder is allocated on a
     * line of its own (sm_cache_lines). */
    sm_memory memory;
    apr_thread_mutex_t *lock;   /* the queue's; also memory.lock */

    sm_recorder_conf conf;
    apr_pool_t *pool;
    apr_thread_cond_t *wake;    /* the writer: work to do, or stop */
    apr_thread_cond_t *room;    /* requests: the queue has room again */
    apr_thread_t *thread;
    int running, stopping, faulted;
    batch *pending, *spare;
    /* The sites written through this recorder (expiry, settings, spills):
     * site_v never moves once the writer runs (its room is reserved
     * before, sm_recorder_reserve_sites), so that sites added later, from
     * request threads (under lock), are read by the writer without it:
     * site_n is published last (release) and read with acquire. */
    const sm_site_conf **site_v;
    int site_n, site_cap;
    sm_recorder_stats stats;
    sm_recorder_shared *shared; /* NULL: not shared */

    /* Owned by whoever writes (the writer thread, or a flush caller that
     * holds write_lock). */
    apr_thread_mutex_t *write_lock;
    apr_pool_t *store_pool;
    sm_store *store;
    apr_time_t last_expire;
    apr_time_t next_check;              /* of the store while idle */
    apr_time_t next_spill_scan;         /* for other processes' spills */
    apr_interval_time_t expire_every;   /* hourly, sooner for short expiry */
    apr_time_t last_fault_log, last_full_log;
    apr_uint64_t faults_unlogged, refused_unlogged, dropped_unlogged;
    char reason[600];           /* why the last write failed */
};

/* The sites added so far (see site_v). */
static int sites_now(const sm_recorder *rec)
{
    return __atomic_load_n(&rec->site_n, __ATOMIC_ACQUIRE);
}

/* Compile-time check: the memory and the lock share the first line. */
typedef char hot_fields_are_one_line[offsetof(struct sm_recorder, lock)
                                     + sizeof(apr_thread_mutex_t *) <= 64
                                     ? 1 : -1];

/* ---- shared counters ------------------------------------------------------ */

#define SHARE(rec, field, n) \
    do { if ((rec)->shared && (n)) \
             __atomic_fetch_add(&(rec)->shared->field, (apr_uint64_t)(n), \
                                __ATOMIC_RELAXED); } while (0)

void sm_recorder_share(sm_recorder *rec, sm_recorder_shared *shared)
{
    apr_thread_mutex_lock(rec->lock);
    rec->shared = shared;
    apr_thread_mutex_unlock(rec->lock);
}

static void share_fault(sm_recorder *rec, apr_time_t now, const char *why)
{
    if (!rec->shared)
        return;
    SHARE(rec, faults, 1);
    __atomic_store_n(&rec->shared->last_fault, (apr_uint64_t)now,
                     __ATOMIC_RELAXED);
    apr_cpystrn(rec->shared->last_fault_why, why ? why : "",
                sizeof(rec->shared->last_fault_why));
}

/* ---- hashing -------------------------------------------------------------- */

/* A URL's identity in the memory and the queue. */
static apr_uint64_t change_key(const sm_change *c)
{
    const char *strs[2];
    apr_uint64_t key;

    strs[0] = c->site->base;
    strs[1] = c->url;
    key = sm_hash_strs(SM_HASH_SEED, strs, 2);
    return key ? key : 1;               /* 0 marks empty slots */
}

/* What about a URL, once written, makes writing it again pointless. */
static apr_uint32_t change_fingerprint(const sm_change *c)
{
    apr_uint64_t h = sm_hash_u64(SM_HASH_SEED, (apr_uint64_t)c->op);

    h = sm_hash_u64(h, (apr_uint64_t)c->last_modified);
    /* Compared weakly, as the store does. */
    h = sm_hash_str(h, sm_etag_opaque(c->etag));
    /* A title that changed is written (NULL: not read, says nothing). */
    if (c->title)
        h = sm_hash_str(h, c->title);
    /* Alternates likewise ("" marks them read, apart from a title). */
    if (c->alternates)
        h = sm_hash_str(sm_hash_u64(h, 1), c->alternates);
    return ((apr_uint32_t)(h ^ (h >> 32)) & ~SM_MEMORY_FORGET)
           | (c->op == SM_CHANGE_FORGET ? SM_MEMORY_FORGET : 0);
}

/* ---- batches -------------------------------------------------------------- */

/* A sub-pool with an allocator of its own: used by one thread at a time,
 * never racing with other users of the parent's allocator. */
static apr_status_t private_pool(apr_pool_t **out, apr_pool_t *parent)
{
    apr_allocator_t *alloc;
    apr_status_t rv;

    if ((rv = apr_allocator_create(&alloc)) != APR_SUCCESS)
        return rv;
    /* Give memory back beyond 1 MiB, so one burst doesn't pin it. */
    apr_allocator_max_free_set(alloc, 1024 * 1024);
    if ((rv = apr_pool_create_ex(out, parent, NULL, alloc)) != APR_SUCCESS) {
        apr_allocator_destroy(alloc);
        return rv;
    }
    apr_allocator_owner_set(alloc, *out);
    return APR_SUCCESS;
}

#define BATCH_SLOTS_MIN 256

static void batch_index_make(batch *b, apr_size_t slots)
{
    b->slots = apr_pcalloc(b->pool, slots * sizeof(*b->slots));
    b->mask = slots - 1;
}

/* Where key is, or the empty slot where it goes.  Keys are never 0. */
static batch_slot_t *batch_slot(const batch *b, apr_uint64_t key)
{
    apr_size_t i = (apr_size_t)(key ^ (key >> 29)) & b->mask;

    while (b->slots[i].key && b->slots[i].key != key)
        i = (i + 1) & b->mask;
    return &b->slots[i];
}

/* 1 + position of key's item, 0 when not in the batch. */
static apr_size_t batch_find(const batch *b, apr_uint64_t key)
{
    return batch_slot(b, key)->pos;
}

static apr_status_t batch_create(batch **out, apr_pool_t *parent)
{
    apr_status_t rv;
    batch *b = apr_pcalloc(parent, sizeof(*b));

    if ((rv = private_pool(&b->pool, parent)) != APR_SUCCESS)
        return rv;
    batch_index_make(b, BATCH_SLOTS_MIN);
    b->items = apr_array_make(b->pool, 64, sizeof(pending_item));
    *out = b;
    return APR_SUCCESS;
}

static void batch_reset(batch *b)
{
    apr_pool_clear(b->pool);
    batch_index_make(b, BATCH_SLOTS_MIN);
    b->items = apr_array_make(b->pool, 64, sizeof(pending_item));
    b->first = 0;
}

/* Put a copy of c into b (replacing an earlier change of the same URL;
 * a record whose head was not read keeps the title and alternates an
 * earlier record of the batch brought: NULL says nothing of them). */
static void batch_put(batch *b, const sm_change *c, apr_uint64_t key,
                      apr_time_t now)
{
    pending_item *item;
    batch_slot_t *slot = batch_slot(b, key);
    const char *title = NULL, *alternates = NULL;

    if (slot->pos) {
        item = &APR_ARRAY_IDX(b->items, slot->pos - 1, pending_item);
        if (item->change.op == SM_CHANGE_RECORD
            && c->op == SM_CHANGE_RECORD) {
            title = item->change.title;
            alternates = item->change.alternates;
        }
    }
    else {
        item = apr_array_push(b->items);
        slot->key = key;
        slot->pos = (apr_size_t)b->items->nelts;
        if (!b->first)
            b->first = now;
        if ((apr_size_t)b->items->nelts * 2 > b->mask) {
            /* Grow: the old array stays in the pool until the reset. */
            batch_slot_t *old = b->slots;
            apr_size_t j, n = b->mask + 1;
            batch_index_make(b, n * 2);
            for (j = 0; j < n; j++)
                if (old[j].key)
                    *batch_slot(b, old[j].key) = old[j];
        }
    }
    item->key = key;
    item->change = *c;
    item->change.url = apr_pstrdup(b->pool, c->url);
    item->change.etag = c->etag ? apr_pstrdup(b->pool, c->etag) : NULL;
    item->change.title = c->title ? apr_pstrdup(b->pool, c->title) : title;
    item->change.alternates = c->alternates
                              ? apr_pstrdup(b->pool, c->alternates)
                              : alternates;
}

/* ---- writing (caller holds write_lock, not lock) ------------------------- */

static int should_log(apr_time_t *last, apr_time_t now)
{
    if (*last && now - *last < LOG_EVERY)
        return 0;
    *last = now;
    return 1;
}

/* The memory of written URLs vouches for what the store held; once the
 * store was replaced, deleted or failed, nobody knows what it holds:
 * forget, so that every URL served from now on is written again (into
 * whatever file is at the path by then). */
static void forget_written(sm_recorder *rec)
{
    apr_thread_mutex_lock(rec->lock);
    sm_memory_clear(&rec->memory);
    apr_thread_mutex_unlock(rec->lock);
}

static void drop_store(sm_recorder *rec)
{
    sm_store_close(rec->store);
    rec->store = NULL;
    apr_pool_clear(rec->store_pool);
}

static apr_status_t ensure_store(sm_recorder *rec)
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
    rv = sm_store_open(&rec->store, rec->store_pool,
                       rec->conf.db_uri ? rec->conf.db_uri : rec->conf.db_path,
                       SM_STORE_CREATE, rec->conf.busy_timeout_ms,
                       rec->conf.log, rec->reason, sizeof(rec->reason));
    /* The sites' rows and settings, so the sitemap's Last-Modified follows
     * configuration changes even before any traffic. */
    if (rv == APR_SUCCESS
        && sm_store_sync_sites(rec->store,
                               rec->site_v, sites_now(rec)) != APR_SUCCESS) {
        apr_cpystrn(rec->reason, sm_store_error(rec->store),
                    sizeof(rec->reason));
        sm_store_close(rec->store);
        rv = APR_EGENERAL;
    }
    if (rv != APR_SUCCESS) {
        apr_pool_clear(rec->store_pool);
        rec->store = NULL;
        forget_written(rec);
    }
    return rv;
}

static void run_expiry(sm_recorder *rec, apr_time_t now)
{
    int i, n;

    if (rec->last_expire && now - rec->last_expire < rec->expire_every)
        return;
    rec->last_expire = now;
    n = sites_now(rec);
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

/* Write b; returns whether it went in. */
static int write_batch(sm_recorder *rec, batch *b, const char **why,
                       sm_apply_stats *stats)
{
    sm_change *changes;
    int i, n = b->items->nelts;
    apr_status_t rv;

    memset(stats, 0, sizeof(*stats));
    if ((rv = ensure_store(rec)) != APR_SUCCESS) {
        *why = rec->reason;
        return 0;
    }
    if (n) {
        changes = apr_palloc(b->pool, sizeof(*changes) * n);
        for (i = 0; i < n; i++)
            changes[i] = APR_ARRAY_IDX(b->items, i, pending_item).change;
        if (sm_store_apply(rec->store, changes, n, stats) != APR_SUCCESS) {
            apr_cpystrn(rec->reason, sm_store_error(rec->store),
                        sizeof(rec->reason));
            *why = rec->reason;
            /* Start from a fresh connection next time. */
            drop_store(rec);
            forget_written(rec);
            return 0;
        }
    }
    run_expiry(rec, apr_time_now());
    return 1;
}

/* The store took a write or opened again.  Holds lock. */
static void store_works(sm_recorder *rec)
{
    if (rec->faulted) {
        rec->faulted = 0;
        sm_log(rec->conf.log, SM_LOG_WARN, 0,
               "store %s works again; recording resumed", rec->conf.db_path);
    }
}

/* After writing b: count, log, and put back what failed.  Holds lock. */
static void settle_batch(sm_recorder *rec, batch *b, int ok, const char *why,
                         const sm_apply_stats *stats, apr_time_t now)
{
    int i, n = b->items->nelts, kept = 0, dropped = 0;

    if (ok) {
        rec->stats.written += n - stats->refused_full;
        rec->stats.refused_full += stats->refused_full;
        SHARE(rec, written, n - stats->refused_full);
        SHARE(rec, refused_full, stats->refused_full);
        if (rec->shared)
            __atomic_store_n(&rec->shared->last_write, (apr_uint64_t)now,
                             __ATOMIC_RELAXED);
        if (n)
            rec->stats.batches++;
        store_works(rec);
        if (stats->refused_full) {
            /* Refused URLs must be offered again once there is room. */
            rec->refused_unlogged += stats->refused_full;
            for (i = 0; i < n; i++)
                sm_memory_drop(&rec->memory, APR_ARRAY_IDX(b->items, i, pending_item).key);
            if (should_log(&rec->last_full_log, now)) {
                sm_log(rec->conf.log, SM_LOG_WARN, 0,
                       "SitemapMaxURLs reached: %" APR_UINT64_T_FMT
                       " new URLs not recorded in the last minute",
                       rec->refused_unlogged);
                rec->refused_unlogged = 0;
            }
        }
        return;
    }

    rec->faulted = 1;
    for (i = 0; i < n; i++) {
        pending_item *item = &APR_ARRAY_IDX(b->items, i, pending_item);
        if (batch_find(rec->pending, item->key))
            continue;                   /* a newer change is queued */
        if (rec->pending->items->nelts < rec->conf.queue_max) {
            batch_put(rec->pending, &item->change, item->key, now);
            kept++;
        }
        else {
            sm_memory_drop(&rec->memory, item->key);
            dropped++;
        }
    }
    rec->stats.dropped += dropped;
    SHARE(rec, dropped, dropped);
    share_fault(rec, now, why);
    rec->dropped_unlogged += dropped;
    rec->faults_unlogged++;
    if (should_log(&rec->last_fault_log, now)) {
        sm_log(rec->conf.log, SM_LOG_ERR, 0,
               "store %s: %s; %d changes kept for retry, %" APR_UINT64_T_FMT
               " dropped and %" APR_UINT64_T_FMT " failed writes in the last"
               " minute (pages are served as usual)", rec->conf.db_path, why,
               kept, rec->dropped_unlogged, rec->faults_unlogged);
        rec->dropped_unlogged = 0;
        rec->faults_unlogged = 0;
    }
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
    sm_change copy = *c;
    int i;

    for (i = 0; i < sites_now(rec); i++) {
        const sm_site_conf *site = rec->site_v[i];
        if (strcmp(site->base, base) == 0) {
            copy.site = site;
            apr_thread_mutex_lock(rec->lock);
            batch_put(rec->pending, &copy, change_key(&copy), ctx->now);
            rec->stats.queued++;
            apr_thread_mutex_unlock(rec->lock);
            return;
        }
    }
    ctx->unknown++;
}

/* Queue what stopped processes kept for this store (write_lock held, not
 * lock; the store is open), as far as the queue has room. */
static void take_spills(sm_recorder *rec, apr_time_t now)
{
    replay_ctx ctx = { rec, now, 0 };
    apr_pool_t *p;
    int room, files = 0, changes = 0;

    apr_thread_mutex_lock(rec->lock);
    room = rec->conf.queue_max - rec->pending->items->nelts;
    apr_thread_mutex_unlock(rec->lock);
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

/* At stop (no writer thread, no requests): keep what could not be written
 * in a spill file for the next process, and say exactly what was lost. */
static void spill_pending(sm_recorder *rec)
{
    batch *b = rec->pending;
    int i, n = b->items->nelts;
    char err[600];

    if (rec->dropped_unlogged) {
        sm_log(rec->conf.log, SM_LOG_ERR, 0, "store %s: %" APR_UINT64_T_FMT
               " changes were lost while it failed (queue full) since the "
               "last report", rec->conf.db_path, rec->dropped_unlogged);
        rec->dropped_unlogged = 0;
    }
    if (!n)
        return;
    {
        sm_change *changes = apr_palloc(b->pool, sizeof(*changes) * n);
        for (i = 0; i < n; i++)
            changes[i] = APR_ARRAY_IDX(b->items, i, pending_item).change;
        if (sm_spill_write(b->pool, spill_path(rec), changes, n, err,
                           sizeof(err)) == APR_SUCCESS) {
            sm_log(rec->conf.log, SM_LOG_WARN, 0, "store %s: %s; stopping "
                   "with %d changes not written: kept in %s.spill-* for the "
                   "next process that opens the store", rec->conf.db_path,
                   rec->reason, n, spill_path(rec));
            return;
        }
    }
    rec->stats.dropped += n;
    sm_log(rec->conf.log, SM_LOG_ERR, 0, "store %s: %s; stopping with %d "
           "changes not written, and they cannot be kept (%s): %d changes "
           "lost", rec->conf.db_path, rec->reason, n, err, n);
}

/* While idle (write_lock held, not lock): make sure that the store at the
 * path is open, as a batch would, and take what stopped processes kept
 * for it.  A fault is logged as a failed write, at most once a minute. */
static void check_store(sm_recorder *rec, apr_time_t now)
{
    if (ensure_store(rec) == APR_SUCCESS) {
        apr_thread_mutex_lock(rec->lock);
        store_works(rec);
        apr_thread_mutex_unlock(rec->lock);
        if (now >= rec->next_spill_scan) {
            rec->next_spill_scan = now + LOG_EVERY;
            take_spills(rec, now);
        }
        return;
    }
    apr_thread_mutex_lock(rec->lock);
    rec->faulted = 1;
    rec->faults_unlogged++;
    if (should_log(&rec->last_fault_log, now)) {
        sm_log(rec->conf.log, SM_LOG_ERR, 0,
               "store %s: %s; %" APR_UINT64_T_FMT " dropped changes and %"
               APR_UINT64_T_FMT " failed attempts in the last minute (pages "
               "are served as usual)", rec->conf.db_path, rec->reason,
               rec->dropped_unlogged, rec->faults_unlogged);
        rec->dropped_unlogged = 0;
        rec->faults_unlogged = 0;
    }
    apr_thread_mutex_unlock(rec->lock);
}

/* Take the pending batch and write it.  Called with lock held; returns with
 * it held. */
static int flush_locked(sm_recorder *rec)
{
    batch *b = rec->pending;
    sm_apply_stats stats;
    const char *why = "";
    int ok;

    rec->pending = rec->spare;
    rec->spare = NULL;
    apr_thread_cond_broadcast(rec->room);
    apr_thread_mutex_unlock(rec->lock);

    ok = write_batch(rec, b, &why, &stats);

    apr_thread_mutex_lock(rec->lock);
    settle_batch(rec, b, ok, why, &stats, apr_time_now());
    batch_reset(b);
    rec->spare = b;
    apr_thread_cond_broadcast(rec->room);
    return ok;
}

static void *APR_THREAD_FUNC writer_main(apr_thread_t *thd, void *data)
{
    sm_recorder *rec = data;

#ifdef __linux__
    /* So that top -H, ps -L and the benchmarks can tell it apart. */
    prctl(PR_SET_NAME, "sitemap-writer", 0, 0, 0);
#endif
    apr_thread_mutex_lock(rec->write_lock);
    /* Open the store (and store the sites' settings) at start, not at the
     * first batch; a failure here is retried with the first batch. */
    if (ensure_store(rec) != APR_SUCCESS)
        sm_log(rec->conf.log, SM_LOG_DEBUG, 0, "store %s: %s; retrying with "
               "the first batch", rec->conf.db_path, rec->reason);
    apr_thread_mutex_lock(rec->lock);
    rec->next_check = apr_time_now() + rec->conf.flush_interval;
    while (!rec->stopping) {
        apr_time_t now = apr_time_now();
        batch *b = rec->pending;

        if (b->items->nelts == 0 || !rec->spare) {
            apr_interval_time_t sleep;
            /* Idle: look at the store every flush interval, even when no
             * new URL comes: a deleted store is created again (the
             * sitemap answers again) and a replaced one noticed (the
             * memory forgotten) without waiting for a write. */
            if (now >= rec->next_check) {
                rec->next_check = now + rec->conf.flush_interval;
                apr_thread_mutex_unlock(rec->lock);
                check_store(rec, now);
                apr_thread_mutex_lock(rec->lock);
                continue;
            }
            /* Expire old URLs when due, then sleep until work. */
            if (sites_now(rec)
                && now - rec->last_expire >= rec->expire_every) {
                apr_thread_mutex_unlock(rec->lock);
                if (ensure_store(rec) == APR_SUCCESS)
                    run_expiry(rec, now);
                else
                    rec->last_expire = now;     /* the next batch logs it */
                apr_thread_mutex_lock(rec->lock);
                continue;
            }
            sleep = rec->expire_every < LOG_EVERY ? rec->expire_every
                                                  : LOG_EVERY;
            if (rec->next_check - now < sleep)
                sleep = rec->next_check - now;
            apr_thread_cond_timedwait(rec->wake, rec->lock, sleep);
            continue;
        }
        if (b->items->nelts < rec->conf.batch_size
            && now < b->first + rec->conf.flush_interval) {
            apr_thread_cond_timedwait(rec->wake, rec->lock,
                                      b->first + rec->conf.flush_interval - now);
            continue;
        }
        flush_locked(rec);
    }
    apr_thread_mutex_unlock(rec->lock);
    apr_thread_mutex_unlock(rec->write_lock);
    apr_thread_exit(thd, APR_SUCCESS);
    return NULL;
}

/* ---- the public side ------------------------------------------------------ */

SM_HOT int sm_recorder_repeat(sm_recorder *rec, apr_uint64_t raw,
                              apr_time_t seen)
{
    return sm_memory_repeat(&rec->memory, raw, seen);
}

SM_HOT apr_uint64_t sm_recorder_raw(apr_uint64_t first, apr_uint64_t rest)
{
    return sm_memory_raw(first, rest);
}

SM_HOT void sm_recorder_prefetch(const sm_recorder *rec, apr_uint64_t first)
{
    sm_memory_prefetch(&rec->memory, first);
}

void sm_recorder_add(sm_recorder *rec, const sm_change *c, apr_uint64_t raw)
{
    apr_uint64_t key = change_key(c);
    apr_uint32_t fp = change_fingerprint(c);
    apr_uint32_t now_s = (apr_uint32_t)apr_time_sec(c->seen);

    apr_thread_mutex_lock(rec->lock);
    rec->stats.offered++;
    if (c->op == SM_CHANGE_FORGET)
        SHARE(rec, forgotten, 1);
    else
        SHARE(rec, recorded, 1);
    if (raw)
        sm_memory_alias_put(&rec->memory, raw, key, fp);
    if (sm_memory_fresh(&rec->memory, key, fp, now_s)) {
        rec->stats.skipped++;
        SHARE(rec, skipped, 1);
        if (raw)
            sm_memory_alias_vouch(&rec->memory, raw, now_s);
        apr_thread_mutex_unlock(rec->lock);
        return;
    }
    while (rec->pending->items->nelts >= rec->conf.queue_max
           && !rec->faulted && !rec->stopping) {
        rec->stats.waits++;
        if (!rec->running) {
            /* No writer thread: write here. */
            apr_thread_mutex_unlock(rec->lock);
            sm_recorder_flush(rec);
            apr_thread_mutex_lock(rec->lock);
            continue;
        }
        apr_thread_cond_signal(rec->wake);
        apr_thread_cond_timedwait(rec->room, rec->lock, apr_time_from_sec(1));
    }
    if (rec->pending->items->nelts >= rec->conf.queue_max) {
        apr_time_t now = apr_time_now();
        rec->stats.dropped++;
        SHARE(rec, dropped, 1);
        rec->dropped_unlogged++;
        if (should_log(&rec->last_fault_log, now)) {
            sm_log(rec->conf.log, SM_LOG_ERR, 0,
                   "store %s is failing and %d changes are queued: dropped %"
                   APR_UINT64_T_FMT " changes in the last minute",
                   rec->conf.db_path, rec->conf.queue_max,
                   rec->dropped_unlogged);
            rec->dropped_unlogged = 0;
        }
        apr_thread_mutex_unlock(rec->lock);
        return;
    }
    batch_put(rec->pending, c, key, c->seen);
    sm_memory_put(&rec->memory, key, fp, now_s);
    if (raw)
        sm_memory_alias_vouch(&rec->memory, raw, now_s);
    rec->stats.queued++;
    SHARE(rec, queued, 1);
    /* The writer sleeps until there is work: wake it for the first item
     * (to start the interval) and for a full batch. */
    if (rec->running && (rec->pending->items->nelts == 1
                         || rec->pending->items->nelts
                            == rec->conf.batch_size))
        apr_thread_cond_signal(rec->wake);
    apr_thread_mutex_unlock(rec->lock);
}

apr_status_t sm_recorder_flush(sm_recorder *rec)
{
    int ok = 1;

    apr_thread_mutex_lock(rec->write_lock);
    apr_thread_mutex_lock(rec->lock);
    if (rec->pending->items->nelts && rec->spare)
        ok = flush_locked(rec);
    apr_thread_mutex_unlock(rec->lock);
    apr_thread_mutex_unlock(rec->write_lock);
    return ok ? APR_SUCCESS : APR_EGENERAL;
}

void sm_recorder_stop(sm_recorder *rec)
{
    apr_status_t rv;
    int faulted;

    apr_thread_mutex_lock(rec->lock);
    rec->stopping = 1;
    apr_thread_cond_broadcast(rec->wake);
    apr_thread_cond_broadcast(rec->room);
    apr_thread_mutex_unlock(rec->lock);
    if (rec->running) {
        apr_thread_join(&rv, rec->thread);
        rec->running = 0;
    }
    /* One attempt at what is left, unless the store is failing: a stop
     * waits for it at most once (the writer's current attempt, bounded by
     * the busy timeout).  What is left then is kept for the next
     * process. */
    apr_thread_mutex_lock(rec->lock);
    faulted = rec->faulted;
    apr_thread_mutex_unlock(rec->lock);
    if (!faulted)
        sm_recorder_flush(rec);
    apr_thread_mutex_lock(rec->write_lock);
    apr_thread_mutex_lock(rec->lock);
    spill_pending(rec);
    apr_thread_mutex_unlock(rec->lock);
    sm_store_close(rec->store);
    rec->store = NULL;
    apr_thread_mutex_unlock(rec->write_lock);
}

static apr_status_t recorder_cleanup(void *data)
{
    sm_recorder_stop(data);
    return APR_SUCCESS;
}

apr_status_t sm_recorder_create(sm_recorder **out, apr_pool_t *p,
                                const sm_recorder_conf *conf)
{
    sm_recorder *rec = sm_cache_lines(p, (sizeof(*rec) + 63) / 64);
    apr_status_t rv;

    rec->conf = *conf;
    rec->conf.db_path = apr_pstrdup(p, conf->db_path);
    rec->conf.db_uri = conf->db_uri ? apr_pstrdup(p, conf->db_uri) : NULL;
    rec->conf.spill_path = conf->spill_path
                           ? apr_pstrdup(p, conf->spill_path) : NULL;
    if (rec->conf.batch_size < 1)
        rec->conf.batch_size = 1;
    if (rec->conf.queue_max < rec->conf.batch_size)
        rec->conf.queue_max = rec->conf.batch_size;
    rec->pool = p;
    rec->expire_every = EXPIRE_EVERY;
    if ((rv = apr_thread_mutex_create(&rec->lock, APR_THREAD_MUTEX_DEFAULT,
                                      p)) != APR_SUCCESS)
        return rv;
    sm_memory_init(&rec->memory, p, rec->lock, apr_time_from_sec(REFRESH_SEC));
    if ((rv = apr_thread_mutex_create(&rec->write_lock,
                                         APR_THREAD_MUTEX_DEFAULT, p))
        || (rv = apr_thread_cond_create(&rec->wake, p))
        || (rv = apr_thread_cond_create(&rec->room, p))
        || (rv = batch_create(&rec->pending, p))
        || (rv = batch_create(&rec->spare, p))
        || (rv = private_pool(&rec->store_pool, p)))
        return rv;
    /* Before the sub-pools go: the last batch is written at pool death. */
    apr_pool_pre_cleanup_register(p, rec, recorder_cleanup);
    *out = rec;
    return APR_SUCCESS;
}

/* Room for n more sites: before the writer starts only (site_v moves). */
static void sites_grow(sm_recorder *rec, int n)
{
    const sm_site_conf **v;

    if (rec->site_n + n <= rec->site_cap)
        return;
    v = apr_palloc(rec->pool, sizeof(*v) * (apr_size_t)(rec->site_n + n));
    if (rec->site_n)
        memcpy(v, rec->site_v, sizeof(*v) * (apr_size_t)rec->site_n);
    rec->site_v = v;
    rec->site_cap = rec->site_n + n;
}

void sm_recorder_reserve_sites(sm_recorder *rec, int n)
{
    if (!rec->running && n > 0)
        sites_grow(rec, rec->site_cap - rec->site_n + n);
}

int sm_recorder_add_site(sm_recorder *rec, const sm_site_conf *site)
{
    apr_thread_mutex_lock(rec->lock);
    if (rec->site_n == rec->site_cap) {
        if (rec->running) {
            apr_thread_mutex_unlock(rec->lock);
            return 0;           /* no room reserved */
        }
        sites_grow(rec, rec->site_cap + 4);
    }
    rec->site_v[rec->site_n] = site;
    __atomic_store_n(&rec->site_n, rec->site_n + 1, __ATOMIC_RELEASE);
    /* Expiry runs hourly, or four times per SitemapExpire when shorter
     * (a site added later has its vhost's SitemapExpire: no change). */
    if (!rec->running && site->expire > 0
        && site->expire / 4 < rec->expire_every)
        rec->expire_every = site->expire / 4 > apr_time_from_sec(1)
                          ? site->expire / 4 : apr_time_from_sec(1);
    /* A URL is refreshed often enough that it never expires while served. */
    if (!rec->running && site->expire > 0
        && site->expire / 4 < rec->memory.refresh)
        sm_memory_refresh_set(&rec->memory,
                              site->expire / 4 > apr_time_from_sec(1)
                              ? site->expire / 4 : apr_time_from_sec(1));
    apr_thread_mutex_unlock(rec->lock);
    return 1;
}

apr_status_t sm_recorder_start(sm_recorder *rec)
{
    apr_threadattr_t *attr;
    apr_status_t rv;

    if (rec->running)
        return APR_SUCCESS;
    if ((rv = apr_threadattr_create(&attr, rec->pool)) != APR_SUCCESS)
        return rv;
    apr_threadattr_stacksize_set(attr, 256 * 1024);
    rv = apr_thread_create(&rec->thread, attr, writer_main, rec, rec->pool);
    if (rv == APR_SUCCESS)
        rec->running = 1;
    return rv;
}

void sm_recorder_get_stats(sm_recorder *rec, sm_recorder_stats *out)
{
    apr_thread_mutex_lock(rec->lock);
    *out = rec->stats;
    apr_thread_mutex_unlock(rec->lock);
}
