/* sm_recorder.c: see sm_recorder.h. */
#include "sm_recorder.h"
#include "sm_hash.h"
#include "sm_hot.h"

#include <apr_strings.h>
#include <apr_thread_cond.h>
#include <apr_thread_mutex.h>
#include <apr_thread_proc.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* The memory of recently written URLs: 4096 sets of 4 slots (256 KiB). */
#define SEEN_SETS 4096
#define SEEN_WAYS 4

/* A URL is written again after this long even when nothing changed, so its
 * last_seen stays fresh for SitemapExpire (at most once an hour per process). */
#define REFRESH_SEC 3600
/* A forgotten URL may be recorded again by another process: forget again
 * after a minute. */
#define FORGET_REFRESH_SEC 60
/* How often problems are logged, and expiry runs. */
#define LOG_EVERY apr_time_from_sec(60)
#define EXPIRE_EVERY apr_time_from_sec(3600)

/* Both memories are sets in one 64-byte cache line (4 URLs, 3 aliases): a
 * lookup costs one line (the alias line is prefetched: see
 * sm_recorder_prefetch; otherwise they miss the cache on most requests).
 * A fingerprint's lowest bit tells a forgotten URL (FP_FORGET). */
#define FP_FORGET 1u

typedef struct {
    apr_uint64_t key;
    apr_uint32_t fingerprint;
    apr_uint32_t written;       /* seconds, truncated: only differences count */
} seen_slot;

typedef struct {
    seen_slot way[SEEN_WAYS];
} seen_set;

/* A response seen before, by the hash of its raw facts (see
 * sm_recorder_repeat): the URL and fingerprint it led to (the key's low 32
 * bits pick its seen set and tell it from the set's other URLs), and the
 * epoch in which it was last found to agree with the memory of written
 * URLs.  Three ways a line, field by field. */
#define ALIAS_WAYS 3
typedef struct {
    apr_uint64_t raw[ALIAS_WAYS];
    apr_uint32_t key_low[ALIAS_WAYS];
    apr_uint32_t fingerprint[ALIAS_WAYS];
    apr_uint32_t stamp[ALIAS_WAYS];
} alias_set;

/* Compile-time checks: a set is one cache line. */
typedef char seen_set_is_one_line[sizeof(seen_set) == 64 ? 1 : -1];
typedef char alias_set_is_one_line[sizeof(alias_set) == 64 ? 1 : -1];

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
    /* What every request reads (sm_recorder_repeat, to the lock and the
     * refresh period of its rarer paths), in one cache line: the recorder
     * is allocated on a line of its own (cache_lines). */
    alias_set *alias;           /* SEEN_SETS, 64-byte aligned */
    seen_set *seen;             /* SEEN_SETS, 64-byte aligned */
    /* Even while nobody changes the memories, odd while someone
     * (holding lock) does: sm_recorder_repeat reads them without the lock
     * and trusts what it read only if this did not move meanwhile. */
    apr_uint32_t memory_seq;
    /* Moves on whenever the memory of written URLs stops vouching for
     * something it said (a URL's fingerprint changes, a URL is evicted or
     * dropped, the memory is cleared) and every tick_sec seconds: an alias
     * stamped with the current epoch agrees with that memory, so a repeat
     * costs one cache line instead of two.  A tick is how late a refresh
     * can be: a 60th of the refresh period, 1 to 60 s. */
    apr_uint32_t epoch;
    apr_uint32_t epoch_tick;
    apr_uint32_t tick_sec;
    apr_thread_mutex_t *lock;
    apr_interval_time_t refresh;

    sm_recorder_conf conf;
    apr_pool_t *pool;
    apr_thread_cond_t *wake;    /* the writer: work to do, or stop */
    apr_thread_cond_t *room;    /* requests: the queue has room again */
    apr_thread_t *thread;
    int running, stopping, faulted;
    batch *pending, *spare;
    apr_array_header_t *sites;  /* const sm_site_conf * */
    unsigned seen_victim;
    unsigned alias_victim;
    sm_recorder_stats stats;

    /* Owned by whoever writes (the writer thread, or a flush caller that
     * holds write_lock). */
    apr_thread_mutex_t *write_lock;
    apr_pool_t *store_pool;
    sm_store *store;
    apr_time_t last_expire;
    apr_interval_time_t expire_every;   /* hourly, sooner for short expiry */
    apr_time_t last_fault_log, last_full_log;
    apr_uint64_t faults_unlogged, refused_unlogged, dropped_unlogged;
    char reason[600];           /* why the last write failed */
};

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
    return ((apr_uint32_t)(h ^ (h >> 32)) & ~FP_FORGET)
           | (c->op == SM_CHANGE_FORGET ? FP_FORGET : 0);
}

/* ---- the memory of written URLs (caller holds the lock) ------------------ */

/* The memories are read without the lock (sm_recorder_repeat), so every
 * access to a slot is atomic (relaxed), and every change is bracketed by
 * memory_changing/memory_changed: a sequence lock (H.-J. Boehm, "Can
 * seqlocks get along with programming language memory models?", 2012).
 * Without GCC's atomic builtins, sm_recorder_repeat takes the lock. */
#if defined(__GNUC__)
#define LOCK_FREE_READS 1
#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define INCREMENT(x) ((void)__atomic_add_fetch(&(x), 1, __ATOMIC_RELAXED))
#else
#define LOCK_FREE_READS 0
#define LOAD(x) (x)
#define STORE(x, v) ((x) = (v))
#define INCREMENT(x) ((void)++(x))
#endif

/* Caller holds lock. */
static void memory_changing(sm_recorder *rec)
{
#if LOCK_FREE_READS
    __atomic_store_n(&rec->memory_seq, rec->memory_seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
#else
    rec->memory_seq++;
#endif
}

static void memory_changed(sm_recorder *rec)
{
#if LOCK_FREE_READS
    __atomic_store_n(&rec->memory_seq, rec->memory_seq + 1, __ATOMIC_RELEASE);
#else
    rec->memory_seq++;
#endif
}

static seen_slot *seen_find(sm_recorder *rec, apr_uint64_t key)
{
    seen_slot *set = rec->seen[key % SEEN_SETS].way;
    int i;

    for (i = 0; i < SEEN_WAYS; i++)
        if (LOAD(set[i].key) == key)
            return &set[i];
    return NULL;
}

static void slot_set(seen_slot *slot, apr_uint64_t key, apr_uint32_t fp,
                     apr_uint32_t written)
{
    STORE(slot->key, key);
    STORE(slot->fingerprint, fp);
    STORE(slot->written, written);
}

/* Caller holds lock. */
static void seen_put(sm_recorder *rec, apr_uint64_t key, apr_uint32_t fp,
                     apr_uint32_t now)
{
    seen_slot *slot = seen_find(rec, key);
    int unsaid;                 /* something the memory said goes */

    if (!slot) {
        seen_slot *set = rec->seen[key % SEEN_SETS].way;
        int i;
        for (i = 0; i < SEEN_WAYS && set[i].key; i++)
            ;
        slot = &set[i < SEEN_WAYS ? (unsigned)i : rec->seen_victim++ % SEEN_WAYS];
        unsaid = slot->key != 0;
    }
    else
        unsaid = slot->fingerprint != fp;
    memory_changing(rec);
    slot_set(slot, key, fp, now);
    if (unsaid)
        INCREMENT(rec->epoch);
    memory_changed(rec);
}

/* Caller holds lock. */
static void seen_drop(sm_recorder *rec, apr_uint64_t key)
{
    seen_slot *slot = seen_find(rec, key);

    if (slot) {
        memory_changing(rec);
        slot_set(slot, 0, 0, 0);
        INCREMENT(rec->epoch);
        memory_changed(rec);
    }
}

/* Caller holds lock. */
static void seen_clear(sm_recorder *rec)
{
    apr_size_t i;
    int j;

    memory_changing(rec);
    for (i = 0; i < SEEN_SETS; i++)
        for (j = 0; j < SEEN_WAYS; j++)
            slot_set(&rec->seen[i].way[j], 0, 0, 0);
    INCREMENT(rec->epoch);
    memory_changed(rec);
}

static int slot_fresh(const sm_recorder *rec, const seen_slot *slot,
                      apr_uint32_t fp, apr_uint32_t now_s)
{
    apr_uint32_t refresh = (fp & FP_FORGET) ? FORGET_REFRESH_SEC
                           : (apr_uint32_t)apr_time_sec(rec->refresh);

    return LOAD(slot->fingerprint) == fp
           && (apr_uint32_t)(now_s - LOAD(slot->written)) < refresh;
}

/* Is a URL written with this fingerprint recently enough to skip? */
static int seen_fresh(sm_recorder *rec, apr_uint64_t key, apr_uint32_t fp,
                      apr_uint32_t now_s)
{
    seen_slot *slot = seen_find(rec, key);

    return slot && slot_fresh(rec, slot, fp, now_s);
}

/* The aliases: raw facts -> the URL they were found to be.  An alias is
 * trusted alone while its stamp is the current epoch; otherwise the URL
 * must be fresh in the memory above. */
static alias_set *alias_set_of(sm_recorder *rec, apr_uint64_t raw)
{
    return &rec->alias[raw % SEEN_SETS];
}

/* The way of set holding raw, or -1. */
static int alias_way(const alias_set *set, apr_uint64_t raw)
{
    int i;

    for (i = 0; i < ALIAS_WAYS; i++)
        if (LOAD(set->raw[i]) == raw)
            return i;
    return -1;
}

/* The current epoch, moved on first when a new tick has begun. */
SM_HOT static apr_uint32_t epoch_now(sm_recorder *rec, apr_uint32_t now_s)
{
    apr_uint32_t tick = now_s / rec->tick_sec, was = LOAD(rec->epoch_tick);

    /* Forward only: a long request logged after a shorter one must not
     * move the tick back (and the next request forward again). */
    if ((apr_int32_t)(tick - was) > 0) {
#if LOCK_FREE_READS
        if (__atomic_compare_exchange_n(&rec->epoch_tick, &was, tick, 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            INCREMENT(rec->epoch);
#else
        rec->epoch_tick = tick;         /* caller holds lock */
        INCREMENT(rec->epoch);
#endif
    }
    return LOAD(rec->epoch);
}

static void refresh_set(sm_recorder *rec, apr_interval_time_t refresh)
{
    apr_uint32_t sec = (apr_uint32_t)apr_time_sec(refresh);

    rec->refresh = refresh;
    rec->tick_sec = sec / 60 < 1 ? 1 : sec / 60 > 60 ? 60 : sec / 60;
}

/* Caller holds lock.  The alias is not trusted alone until alias_vouch. */
static void alias_put(sm_recorder *rec, apr_uint64_t raw, apr_uint64_t key,
                      apr_uint32_t fp)
{
    alias_set *set = alias_set_of(rec, raw);
    int w = alias_way(set, raw);

    if (w < 0) {
        for (w = 0; w < ALIAS_WAYS && set->raw[w]; w++)
            ;
        if (w == ALIAS_WAYS)
            w = (int)(rec->alias_victim++ % ALIAS_WAYS);
    }
    memory_changing(rec);
    STORE(set->raw[w], raw);
    STORE(set->key_low[w], (apr_uint32_t)key);
    STORE(set->fingerprint[w], fp);
    STORE(set->stamp[w], LOAD(rec->epoch) - 1);
    memory_changed(rec);
}

/* Is the URL way w of set leads to fresh with the alias's fingerprint in
 * the memory of written URLs? */
static int alias_fresh(sm_recorder *rec, const alias_set *set, int w,
                       apr_uint32_t now_s)
{
    /* SEEN_SETS divides 2^32: the low bits pick the same set as the key. */
    apr_uint32_t key_low = LOAD(set->key_low[w]);
    const seen_slot *seen = rec->seen[key_low % SEEN_SETS].way;
    int i;

    for (i = 0; i < SEEN_WAYS; i++) {
        apr_uint64_t key = LOAD(seen[i].key);
        if (key && (apr_uint32_t)key == key_low)
            return slot_fresh(rec, &seen[i], LOAD(set->fingerprint[w]),
                              now_s);
    }
    return 0;
}

/* Caller holds lock: stamp raw's alias with the epoch if the memory of
 * written URLs agrees with it now.  Only a stamp changes: readers that see
 * either value are right. */
static void alias_vouch(sm_recorder *rec, apr_uint64_t raw,
                        apr_uint32_t now_s)
{
    alias_set *set = alias_set_of(rec, raw);
    apr_uint32_t epoch = epoch_now(rec, now_s);
    int w = alias_way(set, raw);

    /* Release: a reader whose (relaxed) load sees this stamp then sees,
     * after its acquire fence, the sequence moves of whoever last changed
     * the way (they happened before our lock): it cannot pair the stamp
     * with the way's former content. */
    if (w >= 0 && alias_fresh(rec, set, w, now_s)) {
#if LOCK_FREE_READS
        __atomic_store_n(&set->stamp[w], epoch, __ATOMIC_RELEASE);
#else
        set->stamp[w] = epoch;
#endif
    }
}

/* Zeroed memory for n sets of 64 bytes, on a cache-line boundary. */
static void *cache_lines(apr_pool_t *p, apr_size_t n)
{
    char *m = apr_pcalloc(p, n * 64 + 63);

    return (void *)(((apr_uintptr_t)m + 63) & ~(apr_uintptr_t)63);
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

/* Put a copy of c into b (replacing an earlier change of the same URL). */
static void batch_put(batch *b, const sm_change *c, apr_uint64_t key,
                      apr_time_t now)
{
    pending_item *item;
    batch_slot_t *slot = batch_slot(b, key);

    if (slot->pos) {
        item = &APR_ARRAY_IDX(b->items, slot->pos - 1, pending_item);
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
}

/* ---- writing (caller holds write_lock, not lock) ------------------------- */

static int should_log(apr_time_t *last, apr_time_t now)
{
    if (*last && now - *last < LOG_EVERY)
        return 0;
    *last = now;
    return 1;
}

static apr_status_t ensure_store(sm_recorder *rec)
{
    apr_status_t rv;

    if (rec->store && !sm_store_is_current(rec->store)) {
        sm_log(rec->conf.log, SM_LOG_WARN, 0,
               "store %s was removed or replaced; opening it again",
               rec->conf.db_path);
        sm_store_close(rec->store);
        rec->store = NULL;
        apr_pool_clear(rec->store_pool);
        /* What we wrote is gone with the old file: write it again when
         * it is next served. */
        apr_thread_mutex_lock(rec->lock);
        seen_clear(rec);
        apr_thread_mutex_unlock(rec->lock);
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
                               (const sm_site_conf *const *)rec->sites->elts,
                               rec->sites->nelts) != APR_SUCCESS) {
        apr_cpystrn(rec->reason, sm_store_error(rec->store),
                    sizeof(rec->reason));
        sm_store_close(rec->store);
        rv = APR_EGENERAL;
    }
    if (rv != APR_SUCCESS) {
        apr_pool_clear(rec->store_pool);
        rec->store = NULL;
    }
    return rv;
}

static void run_expiry(sm_recorder *rec, apr_time_t now)
{
    int i;

    if (rec->last_expire && now - rec->last_expire < rec->expire_every)
        return;
    rec->last_expire = now;
    for (i = 0; i < rec->sites->nelts; i++) {
        const sm_site_conf *site = APR_ARRAY_IDX(rec->sites, i,
                                                 const sm_site_conf *);
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
            sm_store_close(rec->store);
            rec->store = NULL;
            apr_pool_clear(rec->store_pool);
            return 0;
        }
    }
    run_expiry(rec, apr_time_now());
    return 1;
}

/* After writing b: count, log, and put back what failed.  Holds lock. */
static void settle_batch(sm_recorder *rec, batch *b, int ok, const char *why,
                         const sm_apply_stats *stats, apr_time_t now)
{
    int i, n = b->items->nelts, kept = 0, dropped = 0;

    if (ok) {
        rec->stats.written += n - stats->refused_full;
        rec->stats.refused_full += stats->refused_full;
        if (n)
            rec->stats.batches++;
        if (rec->faulted) {
            rec->faulted = 0;
            sm_log(rec->conf.log, SM_LOG_WARN, 0,
                   "store %s works again; recording resumed",
                   rec->conf.db_path);
        }
        if (stats->refused_full) {
            /* Refused URLs must be offered again once there is room. */
            rec->refused_unlogged += stats->refused_full;
            for (i = 0; i < n; i++)
                seen_drop(rec, APR_ARRAY_IDX(b->items, i, pending_item).key);
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
            seen_drop(rec, item->key);
            dropped++;
        }
    }
    rec->stats.dropped += dropped;
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
    while (!rec->stopping) {
        apr_time_t now = apr_time_now();
        batch *b = rec->pending;

        if (b->items->nelts == 0 || !rec->spare) {
            /* Idle: expire old URLs when due, then sleep until work. */
            if (rec->sites->nelts
                && now - rec->last_expire >= rec->expire_every) {
                apr_thread_mutex_unlock(rec->lock);
                if (ensure_store(rec) == APR_SUCCESS)
                    run_expiry(rec, now);
                else
                    rec->last_expire = now;     /* the next batch logs it */
                apr_thread_mutex_lock(rec->lock);
                continue;
            }
            apr_thread_cond_timedwait(rec->wake, rec->lock,
                                      rec->expire_every < LOG_EVERY
                                      ? rec->expire_every : LOG_EVERY);
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
    apr_uint32_t now_s = (apr_uint32_t)apr_time_sec(seen);
    alias_set *set;
    apr_uint32_t epoch;
    int w, repeat, checked = 0;
#if LOCK_FREE_READS
    apr_uint32_t before, after;
#endif

    if (!raw)
        return 0;
    set = alias_set_of(rec, raw);
#if LOCK_FREE_READS
    /* Every request asks this, so no lock: on a multi-core server one
     * mutex taken by every request moves its cache line between CPUs
     * (on the 1-CPU benchmark the two measured the same).  A change
     * meanwhile makes the answer "ask sm_recorder_add", never a wrong
     * "repeat". */
    before = __atomic_load_n(&rec->memory_seq, __ATOMIC_ACQUIRE);
    if (before & 1)
        return 0;
    epoch = epoch_now(rec, now_s);
    w = alias_way(set, raw);
    if (w < 0)
        repeat = 0;
    else if (LOAD(set->stamp[w]) == epoch)
        repeat = 1;
    else
        repeat = checked = alias_fresh(rec, set, w, now_s);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    after = __atomic_load_n(&rec->memory_seq, __ATOMIC_RELAXED);
    if (before != after)
        return 0;
    /* Checked the long way: stamp it, if nobody holds the lock, so that
     * the next repeats of this tick take the short way. */
    if (checked && apr_thread_mutex_trylock(rec->lock) == APR_SUCCESS) {
        alias_vouch(rec, raw, now_s);
        apr_thread_mutex_unlock(rec->lock);
    }
    return repeat;
#else
    apr_thread_mutex_lock(rec->lock);
    epoch = epoch_now(rec, now_s);
    w = alias_way(set, raw);
    repeat = w >= 0 && (set->stamp[w] == epoch
                        || (checked = alias_fresh(rec, set, w, now_s)));
    if (checked)
        alias_vouch(rec, raw, now_s);
    apr_thread_mutex_unlock(rec->lock);
    return repeat;
#endif
}

/* The set is raw % SEEN_SETS: raw takes those bits from first. */
SM_HOT apr_uint64_t sm_recorder_raw(apr_uint64_t first, apr_uint64_t rest)
{
    apr_uint64_t low = SEEN_SETS - 1;
    apr_uint64_t raw = (rest & ~low) | (first & low);

    return raw ? raw : SEEN_SETS;       /* 0 is "no raw facts" */
}

SM_HOT void sm_recorder_prefetch(const sm_recorder *rec, apr_uint64_t first)
{
#if defined(__GNUC__)
    __builtin_prefetch(&rec->alias[first % SEEN_SETS]);
#else
    (void)rec;
    (void)first;
#endif
}

void sm_recorder_add(sm_recorder *rec, const sm_change *c, apr_uint64_t raw)
{
    apr_uint64_t key = change_key(c);
    apr_uint32_t fp = change_fingerprint(c);
    apr_uint32_t now_s = (apr_uint32_t)apr_time_sec(c->seen);

    apr_thread_mutex_lock(rec->lock);
    rec->stats.offered++;
    if (raw)
        alias_put(rec, raw, key, fp);
    if (seen_fresh(rec, key, fp, now_s)) {
        rec->stats.skipped++;
        if (raw)
            alias_vouch(rec, raw, now_s);
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
    seen_put(rec, key, fp, now_s);
    if (raw)
        alias_vouch(rec, raw, now_s);
    rec->stats.queued++;
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

    apr_thread_mutex_lock(rec->lock);
    rec->stopping = 1;
    apr_thread_cond_broadcast(rec->wake);
    apr_thread_cond_broadcast(rec->room);
    apr_thread_mutex_unlock(rec->lock);
    if (rec->running) {
        apr_thread_join(&rv, rec->thread);
        rec->running = 0;
    }
    /* One attempt at what is left; a faulty store gets it logged. */
    sm_recorder_flush(rec);
    apr_thread_mutex_lock(rec->write_lock);
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
    sm_recorder *rec = cache_lines(p, (sizeof(*rec) + 63) / 64);
    apr_status_t rv;

    rec->conf = *conf;
    rec->conf.db_path = apr_pstrdup(p, conf->db_path);
    rec->conf.db_uri = conf->db_uri ? apr_pstrdup(p, conf->db_uri) : NULL;
    if (rec->conf.batch_size < 1)
        rec->conf.batch_size = 1;
    if (rec->conf.queue_max < rec->conf.batch_size)
        rec->conf.queue_max = rec->conf.batch_size;
    rec->pool = p;
    refresh_set(rec, apr_time_from_sec(REFRESH_SEC));
    rec->expire_every = EXPIRE_EVERY;
    rec->sites = apr_array_make(p, 4, sizeof(const sm_site_conf *));
    rec->seen = cache_lines(p, SEEN_SETS);
    rec->alias = cache_lines(p, SEEN_SETS);
    if ((rv = apr_thread_mutex_create(&rec->lock, APR_THREAD_MUTEX_DEFAULT, p))
        || (rv = apr_thread_mutex_create(&rec->write_lock,
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

void sm_recorder_add_site(sm_recorder *rec, const sm_site_conf *site)
{
    APR_ARRAY_PUSH(rec->sites, const sm_site_conf *) = site;
    /* Expiry runs hourly, or four times per SitemapExpire when shorter. */
    if (site->expire > 0 && site->expire / 4 < rec->expire_every)
        rec->expire_every = site->expire / 4 > apr_time_from_sec(1)
                          ? site->expire / 4 : apr_time_from_sec(1);
    /* A URL is refreshed often enough that it never expires while served. */
    if (site->expire > 0 && site->expire / 4 < rec->refresh)
        refresh_set(rec, site->expire / 4 > apr_time_from_sec(1)
                         ? site->expire / 4 : apr_time_from_sec(1));
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
