/* SPDX-License-Identifier: Apache-2.0 */
/* sm_memory.c: see sm_memory.h. */
#include "record/sm_memory.h"

#include <string.h>

/* A URL is written again after this long at the latest when it is a
 * forgotten one: another process may have recorded it again meanwhile. */
#define FORGET_REFRESH_SEC 60

/* Both memories are sets in one 64-byte cache line (4 URLs, 3 aliases): a
 * lookup costs one line (the alias line is prefetched: see
 * sm_memory_prefetch; otherwise they miss the cache on most requests).
 * A fingerprint's lowest bit tells a forgotten URL (FP_FORGET). */
#define FP_FORGET SM_MEMORY_FORGET

typedef struct {
    apr_uint64_t key;
    apr_uint32_t fingerprint;
    apr_uint32_t written;       /* seconds, truncated: only differences count */
} seen_slot;

typedef struct sm_seen_set {
    seen_slot way[SEEN_WAYS];
} seen_set;

/* A response seen before, by the hash of its raw facts (see
 * sm_memory_repeat): the URL and fingerprint it led to (the key's low 32
 * bits pick its seen set and tell it from the set's other URLs), and the
 * epoch in which it was last found to agree with the memory of written
 * URLs.  Three ways a line, field by field. */
#define ALIAS_WAYS 3
typedef struct sm_alias_set {
    apr_uint64_t raw[ALIAS_WAYS];
    apr_uint32_t key_low[ALIAS_WAYS];
    apr_uint32_t fingerprint[ALIAS_WAYS];
    apr_uint32_t stamp[ALIAS_WAYS];
} alias_set;

/* Compile-time checks: a set is one cache line. */
typedef char seen_set_is_one_line[sizeof(seen_set) == 64 ? 1 : -1];
typedef char alias_set_is_one_line[sizeof(alias_set) == 64 ? 1 : -1];

void sm_memory_init(sm_memory *m, apr_pool_t *p, apr_thread_mutex_t *lock,
                    apr_interval_time_t refresh)
{
    memset(m, 0, sizeof(*m));
    m->seen = sm_cache_lines(p, SEEN_SETS);
    m->alias = sm_cache_lines(p, SEEN_SETS);
    m->lock = lock;
    sm_memory_refresh_set(m, refresh);
}

/* ---- the memory of written URLs (changes: caller holds m->lock) -------- */

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
static void memory_changing(sm_memory *m)
{
#if LOCK_FREE_READS
    __atomic_store_n(&m->memory_seq, m->memory_seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
#else
    m->memory_seq++;
#endif
}

static void memory_changed(sm_memory *m)
{
#if LOCK_FREE_READS
    __atomic_store_n(&m->memory_seq, m->memory_seq + 1, __ATOMIC_RELEASE);
#else
    m->memory_seq++;
#endif
}

static seen_slot *seen_find(sm_memory *m, apr_uint64_t key)
{
    seen_slot *set = m->seen[key % SEEN_SETS].way;
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
void sm_memory_put(sm_memory *m, apr_uint64_t key, apr_uint32_t fp,
                   apr_uint32_t now)
{
    seen_slot *slot = seen_find(m, key);
    int unsaid;                 /* something the memory said goes */

    if (!slot) {
        seen_slot *set = m->seen[key % SEEN_SETS].way;
        int i;
        for (i = 0; i < SEEN_WAYS && set[i].key; i++)
            ;
        slot = &set[i < SEEN_WAYS ? (unsigned)i : m->seen_victim++ % SEEN_WAYS];
        unsaid = slot->key != 0;
    }
    else
        unsaid = slot->fingerprint != fp;
    memory_changing(m);
    slot_set(slot, key, fp, now);
    if (unsaid)
        INCREMENT(m->epoch);
    memory_changed(m);
}

/* Caller holds lock. */
void sm_memory_drop(sm_memory *m, apr_uint64_t key)
{
    seen_slot *slot = seen_find(m, key);

    if (slot) {
        memory_changing(m);
        slot_set(slot, 0, 0, 0);
        INCREMENT(m->epoch);
        memory_changed(m);
    }
}

/* Caller holds lock. */
void sm_memory_clear(sm_memory *m)
{
    apr_size_t i;
    int j;

    memory_changing(m);
    for (i = 0; i < SEEN_SETS; i++)
        for (j = 0; j < SEEN_WAYS; j++)
            slot_set(&m->seen[i].way[j], 0, 0, 0);
    INCREMENT(m->epoch);
    memory_changed(m);
}

static int slot_fresh(const sm_memory *m, const seen_slot *slot,
                      apr_uint32_t fp, apr_uint32_t now_s)
{
    apr_uint32_t refresh = (fp & FP_FORGET) ? FORGET_REFRESH_SEC
                           : (apr_uint32_t)apr_time_sec(m->refresh);

    return LOAD(slot->fingerprint) == fp
           && (apr_uint32_t)(now_s - LOAD(slot->written)) < refresh;
}

/* Is a URL written with this fingerprint recently enough to skip? */
int sm_memory_fresh(sm_memory *m, apr_uint64_t key, apr_uint32_t fp,
                      apr_uint32_t now_s)
{
    seen_slot *slot = seen_find(m, key);

    return slot && slot_fresh(m, slot, fp, now_s);
}

/* The aliases: raw facts -> the URL they were found to be.  An alias is
 * trusted alone while its stamp is the current epoch; otherwise the URL
 * must be fresh in the memory above. */
static alias_set *alias_set_of(sm_memory *m, apr_uint64_t raw)
{
    return &m->alias[raw % SEEN_SETS];
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
SM_HOT static apr_uint32_t epoch_now(sm_memory *m, apr_uint32_t now_s)
{
    apr_uint32_t tick = now_s / m->tick_sec, was = LOAD(m->epoch_tick);

    /* Forward only: a long request logged after a shorter one must not
     * move the tick back (and the next request forward again). */
    if ((apr_int32_t)(tick - was) > 0) {
#if LOCK_FREE_READS
        if (__atomic_compare_exchange_n(&m->epoch_tick, &was, tick, 0,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            INCREMENT(m->epoch);
#else
        m->epoch_tick = tick;         /* caller holds lock */
        INCREMENT(m->epoch);
#endif
    }
    return LOAD(m->epoch);
}

void sm_memory_refresh_set(sm_memory *m, apr_interval_time_t refresh)
{
    apr_uint32_t sec = (apr_uint32_t)apr_time_sec(refresh);

    m->refresh = refresh;
    m->tick_sec = sec / 60 < 1 ? 1 : sec / 60 > 60 ? 60 : sec / 60;
}

/* Caller holds lock.  The alias is not trusted alone until alias_vouch. */
void sm_memory_alias_put(sm_memory *m, apr_uint64_t raw, apr_uint64_t key,
                      apr_uint32_t fp)
{
    alias_set *set = alias_set_of(m, raw);
    int w = alias_way(set, raw);

    if (w < 0) {
        for (w = 0; w < ALIAS_WAYS && set->raw[w]; w++)
            ;
        if (w == ALIAS_WAYS)
            w = (int)(m->alias_victim++ % ALIAS_WAYS);
    }
    memory_changing(m);
    STORE(set->raw[w], raw);
    STORE(set->key_low[w], (apr_uint32_t)key);
    STORE(set->fingerprint[w], fp);
    STORE(set->stamp[w], LOAD(m->epoch) - 1);
    memory_changed(m);
}

int sm_memory_alias_copy(sm_memory *m, apr_uint64_t known, apr_uint64_t raw,
                         apr_uint32_t now_s)
{
    const alias_set *set = alias_set_of(m, known);
    int w = alias_way(set, known);

    if (w < 0 || !raw)
        return 0;
    sm_memory_alias_put(m, raw, LOAD(set->key_low[w]),
                        LOAD(set->fingerprint[w]));
    sm_memory_alias_vouch(m, raw, now_s);
    return 1;
}

/* Is the URL way w of set leads to fresh with the alias's fingerprint in
 * the memory of written URLs? */
static int alias_fresh(sm_memory *m, const alias_set *set, int w,
                       apr_uint32_t now_s)
{
    /* SEEN_SETS divides 2^32: the low bits pick the same set as the key. */
    apr_uint32_t key_low = LOAD(set->key_low[w]);
    const seen_slot *seen = m->seen[key_low % SEEN_SETS].way;
    int i;

    for (i = 0; i < SEEN_WAYS; i++) {
        apr_uint64_t key = LOAD(seen[i].key);
        if (key && (apr_uint32_t)key == key_low)
            return slot_fresh(m, &seen[i], LOAD(set->fingerprint[w]),
                              now_s);
    }
    return 0;
}

/* Caller holds lock: stamp raw's alias with the epoch if the memory of
 * written URLs agrees with it now.  Only a stamp changes: readers that see
 * either value are right. */
void sm_memory_alias_vouch(sm_memory *m, apr_uint64_t raw,
                        apr_uint32_t now_s)
{
    alias_set *set = alias_set_of(m, raw);
    apr_uint32_t epoch = epoch_now(m, now_s);
    int w = alias_way(set, raw);

    /* Release: a reader whose (relaxed) load sees this stamp then sees,
     * after its acquire fence, the sequence moves of whoever last changed
     * the way (they happened before our lock): it cannot pair the stamp
     * with the way's former content. */
    if (w >= 0 && alias_fresh(m, set, w, now_s)) {
#if LOCK_FREE_READS
        __atomic_store_n(&set->stamp[w], epoch, __ATOMIC_RELEASE);
#else
        set->stamp[w] = epoch;
#endif
    }
}

/* Zeroed memory for n sets of 64 bytes, on a cache-line boundary. */
void *sm_cache_lines(apr_pool_t *p, apr_size_t n)
{
    char *m = apr_pcalloc(p, n * 64 + 63);

    return (void *)(((apr_uintptr_t)m + 63) & ~(apr_uintptr_t)63);
}

apr_status_t sm_private_pool(apr_pool_t **out, apr_pool_t *parent)
{
    apr_allocator_t *alloc;
    apr_status_t rv;

    if ((rv = apr_allocator_create(&alloc)) != APR_SUCCESS)
        return rv;
    apr_allocator_max_free_set(alloc, 1024 * 1024);
    if ((rv = apr_pool_create_ex(out, parent, NULL, alloc)) != APR_SUCCESS) {
        apr_allocator_destroy(alloc);
        return rv;
    }
    apr_allocator_owner_set(alloc, *out);
    return APR_SUCCESS;
}

SM_HOT int sm_memory_repeat(sm_memory *m, apr_uint64_t raw,
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
    set = alias_set_of(m, raw);
#if LOCK_FREE_READS
    /* Every request asks this, so no lock: on a multi-core server one
     * mutex taken by every request moves its cache line between CPUs
     * (on the 1-CPU benchmark the two measured the same).  A change
     * meanwhile makes the answer "ask sm_recorder_add", never a wrong
     * "repeat". */
    before = __atomic_load_n(&m->memory_seq, __ATOMIC_ACQUIRE);
    if (before & 1)
        return 0;
    epoch = epoch_now(m, now_s);
    w = alias_way(set, raw);
    if (w < 0)
        repeat = 0;
    else if (LOAD(set->stamp[w]) == epoch)
        repeat = 1;
    else
        repeat = checked = alias_fresh(m, set, w, now_s);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    after = __atomic_load_n(&m->memory_seq, __ATOMIC_RELAXED);
    if (before != after)
        return 0;
    /* Checked the long way: stamp it, if nobody holds the lock, so that
     * the next repeats of this tick take the short way. */
    if (checked && apr_thread_mutex_trylock(m->lock) == APR_SUCCESS) {
        sm_memory_alias_vouch(m, raw, now_s);
        apr_thread_mutex_unlock(m->lock);
    }
    return repeat;
#else
    apr_thread_mutex_lock(m->lock);
    epoch = epoch_now(m, now_s);
    w = alias_way(set, raw);
    repeat = w >= 0 && (set->stamp[w] == epoch
                        || (checked = alias_fresh(m, set, w, now_s)));
    if (checked)
        sm_memory_alias_vouch(m, raw, now_s);
    apr_thread_mutex_unlock(m->lock);
    return repeat;
#endif
}

/* The set is raw % SEEN_SETS: raw takes those bits from first. */
SM_HOT apr_uint64_t sm_memory_raw(apr_uint64_t first, apr_uint64_t rest)
{
    apr_uint64_t low = SEEN_SETS - 1;
    apr_uint64_t raw = (rest & ~low) | (first & low);

    return raw ? raw : SEEN_SETS;       /* 0 is "no raw facts" */
}

SM_HOT void sm_memory_prefetch(const sm_memory *m, apr_uint64_t first)
{
#if defined(__GNUC__)
    __builtin_prefetch(&m->alias[first % SEEN_SETS]);
#else
    (void)m;
    (void)first;
#endif
}

