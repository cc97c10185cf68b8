/* Unit tests of the SQLite store: schema, page assignment, summaries,
 * lastmod rules, limits, expiry and refusal of foreign files. */
#include "unit.h"

#include "sm_store.h"

#include <stdio.h>
#include <string.h>

static const sm_site_conf site_a = {
    "http://a.example", 3, 0, 0, NULL
};
static const sm_site_conf site_b = {
    "https://b.example", 50000, 0, 0, NULL
};

static sm_store *open_store(unit_ctx *u, const char *name, char **path)
{
    sm_store *st;
    char err[512];

    *path = apr_pstrcat(u->pool, u->dir, "/", name, NULL);
    if (sm_store_open_sqlite(&st, u->pool, *path, SM_STORE_CREATE, 1000,
                             NULL, err, sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    return st;
}

static void apply1(sm_store *st, sm_change_op op, const sm_site_conf *site,
                   const char *url, apr_time_t lm, const char *etag,
                   apr_time_t seen, sm_apply_stats *stats)
{
    sm_change c = { op, site, url, lm, etag, seen };
    sm_apply_stats local;
    if (sm_store_apply(st, &c, 1, stats ? stats : &local) != APR_SUCCESS)
        fail_msg("apply %s: %s", url, sm_store_error(st));
}

static sqlite3_int64 q(const char *path, const char *fmt, ...)
{
    char sql[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sql, sizeof(sql), fmt, ap);
    va_end(ap);
    return sql_int(path, sql);
}

static void test_schema_created(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "s.db", &path);

    assert_int_equal(q(path, "PRAGMA user_version"), SM_SCHEMA_VERSION);
    assert_int_equal(q(path, "PRAGMA application_id"), 0x534D4150);
    assert_int_equal(q(path, "SELECT count(*) FROM sqlite_master WHERE "
                             "name IN ('sites','urls','pages','meta')"), 4);
    assert_int_equal(q(path, "SELECT count(*) FROM meta WHERE key='store_id'"
                             " AND length(value) = 16"), 1);
    sm_store_close(st);
    /* WAL stays on in the file. */
    {
        sqlite3 *db;
        sqlite3_stmt *s;
        sqlite3_open(path, &db);
        sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, NULL);
        assert_int_equal(sqlite3_step(s), SQLITE_ROW);
        assert_string_equal((const char *)sqlite3_column_text(s, 0), "wal");
        sqlite3_finalize(s);
        sqlite3_close(db);
    }
    /* Opening again keeps the data and the schema. */
    st = open_store(u, "s.db", &path);
    sm_store_close(st);
}

static void test_record_touch_update_forget(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "s.db", &path);
    sm_apply_stats stats;
    apr_time_t t0 = apr_time_from_sec(1700000000);
    apr_time_t lm = apr_time_from_sec(1600000000);

    apply1(st, SM_CHANGE_RECORD, &site_b, "/a", lm, "\"e1\"", t0, &stats);
    assert_int_equal(stats.added, 1);
    assert_int_equal(q(path, "SELECT lastmod FROM urls WHERE url='/a'"),
                     1600000000);
    assert_int_equal(q(path, "SELECT version FROM pages"), 1);

    /* The same again: only last_seen moves; the page does not change. */
    apply1(st, SM_CHANGE_RECORD, &site_b, "/a", lm, "\"e1\"",
           t0 + apr_time_from_sec(10), &stats);
    assert_int_equal(stats.touched, 1);
    assert_int_equal(q(path, "SELECT last_seen FROM urls"), 1700000010);
    assert_int_equal(q(path, "SELECT version FROM pages"), 1);

    /* A new Last-Modified is the new lastmod. */
    apply1(st, SM_CHANGE_RECORD, &site_b, "/a", lm + apr_time_from_sec(5),
           "\"e1\"", t0 + apr_time_from_sec(20), &stats);
    assert_int_equal(stats.updated, 1);
    assert_int_equal(q(path, "SELECT lastmod FROM urls"), 1600000005);
    assert_int_equal(q(path, "SELECT version FROM pages"), 2);
    assert_int_equal(q(path, "SELECT lastmod FROM pages"), 1600000005);

    /* Without Last-Modified: first seen, then moved forward by an ETag
     * change only. */
    apply1(st, SM_CHANGE_RECORD, &site_b, "/b", 0, "\"x\"", t0, &stats);
    assert_int_equal(q(path, "SELECT lastmod FROM urls WHERE url='/b'"),
                     1700000000);
    apply1(st, SM_CHANGE_RECORD, &site_b, "/b", 0, "\"x\"",
           t0 + apr_time_from_sec(100), &stats);
    assert_int_equal(q(path, "SELECT lastmod FROM urls WHERE url='/b'"),
                     1700000000);
    apply1(st, SM_CHANGE_RECORD, &site_b, "/b", 0, "\"y\"",
           t0 + apr_time_from_sec(200), &stats);
    assert_int_equal(q(path, "SELECT lastmod FROM urls WHERE url='/b'"),
                     1700000200);

    apply1(st, SM_CHANGE_FORGET, &site_b, "/a", 0, NULL, t0, &stats);
    assert_int_equal(stats.removed, 1);
    assert_int_equal(q(path, "SELECT count(*) FROM urls WHERE url='/a'"), 0);
    assert_int_equal(q(path, "SELECT url_count FROM pages"), 1);
    assert_int_equal(q(path, "SELECT url_count FROM sites"), 1);
    /* Forgetting what is not there is no error and changes nothing. */
    apply1(st, SM_CHANGE_FORGET, &site_b, "/nope", 0, NULL, t0, &stats);
    assert_int_equal(stats.removed, 0);
    sm_store_close(st);
}

static void test_pages_are_stable(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "s.db", &path);
    apr_time_t t = apr_time_from_sec(1700000000);
    char url[32];
    int i;

    for (i = 0; i < 7; i++) {
        snprintf(url, sizeof(url), "/p%d", i);
        apply1(st, SM_CHANGE_RECORD, &site_a, url, 0, NULL, t, NULL);
    }
    /* page size 3: 3 + 3 + 1 */
    assert_int_equal(q(path, "SELECT page FROM urls WHERE url='/p2'"), 1);
    assert_int_equal(q(path, "SELECT page FROM urls WHERE url='/p3'"), 2);
    assert_int_equal(q(path, "SELECT page FROM urls WHERE url='/p6'"), 3);
    assert_int_equal(q(path, "SELECT count(*) FROM pages"), 3);
    assert_int_equal(q(path, "SELECT last_page FROM sites"), 3);

    /* A removal leaves a hole that is not refilled: new URLs go last. */
    {
        sqlite3_int64 v2 = q(path, "SELECT version FROM pages WHERE page=2");
        apply1(st, SM_CHANGE_FORGET, &site_a, "/p0", 0, NULL, t, NULL);
        apply1(st, SM_CHANGE_RECORD, &site_a, "/new1", 0, NULL, t, NULL);
        apply1(st, SM_CHANGE_RECORD, &site_a, "/new2", 0, NULL, t, NULL);
        apply1(st, SM_CHANGE_RECORD, &site_a, "/new3", 0, NULL, t, NULL);
        assert_int_equal(q(path, "SELECT page FROM urls WHERE url='/new1'"), 3);
        assert_int_equal(q(path, "SELECT page FROM urls WHERE url='/new3'"), 4);
        assert_int_equal(q(path, "SELECT url_count FROM pages WHERE page=1"), 2);
        /* Untouched pages keep their version. */
        assert_int_equal(q(path, "SELECT version FROM pages WHERE page=2"), v2);
    }
    sm_store_close(st);
}

static void test_page_bytes_limit(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "s.db", &path);
    sm_site_conf big = { "http://big.example", 50000, 0, 0, NULL };
    apr_time_t t = apr_time_from_sec(1700000000);
    char *url = apr_palloc(u->pool, 2000);
    sm_change *cs = apr_palloc(u->pool, sizeof(*cs) * 6000);
    sm_apply_stats stats;
    int i;

    /* URLs of 1,990 '&': each needs about 10 KB of XML once escaped, so
     * 50,000 of them would be ~500 MB: pages must split by size. */
    for (i = 0; i < 6000; i++) {
        memset(url, '&', 1999);
        url[0] = '/';
        snprintf(url + 1, 8, "%06d", i);
        url[7] = '&';
        url[1999] = '\0';
        cs[i].op = SM_CHANGE_RECORD;
        cs[i].site = &big;
        cs[i].url = apr_pstrdup(u->pool, url);
        cs[i].last_modified = 0;
        cs[i].etag = NULL;
        cs[i].seen = t;
    }
    assert_int_equal(sm_store_apply(st, cs, 6000, &stats), APR_SUCCESS);
    assert_int_equal(stats.added, 6000);
    assert_true(q(path, "SELECT count(*) FROM pages") >= 2);
    assert_true(q(path, "SELECT max(xml_bytes) FROM pages") + SM_PAGE_OVERHEAD
                <= SM_PAGE_MAX_BYTES);
    assert_int_equal(q(path, "SELECT sum(url_count) FROM pages"), 6000);
    assert_int_equal(q(path, "SELECT min(xml_len) FROM urls"),
                     (sqlite3_int64)(strlen(big.base) + 7 + 1992 * 5
                                     + SM_ENTRY_OVERHEAD));
    sm_store_close(st);
}

static void test_max_urls_and_sites_apart(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "s.db", &path);
    sm_site_conf small = { "http://small.example", 50000, 2, 0, NULL };
    apr_time_t t = apr_time_from_sec(1700000000);
    sm_apply_stats stats;

    apply1(st, SM_CHANGE_RECORD, &small, "/1", 0, NULL, t, NULL);
    apply1(st, SM_CHANGE_RECORD, &small, "/2", 0, NULL, t, NULL);
    apply1(st, SM_CHANGE_RECORD, &small, "/3", 0, NULL, t, &stats);
    assert_int_equal(stats.refused_full, 1);
    assert_int_equal(stats.added, 0);
    /* Known URLs still update at the limit. */
    apply1(st, SM_CHANGE_RECORD, &small, "/2", 0, "\"new\"", t, &stats);
    assert_int_equal(stats.updated, 1);
    /* Another site in the same file is counted apart. */
    apply1(st, SM_CHANGE_RECORD, &site_b, "/1", 0, NULL, t, NULL);
    assert_int_equal(q(path, "SELECT count(*) FROM urls u JOIN sites s ON "
                             "s.id=u.site_id WHERE s.base='https://b.example'"),
                     1);
    assert_int_equal(q(path, "SELECT count(*) FROM urls u JOIN sites s ON "
                             "s.id=u.site_id WHERE s.base='http://small.example'"),
                     2);
    sm_store_close(st);
}

static void test_expire(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "s.db", &path);
    sm_site_conf s = { "http://e.example", 50000, 0, apr_time_from_sec(100), NULL };
    apr_time_t now = apr_time_from_sec(1700000000);
    int removed;

    apply1(st, SM_CHANGE_RECORD, &s, "/old", 0, NULL,
           now - apr_time_from_sec(101), NULL);
    apply1(st, SM_CHANGE_RECORD, &s, "/fresh", 0, NULL,
           now - apr_time_from_sec(99), NULL);
    apply1(st, SM_CHANGE_RECORD, &site_b, "/other", 0, NULL,
           now - apr_time_from_sec(1000), NULL);
    assert_int_equal(sm_store_expire(st, &s, now, &removed), APR_SUCCESS);
    assert_int_equal(removed, 1);
    assert_int_equal(q(path, "SELECT count(*) FROM urls WHERE url='/old'"), 0);
    assert_int_equal(q(path, "SELECT count(*) FROM urls"), 2);
    sm_store_close(st);
}

static void test_refuses_foreign_files(void **state)
{
    unit_ctx *u = *state;
    char err[512];
    sm_store *st;
    char *path = apr_pstrcat(u->pool, u->dir, "/other.db", NULL);
    sqlite3 *db;
    FILE *f;

    sqlite3_open(path, &db);
    sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_int_not_equal(sm_store_open_sqlite(&st, u->pool, path,
                                              SM_STORE_CREATE, 100, NULL, err,
                                              sizeof(err)), APR_SUCCESS);
    assert_non_null(strstr(err, "not a mod_sitemap store"));

    path = apr_pstrcat(u->pool, u->dir, "/garbage.db", NULL);
    f = fopen(path, "w");
    fputs("this is not an SQLite database, not at all, no............", f);
    fclose(f);
    assert_int_not_equal(sm_store_open_sqlite(&st, u->pool, path,
                                              SM_STORE_CREATE, 100, NULL, err,
                                              sizeof(err)), APR_SUCCESS);
    assert_non_null(strstr(err, "not a database"));

    path = apr_pstrcat(u->pool, u->dir, "/future.db", NULL);
    st = open_store(u, "future.db", &path);
    sm_store_close(st);
    sqlite3_open(path, &db);
    sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_int_not_equal(sm_store_open_sqlite(&st, u->pool, path,
                                              SM_STORE_CREATE, 100, NULL, err,
                                              sizeof(err)), APR_SUCCESS);
    assert_non_null(strstr(err, "newer"));

    /* Missing without SM_STORE_CREATE. */
    path = apr_pstrcat(u->pool, u->dir, "/missing.db", NULL);
    assert_int_not_equal(sm_store_open_sqlite(&st, u->pool, path, 0, 100,
                                              NULL, err, sizeof(err)),
                         APR_SUCCESS);
    assert_int_not_equal(access(path, F_OK), 0);
}

static void test_is_current(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "s.db", &path);

    assert_true(sm_store_is_current(st));
    unlink(path);
    assert_false(sm_store_is_current(st));
    sm_store_close(st);
}

static void test_escaped_len(void **state)
{
    (void)state;
    assert_int_equal(sm_xml_escaped_len("/a"), 2);
    assert_int_equal(sm_xml_escaped_len("&"), 5);
    assert_int_equal(sm_xml_escaped_len("'\"<>"), 6 + 6 + 4 + 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_schema_created, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_record_touch_update_forget, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_pages_are_stable, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_page_bytes_limit, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_max_urls_and_sites_apart, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_expire, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_refuses_foreign_files, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_is_current, unit_setup, unit_teardown),
        cmocka_unit_test(test_escaped_len),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
