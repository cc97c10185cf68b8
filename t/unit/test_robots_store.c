/* SPDX-License-Identifier: Apache-2.0 */
/* test_robots_store: the site's robots.txt kept in the store
 * (SM_CHANGE_ROBOTS) and what the writer does with it: the sweep of the
 * URLs its rules disallow, and no URL they disallow added.  SQLite here;
 * with SM_UNIT_PG_URI set (t/unit/robots_pg) the _pg tests run the same
 * on PostgreSQL. */
#include "unit.h"

#include "record/sm_recorder.h"
#include "store/sm_store_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sm_site_conf site = { "https://r.example", 50000, 0, 0, NULL, 0 };
static void say(void *baton, sm_log_level level, apr_status_t rv,
                const char *msg)
{
    (void)baton; (void)level; (void)rv;
    fprintf(stderr, "LOG: %s\n", msg);
}
static sm_logger logger = { say, NULL, SM_LOG_WARN };
static const char *pg_uri;      /* the _pg variants' database */

static apr_int64_t T0;          /* now, in seconds (main) */

static const char *where(unit_ctx *u, const char *name)
{
    return pg_uri ? pg_uri : apr_pstrcat(u->pool, u->dir, "/", name, NULL);
}

static sm_store *open_store(unit_ctx *u, const char *name)
{
    sm_store *st;
    char err[512];

    if (sm_store_open(&st, u->pool, where(u, name), SM_STORE_CREATE, 1000,
                      NULL, err, sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    assert_int_equal(sm_store_sync_sites(st, (const sm_site_conf *[]){ &site },
                                         1), APR_SUCCESS);
    return st;
}

static sm_change change(sm_change_op op, const char *url, const char *body,
                        apr_int64_t sec)
{
    sm_change c;

    memset(&c, 0, sizeof(c));
    c.op = op;
    c.site = &site;
    c.url = url;
    c.detail = body;
    c.seen = apr_time_from_sec(sec);
    c.status = 200;
    return c;
}

static void apply1(sm_store *st, sm_change c)
{
    sm_apply_stats stats;

    if (sm_store_apply(st, &c, 1, &stats) != APR_SUCCESS)
        fail_msg("apply: %s", sm_store_error(st));
}

static sm_robots_row row_of(unit_ctx *u, sm_store *st)
{
    apr_array_header_t *rows;
    int i;

    assert_int_equal(sm_store_robots_list(st, u->pool, &rows), APR_SUCCESS);
    for (i = 0; i < rows->nelts; i++)
        if (!strcmp(APR_ARRAY_IDX(rows, i, sm_robots_row).base, site.base))
            return APR_ARRAY_IDX(rows, i, sm_robots_row);
    fail_msg("no robots row for %s", site.base);
    return APR_ARRAY_IDX(rows, 0, sm_robots_row);
}

/* Kept when it differs; the same body again neither rewrites it nor
 * starts the sweep over; a sweep's progress is noted only for the rules
 * it is for. */
static void test_kept_when_changed(void **state)
{
    unit_ctx *u = *state;
    sm_store *st = open_store(u, "k.db");
    const char *a = "User-agent: *\nDisallow: /a/\n";
    sm_robots_row row, full;

    apply1(st, change(SM_CHANGE_ROBOTS, "/robots.txt", a, T0));
    row = row_of(u, st);
    assert_int_equal(row.hash, sm_robots_hash(a));
    assert_non_null(row.sweep);
    assert_string_equal(row.sweep, "");
    assert_int_equal(sm_store_robots_body(st, u->pool, site.base, &full),
                     APR_SUCCESS);
    assert_string_equal(full.body, a);

    assert_int_equal(sm_store_robots_swept(st, site.base, row.hash, "/m"),
                     APR_SUCCESS);
    assert_string_equal(row_of(u, st).sweep, "/m");
    /* another rules' sweep: nothing */
    assert_int_equal(sm_store_robots_swept(st, site.base, row.hash + 1,
                                           NULL), APR_SUCCESS);
    assert_string_equal(row_of(u, st).sweep, "/m");
    assert_int_equal(sm_store_robots_swept(st, site.base, row.hash, NULL),
                     APR_SUCCESS);
    assert_null(row_of(u, st).sweep);
    /* the same body again: no new sweep */
    apply1(st, change(SM_CHANGE_ROBOTS, "/robots.txt", a, T0 + 10));
    assert_null(row_of(u, st).sweep);
    assert_int_equal(row_of(u, st).seen, apr_time_from_sec(T0));
    /* another: kept, and swept from the start */
    apply1(st, change(SM_CHANGE_ROBOTS, "/robots.txt", "", T0 + 20));
    row = row_of(u, st);
    assert_int_equal(row.hash, sm_robots_hash(""));
    assert_string_equal(row.sweep, "");
    sm_store_close(st);
}

/* The sweep's walk: URL order, after the cursor, n at most. */
static void test_urls_after(void **state)
{
    unit_ctx *u = *state;
    sm_store *st = open_store(u, "u.db");
    apr_array_header_t *urls;

    apply1(st, change(SM_CHANGE_RECORD, "/c", NULL, T0));
    apply1(st, change(SM_CHANGE_RECORD, "/a", NULL, T0));
    apply1(st, change(SM_CHANGE_RECORD, "/b", NULL, T0));
    assert_int_equal(sm_store_robots_urls(st, u->pool, site.base, "", 2,
                                          &urls), APR_SUCCESS);
    assert_int_equal(urls->nelts, 2);
    assert_string_equal(APR_ARRAY_IDX(urls, 0, const char *), "/a");
    assert_string_equal(APR_ARRAY_IDX(urls, 1, const char *), "/b");
    assert_int_equal(sm_store_robots_urls(st, u->pool, site.base, "/b", 2,
                                          &urls), APR_SUCCESS);
    assert_int_equal(urls->nelts, 1);
    assert_string_equal(APR_ARRAY_IDX(urls, 0, const char *), "/c");
    sm_store_close(st);
}

static sm_recorder *make(unit_ctx *u, const char *name)
{
    sm_recorder *rec;
    sm_recorder_conf conf = { where(u, name), apr_time_from_msec(100), 100,
                              1000, 200, &logger, NULL,
                              apr_pstrcat(u->pool, u->dir, "/spill", NULL),
                              NULL, 0, 0, 0, 0 };

    assert_int_equal(sm_recorder_create(&rec, u->pool, &conf), APR_SUCCESS);
    sm_recorder_add_site(rec, &site);
    return rec;
}

static int stored(unit_ctx *u, sm_store *st, const char *url)
{
    sm_why_info why;

    if (sm_store_why(st, u->pool, site.base, url, &why) != APR_SUCCESS)
        fail_msg("why: %s", sm_store_error(st));
    return why.listed;
}

static const char *reason(unit_ctx *u, sm_store *st, const char *url)
{
    sm_why_info why;

    assert_int_equal(sm_store_why(st, u->pool, site.base, url, &why),
                     APR_SUCCESS);
    return why.has_verdict ? why.verdict.reason : "";
}

/* A changed robots.txt removes the stored URLs it disallows (a sweep of
 * several chunks), with the verdict, and what it allows stays; from then
 * on no URL it disallows is added, whoever offers it. */
static void test_sweep_and_refuse(void **state)
{
    unit_ctx *u = *state;
    sm_recorder *rec = make(u, "s.db");
    sm_store *st;
    sm_change c;
    int i, n = 2500;            /* more than two chunks */
    apr_time_t deadline;

    st = open_store(u, "s.db");
    {
        sm_change *v = calloc((size_t)n + 1, sizeof(*v));
        sm_apply_stats stats;
        for (i = 0; i < n; i++)
            v[i] = change(SM_CHANGE_RECORD,
                          apr_psprintf(u->pool, "/a/%05d", i), NULL, T0);
        v[n] = change(SM_CHANGE_RECORD, "/b", NULL, T0);
        for (i = 0; i <= n; i += 500)
            if (sm_store_apply(st, v + i, n + 1 - i < 500 ? n + 1 - i : 500,
                               &stats) != APR_SUCCESS)
                fail_msg("apply: %s", sm_store_error(st));
        free(v);
    }
    assert_int_equal(sm_recorder_start(rec), APR_SUCCESS);
    c = change(SM_CHANGE_ROBOTS, "/robots.txt",
               "User-agent: *\nAllow: /\n\nUser-agent: Googlebot\n"
               "Disallow: /a/\n", T0);
    sm_recorder_robots(rec, &c);
    deadline = apr_time_now() + apr_time_from_sec(20);
    while (stored(u, st, apr_psprintf(u->pool, "/a/%05d", n - 1))) {
        assert_true(apr_time_now() < deadline);
        apr_sleep(apr_time_from_msec(50));
    }
    for (i = 0; i < n; i += 499)
        assert_false(stored(u, st, apr_psprintf(u->pool, "/a/%05d", i)));
    assert_true(stored(u, st, "/b"));
    assert_string_equal(reason(u, st, "/a/00000"),
                        "robots.txt line 5 disallows it for googlebot");
    /* a process with stale rules offers one again: not added */
    c = change(SM_CHANGE_RECORD, "/a/00001", NULL, T0 + 5);
    sm_recorder_add(rec, &c, 0);
    c = change(SM_CHANGE_RECORD, "/c", NULL, T0 + 5);
    sm_recorder_add(rec, &c, 0);
    deadline = apr_time_now() + apr_time_from_sec(10);
    while (!stored(u, st, "/c")) {
        assert_true(apr_time_now() < deadline);
        apr_sleep(apr_time_from_msec(50));
    }
    assert_false(stored(u, st, "/a/00001"));
    assert_string_equal(reason(u, st, "/a/00001"),
                        "robots.txt line 5 disallows it for googlebot");
    /* allowed again: it comes back at its next offer */
    c = change(SM_CHANGE_ROBOTS, "/robots.txt", "User-agent: *\nAllow: /\n",
               T0 + 6);
    sm_recorder_robots(rec, &c);
    c = change(SM_CHANGE_RECORD, "/a/00001", NULL, T0 + 7);
    sm_recorder_add(rec, &c, 0);
    deadline = apr_time_now() + apr_time_from_sec(10);
    while (!stored(u, st, "/a/00001")) {
        assert_true(apr_time_now() < deadline);
        apr_sleep(apr_time_from_msec(50));
    }
    sm_recorder_stop(rec);
    sm_store_close(st);
}

/* A second writer (another process) learns the stored rules: handed to
 * its process, and applied to what it adds. */
static void watched(void *baton, const sm_site_conf *s, const char *body,
                    apr_size_t len)
{
    char **out = baton;

    (void)s;
    free(*out);
    *out = body ? strndup(body, len) : strdup("(none)");
}

static void test_other_process_learns(void **state)
{
    unit_ctx *u = *state;
    sm_recorder *one = make(u, "o.db"), *two;
    sm_store *st;
    sm_change c;
    char *seen = NULL;
    const char *body = "User-agent: bingbot\nDisallow: /private\n";
    apr_time_t deadline;

    c = change(SM_CHANGE_ROBOTS, "/robots.txt", body, T0);
    sm_recorder_robots(one, &c);
    assert_int_equal(sm_recorder_flush(one), APR_SUCCESS);
    sm_recorder_stop(one);

    two = make(u, "o.db");
    sm_recorder_robots_watch(two, watched, &seen);
    assert_int_equal(sm_recorder_start(two), APR_SUCCESS);
    c = change(SM_CHANGE_RECORD, "/private/x", NULL, T0 + 1);
    sm_recorder_add(two, &c, 0);
    c = change(SM_CHANGE_RECORD, "/public", NULL, T0 + 1);
    sm_recorder_add(two, &c, 0);
    st = open_store(u, "o.db");
    deadline = apr_time_now() + apr_time_from_sec(10);
    while (!stored(u, st, "/public")) {
        assert_true(apr_time_now() < deadline);
        apr_sleep(apr_time_from_msec(50));
    }
    assert_false(stored(u, st, "/private/x"));
    assert_string_equal(reason(u, st, "/private/x"),
                        "robots.txt line 2 disallows it for bingbot");
    sm_recorder_stop(two);
    assert_non_null(seen);
    assert_string_equal(seen, body);
    free(seen);
    sm_store_close(st);
}

UNIT_PG_VARIANT(test_kept_when_changed)

UNIT_PG_VARIANT(test_urls_after)

UNIT_PG_VARIANT(test_sweep_and_refuse)

UNIT_PG_VARIANT(test_other_process_learns)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kept_when_changed, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_urls_after, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_sweep_and_refuse, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_other_process_learns, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_kept_when_changed_pg, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_urls_after_pg, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_sweep_and_refuse_pg, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_other_process_learns_pg, unit_setup, unit_teardown),
    };
    int rc;

    apr_initialize();
    T0 = apr_time_sec(apr_time_now()) - 100;
    sm_store_init();
    /* Stopping a recorder stops every store of the process for good
     * (sm_store_stop_all): t/unit/robots_pg runs each _pg test in a
     * process of its own (SM_UNIT_FILTER). */
    if (getenv("SM_UNIT_FILTER"))
        cmocka_set_test_filter(getenv("SM_UNIT_FILTER"));
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    apr_terminate();
    return rc;
}
