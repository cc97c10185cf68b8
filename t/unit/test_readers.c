/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the readers' pool: a released reader is reused, idle ones
 * are closed after their time (descriptors and all), at most keep are
 * kept, and a replaced store file gets a new reader. */
#include "unit.h"

#include "store/sm_readers.h"

#include <stdio.h>

static const sm_logger quiet = { NULL, NULL, SM_LOG_ERR };
static char err[512];     /* why an acquire failed */

static const char *make_store(unit_ctx *u, const char *name)
{
    const char *path = apr_pstrcat(u->pool, u->dir, "/", name, NULL);
    sm_store *st;
    char err[256];

    assert_int_equal(sm_store_open(&st, u->pool, path, SM_STORE_CREATE, 100,
                                   NULL, err, sizeof(err)), APR_SUCCESS);
    sm_store_close(st);
    return path;
}

static void test_reused_then_closed_when_idle(void **state)
{
    unit_ctx *u = *state;
    const char *path = make_store(u, "r.db");
    sm_readers *r;
    sm_store *a, *b, *c;
    apr_time_t now;

    assert_int_equal(sm_readers_create(&r, u->pool, path, 2,
                                       apr_time_from_sec(60), &quiet),
                     APR_SUCCESS);
    assert_int_equal(unit_open_on(path), 0);         /* nothing opened early */
    assert_non_null(a = sm_readers_acquire(r, err, sizeof(err)));
    sm_readers_release(r, a);
    assert_ptr_equal(sm_readers_acquire(r, err, sizeof(err)), a); /* reused */
    assert_non_null(b = sm_readers_acquire(r, err, sizeof(err)));
    assert_non_null(c = sm_readers_acquire(r, err, sizeof(err)));
    assert_int_equal(sm_readers_open_count(r), 3);
    sm_readers_release(r, a);
    sm_readers_release(r, b);
    sm_readers_release(r, c);                   /* beyond keep: closed */
    assert_int_equal(sm_readers_open_count(r), 2);
    assert_true(unit_open_on(path) > 0);
    /* Not idle long enough yet. */
    now = apr_time_now();
    sm_readers_close_idle(r, now);
    assert_int_equal(sm_readers_open_count(r), 2);
    sm_readers_close_idle(r, now + apr_time_from_sec(61));
    assert_int_equal(sm_readers_open_count(r), 0);
    assert_int_equal(unit_open_on(path), 0);
    /* And opened again when asked for. */
    assert_non_null(a = sm_readers_acquire(r, err, sizeof(err)));
    assert_int_equal(sm_store_read_begin(a), APR_SUCCESS);
    sm_store_read_end(a);
    sm_readers_invalidate(r, a);
    assert_int_equal(sm_readers_open_count(r), 0);
    assert_int_equal(unit_open_on(path), 0);
}

/* Only the readers idle for long are closed; the recently used stay. */
static void test_only_the_old_are_closed(void **state)
{
    unit_ctx *u = *state;
    const char *path = make_store(u, "o.db");
    sm_readers *r;
    sm_store *a, *b;

    assert_int_equal(sm_readers_create(&r, u->pool, path, 4,
                                       apr_time_from_msec(200), &quiet),
                     APR_SUCCESS);
    a = sm_readers_acquire(r, err, sizeof(err));
    b = sm_readers_acquire(r, err, sizeof(err));
    sm_readers_release(r, a);
    apr_sleep(apr_time_from_msec(300));
    sm_readers_release(r, b);
    sm_readers_close_idle(r, apr_time_now());
    assert_int_equal(sm_readers_open_count(r), 1);
    assert_ptr_equal(sm_readers_acquire(r, err, sizeof(err)), b);
    sm_readers_release(r, b);
}

/* A store file replaced under an idle reader: the next acquire gets a
 * reader of the new file. */
static void test_replaced_store_gets_a_new_reader(void **state)
{
    unit_ctx *u = *state;
    const char *path = make_store(u, "p.db");
    const char *other = make_store(u, "q.db");
    sm_readers *r;
    sm_store *a, *b;

    assert_int_equal(sm_readers_create(&r, u->pool, path, 2,
                                       apr_time_from_sec(60), &quiet),
                     APR_SUCCESS);
    a = sm_readers_acquire(r, err, sizeof(err));
    sm_readers_release(r, a);
    assert_int_equal(rename(other, path), 0);
    b = sm_readers_acquire(r, err, sizeof(err));
    assert_non_null(b);
    assert_true(sm_store_is_current(b));
    assert_int_equal(sm_readers_open_count(r), 1);
    sm_readers_release(r, b);
}

/* A store that cannot be opened: NULL, nothing counted as open. */
static void test_missing_store(void **state)
{
    unit_ctx *u = *state;
    sm_readers *r;

    assert_int_equal(sm_readers_create(&r, u->pool,
                                       apr_pstrcat(u->pool, u->dir,
                                                   "/none/x.db", NULL),
                                       2, apr_time_from_sec(60), &quiet),
                     APR_SUCCESS);
    err[0] = '\0';
    assert_null(sm_readers_acquire(r, err, sizeof(err)));
    assert_int_equal(sm_readers_open_count(r), 0);
    /* Why, for the 503's log line. */
    assert_non_null(strstr(err, "cannot open"));
}

/* A crawler reading many sites in turn: at most 16 idle readers stay open
 * in the process, all stores together. */
static void test_idle_readers_bounded_per_process(void **state)
{
    unit_ctx *u = *state;
    sm_readers *r[20];
    int i, open = 0;

    for (i = 0; i < 20; i++) {
        const char *path = make_store(u, apr_psprintf(u->pool, "m%d.db", i));
        sm_store *st;
        assert_int_equal(sm_readers_create(&r[i], u->pool, path, 4,
                                           apr_time_from_sec(60), &quiet),
                         APR_SUCCESS);
        assert_non_null(st = sm_readers_acquire(r[i], err, sizeof(err)));
        sm_readers_release(r[i], st);
    }
    for (i = 0; i < 20; i++)
        open += sm_readers_open_count(r[i]);
    assert_int_equal(open, 16);
    /* One taken and given back: the room it left is used again. */
    sm_readers_release(r[0], sm_readers_acquire(r[0], err, sizeof(err)));
    sm_readers_close_idle(r[1], apr_time_now() + apr_time_from_sec(61));
    sm_readers_release(r[19], sm_readers_acquire(r[19], err, sizeof(err)));
    assert_int_equal(sm_readers_open_count(r[19]), 1);
    for (i = 0; i < 20; i++)
        sm_readers_close_idle(r[i], apr_time_now() + apr_time_from_sec(61));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reused_then_closed_when_idle,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_only_the_old_are_closed,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_replaced_store_gets_a_new_reader,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_idle_readers_bounded_per_process,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_missing_store,
                                        unit_setup, unit_teardown),
    };

    apr_initialize();
    atexit(apr_terminate);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
