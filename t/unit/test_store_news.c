/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of what the SQLite store keeps for the news sitemap and
 * llms.txt: a page's description and publication time (written with the
 * page, moving its page's version but never its lastmod), and the two
 * documents' reads (sm_store_news_urls, sm_store_llms_urls); the schema
 * step from the version before. */
#include "unit_store.h"

#include "store/sm_store_backend.h"

#include <string.h>

static const sm_site_conf site = {
    "http://n.example", 50000, 0, 0, NULL, 0
};

#define T0 apr_time_from_sec(1795687200)
#define HOUR apr_time_from_sec(3600)

/* A record of url as the head reader saw it (description NULL: not
 * read). */
static void put(sm_store *st, const char *url, apr_time_t lm,
                const char *title, const char *description,
                apr_time_t published)
{
    sm_change c;
    sm_apply_stats stats;

    memset(&c, 0, sizeof(c));
    c.op = SM_CHANGE_RECORD;
    c.site = &site;
    c.url = url;
    c.last_modified = lm;
    c.seen = T0;
    c.title = title;
    c.description = description;
    c.published = published;
    if (sm_store_apply(st, &c, 1, &stats) != APR_SUCCESS)
        fail_msg("apply %s: %s", url, sm_store_error(st));
}

static sqlite3_int64 version(const char *path)
{
    return sql_int(path, "SELECT sum(version) FROM pages");
}

static void test_written_with_the_page(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/n.db", NULL);
    sm_store *st = unit_sqlite_open(u, path);
    sqlite3_int64 v;

    put(st, "/a", T0 - HOUR, "A", "About a", T0);
    assert_int_equal(sql_int(path, "SELECT published FROM urls"),
                     apr_time_sec(T0));
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls"
                                   " WHERE description = 'About a'"), 1);
    /* the same again: nothing moves */
    v = version(path);
    put(st, "/a", T0 - HOUR, "A", "About a", T0);
    assert_int_equal(version(path), v);
    /* the head not read: what is stored stays */
    put(st, "/a", T0 - HOUR, NULL, NULL, 0);
    assert_int_equal(version(path), v);
    assert_int_equal(sql_int(path, "SELECT published FROM urls"),
                     apr_time_sec(T0));
    /* a new description alone: the version moves, lastmod does not */
    put(st, "/a", T0 - HOUR, "A", "Now about b", T0);
    assert_true(version(path) > v);
    assert_int_equal(sql_int(path, "SELECT lastmod FROM urls"),
                     apr_time_sec(T0 - HOUR));
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls"
                                   " WHERE description = 'Now about b'"), 1);
    /* none any more: cleared */
    v = version(path);
    put(st, "/a", T0 - HOUR, "A", "", 0);
    assert_true(version(path) > v);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls"
                                   " WHERE description IS NULL"
                                   " AND published = 0"), 1);
    sm_store_close(st);
}

static void test_reads(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/n.db", NULL);
    sm_store *st = unit_sqlite_open(u, path);
    seen_urls s = { u->pool, "", T0 };

    put(st, "/news/old", T0, "Old", "", T0 - 49 * HOUR);
    put(st, "/news/new", T0, "New", "", T0 - HOUR);
    put(st, "/news/mid", T0, NULL, "", T0 - 2 * HOUR);
    put(st, "/about", T0 - 3 * HOUR, "About", "Who", 0);
    put(st, "/", T0 - 5 * HOUR, "Home", "Start", 0);
    put(st, "/a/b/c", T0, "Deep", "", 0);

    assert_int_equal(sm_store_read_begin(st), APR_SUCCESS);
    assert_int_equal(sm_store_news_urls(st, site.base, T0 - 48 * HOUR, 1000,
                                        unit_news_row, &s), APR_SUCCESS);
    assert_string_equal(s.got, "/news/new=New@-3600 /news/mid=-@-7200 ");
    s.got = "";
    assert_int_equal(sm_store_news_urls(st, site.base, 0, 2, unit_news_row, &s),
                     APR_SUCCESS);
    assert_string_equal(s.got, "/news/new=New@-3600 /news/mid=-@-7200 ");
    s.got = "";
    assert_int_equal(sm_store_news_urls(st, "http://other.example", 0, 10,
                                        unit_news_row, &s), APR_SUCCESS);
    assert_string_equal(s.got, "");

    /* the home page, then by depth, then the most recently changed */
    s.got = "";
    assert_int_equal(sm_store_llms_urls(st, site.base, 100, unit_llms_row, &s),
                     APR_SUCCESS);
    assert_string_equal(s.got, "/=Home/Start /about=About/Who "
                        "/news/old=Old/- /news/new=New/- /news/mid=-/- "
                        "/a/b/c=Deep/- ");
    s.got = "";
    assert_int_equal(sm_store_llms_urls(st, site.base, 3, unit_llms_row, &s),
                     APR_SUCCESS);
    assert_string_equal(s.got, "/=Home/Start /about=About/Who "
                        "/news/old=Old/- ");
    sm_store_read_end(st);
    sm_store_close(st);
}

/* A store of the version before: the first writer adds the columns. */
static void test_upgrade(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/n.db", NULL);
    sm_store *st = unit_sqlite_open(u, path);

    put(st, "/kept", T0, "Kept", NULL, 0);
    sm_store_close(st);
    /* back to schema 10, before the news step (and the robots.txt step
     * after it) */
    sql_exec(path, SM_UNIT_DROP_NEWS " PRAGMA user_version = 10;");
    st = unit_sqlite_open(u, path);
    assert_int_equal(sql_int(path, "PRAGMA user_version"), SM_SCHEMA_VERSION);
    put(st, "/kept", T0, "Kept", "Now described", T0);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls WHERE"
                                   " description = 'Now described'"
                                   " AND title = 'Kept'"), 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM sqlite_master"
                                   " WHERE name = 'urls_published'"), 1);
    sm_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_written_with_the_page,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_reads, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_upgrade, unit_setup,
                                        unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
