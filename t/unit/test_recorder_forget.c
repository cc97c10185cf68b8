/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the forgotten URLs every process follows
 * (sm_recorder_forget.c): the shared ring (entries taken in order, an
 * entry counted but not written waits, a lapped one forgets all), a store
 * saying which FORGETs removed a stored row (SQLite and, the _pg variant,
 * PostgreSQL; t/integration/test_unit_pg.py runs it), and two recorders of
 * one store, as two processes: what one forgets the other no longer takes
 * for a repeat. */
#include "unit_store.h"

#include "util/sm_hash.h"
#include "record/sm_recorder.h"
#include "record/sm_memory.h"
#include "store/sm_store_backend.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

static sm_site_conf site = { "http://f.example", 50000, 0, 0, NULL, 0 };
static const char *pg_uri;

/* On a cache line, as the module's shared memory is. */
static sm_rec_forget_ring *new_ring(void)
{
    void *p = NULL;

    assert_int_equal(posix_memalign(&p, 64, sizeof(sm_rec_forget_ring)), 0);
    memset(p, 0, sizeof(sm_rec_forget_ring));
    return p;
}

typedef struct {
    apr_uint64_t keys[2 * SM_REC_FORGET_RING];
    int n;
} taken;

static void take_key(void *baton, apr_uint64_t key)
{
    taken *t = baton;

    t->keys[t->n++] = key;
}

static void test_ring_take(void **state)
{
    sm_rec_forget_ring *sh = new_ring();
    apr_uint64_t seen = 0;
    taken t = { { 0 }, 0 };
    (void)state;

    assert_int_equal(sm_rec_forget_take(sh, &seen, take_key, &t),
                     SM_REC_FORGET_OK);
    assert_int_equal(t.n, 0);
    sm_rec_forget_put(sh, 11);
    sm_rec_forget_put(sh, 12);
    assert_int_equal(sm_rec_forget_take(sh, &seen, take_key, &t),
                     SM_REC_FORGET_OK);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.keys[0], 11);
    assert_int_equal(t.keys[1], 12);
    assert_int_equal(seen, 2);
    /* Nothing new: nothing taken again. */
    assert_int_equal(sm_rec_forget_take(sh, &seen, take_key, &t),
                     SM_REC_FORGET_OK);
    assert_int_equal(t.n, 2);
    free(sh);
}

static void test_ring_unwritten(void **state)
{
    sm_rec_forget_ring *sh = new_ring();
    apr_uint64_t seen = 0;
    taken t = { { 0 }, 0 };
    (void)state;

    sm_rec_forget_put(sh, 21);
    /* Entry 1 counted by a writer that has not written it yet. */
    __atomic_fetch_add(&sh->seq, 1, __ATOMIC_RELAXED);
    assert_int_equal(sm_rec_forget_take(sh, &seen, take_key, &t),
                     SM_REC_FORGET_UNWRITTEN);
    assert_int_equal(t.n, 1);
    assert_int_equal(seen, 1);
    /* Being written (mark 0): still waits. */
    sh->entry[1].mark = 0;
    sh->entry[1].key = 22;
    assert_int_equal(sm_rec_forget_take(sh, &seen, take_key, &t),
                     SM_REC_FORGET_UNWRITTEN);
    assert_int_equal(t.n, 1);
    /* Written: taken. */
    sh->entry[1].mark = 2;
    assert_int_equal(sm_rec_forget_take(sh, &seen, take_key, &t),
                     SM_REC_FORGET_OK);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.keys[1], 22);
    assert_int_equal(seen, 2);
    free(sh);
}

static void test_ring_lapped(void **state)
{
    sm_rec_forget_ring *sh = new_ring();
    apr_uint64_t seen = 0, i;
    taken t = { { 0 }, 0 };
    (void)state;

    /* More than the ring behind: nothing taken, everything forgotten. */
    for (i = 0; i <= SM_REC_FORGET_RING; i++)
        sm_rec_forget_put(sh, 100 + i);
    assert_int_equal(sm_rec_forget_take(sh, &seen, take_key, &t),
                     SM_REC_FORGET_LAPPED);
    assert_int_equal(t.n, 0);
    assert_int_equal(seen, SM_REC_FORGET_RING + 1);
    /* Exactly the ring behind: all taken. */
    for (i = 0; i < SM_REC_FORGET_RING; i++)
        sm_rec_forget_put(sh, 300 + i);
    assert_int_equal(sm_rec_forget_take(sh, &seen, take_key, &t),
                     SM_REC_FORGET_OK);
    assert_int_equal(t.n, SM_REC_FORGET_RING);
    assert_int_equal(t.keys[SM_REC_FORGET_RING - 1],
                     300 + SM_REC_FORGET_RING - 1);
    /* An entry overwritten while its reader was behind (its mark a lap
     * ahead, the counter not yet): lapped. */
    t.n = 0;
    sm_rec_forget_put(sh, 500);
    sh->entry[seen % SM_REC_FORGET_RING].mark
        += SM_REC_FORGET_RING;
    assert_int_equal(sm_rec_forget_take(sh, &seen, take_key, &t),
                     SM_REC_FORGET_LAPPED);
    assert_int_equal(t.n, 0);
    assert_int_equal(seen, sh->seq);
    free(sh);
}

/* Several writers publish while a reader takes: every key it takes is
 * the one published as that entry (key n * 7 + 1 for entry n). */
#define RACE_N 20000
typedef struct {
    sm_rec_forget_ring *sh;
    apr_uint64_t *seen;
    apr_uint64_t progress;      /* the reader's *seen, for the writers */
    int wrong, got;
} race;

static void *race_put(void *data)
{
    race *r = data;
    int i;

    for (i = 0; i < RACE_N / 2; i++) {
        apr_uint64_t n;

        /* Never a lap ahead of the reader: it is to take every key. */
        while (__atomic_load_n(&r->sh->seq, __ATOMIC_RELAXED)
               - __atomic_load_n(&r->progress, __ATOMIC_RELAXED)
               >= SM_REC_FORGET_RING / 2)
            sched_yield();
        /* Claimed and written in one go, as sm_rec_forget_put does, but
         * with the key its entry's number tells. */
        n = __atomic_fetch_add(&r->sh->seq, 1, __ATOMIC_RELAXED);
        sm_rec_forget_entry *e = &r->sh->entry[n % SM_REC_FORGET_RING];
        __atomic_store_n(&e->mark, 0, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_RELEASE);
        __atomic_store_n(&e->key, n * 7 + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&e->mark, n + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void race_take(void *baton, apr_uint64_t key)
{
    race *r = baton;

    r->got++;
    if (key != *r->seen * 7 + 1)
        r->wrong++;
}

static void test_ring_race(void **state)
{
    sm_rec_forget_ring *sh = new_ring();
    apr_uint64_t seen = 0;
    race r = { sh, &seen, 0, 0, 0 };
    pthread_t t1, t2;
    (void)state;

    assert_int_equal(pthread_create(&t1, NULL, race_put, &r), 0);
    assert_int_equal(pthread_create(&t2, NULL, race_put, &r), 0);
    while (seen < RACE_N) {
        assert_int_not_equal(sm_rec_forget_take(sh, &seen, race_take, &r),
                             SM_REC_FORGET_LAPPED);
        __atomic_store_n(&r.progress, seen, __ATOMIC_RELAXED);
        sched_yield();
    }
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    assert_int_equal(r.wrong, 0);
    assert_int_equal(r.got, RACE_N);
    free(sh);
}

static sm_change change(sm_change_op op, const char *url, apr_time_t seen)
{
    sm_change c;

    memset(&c, 0, sizeof(c));
    c.op = op;
    c.site = &site;
    c.url = url;
    c.seen = seen;
    c.status = op == SM_CHANGE_FORGET ? 404 : 200;
    c.etag = op == SM_CHANGE_FORGET ? NULL : "\"e\"";
    return c;
}

/* removed_v says which FORGETs removed a stored row. */
static void test_store_marks(void **state)
{
    unit_ctx *u = *state;
    const char *path = apr_pstrcat(u->pool, u->dir, "/m.db", NULL);
    apr_time_t now = apr_time_now();
    sm_change one[2], two[4];
    unsigned char held[4], removed[4];
    sm_apply_stats stats;
    sm_store *st;
    char err[512];

    if (sm_store_open(&st, u->pool, pg_uri ? pg_uri : path, SM_STORE_CREATE,
                      1000, NULL, err, sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    one[0] = change(SM_CHANGE_RECORD, "/a", now);
    one[1] = change(SM_CHANGE_RECORD, "/b", now);
    memset(removed, 7, sizeof(removed));
    assert_int_equal(sm_store_apply_marks(st, one, 2, &stats, held, removed),
                     APR_SUCCESS);
    assert_int_equal(removed[0] + removed[1], 0);
    two[0] = change(SM_CHANGE_FORGET, "/never", now);
    two[1] = change(SM_CHANGE_FORGET, "/b", now);
    two[2] = change(SM_CHANGE_RECORD, "/c", now);
    two[3] = change(SM_CHANGE_FORGET, "/b", now);     /* gone already */
    assert_int_equal(sm_store_apply_marks(st, two, 4, &stats, held, removed),
                     APR_SUCCESS);
    assert_int_equal(stats.removed, 1);
    assert_int_equal(removed[0], 0);
    assert_int_equal(removed[1], 1);
    assert_int_equal(removed[2], 0);
    assert_int_equal(removed[3], 0);
    sm_store_close(st);
}

UNIT_PG_VARIANT(test_store_marks)

static sm_recorder *make(unit_ctx *u, const char *path)
{
    sm_recorder *rec;
    sm_recorder_conf conf;

    memset(&conf, 0, sizeof(conf));
    conf.db_path = path;
    conf.flush_interval = apr_time_from_sec(3600);
    conf.batch_size = 100;
    conf.queue_max = 1000;
    conf.busy_timeout_ms = 2000;
    assert_int_equal(sm_recorder_create(&rec, u->pool, &conf), APR_SUCCESS);
    sm_recorder_add_site(rec, &site);
    return rec;
}

/* Two processes of one store (a writer and memory each, one shared
 * struct): b wrote /p, a forgets it, b's next plain response of /p is
 * no repeat; a FORGET of a URL never stored tells nobody. */
static void test_other_process_follows(void **state)
{
    unit_ctx *u = *state;
    const char *path = apr_pstrcat(u->pool, u->dir, "/p.db", NULL);
    sm_recorder_shared *shared = apr_pcalloc(u->pool, sizeof(*shared));
    sm_rec_forget_ring *sh = sm_cache_lines(u->pool,
                                            (sizeof(*sh) + 63) / 64);
    sm_recorder *a, *b;
    apr_time_t now = apr_time_now();
    apr_uint64_t ok = sm_hash_str(SM_HASH_SEED, "/p 200");
    apr_uint64_t gone = sm_hash_str(SM_HASH_SEED, "/p 404");
    apr_uint64_t other = sm_hash_str(SM_HASH_SEED, "/q 200");
    sm_change c;

    a = make(u, path);
    b = make(u, path);
    shared->forget = sh;
    sm_recorder_share(a, shared);
    sm_recorder_share(b, shared);
    c = change(SM_CHANGE_RECORD, "/p", now);
    sm_recorder_add(b, &c, ok);
    c = change(SM_CHANGE_RECORD, "/q", now);
    sm_recorder_add(b, &c, other);
    assert_int_equal(sm_recorder_flush(b), APR_SUCCESS);
    assert_int_equal(sm_recorder_repeat(b, ok, now), 1);
    assert_int_equal(sm_recorder_repeat(b, other, now), 1);

    /* Never stored: no entry. */
    c = change(SM_CHANGE_FORGET, "/dead", now);
    sm_recorder_add(a, &c, 0);
    assert_int_equal(sm_recorder_flush(a), APR_SUCCESS);
    assert_int_equal(sh->seq, 0);

    c = change(SM_CHANGE_FORGET, "/p", now);
    sm_recorder_add(a, &c, gone);
    assert_int_equal(sm_recorder_repeat(b, ok, now), 1);   /* not yet */
    assert_int_equal(sm_recorder_flush(a), APR_SUCCESS);
    assert_int_equal(sh->seq, 1);
    assert_int_equal(sm_recorder_repeat(b, ok, now), 0);
    assert_int_equal(sm_recorder_repeat(b, other, now), 1);
    /* b records it again, and knows it from then on. */
    c = change(SM_CHANGE_RECORD, "/p", now);
    sm_recorder_add(b, &c, ok);
    assert_int_equal(sm_recorder_repeat(b, ok, now), 1);
    assert_int_equal(sm_recorder_flush(b), APR_SUCCESS);
    sm_recorder_stop(a);
    sm_recorder_stop(b);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls"), 2);
}

/* More forgotten than the ring holds while b looked elsewhere: b forgets
 * all it wrote to the store. */
static void test_lapped_forgets_all(void **state)
{
    unit_ctx *u = *state;
    const char *path = apr_pstrcat(u->pool, u->dir, "/l.db", NULL);
    sm_recorder_shared *shared = apr_pcalloc(u->pool, sizeof(*shared));
    sm_rec_forget_ring *sh = sm_cache_lines(u->pool,
                                            (sizeof(*sh) + 63) / 64);
    sm_recorder *b = make(u, path);
    apr_time_t now = apr_time_now();
    apr_uint64_t ok = sm_hash_str(SM_HASH_SEED, "/k 200");
    sm_change c;
    int i;

    shared->forget = sh;
    sm_recorder_share(b, shared);
    c = change(SM_CHANGE_RECORD, "/k", now);
    sm_recorder_add(b, &c, ok);
    assert_int_equal(sm_recorder_repeat(b, ok, now), 1);
    for (i = 0; i <= SM_REC_FORGET_RING; i++)
        sm_rec_forget_put(sh, 1000 + (apr_uint64_t)i);
    assert_int_equal(sm_recorder_repeat(b, ok, now), 0);
    sm_recorder_stop(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_take),
        cmocka_unit_test(test_ring_unwritten),
        cmocka_unit_test(test_ring_lapped),
        cmocka_unit_test(test_ring_race),
        cmocka_unit_test_setup_teardown(test_store_marks, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_store_marks_pg, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_other_process_follows,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_lapped_forgets_all, unit_setup,
                                        unit_teardown),
    };

    UNIT_STORE_RUN(tests);
}
