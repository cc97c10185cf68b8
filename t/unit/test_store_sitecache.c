/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the site summaries a SQLite connection keeps
 * (sm_store_sqlite_sitecache.c): a reader's summary follows every write
 * another connection commits, and its own; a page's, the index's and
 * another site's are told apart.  And a new store's schema made in one
 * script (sm_store_sqlite_fresh.c) is the one the steps make. */
#include "unit.h"

#include "store/sm_store_backend.h"
#include "store/sm_store_sqlite.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const sm_site_conf site_a = {
    "http://a.example", 2, 0, 0, NULL, 0
};
static const sm_site_conf site_b = {
    "http://b.example", 2, 0, 0, NULL, 0
};

static sm_store *open_as(unit_ctx *u, const char *path, int flags)
{
    sm_store *st;
    char err[512];

    if (sm_store_open_sqlite(&st, u->pool, path, flags, 1000, NULL, err,
                             sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    return st;
}

static void record(sm_store *st, const sm_site_conf *site, const char *url,
                   int when)
{
    sm_change c;
    sm_apply_stats stats;

    memset(&c, 0, sizeof(c));
    c.op = SM_CHANGE_RECORD;
    c.site = site;
    c.url = url;
    c.seen = apr_time_from_sec(1700000000 + when);
    if (sm_store_apply(st, &c, 1, &stats) != APR_SUCCESS)
        fail_msg("apply %s: %s", url, sm_store_error(st));
}

/* The site's summary as a document reads it: in a read snapshot. */
static sm_site_info info_of(sm_store *st, apr_pool_t *p,
                            const sm_site_conf *site, apr_int64_t page)
{
    sm_site_info info;

    assert_int_equal(sm_store_read_begin(st), APR_SUCCESS);
    assert_int_equal(sm_store_site_info(st, p, site->base, page, &info),
                     APR_SUCCESS);
    sm_store_read_end(st);
    return info;
}

/* Pages of the summary, with their URL counts and versions, as text. */
static const char *pages_of(apr_pool_t *p, const sm_site_info *info)
{
    const char *out = info->known ? "" : "unknown";
    int i;

    for (i = 0; i < info->pages->nelts; i++) {
        const sm_page_info *pi = &APR_ARRAY_IDX(info->pages, i, sm_page_info);
        out = apr_psprintf(p, "%s%s%" APR_INT64_T_FMT ":%" APR_INT64_T_FMT
                           "v%" APR_INT64_T_FMT, out, i ? " " : "",
                           pi->page, pi->url_count, pi->version);
    }
    return out;
}

static void test_reader_follows_writes(void **state)
{
    unit_ctx *u = *state;
    const char *path = apr_pstrcat(u->pool, u->dir, "/c.db", NULL);
    sm_store *w = open_as(u, path, SM_STORE_CREATE);
    sm_store *r;
    sm_site_info a;
    int i;

    record(w, &site_a, "/1", 0);
    r = open_as(u, path, SM_STORE_READER);
    for (i = 0; i < 3; i++) {           /* the same, read again and kept */
        a = info_of(r, u->pool, &site_a, 1);
        assert_string_equal(pages_of(u->pool, &a), "1:1v1");
    }
    a = info_of(r, u->pool, &site_a, 0);
    assert_string_equal(pages_of(u->pool, &a), "1:1v1");
    a = info_of(r, u->pool, &site_b, 0);
    assert_string_equal(pages_of(u->pool, &a), "unknown");
    /* Another connection's write: every summary of the reader is new. */
    record(w, &site_a, "/2", 1);
    a = info_of(r, u->pool, &site_a, 1);
    assert_string_equal(pages_of(u->pool, &a), "1:2v2");
    a = info_of(r, u->pool, &site_a, 0);
    assert_string_equal(pages_of(u->pool, &a), "1:2v2");
    record(w, &site_a, "/3", 2);        /* page 2 starts */
    record(w, &site_b, "/1", 2);
    a = info_of(r, u->pool, &site_a, 0);
    assert_string_equal(pages_of(u->pool, &a), "1:2v2 2:1v1");
    a = info_of(r, u->pool, &site_a, 2);
    assert_string_equal(pages_of(u->pool, &a), "2:1v1");
    a = info_of(r, u->pool, &site_b, 0);
    assert_string_equal(pages_of(u->pool, &a), "1:1v1");
    /* The writer's own connection sees its own commits. */
    a = info_of(w, u->pool, &site_a, 1);
    assert_string_equal(pages_of(u->pool, &a), "1:2v2");
    record(w, &site_a, "/1", 3600);     /* seen again: no new version */
    record(w, &site_a, "/4", 3600);
    a = info_of(w, u->pool, &site_a, 2);
    assert_string_equal(pages_of(u->pool, &a), "2:2v2");
    a = info_of(r, u->pool, &site_a, 2);
    assert_string_equal(pages_of(u->pool, &a), "2:2v2");
    /* The strings come from the caller's pool, not the kept summary. */
    assert_non_null(a.store_id);
    assert_int_equal(strlen(a.store_id), 16);
    sm_store_close(r);
    sm_store_close(w);
}

/* More sites than a connection keeps summaries: each still right. */
static void test_more_sites_than_slots(void **state)
{
    unit_ctx *u = *state;
    const char *path = apr_pstrcat(u->pool, u->dir, "/m.db", NULL);
    sm_store *w = open_as(u, path, SM_STORE_CREATE);
    sm_site_conf sites[6];
    sm_store *r;
    int i, round;

    for (i = 0; i < 6; i++) {
        sites[i] = site_a;
        sites[i].base = apr_psprintf(u->pool, "http://s%d.example", i);
        record(w, &sites[i], "/x", 0);
        if (i % 2)
            record(w, &sites[i], "/y", 0);
    }
    r = open_as(u, path, SM_STORE_READER);
    for (round = 0; round < 3; round++)
        for (i = 0; i < 6; i++) {
            sm_site_info a = info_of(r, u->pool, &sites[i], 0);
            assert_string_equal(pages_of(u->pool, &a),
                                i % 2 ? "1:2v2" : "1:1v1");
        }
    sm_store_close(r);
    sm_store_close(w);
}

/* Every object of the file as text, in name order. */
static const char *schema_of(apr_pool_t *p, const char *path)
{
    sqlite3 *db;
    sqlite3_stmt *q;
    const char *out = "";

    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT type, name, tbl_name,"
                                        " sql FROM sqlite_master ORDER BY"
                                        " name", -1, &q, NULL), SQLITE_OK);
    while (sqlite3_step(q) == SQLITE_ROW)
        out = apr_psprintf(p, "%s%s %s %s: %s\n", out,
                           sqlite3_column_text(q, 0),
                           sqlite3_column_text(q, 1),
                           sqlite3_column_text(q, 2),
                           sqlite3_column_text(q, 3)
                           ? (const char *)sqlite3_column_text(q, 3) : "-");
    sqlite3_finalize(q);
    sqlite3_close(db);
    return out;
}

/* A new store (one script) and a store of schema 1 upgraded step by step
 * hold the same objects; the new one has its own store id and meta. */
static void test_fresh_schema_is_the_steps(void **state)
{
    unit_ctx *u = *state;
    const char *fresh = apr_pstrcat(u->pool, u->dir, "/f.db", NULL);
    const char *old = apr_pstrcat(u->pool, u->dir, "/v1.db", NULL);
    char *dump = apr_palloc(u->pool, 65536);
    FILE *f = fopen(FIXTURES "/store-v1.sql", "rb");
    apr_size_t len;
    sm_store *a, *b;

    assert_non_null(f);
    len = fread(dump, 1, 65535, f);
    fclose(f);
    dump[len] = '\0';
    sql_exec(old, dump);
    a = open_as(u, fresh, SM_STORE_CREATE);
    b = open_as(u, old, 0);
    assert_non_null(sm_sqlite_fresh_schema());
    assert_string_equal(schema_of(u->pool, fresh), schema_of(u->pool, old));
    assert_int_equal(sql_int(fresh, "PRAGMA user_version"),
                     SM_SCHEMA_VERSION);
    assert_int_equal(sql_int(fresh, "SELECT count(*) FROM meta WHERE"
                                    " key = 'store_id' AND length(value)"
                                    " = 16"), 1);
    assert_true(sql_int(fresh, "SELECT value FROM meta WHERE key ="
                               " 'created'") > 1700000000);
    assert_int_equal(sql_int(fresh, "SELECT count(*) FROM meta"),
                     sql_int(old, "SELECT count(*) FROM meta"));
    /* and it takes URLs as a stepped store does */
    record(a, &site_a, "/1", 0);
    assert_int_equal(sql_int(fresh, "SELECT count(*) FROM urls"), 1);
    sm_store_close(a);
    sm_store_close(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reader_follows_writes,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_more_sites_than_slots,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_fresh_schema_is_the_steps,
                                        unit_setup, unit_teardown),
    };

    apr_initialize();
    atexit(apr_terminate);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
