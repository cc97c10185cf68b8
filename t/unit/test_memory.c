/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the recorder's memory (sm_memory) alone: what it vouches
 * for, when it stops vouching, and lock-free readers racing a writer
 * (run again under ThreadSanitizer by t/tsan/run). */
#include "unit.h"

#include "record/sm_memory.h"

#include <apr_thread_proc.h>

typedef struct {
    sm_memory m;
    apr_thread_mutex_t *lock;
} owner;

static owner *make(unit_ctx *u, apr_interval_time_t refresh)
{
    owner *o = sm_cache_lines(u->pool, (sizeof(owner) + 63) / 64);
    assert_int_equal(apr_thread_mutex_create(&o->lock,
                                             APR_THREAD_MUTEX_DEFAULT,
                                             u->pool), APR_SUCCESS);
    sm_memory_init(&o->m, u->pool, o->lock, refresh);
    return o;
}

#define NOW apr_time_from_sec(1700000000)
#define NOW_S 1700000000u

static void test_written_urls(void **state)
{
    owner *o = make(*state, apr_time_from_sec(3600));
    sm_memory *m = &o->m;

    assert_false(sm_memory_fresh(m, 42, 2, NOW_S));
    sm_memory_put(m, 42, 2, NOW_S);
    assert_true(sm_memory_fresh(m, 42, 2, NOW_S + 3599));
    assert_false(sm_memory_fresh(m, 42, 2, NOW_S + 3600));   /* refresh */
    assert_false(sm_memory_fresh(m, 42, 4, NOW_S));          /* changed */
    assert_false(sm_memory_fresh(m, 43, 2, NOW_S));
    /* A forgotten URL is refreshed after a minute. */
    sm_memory_put(m, 44, 2 | SM_MEMORY_FORGET, NOW_S);
    assert_true(sm_memory_fresh(m, 44, 2 | SM_MEMORY_FORGET, NOW_S + 59));
    assert_false(sm_memory_fresh(m, 44, 2 | SM_MEMORY_FORGET, NOW_S + 60));
    sm_memory_drop(m, 42);
    assert_false(sm_memory_fresh(m, 42, 2, NOW_S));
    sm_memory_put(m, 42, 2, NOW_S);
    sm_memory_clear(m);
    assert_false(sm_memory_fresh(m, 42, 2, NOW_S));
    assert_false(sm_memory_fresh(m, 44, 2 | SM_MEMORY_FORGET, NOW_S));
}

/* Five URLs of one set: four ways, the oldest way goes. */
static void test_set_eviction(void **state)
{
    owner *o = make(*state, apr_time_from_sec(3600));
    apr_uint64_t k;
    int fresh = 0;

    for (k = 1; k <= 5; k++)
        sm_memory_put(&o->m, k * SEEN_SETS, 2, NOW_S);
    for (k = 1; k <= 5; k++)
        fresh += sm_memory_fresh(&o->m, k * SEEN_SETS, 2, NOW_S);
    assert_int_equal(fresh, SEEN_WAYS);
    assert_true(sm_memory_fresh(&o->m, 5 * SEEN_SETS, 2, NOW_S));
}

static void test_aliases(void **state)
{
    owner *o = make(*state, apr_time_from_sec(3600));
    sm_memory *m = &o->m;
    apr_uint64_t raw = sm_memory_raw(7, 0x1234567890abcdefULL);

    assert_int_not_equal(raw, 0);
    assert_int_equal(raw % SEEN_SETS, 7);       /* the set of first */
    assert_false(sm_memory_repeat(m, raw, NOW));
    /* An alias of a URL the memory does not hold is never a repeat. */
    sm_memory_alias_put(m, raw, 42, 2);
    sm_memory_alias_vouch(m, raw, NOW_S);
    assert_false(sm_memory_repeat(m, raw, NOW));
    sm_memory_put(m, 42, 2, NOW_S);
    assert_true(sm_memory_repeat(m, raw, NOW));
    sm_memory_alias_vouch(m, raw, NOW_S);
    assert_true(sm_memory_repeat(m, raw, NOW));
    assert_false(sm_memory_repeat(m, raw, NOW + apr_time_from_sec(3600)));
    /* The URL written with another fingerprint: the alias stops. */
    sm_memory_put(m, 42, 4, NOW_S);
    assert_false(sm_memory_repeat(m, raw, NOW));
    sm_memory_put(m, 42, 2, NOW_S);
    assert_true(sm_memory_repeat(m, raw, NOW));
    sm_memory_clear(m);
    assert_false(sm_memory_repeat(m, raw, NOW));
    assert_false(sm_memory_repeat(m, 0, NOW));
}

/* sm_memory_alias_copy: the head filter's facts (before mod_deflate's
 * "-gzip") made to lead where the final facts' alias does, after their
 * own alias was evicted (sm_recorder_repeat_alias). */
static void test_alias_copy(void **state)
{
    owner *o = make(*state, apr_time_from_sec(3600));
    sm_memory *m = &o->m;
    apr_uint64_t final = sm_memory_raw(7, 0x1111), early = sm_memory_raw(9,
                                                                   0x2222);

    sm_memory_put(m, 42, 2, NOW_S);
    assert_false(sm_memory_alias_copy(m, final, early, NOW_S));
    assert_false(sm_memory_repeat(m, early, NOW));
    sm_memory_alias_put(m, final, 42, 2);
    assert_true(sm_memory_repeat(m, final, NOW));
    assert_false(sm_memory_repeat(m, early, NOW));
    assert_true(sm_memory_alias_copy(m, final, early, NOW_S));
    assert_true(sm_memory_repeat(m, early, NOW));
    /* it leads to the same URL and fingerprint: a change of the URL
     * stops both */
    sm_memory_put(m, 42, 4, NOW_S);
    assert_false(sm_memory_repeat(m, early, NOW));
    assert_false(sm_memory_repeat(m, final, NOW));
    assert_false(sm_memory_alias_copy(m, final, 0, NOW_S));
}

/* A writer flips 32 URLs between two fingerprints (under the lock, as
 * the recorder does); readers ask about both aliases without it.  A
 * "repeat" heard while no change of that URL was under way must be for
 * its current fingerprint. */
#define RACE_URLS 32
#define RACE_ROUNDS 20000

typedef struct {
    owner *o;
    int writer;
    int repeats, wrong;
} race_ctx;

static apr_uint32_t race_version[RACE_URLS];
static int race_fp[RACE_URLS];
/* Rounds the writer has done: the readers start once it has written a
 * few (under valgrind, which runs one thread at a time, they could
 * otherwise read an empty memory to the end before it starts). */
static int race_written;

static apr_uint64_t race_raw(int url, int fp)
{
    return sm_memory_raw((apr_uint64_t)url * 3 + 1,
                         ((apr_uint64_t)(url * 2 + fp) << 32) | 0xabc000);
}

static void *APR_THREAD_FUNC race_thread(apr_thread_t *t, void *data)
{
    race_ctx *rc = data;
    sm_memory *m = &rc->o->m;
    unsigned x = 12345u + (unsigned)rc->writer;
    int i;

    while (!rc->writer && __atomic_load_n(&race_written, __ATOMIC_SEQ_CST)
                          < RACE_URLS)
        apr_thread_yield();
    for (i = 0; i < RACE_ROUNDS; i++) {
        int u, f;
        x = x * 1103515245u + 12345u;
        u = (int)((x >> 8) % RACE_URLS);
        f = (int)((x >> 20) & 1);
        if (rc->writer) {
            apr_uint64_t key = (apr_uint64_t)u * 977 + 5;
            __atomic_add_fetch(&race_version[u], 1, __ATOMIC_SEQ_CST);
            apr_thread_mutex_lock(rc->o->lock);
            sm_memory_alias_put(m, race_raw(u, f), key, 2u << f);
            sm_memory_put(m, key, 2u << f, NOW_S);
            sm_memory_alias_vouch(m, race_raw(u, f), NOW_S);
            apr_thread_mutex_unlock(rc->o->lock);
            __atomic_store_n(&race_fp[u], f, __ATOMIC_SEQ_CST);
            __atomic_add_fetch(&race_version[u], 1, __ATOMIC_SEQ_CST);
            __atomic_add_fetch(&race_written, 1, __ATOMIC_SEQ_CST);
        }
        else {
            apr_uint32_t before = __atomic_load_n(&race_version[u],
                                                  __ATOMIC_SEQ_CST);
            int cur = __atomic_load_n(&race_fp[u], __ATOMIC_SEQ_CST);
            int repeat = sm_memory_repeat(m, race_raw(u, f), NOW);
            apr_uint32_t after = __atomic_load_n(&race_version[u],
                                                 __ATOMIC_SEQ_CST);
            if (repeat && before == after && !(before & 1) && cur != f)
                rc->wrong++;
            else if (repeat)
                rc->repeats++;
        }
    }
    apr_thread_exit(t, APR_SUCCESS);
    return NULL;
}

static void test_readers_race_a_writer(void **state)
{
    unit_ctx *u = *state;
    owner *o = make(u, apr_time_from_sec(3600));
    apr_thread_t *threads[3];
    race_ctx rc[3];
    apr_status_t rv;
    int i;

    for (i = 0; i < RACE_URLS; i++) {
        race_version[i] = 0;
        race_fp[i] = -1;
    }
    race_written = 0;
    for (i = 0; i < 3; i++) {
        rc[i].o = o;
        rc[i].writer = i == 0;
        rc[i].repeats = rc[i].wrong = 0;
        assert_int_equal(apr_thread_create(&threads[i], NULL, race_thread,
                                           &rc[i], u->pool), APR_SUCCESS);
    }
    for (i = 0; i < 3; i++)
        apr_thread_join(&rv, threads[i]);
    if (rc[1].wrong + rc[2].wrong)
        fail_msg("%d stale repeats", rc[1].wrong + rc[2].wrong);
    assert_true(rc[1].repeats + rc[2].repeats > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_written_urls, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_set_eviction, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_aliases, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_alias_copy, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_readers_race_a_writer,
                                        unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
