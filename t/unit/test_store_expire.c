/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of expiry by each page's oldest last_seen (issue 35), on
 * SQLite and (the _pg variants) PostgreSQL: exactly the URLs not seen
 * within the limit leave, across pages and chunks; a page whose figure is
 * stale (its oldest URL refreshed since) is walked once and set again; a
 * page whose figure is not past the limit is not walked at all; a stop
 * ends the walk and gives the claim back, the next run finishing it. */
#include "unit.h"

#include "store/sm_store_backend.h"

#include <string.h>

#define T0 1700000000       /* "now", in seconds: before the clock's */

static sm_site_conf site = { "https://x.example", 10, 0,
                             APR_TIME_C(100) * APR_USEC_PER_SEC, NULL, 0 };

/* The _pg variants run on the PostgreSQL database SM_UNIT_PG_URI names
 * (skipped without it; t/integration/test_unit_pg.py runs them), each
 * test a site of its own. */
static const char *pg_uri;

static sm_store *open_store(unit_ctx *u, const volatile int *stopping,
                            char **path)
{
    sm_store *st;
    char err[512];

    *path = apr_pstrcat(u->pool, u->dir, "/e.db", NULL);
    if (sm_store_open_stoppable(&st, u->pool, pg_uri ? pg_uri : *path,
                                SM_STORE_CREATE, 1000, NULL, stopping, err,
                                sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    return st;
}

/* Record url as seen at seen (seconds). */
static void put(sm_store *st, const char *url, apr_int64_t seen)
{
    sm_change c;
    sm_apply_stats stats;

    memset(&c, 0, sizeof(c));
    c.op = SM_CHANGE_RECORD;
    c.site = &site;
    c.url = url;
    c.last_modified = apr_time_from_sec(T0 - 1000);
    c.seen = apr_time_from_sec(seen);
    c.status = 200;
    assert_int_equal(sm_store_apply(st, &c, 1, &stats), APR_SUCCESS);
}

typedef struct {
    apr_pool_t *p;
    const char *urls;           /* " url" for each, in page order */
    int n;
} listing;

static apr_status_t list_one(void *baton, const char *url, apr_int64_t page,
                             apr_time_t lastmod, apr_time_t last_seen,
                             const char *alternates)
{
    listing *l = baton;

    (void)page; (void)lastmod; (void)last_seen; (void)alternates;
    l->urls = apr_pstrcat(l->p, l->urls, " ", url, NULL);
    l->n++;
    return APR_SUCCESS;
}

/* The site's stored URLs as " /a /b ...". */
static const char *stored(unit_ctx *u, sm_store *st)
{
    listing l = { u->pool, "", 0 };

    assert_int_equal(sm_store_url_rows(st, site.base, 0, list_one, &l),
                     APR_SUCCESS);
    return l.urls;
}

static int expire(sm_store *st, apr_int64_t now, apr_int64_t every)
{
    int removed = -1;

    assert_int_equal(sm_store_expire(st, &site, apr_time_from_sec(now),
                                     apr_time_from_sec(every), &removed),
                     APR_SUCCESS);
    return removed;
}

/* Six pages of ten; the old URLs on some of them only, one page all old,
 * one with none. */
static void test_exact(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, NULL, &path);
    const char *want = "";
    int i;

    for (i = 0; i < 60; i++) {
        /* page 1: every third old; page 3: all old; page 5: none old;
         * others: the last of the page old */
        int page = i / 10 + 1, old =
            page == 1 ? i % 3 == 0 : page == 3 ? 1 : page == 5 ? 0
                                                  : i % 10 == 9;
        const char *url = apr_psprintf(u->pool, "/u%02d", i);
        put(st, url, old ? T0 - 101 : T0 - 99 + i % 3);
        if (!old)
            want = apr_pstrcat(u->pool, want, " ", url, NULL);
    }
    assert_int_equal(expire(st, T0, 0), 17);
    assert_string_equal(stored(u, st), want);
    /* nothing more to expire at the same time, and the summaries agree */
    assert_int_equal(expire(st, T0, 0), 0);
    if (!pg_uri) {
        assert_int_equal(sql_int(path, "SELECT count(*) FROM pages p WHERE"
                                 " url_count <> (SELECT count(*) FROM urls"
                                 " u WHERE u.page = p.page)"), 0);
        /* each page's figure is its oldest URL's, or later for none */
        assert_int_equal(sql_int(path, "SELECT count(*) FROM pages p WHERE"
                                 " oldest_seen <> coalesce((SELECT"
                                 " min(last_seen) FROM urls u WHERE u.page"
                                 " = p.page), oldest_seen)"), 0);
    }
    /* two seconds on, the URLs seen at T0 - 99 leave too */
    assert_int_equal(expire(st, T0 + 2, 0), 12);
    assert_int_equal(expire(st, T0 + 3, 0), 16);
    assert_int_equal(expire(st, T0 + 4, 0), 15);
    assert_string_equal(stored(u, st), "");
    sm_store_close(st);
}

/* A URL refreshed after its page's figure was set: the figure stays low
 * (the writer does not raise it), the page is walked once, nothing
 * leaves, and the figure is its URLs' oldest again. */
static void test_refreshed(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, NULL, &path);

    put(st, "/a", T0 - 500);
    put(st, "/b", T0 - 50);
    put(st, "/a", T0 - 40);             /* refreshed */
    assert_int_equal(expire(st, T0, 0), 0);
    assert_string_equal(stored(u, st), " /a /b");
    if (!pg_uri)
        assert_int_equal(sql_int(path, "SELECT oldest_seen FROM pages"),
                         T0 - 50);
    assert_int_equal(expire(st, T0 + 55, 0), 1);
    assert_string_equal(stored(u, st), " /a");
    /* a URL added to a page whose figure is later lowers it */
    put(st, "/c", T0 - 200);
    assert_int_equal(expire(st, T0 + 55, 0), 1);
    assert_string_equal(stored(u, st), " /a");
    sm_store_close(st);
}

/* A page whose figure is not past the limit is not read: an old
 * last_seen written behind the writer's back (SQLite) stays. */
static void test_page_skipped(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, NULL, &path);
    int i;

    for (i = 0; i < 20; i++)
        put(st, apr_psprintf(u->pool, "/s%02d", i), T0 - 10);
    sql_exec(path, "UPDATE urls SET last_seen = 1 WHERE url IN"
             " ('/s03', '/s13')");
    sql_exec(path, "UPDATE pages SET oldest_seen = 1 WHERE page = 2");
    /* page 2's figure says it may hold an old URL: only its /s13 leaves */
    assert_int_equal(expire(st, T0, 0), 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls WHERE"
                             " url = '/s03'"), 1);
    /* a store of the schema before: figures of 0, every page walked */
    sql_exec(path, "UPDATE pages SET oldest_seen = 0");
    assert_int_equal(expire(st, T0, 0), 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls"), 18);
    assert_int_equal(sql_int(path, "SELECT min(oldest_seen) FROM pages"),
                     T0 - 10);
    sm_store_close(st);
}

/* A stop asked for before the walk: nothing removed, the claim given
 * back, so that the next run (another process) does it at once. */
static void test_stop(void **state)
{
    unit_ctx *u = *state;
    char *path;
    volatile int stopping = 0;
    sm_store *st = open_store(u, &stopping, &path);
    int i;

    for (i = 0; i < 25; i++)
        put(st, apr_psprintf(u->pool, "/t%02d", i),
            i % 2 ? T0 - 10 : T0 - 500);
    stopping = 1;
    assert_int_equal(expire(st, T0, 3600), 0);
    stopping = 0;
    assert_int_equal(expire(st, T0 + 1, 3600), 13);
    /* claimed now: within the period, nothing runs */
    put(st, "/late", T0 - 500);
    assert_int_equal(expire(st, T0 + 2, 3600), 0);
    assert_int_equal(expire(st, T0 + 2, 0), 1);
    sm_store_close(st);
}

UNIT_PG_VARIANT(test_exact)

UNIT_PG_VARIANT(test_refreshed)

UNIT_PG_VARIANT(test_stop)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_exact, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_refreshed, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_page_skipped, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_stop, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_exact_pg, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_refreshed_pg, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_stop_pg, unit_setup,
                                        unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
