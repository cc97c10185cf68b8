/* SPDX-License-Identifier: Apache-2.0 */
/* sm_readers.c: see sm_readers.h. */
#include "store/sm_readers.h"

#include <apr_strings.h>
#include <apr_thread_mutex.h>
#include <string.h>

/* How long a reader waits for a lock (a writer checkpointing). */
#define READER_BUSY_MS 1000
/* Idle readers kept in a process, all stores together (three descriptors
 * each for a SQLite file in WAL mode): a crawler reading a thousand sites
 * in turn leaves at most this many open; beyond it a released reader is
 * closed at once (opening one costs far less than the document). */
#define IDLE_MAX 16

static apr_uint32_t idle_total;     /* of every pool of the process */

static int idle_take(void)
{
    if (__atomic_add_fetch(&idle_total, 1, __ATOMIC_RELAXED) <= IDLE_MAX)
        return 1;
    __atomic_sub_fetch(&idle_total, 1, __ATOMIC_RELAXED);
    return 0;
}

static void idle_give(int n)
{
    __atomic_sub_fetch(&idle_total, (apr_uint32_t)n, __ATOMIC_RELAXED);
}

typedef struct {
    sm_store *st;
    apr_time_t freed;
} idle_reader;

struct sm_readers {
    apr_thread_mutex_t *lock;
    const char *where;
    const sm_logger *log;
    apr_interval_time_t idle;
    /* Idle readers, oldest first: the newest is reused (its cache is the
     * warmest), the oldest are closed. */
    idle_reader *idle_v;
    int idle_n, keep;
    int open;                   /* in use or idle */
};

/* Each reader has a pool of its own (unmanaged: readers are opened and
 * closed by request threads and the writer's, never racing on a shared
 * allocator), destroyed with it. */
static sm_store *reader_open(sm_readers *r, char *err, apr_size_t len)
{
    apr_pool_t *p;
    sm_store *st;

    if (apr_pool_create_unmanaged_ex(&p, NULL, NULL) != APR_SUCCESS) {
        apr_cpystrn(err, "out of memory", len);
        return NULL;
    }
    if (sm_store_open(&st, p, r->where, SM_STORE_READER, READER_BUSY_MS, NULL,
                      err, len) != APR_SUCCESS) {
        sm_log(r->log, SM_LOG_DEBUG, 0, "store %s: %s",
               sm_uri_mask(p, r->where), err);
        apr_pool_destroy(p);
        return NULL;
    }
    return st;
}

static void reader_close(sm_store *st)
{
    apr_pool_t *p = st->pool;

    sm_store_close(st);
    apr_pool_destroy(p);
}

static apr_status_t readers_cleanup(void *data)
{
    sm_readers *r = data;

    idle_give(r->idle_n);
    while (r->idle_n)
        reader_close(r->idle_v[--r->idle_n].st);
    return APR_SUCCESS;
}

apr_status_t sm_readers_create(sm_readers **out, apr_pool_t *p,
                               const char *where, int keep,
                               apr_interval_time_t idle,
                               const sm_logger *log)
{
    sm_readers *r = apr_pcalloc(p, sizeof(*r));
    apr_status_t rv;

    if ((rv = apr_thread_mutex_create(&r->lock, APR_THREAD_MUTEX_DEFAULT, p))
        != APR_SUCCESS)
        return rv;
    r->where = apr_pstrdup(p, where);
    r->log = log;
    r->idle = idle;
    /* No store keeps more idle readers than the process does. */
    r->keep = keep < 1 ? 1 : keep > IDLE_MAX ? IDLE_MAX : keep;
    r->idle_v = apr_pcalloc(p, sizeof(*r->idle_v) * (apr_size_t)r->keep);
    apr_pool_cleanup_register(p, r, readers_cleanup, apr_pool_cleanup_null);
    *out = r;
    return APR_SUCCESS;
}

sm_store *sm_readers_acquire(sm_readers *r, char *err, apr_size_t len)
{
    sm_store *st;
    int tries;

    for (tries = 0; tries < 3; tries++) {
        apr_thread_mutex_lock(r->lock);
        st = r->idle_n ? r->idle_v[--r->idle_n].st : NULL;
        if (st)
            idle_give(1);
        else
            r->open++;          /* counted before it is opened */
        apr_thread_mutex_unlock(r->lock);
        if (!st && !(st = reader_open(r, err, len))) {
            apr_thread_mutex_lock(r->lock);
            r->open--;
            apr_thread_mutex_unlock(r->lock);
            return NULL;
        }
        if (sm_store_is_current(st))
            return st;
        sm_readers_invalidate(r, st);
    }
    apr_cpystrn(err, "the file at the path kept being replaced", len);
    return NULL;
}

void sm_readers_release(sm_readers *r, sm_store *st)
{
    apr_thread_mutex_lock(r->lock);
    if (r->idle_n < r->keep && idle_take()) {
        r->idle_v[r->idle_n].st = st;
        r->idle_v[r->idle_n++].freed = apr_time_now();
        st = NULL;
    }
    else {
        r->open--;
    }
    apr_thread_mutex_unlock(r->lock);
    if (st)
        reader_close(st);
}

void sm_readers_invalidate(sm_readers *r, sm_store *st)
{
    apr_thread_mutex_lock(r->lock);
    r->open--;
    apr_thread_mutex_unlock(r->lock);
    reader_close(st);
}

void sm_readers_close_idle(sm_readers *r, apr_time_t now)
{
    idle_reader old[16];
    int i, n;

    do {
        apr_thread_mutex_lock(r->lock);
        for (n = 0; n < r->idle_n && n < 16
                    && now - r->idle_v[n].freed >= r->idle; n++)
            old[n] = r->idle_v[n];
        if (n) {
            memmove(r->idle_v, r->idle_v + n,
                    sizeof(*r->idle_v) * (apr_size_t)(r->idle_n - n));
            r->idle_n -= n;
            r->open -= n;
            idle_give(n);
        }
        apr_thread_mutex_unlock(r->lock);
        for (i = 0; i < n; i++)
            reader_close(old[i].st);
    } while (n == 16);
}

int sm_readers_open_count(sm_readers *r)
{
    int n;

    apr_thread_mutex_lock(r->lock);
    n = r->open;
    apr_thread_mutex_unlock(r->lock);
    return n;
}
