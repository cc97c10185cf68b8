/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of how a SQLite store is opened: SQLite's defensive settings
 * on every connection, and stores holding a trigger or a view mod_sitemap
 * does not make refused (by writers, readers and check) before anything
 * in them can run. */
#include "unit.h"

#include "store/sm_store_backend.h"
#include "store/sm_store_sqlite_indexnow.h"

#include <stdio.h>
#include <string.h>

static const sm_site_conf site_a = {
    "http://a.example", 3, 0, 0, NULL, 0
};

/* A current store with one URL, closed. */
static char *new_store(unit_ctx *u, const char *name)
{
    char *path = apr_pstrcat(u->pool, u->dir, "/", name, NULL);
    sm_change c = { SM_CHANGE_RECORD, &site_a, "/one", 0, NULL,
                    apr_time_from_sec(1700000000), NULL, NULL, NULL, NULL,
                    NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_apply_stats stats;
    sm_store *st;
    char err[512];

    if (sm_store_open_sqlite(&st, u->pool, path, SM_STORE_CREATE, 1000,
                             NULL, err, sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    if (sm_store_apply(st, &c, 1, &stats) != APR_SUCCESS)
        fail_msg("apply: %s", sm_store_error(st));
    sm_store_close(st);
    return path;
}

/* Every way the store is opened refuses path, saying what. */
static void assert_refused(unit_ctx *u, const char *path, const char *what)
{
    static const int flags[] = { 0, SM_STORE_CREATE | SM_STORE_BULK,
                                 SM_STORE_READONLY,
                                 SM_STORE_READONLY | SM_STORE_PROBE,
                                 SM_STORE_READER };
    apr_array_header_t *problems = apr_array_make(u->pool, 4,
                                                  sizeof(const char *));
    char err[512];
    sm_store *st;
    apr_size_t i;

    for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        err[0] = '\0';
        if (sm_store_open_sqlite(&st, u->pool, path, flags[i], 1000, NULL,
                                 err, sizeof(err)) == APR_SUCCESS)
            fail_msg("flags %#x: opened a store holding %s", flags[i], what);
        if (!strstr(err, what) || !strstr(err, "not a mod_sitemap store"))
            fail_msg("flags %#x: %s", flags[i], err);
    }
    err[0] = '\0';
    assert_int_not_equal(sm_store_check_sqlite(u->pool, path, 1000, problems,
                                               NULL, err, sizeof(err)),
                         APR_SUCCESS);
    if (!strstr(err, what))
        fail_msg("check: %s", err);
}

/* The connection has SQLite's defences for untrusted files on. */
static void test_defensive_settings(void **state)
{
    unit_ctx *u = *state;
    char *path = new_store(u, "s.db");
    static const int flags[] = { 0, SM_STORE_READONLY, SM_STORE_READER };
    apr_size_t i;

    for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        sm_store *st;
        sqlite3 *db;
        sqlite3_stmt *q;
        char err[512];
        int v = -1;

        if (sm_store_open_sqlite(&st, u->pool, path, flags[i], 1000, NULL,
                                 err, sizeof(err)) != APR_SUCCESS)
            fail_msg("open: %s", err);
        db = sm_sqlite_handle(st);
        assert_int_equal(sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, -1,
                                           &v), SQLITE_OK);
        assert_int_equal(v, 1);
        v = -1;
        assert_int_equal(sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA,
                                           -1, &v), SQLITE_OK);
        assert_int_equal(v, 0);
        assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA cell_size_check", -1,
                                            &q, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(q), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(q, 0), 1);
        sqlite3_finalize(q);
        /* defensive: the schema cannot be written through SQL */
        assert_int_not_equal(sqlite3_exec(db, "PRAGMA writable_schema = ON;"
                                          " UPDATE sqlite_master SET sql = ''"
                                          " WHERE name = 'urls'", NULL, NULL,
                                          NULL), SQLITE_OK);
        sm_store_close(st);
    }
}

/* A trigger of someone else's (here one recording every URL added, as
 * one writing a file would) is refused, and never runs. */
static void test_foreign_trigger_refused(void **state)
{
    unit_ctx *u = *state;
    char *path = new_store(u, "s.db");

    sql_exec(path, "PRAGMA journal_mode = DELETE;"
                   "CREATE TABLE pwned(url TEXT);"
                   "CREATE TRIGGER evil AFTER INSERT ON urls BEGIN"
                   " INSERT INTO pwned VALUES (new.url); END");
    assert_refused(u, path, "trigger evil");
    assert_int_equal(sql_int(path, "SELECT count(*) FROM pwned"), 0);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls"), 1);
    /* refused before a writer switched the file to WAL mode */
    assert_int_equal(sql_int(path, "SELECT journal_mode = 'delete' FROM"
                                   " pragma_journal_mode"), 1);
}

/* One of ours by name, with another body: refused as well. */
static void test_changed_trigger_refused(void **state)
{
    unit_ctx *u = *state;
    char *path = new_store(u, "s.db");

    sql_exec(path, "DROP TRIGGER sites_settings;"
                   "CREATE TRIGGER sites_settings AFTER UPDATE OF settings"
                   " ON sites BEGIN DELETE FROM urls; END");
    assert_refused(u, path, "trigger sites_settings");
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls"), 1);
}

/* A trigger schema 1 made and schema 2 dropped, in a current store. */
static void test_old_trigger_in_new_store_refused(void **state)
{
    unit_ctx *u = *state;
    char *path = new_store(u, "s.db");

    sql_exec(path, "CREATE TRIGGER pages_new AFTER INSERT ON pages"
                   "  WHEN new.url_count > 0 BEGIN"
                   "  UPDATE sites SET index_changed = CAST(strftime('%s',"
                   "'now') AS INTEGER)  WHERE id = new.site_id;END");
    assert_refused(u, path, "trigger pages_new");
}

static void test_foreign_view_refused(void **state)
{
    unit_ctx *u = *state;
    char *path = new_store(u, "s.db");

    sql_exec(path, "CREATE VIEW everything AS SELECT * FROM urls");
    assert_refused(u, path, "view everything");
}

/* An old store (schema 1, whose own triggers are allowed) with one more:
 * refused before it is upgraded, and left as it was. */
static void test_foreign_trigger_in_old_store_refused(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/v1.db", NULL);
    char *dump = apr_palloc(u->pool, 65536);
    FILE *f = fopen(FIXTURES "/store-v1.sql", "rb");
    apr_size_t len;

    assert_non_null(f);
    len = fread(dump, 1, 65535, f);
    fclose(f);
    dump[len] = '\0';
    sql_exec(path, dump);
    sql_exec(path, "CREATE TABLE pwned(url TEXT);"
                   "CREATE TRIGGER evil AFTER DELETE ON urls BEGIN"
                   " INSERT INTO pwned VALUES (old.url); END");
    assert_refused(u, path, "trigger evil");
    assert_int_equal(sql_int(path, "PRAGMA user_version"), 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM pwned"), 0);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM sqlite_master"
                                   " WHERE type = 'trigger'"), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defensive_settings, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_foreign_trigger_refused, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_changed_trigger_refused, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_old_trigger_in_new_store_refused, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_foreign_view_refused, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_foreign_trigger_in_old_store_refused, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
