/* SPDX-License-Identifier: Apache-2.0 */
/* sm_recorder.c: see sm_recorder.h.  The request side: the queue, the
 * memory of written URLs, the sites; sm_recorder_write.c writes. */
#include "record/sm_recorder_int.h"
#include "util/sm_hash.h"
#include "util/sm_hot.h"

#include <apr_strings.h>
#include <stddef.h>
#include <string.h>

/* Compile-time check: the memory and the lock share the first line. */
typedef char hot_fields_are_one_line[offsetof(struct sm_writer, lock)
                                     + sizeof(apr_thread_mutex_t *) <= 64
                                     ? 1 : -1];

int sm_rec_sites_now(const sm_recorder *rec)
{
    return __atomic_load_n(&rec->site_n, __ATOMIC_ACQUIRE);
}

int sm_rec_should_log(apr_time_t *last, apr_time_t now)
{
    if (*last && now - *last < SM_REC_LOG_EVERY)
        return 0;
    *last = now;
    return 1;
}

/* ---- shared counters ------------------------------------------------------ */

void sm_recorder_share(sm_recorder *rec, sm_recorder_shared *shared)
{
    apr_thread_mutex_lock(rec->w->lock);
    rec->shared = shared;
    if (shared && shared->forget)
        __atomic_store_n(&rec->forget_seen,
                         __atomic_load_n(&shared->forget->seq,
                                         __ATOMIC_ACQUIRE), __ATOMIC_RELAXED);
    rec->forget_stuck = 0;
    __atomic_store_n(&rec->forget_from, shared ? shared->forget : NULL,
                     __ATOMIC_RELEASE);
    apr_thread_mutex_unlock(rec->w->lock);
}

/* ---- hashing -------------------------------------------------------------- */

/* A URL's identity in its store's part of the queue. */
apr_uint64_t sm_rec_change_key(const sm_recorder *rec, const sm_change *c)
{
    const char *strs[2];
    apr_uint64_t key;

    strs[0] = c->site->base;
    strs[1] = c->url;
    key = sm_hash_strs(rec->id_seed, strs, 2);
    return key ? key : 1;               /* 0 marks empty slots */
}

static apr_uint64_t mix_now(const sm_recorder *rec)
{
    return __atomic_load_n(&rec->mix, __ATOMIC_RELAXED);
}

/* ... and in the memory, which all stores of the writer share. */
apr_uint64_t sm_rec_memory_key(const sm_recorder *rec, apr_uint64_t key)
{
    apr_uint64_t k = key ^ mix_now(rec);

    return k ? k : 1;
}

/* The raw facts' hash as this store's memory knows it: the low bits,
 * which pick the memory line (sm_recorder_prefetch), are left alone. */
static SM_HOT apr_uint64_t store_raw(const sm_recorder *rec, apr_uint64_t raw)
{
    apr_uint64_t r;

    if (!raw)
        return 0;
    r = raw ^ (mix_now(rec) & ~(apr_uint64_t)(SEEN_SETS - 1));
    return r ? r : SEEN_SETS;
}

void sm_rec_forget_locked(sm_recorder *rec)
{
    rec->generation++;
    __atomic_store_n(&rec->mix, sm_hash_u64(rec->id_seed, rec->generation),
                     __ATOMIC_RELAXED);
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
    /* The head's images likewise (SitemapImages). */
    if (c->images)
        h = sm_hash_str(sm_hash_u64(h, 3), c->images);
    /* A description or publication time likewise (NULL: not read). */
    if (c->description)
        h = sm_hash_u64(sm_hash_str(sm_hash_u64(h, 4), c->description),
                        (apr_uint64_t)c->published);
    /* A forget for another reason is written: its verdict changed. */
    if (c->why)
        h = sm_hash_str(sm_hash_str(sm_hash_u64(h, 2), c->why), c->detail);
    return ((apr_uint32_t)(h ^ (h >> 32)) & ~SM_MEMORY_FORGET)
           | (c->op == SM_CHANGE_FORGET ? SM_MEMORY_FORGET : 0);
}

/* ---- batches -------------------------------------------------------------- */

#define BATCH_SLOTS_MIN 256

static void batch_index_make(sm_rec_batch *b, apr_size_t slots)
{
    b->slots = apr_pcalloc(b->pool, slots * sizeof(*b->slots));
    b->mask = slots - 1;
}

/* Where key is, or the empty slot where it goes.  Keys are never 0. */
static sm_rec_slot *batch_slot(const sm_rec_batch *b, apr_uint64_t key)
{
    apr_size_t i = (apr_size_t)(key ^ (key >> 29)) & b->mask;

    while (b->slots[i].key && b->slots[i].key != key)
        i = (i + 1) & b->mask;
    return &b->slots[i];
}

/* 1 + position of key's item, 0 when not in the batch. */
apr_size_t sm_rec_batch_find(const sm_rec_batch *b, apr_uint64_t key)
{
    return batch_slot(b, key)->pos;
}

static apr_status_t batch_create(sm_rec_batch **out, apr_pool_t *parent)
{
    apr_status_t rv;
    sm_rec_batch *b = apr_pcalloc(parent, sizeof(*b));

    if ((rv = sm_private_pool(&b->pool, parent)) != APR_SUCCESS)
        return rv;
    batch_index_make(b, BATCH_SLOTS_MIN);
    b->items = apr_array_make(b->pool, 64, sizeof(sm_rec_item));
    *out = b;
    return APR_SUCCESS;
}

void sm_rec_batch_reset(sm_rec_batch *b)
{
    apr_pool_clear(b->pool);
    batch_index_make(b, BATCH_SLOTS_MIN);
    b->items = apr_array_make(b->pool, 64, sizeof(sm_rec_item));
    b->first = 0;
    b->kept = 0;
}

/* A new item at the end of b's items, left as it was: sm_rec_batch_put
 * writes every field.  apr_array_push zeroes each item it hands out and
 * the new half of the array when it grows, which the caller overwrites
 * (270 instructions a new URL, bench/RESULTS.md); the array doubles here
 * as there, the old one left in the pool until the reset. */
static sm_rec_item *batch_push(sm_rec_batch *b)
{
    apr_array_header_t *a = b->items;

    if (a->nelts == a->nalloc) {
        int n = a->nalloc ? a->nalloc * 2 : 64;
        char *elts = apr_palloc(b->pool, (apr_size_t)n * sizeof(sm_rec_item));

        memcpy(elts, a->elts, (apr_size_t)a->nelts * sizeof(sm_rec_item));
        a->elts = elts;
        a->nalloc = n;
    }
    return &((sm_rec_item *)(void *)a->elts)[a->nelts++];
}

/* The key of an item is its store's (sm_rec_change_key seeds it with the
 * store's identity), so one URL of two stores is two items.  A record
 * whose head was not read keeps the title and alternates an earlier
 * record of the batch brought (NULL says nothing of them). */
void sm_rec_batch_put(sm_rec_batch *b, sm_recorder *rec, const sm_change *c,
                      apr_uint64_t key, apr_time_t now)
{
    sm_rec_item *item;
    sm_rec_slot *slot = batch_slot(b, key);
    const char *title = NULL, *alternates = NULL, *images = NULL;
    const char *description = NULL;
    apr_time_t published = 0;

    if (slot->pos) {
        item = &APR_ARRAY_IDX(b->items, slot->pos - 1, sm_rec_item);
        if (item->change.op == SM_CHANGE_RECORD
            && c->op == SM_CHANGE_RECORD) {
            title = item->change.title;
            alternates = item->change.alternates;
            images = item->change.images;
            description = item->change.description;
            published = item->change.published;
        }
    }
    else {
        item = batch_push(b);
        slot->key = key;
        slot->pos = (apr_size_t)b->items->nelts;
        if (!b->first)
            b->first = now;
        if ((apr_size_t)b->items->nelts * 2 > b->mask) {
            /* Grow: the old array stays in the pool until the reset. */
            sm_rec_slot *old = b->slots;
            apr_size_t j, n = b->mask + 1;
            batch_index_make(b, n * 2);
            for (j = 0; j < n; j++)
                if (old[j].key)
                    *batch_slot(b, old[j].key) = old[j];
        }
    }
    item->key = key;
    item->rec = rec;
    item->change = *c;
    item->change.url = apr_pstrdup(b->pool, c->url);
    item->change.etag = c->etag ? apr_pstrdup(b->pool, c->etag) : NULL;
    item->change.same_as = c->same_as ? apr_pstrdup(b->pool, c->same_as)
                                      : NULL;
    item->change.title = c->title ? apr_pstrdup(b->pool, c->title) : title;
    item->change.alternates = c->alternates
                              ? apr_pstrdup(b->pool, c->alternates)
                              : alternates;
    if (c->description)
        item->change.description = apr_pstrdup(b->pool, c->description);
    else {
        item->change.description = description;
        item->change.published = published;
    }
    item->change.why = c->why ? apr_pstrdup(b->pool, c->why) : NULL;
    item->change.detail = c->detail ? apr_pstrdup(b->pool, c->detail)
                                    : NULL;
    item->change.crawler = c->crawler ? apr_pstrdup(b->pool, c->crawler)
                                      : NULL;
    item->change.images = c->images ? apr_pstrdup(b->pool, c->images)
                                    : images;
    item->change.image = c->image ? apr_pstrdup(b->pool, c->image) : NULL;
}

/* (sm_recorder_int.h) */
sm_recorder **sm_rec_split_batch(sm_rec_batch *b, int *touched)
{
    int i, k = 0, n = b->items->nelts;
    sm_recorder **recs = apr_palloc(b->pool, sizeof(*recs) * (apr_size_t)n);

    for (i = 0; i < n; i++) {
        sm_recorder *rec = APR_ARRAY_IDX(b->items, i, sm_rec_item).rec;
        if (!rec->out_n++)
            recs[k++] = rec;
    }
    for (i = 0; i < k; i++) {
        recs[i]->out = apr_palloc(b->pool, sizeof(*recs[i]->out)
                                           * (apr_size_t)recs[i]->out_n);
        recs[i]->out_n = 0;
    }
    for (i = 0; i < n; i++) {
        sm_rec_item *item = &APR_ARRAY_IDX(b->items, i, sm_rec_item);
        item->rec->out[item->rec->out_n++] = item;
    }
    *touched = k;
    return recs;
}

/* ---- the public side ------------------------------------------------------ */

/* URLs another process removed from the store: dropped first.  Out of
 * line, so that the steady path saves no registers for it. */
static SM_NOINLINE int repeat_after_forgets(sm_recorder *rec,
                                            apr_uint64_t raw, apr_time_t seen)
{
    sm_rec_forget_follow(rec);
    return sm_memory_repeat(&rec->w->memory, store_raw(rec, raw), seen);
}

SM_HOT int sm_recorder_repeat(sm_recorder *rec, apr_uint64_t raw,
                              apr_time_t seen)
{
    if (__builtin_expect(sm_rec_forget_due(rec), 0))
        return repeat_after_forgets(rec, raw, seen);
    return sm_memory_repeat(&rec->w->memory, store_raw(rec, raw), seen);
}

void sm_recorder_repeat_alias(sm_recorder *rec, apr_uint64_t known,
                              apr_uint64_t raw, apr_time_t seen)
{
    sm_writer *w = rec->w;

    if (!known || !raw || known == raw)
        return;
    apr_thread_mutex_lock(w->lock);
    sm_memory_alias_copy(&w->memory, store_raw(rec, known),
                         store_raw(rec, raw), (apr_uint32_t)apr_time_sec(seen));
    apr_thread_mutex_unlock(w->lock);
}

SM_HOT apr_uint64_t sm_recorder_raw(apr_uint64_t first, apr_uint64_t rest)
{
    return sm_memory_raw(first, rest);
}

SM_HOT void sm_recorder_prefetch(const sm_recorder *rec, apr_uint64_t first)
{
    sm_memory_prefetch(&rec->w->memory, first);
}

/* A change of a store that is failing, with no room: counted, logged
 * (at once, or within a minute: sm_rec_count_lost). */
static void drop_change(sm_recorder *rec)
{
    sm_rec_count_lost(rec, 1, apr_time_now());
}

/* The writer thread is behind but working (w->lock held): catch_up
 * changes queued that are new work (a failing store's changes kept for
 * retry are not), and it committed within SM_REC_PROGRESS_RECENT and is
 * not walking its stores (expiry, idle closes).  A writer stuck on a lock
 * or a slow database is not: the queue takes up to queue_max meanwhile. */
static int writer_behind(const sm_writer *w)
{
    return w->running && !w->in_upkeep
           && w->pending->items->nelts - w->pending->kept >= w->catch_up
           && apr_time_now() - w->progress < SM_REC_PROGRESS_RECENT;
}

void sm_recorder_add(sm_recorder *rec, const sm_change *c, apr_uint64_t raw)
{
    sm_writer *w = rec->w;
    apr_uint64_t key = sm_rec_change_key(rec, c), mkey;
    apr_uint32_t fp = change_fingerprint(c);
    apr_uint32_t now_s = (apr_uint32_t)apr_time_sec(c->seen);

    apr_thread_mutex_lock(w->lock);
    if (sm_rec_forget_due(rec))
        sm_rec_forget_follow_locked(rec, apr_time_now());
    mkey = sm_rec_memory_key(rec, key);
    raw = store_raw(rec, raw);
    rec->stats.offered++;
    if (c->op == SM_CHANGE_FORGET)
        SM_REC_SHARE(rec, forgotten, 1);
    else
        SM_REC_SHARE(rec, recorded, 1);
    if (raw)
        sm_memory_alias_put(&w->memory, raw, mkey, fp);
    if (sm_memory_fresh(&w->memory, mkey, fp, now_s)) {
        rec->stats.skipped++;
        SM_REC_SHARE(rec, skipped, 1);
        if (raw)
            sm_memory_alias_vouch(&w->memory, raw, now_s);
        apr_thread_mutex_unlock(w->lock);
        return;
    }
    /* A working store's change waits for room in a full queue; and for a
     * writer behind but committing (writer_behind), so that a crawl of
     * new URLs faster than the store takes them keeps the store about a
     * batch behind the traffic instead of a full queue (seconds, at
     * thousands a second). */
    while (!rec->faulted && !w->stopping
           && (w->pending->items->nelts >= w->queue_max || writer_behind(w))) {
        rec->stats.waits++;
        if (!w->running) {
            /* No writer thread (so the queue is full): write here. */
            apr_thread_mutex_unlock(w->lock);
            sm_recorder_flush(rec);
            apr_thread_mutex_lock(w->lock);
            continue;
        }
        apr_thread_cond_signal(w->wake);
        apr_thread_cond_timedwait(w->room, w->lock, apr_time_from_msec(100));
    }
    if (w->pending->items->nelts >= w->queue_max) {
        drop_change(rec);
        apr_thread_mutex_unlock(w->lock);
        return;
    }
    sm_rec_batch_put(w->pending, rec, c, key, c->seen);
    sm_memory_put(&w->memory, mkey, fp, now_s);
    if (raw)
        sm_memory_alias_vouch(&w->memory, raw, now_s);
    rec->stats.queued++;
    SM_REC_SHARE(rec, queued, 1);
    /* The writer sleeps until there is work: wake it for the first item
     * (to start the interval) and for a full batch. */
    if (w->running && (w->pending->items->nelts == 1
                       || w->pending->items->nelts == w->batch_size))
        apr_thread_cond_signal(w->wake);
    apr_thread_mutex_unlock(w->lock);
}

/* Is this note one to drop: handed over within the hour (its slot holds
 * its hash), or over the second's rate?  Lock-free: a race costs at most
 * a note twice, or one dropped. */
static int note_skip(sm_writer *w, apr_uint64_t h, apr_uint64_t now_s)
{
    apr_uint64_t *slot = &w->note_seen[h & (SM_REC_NOTE_SLOTS - 1)];

    if (__atomic_load_n(slot, __ATOMIC_RELAXED) == h)
        return 1;
    if (__atomic_load_n(&w->note_second, __ATOMIC_RELAXED) != now_s) {
        __atomic_store_n(&w->note_second, now_s, __ATOMIC_RELAXED);
        __atomic_store_n(&w->note_count, 0, __ATOMIC_RELAXED);
    }
    if (__atomic_add_fetch(&w->note_count, 1, __ATOMIC_RELAXED)
        > SM_REC_NOTES_PER_SEC)
        return 1;
    __atomic_store_n(slot, h, __ATOMIC_RELAXED);
    return 0;
}

/* A note's key in the batch is apart from its URL's: a note never takes
 * the place of a record or a forget of the URL queued with it. */
#define NOTE_KEY_MIX APR_UINT64_C(0x9e3779b97f4a7c15)

int sm_recorder_note_skip(sm_recorder *rec, apr_uint64_t facts,
                          apr_time_t seen)
{
    apr_uint64_t now_s = (apr_uint64_t)apr_time_sec(seen);
    apr_uint64_t h = sm_hash_u64(sm_hash_u64(rec->id_seed, facts),
                                 now_s / 3600);

    if (note_skip(rec->w, h ? h : 1, now_s)) {
        __atomic_add_fetch(&rec->stats.notes_skipped, 1, __ATOMIC_RELAXED);
        return 1;
    }
    return 0;
}

void sm_recorder_note(sm_recorder *rec, const sm_change *c)
{
    sm_writer *w = rec->w;
    apr_uint64_t key = sm_rec_change_key(rec, c) ^ NOTE_KEY_MIX;

    apr_thread_mutex_lock(w->lock);
    if (w->pending->items->nelts >= w->queue_max) {
        __atomic_add_fetch(&rec->stats.notes_skipped, 1, __ATOMIC_RELAXED);
        apr_thread_mutex_unlock(w->lock);
        return;
    }
    sm_rec_batch_put(w->pending, rec, c, key ? key : 1, c->seen);
    rec->stats.noted++;
    if (w->running && w->pending->items->nelts == 1)
        apr_thread_cond_signal(w->wake);
    apr_thread_mutex_unlock(w->lock);
}

/* A crawler's fetch's key: apart from its URL's own change and note, one
 * per crawler. */
#define CRAWL_KEY_MIX APR_UINT64_C(0xc2b2ae3d27d4eb4f)

int sm_recorder_crawl(sm_recorder *rec, const sm_change *c)
{
    sm_writer *w = rec->w;
    apr_uint64_t key = sm_hash_str(sm_rec_change_key(rec, c) ^ CRAWL_KEY_MIX,
                                   c->crawler ? c->crawler : "");

    apr_thread_mutex_lock(w->lock);
    if (w->pending->items->nelts >= w->queue_max) {
        apr_thread_mutex_unlock(w->lock);
        return 0;
    }
    sm_rec_batch_put(w->pending, rec, c, key ? key : 1, c->seen);
    if (w->running && w->pending->items->nelts == 1)
        apr_thread_cond_signal(w->wake);
    apr_thread_mutex_unlock(w->lock);
    return 1;
}

/* An image's change (SM_CHANGE_IMAGE of a page, SM_CHANGE_IMAGE_GONE):
 * keyed apart from its page's own change, by the image (and the page), so
 * that it never takes the place of the page's record in a batch, and
 * remembered as a change is: the same again is dropped by the memory (and
 * its raw facts by sm_recorder_repeat) before it reaches the queue. */
#define IMAGE_KEY_MIX APR_UINT64_C(0x165667b19e3779f9)

void sm_recorder_image(sm_recorder *rec, const sm_change *c,
                       apr_uint64_t raw)
{
    sm_writer *w = rec->w;
    const char *strs[3];
    apr_uint64_t key, mkey;
    apr_uint32_t fp = (apr_uint32_t)c->op,
                 now_s = (apr_uint32_t)apr_time_sec(c->seen);

    strs[0] = c->site->base;
    strs[1] = c->op == SM_CHANGE_IMAGE ? c->url : "";
    strs[2] = c->image;
    key = sm_hash_strs(rec->id_seed ^ IMAGE_KEY_MIX, strs, 3);
    key = key ? key : 1;
    apr_thread_mutex_lock(w->lock);
    mkey = sm_rec_memory_key(rec, key);
    raw = store_raw(rec, raw);
    if (raw)
        sm_memory_alias_put(&w->memory, raw, mkey, fp);
    if (sm_memory_fresh(&w->memory, mkey, fp, now_s)
        || w->pending->items->nelts >= w->queue_max) {
        if (raw)
            sm_memory_alias_vouch(&w->memory, raw, now_s);
        apr_thread_mutex_unlock(w->lock);
        return;
    }
    sm_rec_batch_put(w->pending, rec, c, key, c->seen);
    sm_memory_put(&w->memory, mkey, fp, now_s);
    if (raw)
        sm_memory_alias_vouch(&w->memory, raw, now_s);
    if (w->running && (w->pending->items->nelts == 1
                       || w->pending->items->nelts == w->batch_size))
        apr_thread_cond_signal(w->wake);
    apr_thread_mutex_unlock(w->lock);
}

apr_status_t sm_recorder_flush(sm_recorder *rec)
{
    sm_writer *w = rec->w;
    int ok = 1;

    apr_thread_mutex_lock(w->write_lock);
    apr_thread_mutex_lock(w->lock);
    if (w->pending->items->nelts && w->spare)
        ok = sm_rec_flush_locked(w, SM_REC_FLUSH_CALLER);
    apr_thread_mutex_unlock(w->lock);
    apr_thread_mutex_unlock(w->write_lock);
    return ok ? APR_SUCCESS : APR_EGENERAL;
}

static void writer_stop(sm_writer *w)
{
    apr_status_t rv;
    int i, faulted = 0;

    /* A wait on a hung database ends within the busy timeout from now,
     * also in the other threads that stop after this one. */
    sm_store_stop_all();
    apr_thread_mutex_lock(w->lock);
    __atomic_store_n(&w->stopping, 1, __ATOMIC_RELAXED);
    apr_thread_cond_broadcast(w->wake);
    apr_thread_cond_broadcast(w->room);
    apr_thread_mutex_unlock(w->lock);
    if (w->running) {
        apr_thread_join(&rv, w->thread);
        w->running = 0;
    }
    /* One attempt at what is left, except for failing stores: a stop
     * waits for one at most once (the thread's current attempt, bounded by
     * the busy timeout).  What is left then is kept for the next
     * process. */
    apr_thread_mutex_lock(w->write_lock);
    apr_thread_mutex_lock(w->lock);
    for (i = 0; i < w->rec_n; i++)
        faulted += w->rec_v[i]->faulted;
    if (w->pending->items->nelts && w->spare && faulted < w->rec_n)
        sm_rec_flush_locked(w, SM_REC_FLUSH_FINAL);
    sm_rec_spill_and_close(w);
    apr_thread_mutex_unlock(w->lock);
    apr_thread_mutex_unlock(w->write_lock);
}

void sm_recorder_stop(sm_recorder *rec)
{
    writer_stop(rec->w);
}

static apr_status_t writer_cleanup(void *data)
{
    writer_stop(data);
    return APR_SUCCESS;
}

apr_status_t sm_writer_create(sm_writer **out, apr_pool_t *p, int batch_size,
                              int queue_max)
{
    sm_writer *w = sm_cache_lines(p, (sizeof(*w) + 63) / 64);
    apr_status_t rv;

    w->pool = p;
    w->batch_size = batch_size < 1 ? 1 : batch_size;
    w->queue_max = queue_max < w->batch_size ? w->batch_size : queue_max;
    w->catch_up = 2 * w->batch_size < w->queue_max ? 2 * w->batch_size
                                                   : w->queue_max;
    if ((rv = apr_thread_mutex_create(&w->lock, APR_THREAD_MUTEX_DEFAULT,
                                      p)) != APR_SUCCESS)
        return rv;
    sm_memory_init(&w->memory, p, w->lock,
                   apr_time_from_sec(SM_REC_REFRESH_SEC));
    if ((rv = sm_private_pool(&w->thread_pool, p))
        || (rv = apr_thread_mutex_create(&w->write_lock,
                                         APR_THREAD_MUTEX_DEFAULT, p))
        || (rv = apr_thread_cond_create(&w->wake, p))
        || (rv = apr_thread_cond_create(&w->room, p))
        || (rv = batch_create(&w->pending, p))
        || (rv = batch_create(&w->spare, p)))
        return rv;
    /* Before the sub-pools go: the last batch is written at pool death. */
    apr_pool_pre_cleanup_register(p, w, writer_cleanup);
    *out = w;
    return APR_SUCCESS;
}

void sm_writer_upkeep(sm_writer *w, sm_writer_upkeep_fn *fn, void *baton)
{
    if (!w->running) {
        w->upkeep_fn = fn;
        w->upkeep_baton = baton;
    }
}

apr_status_t sm_recorder_create(sm_recorder **out, apr_pool_t *p,
                                const sm_recorder_conf *conf)
{
    sm_recorder *rec = apr_pcalloc(p, sizeof(*rec));
    sm_writer *w = conf->writer;
    apr_status_t rv;

    if (!w && (rv = sm_writer_create(&w, p, conf->batch_size,
                                     conf->queue_max)) != APR_SUCCESS)
        return rv;
    if (w->running)
        return APR_EINVAL;
    rec->w = w;
    rec->conf = *conf;
    rec->conf.db_path = apr_pstrdup(p, conf->db_path);
    rec->conf.db_uri = conf->db_uri ? apr_pstrdup(p, conf->db_uri) : NULL;
    rec->conf.spill_path = conf->spill_path
                           ? apr_pstrdup(p, conf->spill_path) : NULL;
    rec->is_file = sm_store_is_file(rec->conf.db_uri ? rec->conf.db_uri
                                                    : rec->conf.db_path);
    rec->id_seed = sm_hash_str(SM_HASH_SEED, rec->conf.db_path);
    rec->mix = sm_hash_u64(rec->id_seed, 0);
    rec->pool = p;
    rec->expire_every = SM_REC_EXPIRE_EVERY;
    rec->robots = sm_rec_robots_make(p);
    apr_thread_mutex_lock(w->lock);
    if (w->rec_n == w->rec_cap) {
        int cap = w->rec_cap ? w->rec_cap * 2 : 4;
        sm_recorder **v = apr_palloc(w->pool, sizeof(*v) * (apr_size_t)cap);
        if (w->rec_n)
            memcpy(v, w->rec_v, sizeof(*v) * (apr_size_t)w->rec_n);
        w->rec_v = v;
        w->rec_cap = cap;
    }
    if (!w->rec_n || conf->flush_interval < w->flush_interval)
        w->flush_interval = conf->flush_interval;
    w->rec_v[w->rec_n++] = rec;
    w->idle_close = conf->idle_close > 0 ? conf->idle_close
                                         : SM_REC_IDLE_CLOSE;
    w->closed_check = w->idle_close / 2 < SM_REC_CLOSED_CHECK
                      ? w->idle_close / 2 : SM_REC_CLOSED_CHECK;
    apr_thread_mutex_unlock(w->lock);
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
    if (!rec->w->running && n > 0)
        sites_grow(rec, rec->site_cap - rec->site_n + n);
}

void sm_recorder_site_maker(sm_recorder *rec, sm_site_maker_fn *fn,
                            sm_base_test_fn *owns, void *baton)
{
    if (!rec->w->running && rec->maker_n < 8) {
        rec->maker_v[rec->maker_n].fn = fn;
        rec->maker_v[rec->maker_n].owns = owns;
        rec->maker_v[rec->maker_n++].baton = baton;
    }
}

int sm_recorder_add_site(sm_recorder *rec, const sm_site_conf *site)
{
    sm_writer *w = rec->w;

    apr_thread_mutex_lock(w->lock);
    if (rec->site_n == rec->site_cap) {
        if (w->running) {
            apr_thread_mutex_unlock(w->lock);
            return 0;           /* no room reserved */
        }
        sites_grow(rec, rec->site_cap + 4);
    }
    rec->site_v[rec->site_n] = site;
    __atomic_store_n(&rec->site_n, rec->site_n + 1, __ATOMIC_RELEASE);
    /* Expiry runs hourly, or four times per SitemapExpire when shorter
     * (a site added later has its vhost's SitemapExpire: no change). */
    if (!w->running && site->expire > 0
        && site->expire / 4 < rec->expire_every)
        rec->expire_every = site->expire / 4 > apr_time_from_sec(1)
                          ? site->expire / 4 : apr_time_from_sec(1);
    /* A URL is refreshed often enough that it never expires while served
     * (the memory is the writer's: its shortest store's). */
    if (!w->running && site->expire > 0
        && site->expire / 4 < w->memory.refresh)
        sm_memory_refresh_set(&w->memory,
                              site->expire / 4 > apr_time_from_sec(1)
                              ? site->expire / 4 : apr_time_from_sec(1));
    apr_thread_mutex_unlock(w->lock);
    return 1;
}

apr_status_t sm_recorder_start(sm_recorder *rec)
{
    sm_writer *w = rec->w;
    apr_threadattr_t *attr;
    apr_status_t rv;

    if (w->running)
        return APR_SUCCESS;
    if ((rv = apr_threadattr_create(&attr, w->pool)) != APR_SUCCESS)
        return rv;
    apr_threadattr_stacksize_set(attr, 256 * 1024);
    rv = apr_thread_create(&w->thread, attr, sm_rec_writer_main, w, w->pool);
    if (rv == APR_SUCCESS)
        w->running = 1;
    return rv;
}

void sm_recorder_get_stats(sm_recorder *rec, sm_recorder_stats *out)
{
    apr_thread_mutex_lock(rec->w->lock);
    *out = rec->stats;
    apr_thread_mutex_unlock(rec->w->lock);
}
