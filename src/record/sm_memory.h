/* SPDX-License-Identifier: Apache-2.0 */
/* sm_memory.h: the recorder's memory of what it wrote, which every request
 * reads without a lock.
 *
 * Two fixed-size tables, no allocation after creation:
 *   - the URLs written recently (4-way set-associative, 64-bit keys, the
 *     fingerprint of what was written and when): a URL written with the
 *     same fingerprint within the refresh period is not written again;
 *   - aliases: the hash of a response's raw facts -> the URL and
 *     fingerprint they led to, so that a repeat is recognised before any
 *     parsing (sm_memory_repeat).
 * Changes are serialised by the owner's mutex (the recorder's queue lock,
 * given at init: the only coupling between the two); readers take no lock
 * and detect a change under way with a sequence counter (a seqlock).
 * t/unit/test_memory.c tests it alone, t/tsan/run under ThreadSanitizer. */
#ifndef SM_MEMORY_H
#define SM_MEMORY_H

#include <apr_pools.h>
#include <apr_thread_mutex.h>
#include <apr_time.h>

#include "util/sm_hot.h"

/* A fingerprint's lowest bit marks a forgotten URL (refreshed sooner). */
#define SM_MEMORY_FORGET 1u
/* 4096 sets of 4 URLs and 4096 sets of 3 aliases: 512 KiB. */
#define SEEN_SETS 4096
#define SEEN_WAYS 4

/* Meant to be embedded first in its owner, itself allocated on a cache
 * line of its own (sm_cache_lines), so that what every request reads
 * (these fields and the lock) shares one line.  The fields are private
 * to sm_memory.c, except refresh, which the owner may read. */
typedef struct {
    struct sm_alias_set *alias;     /* SEEN_SETS, 64-byte aligned */
    struct sm_seen_set *seen;       /* SEEN_SETS, 64-byte aligned */
    /* Even while nobody changes the memories, odd while someone (holding
     * lock) does: sm_memory_repeat reads them without the lock and trusts
     * what it read only if this did not move meanwhile. */
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
    apr_thread_mutex_t *lock;       /* the owner's; held by every change */
    apr_interval_time_t refresh;    /* a URL is written again after this */
    unsigned seen_victim;
    unsigned alias_victim;
} sm_memory;

/* Zeroed memory for n sets of 64 bytes, on a cache-line boundary. */
void *sm_cache_lines(apr_pool_t *p, apr_size_t n);

/* A sub-pool of parent with an allocator of its own, made by the thread
 * that owns parent (linking it to parent is not thread-safe): then used
 * by one thread at a time (its own sub-pools included), never racing with
 * other users of parent's allocator, such as the request threads of a
 * prefork child, whose pools share the child pool's allocator without a
 * mutex.  Gives memory back beyond 1 MiB. */
apr_status_t sm_private_pool(apr_pool_t **out, apr_pool_t *parent);

/* Empty memory in m (tables from p); changes will hold lock. */
void sm_memory_init(sm_memory *m, apr_pool_t *p, apr_thread_mutex_t *lock,
                    apr_interval_time_t refresh);
void sm_memory_refresh_set(sm_memory *m, apr_interval_time_t refresh);

/* ---- changes and exact questions: the caller holds m->lock ------------- */

/* key was written (or queued) with fingerprint fp at now (seconds). */
void sm_memory_put(sm_memory *m, apr_uint64_t key, apr_uint32_t fp,
                   apr_uint32_t now);
/* Forget key, or everything. */
void sm_memory_drop(sm_memory *m, apr_uint64_t key);
void sm_memory_clear(sm_memory *m);
/* Was key written with fp within the refresh period? */
int sm_memory_fresh(sm_memory *m, apr_uint64_t key, apr_uint32_t fp,
                    apr_uint32_t now_s);
/* raw led to key with fp; not trusted alone until vouched for. */
void sm_memory_alias_put(sm_memory *m, apr_uint64_t raw, apr_uint64_t key,
                         apr_uint32_t fp);
/* known's alias (if any) for raw too: the same URL and fingerprint,
 * vouched for as known's would be.  0 when known has none. */
int sm_memory_alias_copy(sm_memory *m, apr_uint64_t known, apr_uint64_t raw,
                         apr_uint32_t now_s);
/* Stamp raw's alias with the current epoch if the memory of written URLs
 * agrees with it now. */
void sm_memory_alias_vouch(sm_memory *m, apr_uint64_t raw,
                           apr_uint32_t now_s);

/* ---- any thread, no lock (see sm_recorder.h for the meaning) ----------- */
int sm_memory_repeat(sm_memory *m, apr_uint64_t raw, apr_time_t seen);
void sm_memory_prefetch(const sm_memory *m, apr_uint64_t first);
apr_uint64_t sm_memory_raw(apr_uint64_t first, apr_uint64_t rest);

#endif
