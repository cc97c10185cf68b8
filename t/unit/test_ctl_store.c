/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the store functions added for sitemapctl: the settings a
 * site keeps (written by writers that pass them, once per connection),
 * SM_CHANGE_SEED, site rows and statistics, URL rows, the file's facts and
 * sm_store_check_sqlite on sound, foreign, damaged and missing files. */
#include "unit.h"

#include "store/sm_store_backend.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static sm_store *open_at(unit_ctx *u, const char *path, int flags)
{
    sm_store *st;
    char err[512];

    if (sm_store_open_sqlite(&st, u->pool, path, flags, 1000, NULL, err,
                             sizeof(err)) != APR_SUCCESS)
        fail_msg("open %s: %s", path, err);
    return st;
}

static char *db_path(unit_ctx *u, const char *name)
{
    return apr_pstrcat(u->pool, u->dir, "/", name, NULL);
}

static void apply1(sm_store *st, sm_change_op op, const sm_site_conf *site,
                   const char *url, apr_time_t lm, const char *etag,
                   apr_time_t seen, sm_apply_stats *stats)
{
    sm_change c = { op, site, url, lm, etag, seen, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_apply_stats local;
    if (sm_store_apply(st, &c, 1, stats ? stats : &local) != APR_SUCCESS)
        fail_msg("apply %s: %s", url, sm_store_error(st));
}

static void sql(const char *path, const char *stmt)
{
    sqlite3 *db;
    char *err = NULL;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_exec(db, stmt, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("%s: %s", stmt, err);
    sqlite3_close(db);
}

static char *sql_text(const char *path, const char *query)
{
    static char buf[1024];
    sqlite3 *db;
    sqlite3_stmt *q;

    buf[0] = '\0';
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, query, -1, &q, NULL), SQLITE_OK);
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
        apr_cpystrn(buf, (const char *)sqlite3_column_text(q, 0),
                    sizeof(buf));
    sqlite3_finalize(q);
    sqlite3_close(db);
    return buf;
}

static void test_settings_kept(void **state)
{
    unit_ctx *u = *state;
    char *path = db_path(u, "s.db");
    sm_store *st = open_at(u, path, SM_STORE_CREATE);
    sm_site_conf a = { "http://a.example", 10, 0, 0,
                       "path /sitemap.xml\npage_size 10\n", 0 };
    sm_site_conf b = a;
    sm_site_conf ctl = { "http://a.example", 50000, 0, 0, NULL, 0 };
    apr_time_t t = apr_time_from_sec(1700000000);

    /* Written with the row. */
    apply1(st, SM_CHANGE_RECORD, &a, "/1", 0, NULL, t, NULL);
    assert_string_equal(sql_text(path, "SELECT settings FROM sites"),
                        a.settings);
    assert_int_equal(sql_int(path, "SELECT page_size FROM sites"), 10);

    /* Changed settings (a new configuration): written again. */
    b.settings = "path /s.xml\npage_size 20\n";
    b.page_size = 20;
    apply1(st, SM_CHANGE_FORGET, &b, "/none", 0, NULL, t, NULL);
    assert_string_equal(sql_text(path, "SELECT settings FROM sites"),
                        b.settings);
    assert_int_equal(sql_int(path, "SELECT page_size FROM sites"), 20);

    /* A writer without settings (sitemapctl) leaves them alone. */
    apply1(st, SM_CHANGE_SEED, &ctl, "/2", 0, NULL, t, NULL);
    assert_string_equal(sql_text(path, "SELECT settings FROM sites"),
                        b.settings);

    /* Compared once per connection: changed behind its back, the row is
     * not looked at again by this connection ... */
    sql(path, "UPDATE sites SET settings = 'stale', page_size = 1");
    apply1(st, SM_CHANGE_RECORD, &b, "/3", 0, NULL, t, NULL);
    assert_string_equal(sql_text(path, "SELECT settings FROM sites"),
                        "stale");
    sm_store_close(st);
    /* ... but a new connection puts them right. */
    st = open_at(u, path, 0);
    apply1(st, SM_CHANGE_RECORD, &b, "/3", 0, NULL, t, NULL);
    assert_string_equal(sql_text(path, "SELECT settings FROM sites"),
                        b.settings);
    assert_int_equal(sql_int(path, "SELECT page_size FROM sites"), 20);
    sm_store_close(st);
}

static void test_settings_after_rollback(void **state)
{
    unit_ctx *u = *state;
    char *path = db_path(u, "s.db");
    sm_store *st = open_at(u, path, SM_STORE_CREATE);
    sm_site_conf a = { "http://a.example", 10, 0, 0, "path /a.xml\n", 0 };
    sm_change c[2] = {
        { SM_CHANGE_RECORD, &a, "/1", 0, NULL, apr_time_from_sec(1), NULL,
          NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 },
        /* refused by the trigger below: the batch is rolled back */
        { SM_CHANGE_RECORD, &a, "/boom", 0, NULL, apr_time_from_sec(1),
          NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 },
    };
    sm_apply_stats stats;

    apply1(st, SM_CHANGE_RECORD, &a, "/0", 0, NULL, apr_time_from_sec(1),
           NULL);
    sql(path, "CREATE TRIGGER boom BEFORE INSERT ON urls"
              " WHEN new.url = '/boom' BEGIN SELECT RAISE(ABORT, 'boom'); END");
    a.settings = "path /b.xml\n";
    assert_int_not_equal(sm_store_apply(st, c, 2, &stats), APR_SUCCESS);
    assert_string_equal(sql_text(path, "SELECT settings FROM sites"),
                        "path /a.xml\n");
    /* The next batch writes them: the rolled back write was forgotten. */
    apply1(st, SM_CHANGE_RECORD, &a, "/1", 0, NULL, apr_time_from_sec(1),
           NULL);
    assert_string_equal(sql_text(path, "SELECT settings FROM sites"),
                        "path /b.xml\n");
    sm_store_close(st);
}

static void test_seed(void **state)
{
    unit_ctx *u = *state;
    char *path = db_path(u, "s.db");
    sm_store *st = open_at(u, path, SM_STORE_CREATE | SM_STORE_BULK);
    sm_site_conf s = { "http://a.example", 50000, 0, 0, NULL, 0 };
    sm_apply_stats stats;
    apr_time_t t = apr_time_from_sec(1700000000);

    /* New: lastmod as given (or seen). */
    apply1(st, SM_CHANGE_SEED, &s, "/new", t - apr_time_from_sec(50), NULL,
           t, &stats);
    assert_int_equal(stats.added, 1);
    assert_int_equal(sql_int(path, "SELECT lastmod FROM urls"), 1699999950);
    apply1(st, SM_CHANGE_SEED, &s, "/new2", 0, NULL, t, &stats);
    assert_int_equal(sql_int(path, "SELECT lastmod FROM urls WHERE url = "
                                   "'/new2'"), 1700000000);

    /* Stored: lastmod and ETag stay, last_seen only moves forward. */
    apply1(st, SM_CHANGE_RECORD, &s, "/live", apr_time_from_sec(1600000000),
           "\"e\"", t, NULL);
    apply1(st, SM_CHANGE_SEED, &s, "/live", t + apr_time_from_sec(99), NULL,
           t + apr_time_from_sec(99), &stats);
    assert_int_equal(stats.touched, 1);
    assert_int_equal(sql_int(path, "SELECT lastmod FROM urls WHERE url = "
                                   "'/live'"), 1600000000);
    assert_string_equal(sql_text(path, "SELECT etag FROM urls WHERE url = "
                                       "'/live'"), "\"e\"");
    assert_int_equal(sql_int(path, "SELECT last_seen FROM urls WHERE url = "
                                   "'/live'"), 1700000099);
    apply1(st, SM_CHANGE_SEED, &s, "/live", 0, NULL, t, &stats);
    assert_int_equal(sql_int(path, "SELECT last_seen FROM urls WHERE url = "
                                   "'/live'"), 1700000099);
    sm_store_close(st);
}

typedef struct {
    int n;
    const char *urls[16];
    apr_int64_t pages[16];
    apr_pool_t *pool;
} rows;

static apr_status_t collect(void *baton, const char *url, apr_int64_t page,
                            apr_time_t lastmod, apr_time_t last_seen,
                            const char *alternates)
{
    rows *r = baton;
    (void)lastmod; (void)last_seen; (void)alternates;
    r->urls[r->n] = apr_pstrdup(r->pool, url);
    r->pages[r->n++] = page;
    return r->n == 16 ? APR_EOF : APR_SUCCESS;
}

static void test_rows_and_stats(void **state)
{
    unit_ctx *u = *state;
    char *path = db_path(u, "s.db");
    sm_store *st = open_at(u, path, SM_STORE_CREATE);
    sm_site_conf a = { "http://a.example", 2, 0, 0, "path /x.xml\n", 0 };
    sm_site_conf b = { "http://b.example", 50000, 0, 0, NULL, 0 };
    apr_time_t t = apr_time_from_sec(1700000000);
    sm_site_row row;
    sm_store_about about;
    apr_array_header_t *stats;
    const sm_site_stats *ss;
    rows r;
    int i;

    for (i = 0; i < 5; i++)
        apply1(st, SM_CHANGE_RECORD, &a, apr_psprintf(u->pool, "/%d", i),
               apr_time_from_sec(1600000000 + i), NULL,
               t + apr_time_from_sec(i), NULL);
    apply1(st, SM_CHANGE_FORGET, &a, "/2", 0, NULL, t, NULL);
    apply1(st, SM_CHANGE_FORGET, &a, "/3", 0, NULL, t, NULL);
    apply1(st, SM_CHANGE_RECORD, &b, "/b", 0, NULL, t, NULL);

    assert_int_equal(sm_store_site_row(st, u->pool, "http://a.example",
                                       &row), APR_SUCCESS);
    assert_true(row.known);
    assert_int_equal(row.url_count, 3);
    assert_int_equal(row.last_page, 3);
    assert_int_equal(row.page_size, 2);
    assert_string_equal(row.settings, "path /x.xml\n");
    assert_int_equal(sm_store_site_row(st, u->pool, "http://b.example",
                                       &row), APR_SUCCESS);
    assert_string_equal(row.settings, "");
    assert_int_equal(sm_store_site_row(st, u->pool, "http://c.example",
                                       &row), APR_SUCCESS);
    assert_false(row.known);

    memset(&r, 0, sizeof(r));
    r.pool = u->pool;
    assert_int_equal(sm_store_url_rows(st, "http://a.example", 0, collect,
                                       &r), APR_SUCCESS);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.urls[0], "/0");
    assert_int_equal(r.pages[0], 1);
    assert_string_equal(r.urls[2], "/4");
    assert_int_equal(r.pages[2], 3);
    memset(&r, 0, sizeof(r));
    r.pool = u->pool;
    assert_int_equal(sm_store_url_rows(st, "http://a.example", 3, collect,
                                       &r), APR_SUCCESS);
    assert_int_equal(r.n, 1);
    assert_int_equal(sm_store_url_rows(st, "http://c.example", 0, collect,
                                       &r), APR_SUCCESS);
    assert_int_equal(r.n, 1);

    assert_int_equal(sm_store_site_stats(st, u->pool, NULL, &stats),
                     APR_SUCCESS);
    assert_int_equal(stats->nelts, 2);
    ss = &APR_ARRAY_IDX(stats, 0, sm_site_stats);
    assert_string_equal(ss->base, "http://a.example");
    assert_int_equal(ss->url_count, 3);
    assert_int_equal(ss->pages, 2);         /* page 2 is empty now */
    assert_int_equal(ss->last_page, 3);
    assert_int_equal(apr_time_sec(ss->lastmod_newest), 1600000004);
    assert_int_equal(apr_time_sec(ss->lastmod_oldest), 1600000000);
    assert_int_equal(apr_time_sec(ss->seen_newest), 1700000004);
    assert_int_equal(apr_time_sec(ss->seen_oldest), 1700000000);
    assert_int_equal(sm_store_site_stats(st, u->pool, "http://b.example",
                                         &stats), APR_SUCCESS);
    assert_int_equal(stats->nelts, 1);
    assert_int_equal(sm_store_site_stats(st, u->pool, "http://c.example",
                                         &stats), APR_SUCCESS);
    assert_int_equal(stats->nelts, 0);
    /* The list: the same counts, nothing read from the URLs. */
    assert_int_equal(sm_store_site_list(st, u->pool, &stats), APR_SUCCESS);
    assert_int_equal(stats->nelts, 2);
    ss = &APR_ARRAY_IDX(stats, 0, sm_site_stats);
    assert_string_equal(ss->base, "http://a.example");
    assert_int_equal(ss->url_count, 3);
    assert_int_equal(ss->pages, 2);
    assert_int_equal(ss->last_page, 3);
    assert_int_equal(ss->page_size, 2);
    assert_int_equal(ss->lastmod_newest, 0);
    assert_string_equal(APR_ARRAY_IDX(stats, 1, sm_site_stats).base,
                        "http://b.example");

    assert_int_equal(sm_store_about_file(st, u->pool, &about), APR_SUCCESS);
    assert_int_equal(about.schema_version, SM_SCHEMA_VERSION);
    assert_int_equal(strlen(about.store_id), 16);
    assert_true(about.created > 0);
    assert_true(about.db_bytes > 0);
    sm_store_close(st);

    /* Read-only, the same. */
    st = open_at(u, path, SM_STORE_READONLY);
    assert_int_equal(sm_store_read_begin(st), APR_SUCCESS);
    assert_int_equal(sm_store_site_stats(st, u->pool, NULL, &stats),
                     APR_SUCCESS);
    assert_int_equal(stats->nelts, 2);
    sm_store_read_end(st);
    sm_store_close(st);
}

/* ---- check ------------------------------------------------------------------ */

static apr_array_header_t *check(unit_ctx *u, const char *path,
                                 apr_status_t want)
{
    apr_array_header_t *problems = apr_array_make(u->pool, 4, sizeof(char *));
    sm_store_about about;
    char err[512];

    assert_int_equal(sm_store_check_sqlite(u->pool, path, 1000, problems,
                                           &about, err, sizeof(err)), want);
    return problems;
}

static apr_array_header_t *check_fails(unit_ctx *u, const char *path,
                                       const char *why)
{
    apr_array_header_t *problems = apr_array_make(u->pool, 4, sizeof(char *));
    char err[512] = "";

    assert_int_equal(sm_store_check_sqlite(u->pool, path, 1000, problems,
                                           NULL, err, sizeof(err)),
                     APR_EGENERAL);
    assert_non_null(strstr(err, why));
    return problems;
}

static int has(apr_array_header_t *problems, const char *needle)
{
    int i;
    for (i = 0; i < problems->nelts; i++)
        if (strstr(APR_ARRAY_IDX(problems, i, const char *), needle))
            return 1;
    return 0;
}

static void test_check(void **state)
{
    unit_ctx *u = *state;
    char *path = db_path(u, "s.db"), *junk = db_path(u, "junk.db");
    char *other = db_path(u, "other.db"), *missing = db_path(u, "no.db");
    sm_store *st = open_at(u, path, SM_STORE_CREATE);
    sm_site_conf a = { "http://a.example", 2, 0, 0, NULL, 0 };
    apr_array_header_t *p;
    FILE *f;
    int i;

    for (i = 0; i < 5; i++)
        apply1(st, SM_CHANGE_RECORD, &a, apr_psprintf(u->pool, "/%d", i), 0,
               NULL, apr_time_from_sec(1700000000), NULL);
    sm_store_close(st);
    p = check(u, path, APR_SUCCESS);
    assert_int_equal(p->nelts, 0);

    /* Missing: reported, not created. */
    check(u, missing, APR_ENOENT);
    assert_int_not_equal(access(missing, F_OK), 0);

    f = fopen(junk, "w");
    fputs("this is not a database, not at all, and long enough to look at "
          "it: 0123456789012345678901234567890123456789", f);
    fclose(f);
    /* Not a store at all: an error (sitemapctl's status 3), no problem
     * list (status 1). */
    p = check_fails(u, junk, "not an SQLite database");
    assert_int_equal(p->nelts, 0);

    sql(other, "CREATE TABLE t(x)");
    p = check_fails(u, other, "not a mod_sitemap store");
    assert_int_equal(p->nelts, 0);

    /* Summaries that disagree with the URLs. */
    sql(path, "UPDATE pages SET url_count = url_count + 1 WHERE page = 1;"
              "UPDATE sites SET url_count = 9");
    p = check(u, path, APR_SUCCESS);
    assert_true(has(p, "page summaries disagree"));
    assert_true(has(p, "sites' URL counts disagree"));
    assert_int_equal(p->nelts, 2);
}

static void test_check_damaged_file(void **state)
{
    unit_ctx *u = *state;
    char *path = db_path(u, "s.db");
    sm_store *st = open_at(u, path, SM_STORE_CREATE);
    sm_site_conf a = { "http://a.example", 50000, 0, 0, NULL, 0 };
    sm_change *c = apr_pcalloc(u->pool, sizeof(*c) * 3000);
    sm_apply_stats stats;
    struct stat sb;
    FILE *f;
    long off;
    int i;

    for (i = 0; i < 3000; i++) {
        c[i].op = SM_CHANGE_RECORD;
        c[i].site = &a;
        c[i].url = apr_psprintf(u->pool, "/some/longer/path/%06d.html", i);
        c[i].seen = apr_time_from_sec(1700000000);
    }
    assert_int_equal(sm_store_apply(st, c, 3000, &stats), APR_SUCCESS);
    sm_store_close(st);     /* checkpoints: everything is in the file */
    assert_int_equal(stat(path, &sb), 0);
    /* Scribble over pages in the middle of the file (b-tree pages). */
    f = fopen(path, "r+b");
    for (off = 4096 * 3; off + 4096 < sb.st_size; off += 4096 * 5) {
        fseek(f, off + 16, SEEK_SET);
        fwrite("\xff\xff\xff\xff\xff\xff\xff\xff", 1, 8, f);
    }
    fclose(f);
    assert_true(check(u, path, APR_SUCCESS)->nelts > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_settings_kept, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_settings_after_rollback, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_seed, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_rows_and_stats, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_check, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_check_damaged_file, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
