/* SPDX-License-Identifier: Apache-2.0 */
/* sm_recorder_forget.c: URLs one process forgets, dropped by every other
 * process's memory (sm_recorder.h, sm_recorder_shared).
 *
 * Every process remembers what it wrote (sm_memory): once process A
 * removes a stored URL (a 404, a noindex), process B, which wrote it
 * earlier, would take the URL's next plain response for a repeat until
 * its hourly refresh.  So the writer that committed a FORGET which
 * removed a row publishes the URL's key (only those: a bot's thousands of
 * never-stored dead URLs publish nothing) into a ring in the store's
 * shared memory (sm_rec_forget_ring), and each process, at its next repeat check, sees the
 * ring's counter move and drops those keys from its memory.
 *
 * Writers of several processes publish at once: each claims entry n by
 * an atomic add on seq, then writes it as a seqlock would (mark 0,
 * the key, mark n + 1 with release), so that a reader takes entry n only
 * when its mark was n + 1 both before and after it read the key.  A mark
 * below n + 1 is an entry claimed but not written yet (wait for it); one
 * above, an entry overwritten by a later lap (forget the store's memory:
 * its keys are lost). */
#include "record/sm_recorder_int.h"

#include <string.h>

void sm_rec_forget_put(sm_rec_forget_ring *sh, apr_uint64_t key)
{
    apr_uint64_t n = __atomic_fetch_add(&sh->seq, 1, __ATOMIC_RELAXED);
    sm_rec_forget_entry *e = &sh->entry[n % SM_REC_FORGET_RING];

    __atomic_store_n(&e->mark, 0, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&e->key, key, __ATOMIC_RELAXED);
    __atomic_store_n(&e->mark, n + 1, __ATOMIC_RELEASE);
}

int sm_rec_forget_take(sm_rec_forget_ring *sh, apr_uint64_t *seen,
                       sm_rec_forget_fn *fn, void *baton)
{
    apr_uint64_t end = __atomic_load_n(&sh->seq, __ATOMIC_ACQUIRE);

    if (end - *seen > SM_REC_FORGET_RING) {
        *seen = end;
        return SM_REC_FORGET_LAPPED;
    }
    while (*seen != end) {
        const sm_rec_forget_entry *e =
            &sh->entry[*seen % SM_REC_FORGET_RING];
        apr_uint64_t want = *seen + 1, before, after, key;

        before = __atomic_load_n(&e->mark, __ATOMIC_ACQUIRE);
        key = __atomic_load_n(&e->key, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        after = __atomic_load_n(&e->mark, __ATOMIC_RELAXED);
        if (before == want && after == want) {
            fn(baton, key);
            *seen = want;
            continue;
        }
        /* Not written yet (0: being written; below: an earlier lap's),
         * or written while it was read: again later. */
        if (before < want && after <= want)
            return SM_REC_FORGET_UNWRITTEN;
        *seen = __atomic_load_n(&sh->seq, __ATOMIC_ACQUIRE);
        return SM_REC_FORGET_LAPPED;
    }
    return SM_REC_FORGET_OK;
}

static void drop_key(void *baton, apr_uint64_t key)
{
    sm_recorder *rec = baton;

    sm_memory_drop(&rec->w->memory, sm_rec_memory_key(rec, key));
}

void sm_rec_forget_follow_locked(sm_recorder *rec, apr_time_t now)
{
    apr_uint64_t seen = rec->forget_seen;
    int how;

    if (!rec->forget_from)
        return;
    how = sm_rec_forget_take(rec->forget_from, &seen, drop_key, rec);
    if (how == SM_REC_FORGET_UNWRITTEN) {
        if (!rec->forget_stuck)
            rec->forget_stuck = now;
        if (now - rec->forget_stuck < SM_REC_FORGET_STUCK) {
            __atomic_store_n(&rec->forget_seen, seen, __ATOMIC_RELAXED);
            return;
        }
        /* Its writer never finished it: skip all, as lapped. */
        seen = __atomic_load_n(&rec->forget_from->seq,
                               __ATOMIC_ACQUIRE);
        how = SM_REC_FORGET_LAPPED;
    }
    rec->forget_stuck = 0;
    if (how == SM_REC_FORGET_LAPPED)
        sm_rec_forget_locked(rec);
    __atomic_store_n(&rec->forget_seen, seen, __ATOMIC_RELAXED);
}

void sm_rec_forget_follow(sm_recorder *rec)
{
    apr_thread_mutex_lock(rec->w->lock);
    sm_rec_forget_follow_locked(rec, apr_time_now());
    apr_thread_mutex_unlock(rec->w->lock);
}

void sm_rec_forget_publish(sm_recorder *rec, int from, int n)
{
    sm_rec_forget_ring *sh = __atomic_load_n(&rec->forget_from,
                                             __ATOMIC_RELAXED);
    int i;

    if (!sh || !rec->out_removed)
        return;
    for (i = from; i < from + n; i++)
        if (rec->out_removed[i])
            sm_rec_forget_put(sh, rec->out[i]->key);
}
