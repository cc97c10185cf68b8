/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the SQLite store: schema, page assignment, summaries,
 * lastmod rules, limits, expiry and refusal of foreign files. */
#include "unit.h"

#include "store/sm_store_backend.h"

#include <stdio.h>
#include <string.h>

static const sm_site_conf site_a = {
    "http://a.example", 3, 0, 0, NULL, 0
};
static const sm_site_conf site_b = {
    "https://b.example", 50000, 0, 0, NULL, 0
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
    sm_change c = { op, site, url, lm, etag, seen, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
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

/* Titles (schema 4): stored with a new URL, replaced when the head says
 * another ("" for none), left alone when the head was not read (NULL);
 * a change moves the page's version (the HTML site map's validators). */
static apr_status_t title_seen(void *baton, const char *url,
                               const char *title)
{
    char *buf = baton;
    apr_size_t n = strlen(buf);
    snprintf(buf + n, 512 - n, "%s=%s;", url, title);
    return APR_SUCCESS;
}

static const char *titles(sm_store *st)
{
    static char buf[512];
    buf[0] = '\0';
    assert_int_equal(sm_store_read_begin(st), APR_SUCCESS);
    assert_int_equal(sm_store_page_titles(st, site_b.base, 1, title_seen,
                                          buf), APR_SUCCESS);
    sm_store_read_end(st);
    return buf;
}

static void apply_titled(sm_store *st, const char *url, apr_time_t lm,
                         const char *title, apr_time_t seen)
{
    sm_change c = { SM_CHANGE_RECORD, &site_b, url, lm, NULL, seen, title,
                    NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_apply_stats stats;
    if (sm_store_apply(st, &c, 1, &stats) != APR_SUCCESS)
        fail_msg("apply %s: %s", url, sm_store_error(st));
}

static void test_titles(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "titles.db", &path);
    apr_time_t t = apr_time_from_sec(1700000000);
    sqlite3_int64 v;

    apply_titled(st, "/a", t, "A & b", t);
    apply_titled(st, "/b", t, NULL, t);
    apply_titled(st, "/c", t, "", t);
    assert_string_equal(titles(st), "/a=A & b;");
    v = q(path, "SELECT version FROM pages WHERE page = 1");
    /* the same title again: nothing moves */
    apply_titled(st, "/a", t, "A & b", t + 1);
    assert_int_equal(q(path, "SELECT version FROM pages WHERE page = 1"), v);
    /* another title, the same Last-Modified: stored, the version moves */
    apply_titled(st, "/a", t, "Another", t + 2);
    assert_string_equal(titles(st), "/a=Another;");
    assert_true(q(path, "SELECT version FROM pages WHERE page = 1") > v);
    v = q(path, "SELECT version FROM pages WHERE page = 1");
    /* not read: kept; read without a title: gone */
    apply_titled(st, "/a", t, NULL, t + 3);
    assert_string_equal(titles(st), "/a=Another;");
    assert_int_equal(q(path, "SELECT version FROM pages WHERE page = 1"), v);
    apply_titled(st, "/a", t, "", t + 4);
    assert_string_equal(titles(st), "");
    apply_titled(st, "/b", t, "Bee", t + 5);
    assert_string_equal(titles(st), "/b=Bee;");
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
    sm_site_conf big = { "http://big.example", 50000, 0, 0, NULL, 0 };
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
    sm_site_conf small = { "http://small.example", 50000, 2, 0, NULL, 0 };
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
    sm_site_conf s = { "http://e.example", 50000, 0, apr_time_from_sec(100), NULL, 0 };
    apr_time_t now = apr_time_from_sec(1700000000);
    int removed;

    apply1(st, SM_CHANGE_RECORD, &s, "/old", 0, NULL,
           now - apr_time_from_sec(101), NULL);
    apply1(st, SM_CHANGE_RECORD, &s, "/fresh", 0, NULL,
           now - apr_time_from_sec(99), NULL);
    apply1(st, SM_CHANGE_RECORD, &site_b, "/other", 0, NULL,
           now - apr_time_from_sec(1000), NULL);
    assert_int_equal(sm_store_expire(st, &s, now, 0, &removed), APR_SUCCESS);
    assert_int_equal(removed, 1);
    assert_int_equal(q(path, "SELECT count(*) FROM urls WHERE url='/old'"), 0);
    assert_int_equal(q(path, "SELECT count(*) FROM urls"), 2);
    sm_store_close(st);
}

/* What sm_store_check_sqlite finds wrong (const char *). */
static apr_array_header_t *problems_of(unit_ctx *u, const char *path)
{
    apr_array_header_t *problems = apr_array_make(u->pool, 4,
                                                  sizeof(const char *));
    char err[256];

    assert_int_equal(sm_store_check_sqlite(u->pool, path, 1000, problems,
                                           NULL, err, sizeof(err)),
                     APR_SUCCESS);
    return problems;
}

/* sm_store_check_sqlite finds nothing wrong (summaries match the URLs). */
static void assert_sound(unit_ctx *u, const char *path)
{
    apr_array_header_t *problems = problems_of(u, path);
    int i;

    for (i = 0; i < problems->nelts; i++)
        print_error("problem: %s\n", APR_ARRAY_IDX(problems, i, const char *));
    assert_int_equal(problems->nelts, 0);
}

static sm_change change(sm_change_op op, const sm_site_conf *site,
                        const char *url, apr_time_t lm, apr_time_t seen)
{
    sm_change c = { op, site, url, lm, NULL, seen, NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    return c;
}

/* One transaction with adds over several pages, a lastmod change and
 * removals: each touched page's summary is written once, right. */
static void test_batch_summaries(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "s.db", &path);
    apr_time_t t = apr_time_from_sec(1700000000);
    apr_time_t lm = apr_time_from_sec(1600000000);
    sm_change cs[12];
    sm_apply_stats stats;
    sqlite3_int64 before;
    char urls[8][8];
    int i;

    for (i = 0; i < 8; i++) {
        snprintf(urls[i], sizeof(urls[i]), "/u%d", i);
        cs[i] = change(SM_CHANGE_RECORD, &site_a, urls[i], lm, t);
    }
    assert_int_equal(sm_store_apply(st, cs, 8, &stats), APR_SUCCESS);
    assert_int_equal(stats.added, 8);
    /* page size 3: 3 + 3 + 2, one version each */
    assert_int_equal(q(path, "SELECT group_concat(url_count, '') FROM (SELECT"
                             " url_count FROM pages ORDER BY page)"), 332);
    assert_int_equal(q(path, "SELECT sum(version) FROM pages"), 3);
    assert_int_equal(q(path, "SELECT url_count FROM sites"), 8);
    assert_int_equal(q(path, "SELECT last_page FROM sites"), 3);
    assert_int_equal(q(path, "SELECT max(lastmod) FROM pages"), 1600000000);
    before = q(path, "SELECT index_changed FROM sites");
    assert_true(before > 0);
    assert_sound(u, path);

    /* Page 1: /u0 gone, /u1 newer; page 3: one more URL fills it, the next
     * opens page 4, and /u7 goes.  Page 2 is not touched. */
    cs[0] = change(SM_CHANGE_FORGET, &site_a, "/u0", 0, t);
    cs[1] = change(SM_CHANGE_RECORD, &site_a, "/u1",
                   lm + apr_time_from_sec(50), t);
    cs[2] = change(SM_CHANGE_RECORD, &site_a, "/n1", lm, t);
    cs[3] = change(SM_CHANGE_FORGET, &site_a, "/u7", 0, t);
    cs[4] = change(SM_CHANGE_RECORD, &site_a, "/n2", lm, t);
    cs[5] = change(SM_CHANGE_RECORD, &site_a, "/n3", lm, t);
    cs[6] = change(SM_CHANGE_FORGET, &site_a, "/never", 0, t);
    assert_int_equal(sm_store_apply(st, cs, 7, &stats), APR_SUCCESS);
    assert_int_equal(stats.added, 3);
    assert_int_equal(stats.removed, 2);
    assert_int_equal(stats.updated, 1);
    /* /u7's removal made room on page 3 within the transaction. */
    assert_int_equal(q(path, "SELECT page FROM urls WHERE url='/n1'"), 3);
    assert_int_equal(q(path, "SELECT page FROM urls WHERE url='/n2'"), 3);
    assert_int_equal(q(path, "SELECT page FROM urls WHERE url='/n3'"), 4);
    assert_int_equal(q(path, "SELECT url_count FROM sites"), 9);
    assert_int_equal(q(path, "SELECT version FROM pages WHERE page=1"), 2);
    assert_int_equal(q(path, "SELECT version FROM pages WHERE page=2"), 1);
    assert_int_equal(q(path, "SELECT version FROM pages WHERE page=3"), 2);
    assert_int_equal(q(path, "SELECT version FROM pages WHERE page=4"), 1);
    /* A removal moves the page's lastmod to now, never back. */
    assert_true(q(path, "SELECT lastmod FROM pages WHERE page=1")
                >= before);
    assert_int_equal(q(path, "SELECT lastmod FROM pages WHERE page=2"),
                     1600000000);
    assert_true(q(path, "SELECT index_changed FROM sites") >= before);
    assert_sound(u, path);

    /* Only last_seen moves: no page or site row changes. */
    cs[0] = change(SM_CHANGE_RECORD, &site_a, "/u4", lm,
                   t + apr_time_from_sec(10));
    assert_int_equal(sm_store_apply(st, cs, 1, &stats), APR_SUCCESS);
    assert_int_equal(stats.touched, 1);
    assert_int_equal(q(path, "SELECT version FROM pages WHERE page=2"), 1);

    /* A failed batch changes no summary. */
    sql_exec(path, "CREATE TRIGGER refuse BEFORE INSERT ON urls"
                   " WHEN new.url = '/bad' BEGIN SELECT RAISE(ABORT, 'no'); END");
    cs[0] = change(SM_CHANGE_RECORD, &site_a, "/ok", lm, t);
    cs[1] = change(SM_CHANGE_RECORD, &site_a, "/bad", lm, t);
    assert_int_not_equal(sm_store_apply(st, cs, 2, &stats), APR_SUCCESS);
    assert_int_equal(q(path, "SELECT url_count FROM sites"), 9);
    assert_int_equal(q(path, "SELECT sum(url_count) FROM pages"), 9);
    assert_int_equal(q(path, "SELECT count(*) FROM urls WHERE url='/ok'"), 0);
    /* (gone before check, which refuses a trigger the schema does not
     * make) */
    sql_exec(path, "DROP TRIGGER refuse");
    /* and the next batch starts clean */
    assert_int_equal(sm_store_apply(st, cs, 1, &stats), APR_SUCCESS);
    assert_int_equal(q(path, "SELECT url_count FROM sites"), 10);
    assert_sound(u, path);
    sm_store_close(st);
}

/* A page's ETag compared weakly: W/"x" and "x" are the same version. */
static void test_weak_etag_is_same(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "s.db", &path);
    apr_time_t t = apr_time_from_sec(1700000000);
    sm_apply_stats stats;

    apply1(st, SM_CHANGE_RECORD, &site_b, "/w", 0, "W/\"5-abc\"", t, &stats);
    apply1(st, SM_CHANGE_RECORD, &site_b, "/w", 0, "\"5-abc\"",
           t + apr_time_from_sec(5), &stats);
    assert_int_equal(stats.touched, 1);
    assert_int_equal(q(path, "SELECT lastmod FROM urls"), 1700000000);
    apply1(st, SM_CHANGE_RECORD, &site_b, "/w", 0, "\"6-abd\"",
           t + apr_time_from_sec(9), &stats);
    assert_int_equal(stats.updated, 1);
    assert_int_equal(q(path, "SELECT lastmod FROM urls"), 1700000009);
    sm_store_close(st);
}

/* Expiry walks more than one rowid chunk, keeps the summaries right, and
 * with a period runs once per period whichever process asks. */
static void test_expire_chunks_and_claim(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "s.db", &path);
    sm_site_conf s = { "http://e.example", 1000, 0, apr_time_from_sec(100),
                       NULL, 0 };
    apr_time_t now = apr_time_from_sec(1700000000);
    int n = 45000, i, removed;
    sm_change *cs = apr_palloc(u->pool, sizeof(*cs) * n);
    sm_apply_stats stats;

    /* every third URL is old */
    for (i = 0; i < n; i++)
        cs[i] = change(SM_CHANGE_RECORD, &s,
                       apr_psprintf(u->pool, "/x%d", i), 0,
                       now - apr_time_from_sec(i % 3 == 0 ? 500 : 10));
    assert_int_equal(sm_store_apply(st, cs, n, &stats), APR_SUCCESS);
    apply1(st, SM_CHANGE_RECORD, &site_b, "/other", 0, NULL,
           now - apr_time_from_sec(1000), NULL);

    assert_int_equal(sm_store_expire(st, &s, now, apr_time_from_sec(3600),
                                     &removed), APR_SUCCESS);
    assert_int_equal(removed, n / 3);
    assert_int_equal(q(path, "SELECT url_count FROM sites WHERE"
                             " base='http://e.example'"), n - n / 3);
    assert_int_equal(q(path, "SELECT count(*) FROM urls WHERE url='/other'"),
                     1);
    assert_sound(u, path);

    /* Within the period nothing runs, from this connection or another. */
    apply1(st, SM_CHANGE_RECORD, &s, "/late", 0, NULL,
           now - apr_time_from_sec(500), NULL);
    assert_int_equal(sm_store_expire(st, &s, now + apr_time_from_sec(60),
                                     apr_time_from_sec(3600), &removed),
                     APR_SUCCESS);
    assert_int_equal(removed, 0);
    {
        char *p2;
        sm_store *other = open_store(u, "s.db", &p2);
        assert_int_equal(sm_store_expire(other, &s,
                                         now + apr_time_from_sec(60),
                                         apr_time_from_sec(3600), &removed),
                         APR_SUCCESS);
        assert_int_equal(removed, 0);
        sm_store_close(other);
    }
    /* After it, or when asked without a period (sitemapctl prune), it does. */
    assert_int_equal(sm_store_expire(st, &s, now + apr_time_from_sec(60), 0,
                                     &removed), APR_SUCCESS);
    assert_int_equal(removed, 1);
    apply1(st, SM_CHANGE_RECORD, &s, "/late2", 0, NULL,
           now - apr_time_from_sec(500), NULL);
    assert_int_equal(sm_store_expire(st, &s, now + apr_time_from_sec(3600),
                                     apr_time_from_sec(3600), &removed),
                     APR_SUCCESS);
    /* an hour on, every URL of the site is old */
    assert_int_equal(removed, n - n / 3 + 1);
    assert_int_equal(q(path, "SELECT url_count FROM sites WHERE"
                             " base='http://e.example'"), 0);
    assert_int_equal(q(path, "SELECT count(*) FROM pages p JOIN sites s"
                             " ON s.id = p.site_id WHERE"
                             " s.base='http://e.example' AND p.url_count > 0"),
                     0);
    assert_sound(u, path);
    sm_store_close(st);
}

/* The extended result code of running sql on path. */
static int sql_rc(const char *path, const char *sql)
{
    sqlite3 *db;
    int rc;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, 5000);
    rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

/* A store file made from an SQL dump in t/unit/fixtures. */
static char *load_fixture(unit_ctx *u, const char *dump_name,
                          const char *db_name)
{
    char *path = apr_pstrcat(u->pool, u->dir, db_name, NULL);
    char *dump = apr_palloc(u->pool, 65536);
    FILE *f = fopen(apr_pstrcat(u->pool, FIXTURES "/", dump_name, NULL),
                    "rb");
    apr_size_t len;

    assert_non_null(f);
    len = fread(dump, 1, 65535, f);
    fclose(f);
    dump[len] = '\0';
    sql_exec(path, dump);
    return path;
}

/* A store written by schema 1 (summaries kept by triggers) is upgraded in
 * place: the data stays, the triggers go, and writes keep it sound. */
static void test_upgrade_from_1(void **state)
{
    unit_ctx *u = *state;
    char *path = load_fixture(u, "store-v1.sql", "/v1.db");
    char err[512];
    sm_store *st;
    apr_time_t t = apr_time_from_sec(1795400000);

    assert_int_equal(q(path, "PRAGMA user_version"), 1);

    if (sm_store_open_sqlite(&st, u->pool, path, 0, 1000, NULL, err,
                             sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    assert_int_equal(q(path, "PRAGMA user_version"), SM_SCHEMA_VERSION);
    assert_int_equal(q(path, "SELECT count(*) FROM sqlite_master WHERE"
                             " type='trigger' AND name NOT IN"
                             " ('sites_settings', 'urls_crawls', 'urls_images')"),
                     0);
    assert_int_equal(q(path, "SELECT count(*) FROM sqlite_master WHERE"
                             " name='urls_by_seen'"), 0);
    assert_int_equal(q(path, "SELECT count(*) FROM urls"), 6);
    assert_int_equal(q(path, "SELECT url_count FROM sites WHERE id=1"), 4);
    assert_sound(u, path);

    /* site a: page 2 holds 2 of 3, so /six goes there, /seven to page 3 */
    apply1(st, SM_CHANGE_RECORD, &site_a, "/six", 0, NULL, t, NULL);
    apply1(st, SM_CHANGE_RECORD, &site_a, "/seven", 0, NULL, t, NULL);
    apply1(st, SM_CHANGE_FORGET, &site_a, "/one", 0, NULL, t, NULL);
    assert_int_equal(q(path, "SELECT page FROM urls WHERE url='/six'"), 2);
    assert_int_equal(q(path, "SELECT page FROM urls WHERE url='/seven'"), 3);
    assert_int_equal(q(path, "SELECT url_count FROM sites WHERE id=1"), 5);
    assert_int_equal(q(path, "SELECT url_count FROM pages WHERE site_id=1"
                             " AND page=1"), 1);
    assert_sound(u, path);
    sm_store_close(st);
}

/* The URLs of page N as the handler reads them ("/a /b"), or of every
 * page as sitemapctl lists them ("1:/a 2:/b", page 0). */
typedef struct {
    apr_pool_t *pool;
    const char *text;
} url_text;

static apr_status_t url_text_add(void *baton, const char *url,
                                 apr_time_t lastmod, const char *alternates)
{
    url_text *t = baton;
    (void)lastmod; (void)alternates;
    t->text = *t->text ? apr_pstrcat(t->pool, t->text, " ", url, NULL)
                       : apr_pstrdup(t->pool, url);
    return APR_SUCCESS;
}

static apr_status_t url_row_add(void *baton, const char *url,
                                apr_int64_t page, apr_time_t lastmod,
                                apr_time_t seen, const char *alternates)
{
    url_text *t = baton;
    (void)lastmod;
    (void)seen; (void)alternates;
    t->text = apr_psprintf(t->pool, "%s%s%" APR_INT64_T_FMT ":%s", t->text,
                           *t->text ? " " : "", page, url);
    return APR_SUCCESS;
}

static const char *page_text(unit_ctx *u, sm_store *st, const char *base,
                             apr_int64_t page)
{
    url_text t = { u->pool, "" };
    apr_status_t rv;

    assert_int_equal(sm_store_read_begin(st), APR_SUCCESS);
    rv = page ? sm_store_page_urls(st, base, page, url_text_add, &t)
              : sm_store_url_rows(st, base, 0, url_row_add, &t);
    sm_store_read_end(st);
    if (rv != APR_SUCCESS)
        fail_msg("page %d of %s: %s", (int)page, base, sm_store_error(st));
    return t.text;
}

/* Two sites whose URLs arrive interleaved: every page holds its own URLs in
 * the order they came, however the sites and pages mix in the table. */
static void test_pages_of_interleaved_sites(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "mix.db", &path);
    sm_site_conf two = { "http://two.example", 2, 0, 0, NULL, 0 };
    apr_time_t t = apr_time_from_sec(1700000000);
    sm_change batch[6];
    sm_apply_stats stats;

    batch[0] = change(SM_CHANGE_RECORD, &site_a, "/a1", 0, t);
    batch[1] = change(SM_CHANGE_RECORD, &two, "/t1", 0, t);
    batch[2] = change(SM_CHANGE_RECORD, &site_a, "/a2", 0, t);
    batch[3] = change(SM_CHANGE_RECORD, &two, "/t2", 0, t);
    batch[4] = change(SM_CHANGE_RECORD, &two, "/t3", 0, t);
    batch[5] = change(SM_CHANGE_RECORD, &site_a, "/a3", 0, t);
    assert_int_equal(sm_store_apply(st, batch, 6, &stats), APR_SUCCESS);
    apply1(st, SM_CHANGE_RECORD, &site_a, "/a4", 0, NULL, t, NULL);
    apply1(st, SM_CHANGE_RECORD, &two, "/t4", 0, NULL, t, NULL);
    apply1(st, SM_CHANGE_RECORD, &two, "/t5", 0, NULL, t, NULL);
    /* already stored: no id used, nothing moves */
    apply1(st, SM_CHANGE_RECORD, &two, "/t1", 0, NULL, t, NULL);
    apply1(st, SM_CHANGE_FORGET, &two, "/t3", 0, NULL, t, NULL);
    apply1(st, SM_CHANGE_FORGET, &two, "/t4", 0, NULL, t, NULL);

    assert_string_equal(page_text(u, st, site_a.base, 1), "/a1 /a2 /a3");
    assert_string_equal(page_text(u, st, site_a.base, 2), "/a4");
    assert_string_equal(page_text(u, st, two.base, 1), "/t1 /t2");
    assert_string_equal(page_text(u, st, two.base, 2), "");
    assert_string_equal(page_text(u, st, two.base, 3), "/t5");
    assert_string_equal(page_text(u, st, two.base, 0), "1:/t1 1:/t2 3:/t5");
    /* five ids handed out: the repeated /t1 took none */
    assert_int_equal(q(path, "SELECT next_id - (2 << 40) FROM sites"
                             " WHERE base = 'http://two.example'"), 6);
    /* Readers do not rely on next_id; a writer finding it unset (a site
     * added by a schema-2 writer) takes the next id after the site's URLs. */
    sql_exec(path, "UPDATE sites SET next_id = 0"
                   " WHERE base = 'http://two.example'");
    assert_string_equal(page_text(u, st, two.base, 3), "/t5");
    assert_string_equal(page_text(u, st, two.base, 0), "1:/t1 1:/t2 3:/t5");
    /* the emptied page 2 takes no new URL: the next goes on page 3 */
    apply1(st, SM_CHANGE_RECORD, &two, "/t6", 0, NULL, t, NULL);
    assert_string_equal(page_text(u, st, two.base, 3), "/t5 /t6");
    assert_int_equal(q(path, "SELECT id - (2 << 40) FROM urls"
                             " WHERE url = '/t6'"), 6);
    assert_string_equal(page_text(u, st, two.base, 4), "");
    assert_sound(u, path);
    sm_store_close(st);
}

/* The sitemap's readers (SM_STORE_READER, as the handler opens them) never
 * upgrade a store: an older one is refused and left as it is; once the
 * writer upgraded it, readers open it. */
static void test_reader_never_upgrades(void **state)
{
    unit_ctx *u = *state;
    static const char *const fixtures[] = { "store-v1.sql", "store-v2.sql" };
    int i;

    for (i = 0; i < 2; i++) {
        char *path = load_fixture(u, fixtures[i],
                                  apr_psprintf(u->pool, "/reader%d.db", i));
        int version = q(path, "PRAGMA user_version");
        int objects = q(path, "SELECT count(*) FROM sqlite_master");
        char err[512];
        sm_store *st;

        assert_int_equal(version, i + 1);
        err[0] = '\0';
        if (sm_store_open_sqlite(&st, u->pool, path, SM_STORE_READER, 1000,
                                 NULL, err, sizeof(err)) == APR_SUCCESS)
            fail_msg("%s: a reader opened a schema %d store", fixtures[i],
                     version);
        assert_non_null(strstr(err, "needs an upgrade"));
        assert_int_equal(q(path, "PRAGMA user_version"), version);
        assert_int_equal(q(path, "SELECT count(*) FROM sqlite_master"),
                         objects);

        /* the writer upgrades; then a reader opens it */
        if (sm_store_open_sqlite(&st, u->pool, path, 0, 1000, NULL, err,
                                 sizeof(err)) != APR_SUCCESS)
            fail_msg("writer: %s", err);
        sm_store_close(st);
        if (sm_store_open_sqlite(&st, u->pool, path, SM_STORE_READER, 1000,
                                 NULL, err, sizeof(err)) != APR_SUCCESS)
            fail_msg("reader after the upgrade: %s", err);
        sm_store_close(st);
    }
}

/* A store written by schema 2 (URL ids in arrival order, pages found by an
 * index) is upgraded in place to 3: the ids are renumbered into page
 * ranges, and every page, empty ones included, keeps its URLs in their
 * order. */
static void test_upgrade_from_2(void **state)
{
    unit_ctx *u = *state;
    char *path = load_fixture(u, "store-v2.sql", "/v2.db");
    sm_site_conf a = { "http://a.example", 3, 0, 0, NULL, 0 };
    sm_site_conf b = { "http://b.example", 2, 0, 0, NULL, 0 };
    apr_time_t t = apr_time_from_sec(1795400000);
    char err[512];
    sm_store *st;

    assert_int_equal(q(path, "PRAGMA user_version"), 2);
    assert_int_equal(q(path, "SELECT count(*) FROM sqlite_master WHERE"
                             " name='urls_by_page'"), 1);

    if (sm_store_open_sqlite(&st, u->pool, path, 0, 1000, NULL, err,
                             sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    assert_int_equal(q(path, "PRAGMA user_version"), SM_SCHEMA_VERSION);
    assert_int_equal(q(path, "SELECT count(*) FROM sqlite_master WHERE"
                             " name='urls_by_page'"), 0);
    assert_int_equal(q(path, "SELECT count(*) FROM urls"), 6);
    assert_int_equal(q(path, "SELECT id - (1 << 40) FROM urls"
                             " WHERE url='/a6'"), 4);
    assert_int_equal(q(path, "SELECT id - (2 << 40) FROM urls"
                             " WHERE url='/b3'"), 1);
    assert_sound(u, path);
    assert_string_equal(page_text(u, st, a.base, 1), "/a1 /a3");
    assert_string_equal(page_text(u, st, a.base, 2), "/a4 /a6");
    assert_string_equal(page_text(u, st, a.base, 3), "");
    assert_string_equal(page_text(u, st, b.base, 1), "");
    assert_string_equal(page_text(u, st, b.base, 2), "/b3 /b4");

    /* A schema-2 writer still running (the old children of a graceful
     * restart): its page summaries and its expiry claim fail, so none of
     * its URL writes can commit; a site it adds gets ids when first used. */
    assert_int_equal(sql_rc(path, "INSERT INTO pages(site_id, page,"
                                  " url_count, xml_bytes, lastmod, changed,"
                                  " version) VALUES (1, 2, 3, 3, 3, 3, 1)"
                                  " ON CONFLICT(site_id, page) DO UPDATE SET"
                                  " url_count = excluded.url_count"),
                     SQLITE_CONSTRAINT_NOTNULL);
    assert_int_equal(sql_rc(path, "UPDATE sites SET expired = 1 WHERE id = 1"),
                     SQLITE_ERROR);
    sql_exec(path, "INSERT INTO sites(base, page_size)"
                   " VALUES ('http://c.example', 2)");
    assert_sound(u, path);
    {
        sm_site_conf c = { "http://c.example", 2, 0, 0, NULL, 0 };
        apply1(st, SM_CHANGE_RECORD, &c, "/c1", 0, NULL, t, NULL);
        apply1(st, SM_CHANGE_RECORD, &c, "/c2", 0, NULL, t, NULL);
        assert_int_equal(q(path, "SELECT id - (3 << 40) FROM urls"
                                 " WHERE url='/c2'"), 2);
        assert_string_equal(page_text(u, st, c.base, 1), "/c1 /c2");
    }

    /* a's last page is empty and takes the next URL; b's is full */
    apply1(st, SM_CHANGE_RECORD, &a, "/a9", 0, NULL, t, NULL);
    apply1(st, SM_CHANGE_RECORD, &b, "/b5", 0, NULL, t, NULL);
    apply1(st, SM_CHANGE_FORGET, &a, "/a1", 0, NULL, t, NULL);
    assert_string_equal(page_text(u, st, a.base, 0), "1:/a3 2:/a4 2:/a6 3:/a9");
    assert_string_equal(page_text(u, st, b.base, 0), "2:/b3 2:/b4 3:/b5");
    assert_sound(u, path);
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

/* A script's path-info URL with the content of the script's own URL is
 * that page again (sm_change.same_as): not added, removed if stored. */
static void test_same_as(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "same.db", &path);
    apr_time_t now = apr_time_now();
    sm_change c = { SM_CHANGE_RECORD, &site_a, "/s/x", 0, "fp:1", now, NULL,
                    NULL, "/s", NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_apply_stats stats;

    /* the script's URL not stored: nothing to compare, added */
    assert_int_equal(sm_store_apply(st, &c, 1, &stats), APR_SUCCESS);
    assert_int_equal(stats.added, 1);
    apply1(st, SM_CHANGE_RECORD, &site_a, "/s", 0, "fp:1", now, NULL);
    /* now the same content: removed, and a new one not added */
    assert_int_equal(sm_store_apply(st, &c, 1, &stats), APR_SUCCESS);
    assert_int_equal(stats.removed, 1);
    c.url = "/s/y";
    assert_int_equal(sm_store_apply(st, &c, 1, &stats), APR_SUCCESS);
    assert_int_equal(stats.added, 0);
    /* other content: a page of its own */
    c.etag = "fp:2";
    assert_int_equal(sm_store_apply(st, &c, 1, &stats), APR_SUCCESS);
    assert_int_equal(stats.added, 1);
    assert_int_equal(q(path, "SELECT count(*) FROM urls"), 2);
    sm_store_close(st);
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
    assert_int_equal(sm_xml_escaped_len(""), 0);
    assert_int_equal(sm_xml_escaped_len("/a?b=1&&c='x'"),
                     13 + 4 + 4 + 5 + 5);
    assert_int_equal(sm_xml_escaped_len("/p<q>r\"s"), 8 + 3 + 3 + 5);
}

/* Passwords never reach a log: sm_uri_mask hides them wherever a URI
 * may hold one, and leaves everything else as it was. */
static void test_uri_mask(void **state)
{
    static const char *const cases[][2] = {
        { "/var/lib/apache2/sitemap/sitemap.db",
          "/var/lib/apache2/sitemap/sitemap.db" },
        { "postgresql://sitemap@db.example.com/sitemap",
          "postgresql://sitemap@db.example.com/sitemap" },
        { "postgresql://sitemap:pw@db.example.com/sitemap",
          "postgresql://sitemap:***@db.example.com/sitemap" },
        { "postgres://u:p%40ss:w@h1:5432,h2/db?sslmode=require",
          "postgres://u:***@h1:5432,h2/db?sslmode=require" },
        /* an @ in the password (not encoded): the last @ ends it */
        { "postgresql://u:a@b@host/db", "postgresql://u:***@host/db" },
        { "postgresql://host/db?user=u&password=pw&sslmode=require",
          "postgresql://host/db?user=u&password=***&sslmode=require" },
        { "postgresql://host/db?PASSWORD=pw",
          "postgresql://host/db?PASSWORD=***" },
        { "postgresql://u:x@host?sslpassword=k&password=pw",
          "postgresql://u:***@host?sslpassword=***&password=***" },
        { "postgresql://host:5432/db?passfile=/etc/apache2/sitemap.pgpass",
          "postgresql://host:5432/db?passfile=/etc/apache2/sitemap.pgpass" },
        { "postgresql://", "postgresql://" },
        { "postgresql://:pw@", "postgresql://:***@" },
    };
    unit_ctx *u = *state;
    apr_size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_string_equal(sm_uri_mask(u->pool, cases[i][0]), cases[i][1]);
    assert_true(sm_store_is_pg("postgres://h/db"));
    assert_true(sm_store_is_pg("postgresql://h/db"));
    assert_false(sm_store_is_pg("postgresq://h/db"));
    assert_false(sm_store_is_pg("db/postgresql://x"));
    /* What the rest of the code asks: a file or a server's, and whether
     * this build can use the location at all. */
    assert_true(sm_store_is_file("/var/lib/s.db"));
    assert_true(sm_store_is_file("db/postgresql://x"));
    assert_false(sm_store_is_file("postgres://h/db"));
    assert_null(sm_store_location_problem(u->pool, "/var/lib/s.db"));
    assert_non_null(strstr(sm_store_backends(), "sqlite"));
#ifndef SM_WITHOUT_POSTGRESQL
    assert_null(sm_store_location_problem(u->pool, "postgresql://h/db"));
    assert_non_null(sm_store_location_problem(u->pool,
                                              "postgresql://h/db?nosuch=1"));
#else
    assert_non_null(strstr(sm_store_location_problem(u->pool,
                                                     "postgresql://h/db"),
                           "--without-postgresql"));
#endif
#ifndef SM_WITHOUT_POSTGRESQL
    /* libpq's own parser judges a URI; the rejected token is not shown
     * when the URI holds a password. */
    assert_null(sm_store_pg_uri_check(u->pool, "postgresql://u:pw@h/db"
                                      "?sslmode=require"));
    assert_non_null(sm_store_pg_uri_check(u->pool, "postgresql://h/db"
                                          "?nosuch=1"));
    assert_null(strstr(sm_store_pg_uri_check(u->pool, "postgresql://u:s%zz"
                                             "@h/db"), "s%zz"));
#endif
}

/* The -wal file stays bounded however much is written: 12,000 new URLs in
 * the recorder's batches of 1,000 (about 18 MB of WAL without a
 * checkpoint; the old bound was 40 MB) leave it under 8 MiB (README, The
 * store: the 4 MiB limit plus one batch). */
static void test_wal_is_bounded(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "s.db", &path);
    sm_site_conf big = { "http://wal.example", 50000, 0, 0, NULL, 0 };
    sm_change batch[1000];
    sm_apply_stats stats;
    apr_finfo_t fi;
    apr_off_t biggest = 0;
    int i, j;

    for (i = 0; i < 20; i++) {
        apr_pool_t *p;
        apr_pool_create(&p, u->pool);
        for (j = 0; j < 1000; j++) {
            sm_change c = { SM_CHANGE_RECORD, &big,
                            apr_psprintf(p, "/crawl/%08x/an-article-with-"
                                         "a-long-name-%d.html",
                                         (unsigned)((i * 1000 + j)
                                                    * 2654435761u), j),
                            0, "\"etag-1234567890\"", apr_time_now(),
                            NULL, NULL, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
            batch[j] = c;
        }
        if (sm_store_apply(st, batch, 1000, &stats) != APR_SUCCESS)
            fail_msg("apply: %s", sm_store_error(st));
        assert_int_equal(stats.added, 1000);
        apr_pool_destroy(p);
        assert_int_equal(apr_stat(&fi, apr_pstrcat(u->pool, path, "-wal",
                                                   NULL),
                                  APR_FINFO_SIZE, u->pool), APR_SUCCESS);
        if (fi.size > biggest)
            biggest = fi.size;
    }
    assert_int_equal(q(path, "SELECT count(*) FROM urls"), 20000);
    if (biggest > 8 * 1024 * 1024)
        fail_msg("the -wal file grew to %" APR_OFF_T_FMT " bytes", biggest);
    sm_store_close(st);
}

/* ---- hreflang alternates ------------------------------------------------ */

/* "url=alternates;" of page 1 of site_b as the documents read it. */
static apr_status_t alternates_seen(void *baton, const char *url,
                                    apr_time_t lastmod,
                                    const char *alternates)
{
    url_text *t = baton;
    (void)lastmod;
    if (alternates)
        t->text = apr_pstrcat(t->pool, t->text, url, "=", alternates, ";",
                              NULL);
    return APR_SUCCESS;
}

static const char *alternates_of(unit_ctx *u, sm_store *st)
{
    url_text t = { u->pool, "" };
    assert_int_equal(sm_store_read_begin(st), APR_SUCCESS);
    assert_int_equal(sm_store_page_urls(st, site_b.base, 1, alternates_seen,
                                        &t), APR_SUCCESS);
    sm_store_read_end(st);
    return t.text;
}

static apr_status_t alternates_row(void *baton, const char *url,
                                   apr_int64_t page, apr_time_t lastmod,
                                   apr_time_t seen, const char *alternates)
{
    (void)page; (void)lastmod; (void)seen;
    return alternates_seen(baton, url, 0, alternates);
}

static void apply_alternates(sm_store *st, const char *url, apr_time_t lm,
                             const char *alternates, apr_time_t seen)
{
    sm_change c = { SM_CHANGE_RECORD, &site_b, url, lm, NULL, seen, NULL,
                    alternates, NULL, NULL, NULL, 0, 0, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_apply_stats stats;
    if (sm_store_apply(st, &c, 1, &stats) != APR_SUCCESS)
        fail_msg("apply %s: %s", url, sm_store_error(st));
}

#define DE_A "de https://b.example/de/a"
#define FR_A "fr https://fr.example/l'a?x=1&y=2"

/* As titles: stored with the URL, replaced when the head says others,
 * left alone when it was not read, cleared when it has none; a change
 * moves the page's version; sitemapctl's reads and stats see them. */
static void test_alternates(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "alternates.db", &path);
    apr_time_t t = apr_time_from_sec(1700000000);
    apr_array_header_t *stats, *problems;
    const sm_site_stats *ss;
    url_text rows = { u->pool, "" };
    sqlite3_int64 v;

    apply_alternates(st, "/a", t, DE_A "\n" FR_A, t);
    apply_alternates(st, "/b", t, NULL, t);
    apply_alternates(st, "/c", t, "", t);
    assert_string_equal(alternates_of(u, st), "/a=" DE_A "\n" FR_A ";");
    assert_int_equal(q(path, "SELECT alternates IS NULL FROM urls"
                             " WHERE url = '/c'"), 1);
    v = q(path, "SELECT version FROM pages WHERE page = 1");
    /* the same again: nothing moves */
    apply_alternates(st, "/a", t, DE_A "\n" FR_A, t + 1);
    assert_int_equal(q(path, "SELECT version FROM pages WHERE page = 1"), v);
    /* others (the order is theirs), the same Last-Modified: stored, the
     * version moves, the URL's lastmod does not */
    apply_alternates(st, "/a", t, FR_A "\n" DE_A, t + 2);
    assert_string_equal(alternates_of(u, st), "/a=" FR_A "\n" DE_A ";");
    assert_true(q(path, "SELECT version FROM pages WHERE page = 1") > v);
    assert_int_equal(q(path, "SELECT lastmod FROM urls WHERE url = '/a'"),
                     apr_time_sec(t));
    v = q(path, "SELECT version FROM pages WHERE page = 1");
    /* not read: kept */
    apply_alternates(st, "/a", t, NULL, t + 3);
    assert_string_equal(alternates_of(u, st), "/a=" FR_A "\n" DE_A ";");
    assert_int_equal(q(path, "SELECT version FROM pages WHERE page = 1"), v);
    /* sitemapctl: list and stats */
    apply_alternates(st, "/b", t, DE_A, t + 4);
    assert_int_equal(sm_store_read_begin(st), APR_SUCCESS);
    assert_int_equal(sm_store_url_rows(st, site_b.base, 0, alternates_row,
                                       &rows), APR_SUCCESS);
    assert_int_equal(sm_store_site_stats(st, u->pool, site_b.base, &stats),
                     APR_SUCCESS);
    sm_store_read_end(st);
    assert_string_equal(rows.text, "/a=" FR_A "\n" DE_A ";/b=" DE_A ";");
    ss = &APR_ARRAY_IDX(stats, 0, sm_site_stats);
    assert_int_equal(ss->urls_with_alternates, 2);
    assert_int_equal(ss->alternates, 3);
    assert_sound(u, path);
    /* read without any: gone, the version moves */
    apply_alternates(st, "/a", t, "", t + 5);
    assert_string_equal(alternates_of(u, st), "/b=" DE_A ";");
    assert_true(q(path, "SELECT version FROM pages WHERE page = 1") > v);
    assert_int_equal(q(path, "SELECT alternates IS NULL FROM urls"
                             " WHERE url = '/a'"), 1);

    /* check finds what no writer stores */
    sql_exec(path, "UPDATE urls SET alternates = 'DE https://b.example/x'"
                   " WHERE url = '/b'");
    problems = problems_of(u, path);
    assert_int_equal(problems->nelts, 1);
    assert_non_null(strstr(APR_ARRAY_IDX(problems, 0, const char *),
                           "alternates"));
    sm_store_close(st);
}

/* A schema-4 store (no alternates) is refused by readers, and upgraded in
 * place by the first writer: URLs and titles stay. */
static void test_upgrade_from_4(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "v4.db", &path);
    apr_time_t t = apr_time_from_sec(1700000000);
    char err[512];

    apply_titled(st, "/a", t, "Title", t);
    sm_store_close(st);
    sql_exec(path, "DROP TABLE verdicts;" SM_UNIT_DROP_CRAWLS
                   " ALTER TABLE urls DROP COLUMN held;"
                   " ALTER TABLE urls DROP COLUMN alternates;"
                   " PRAGMA user_version = 4;");
    err[0] = '\0';
    if (sm_store_open_sqlite(&st, u->pool, path, SM_STORE_READER, 1000, NULL,
                             err, sizeof(err)) == APR_SUCCESS)
        fail_msg("a reader opened a schema 4 store");
    assert_non_null(strstr(err, "needs an upgrade"));
    if (sm_store_open_sqlite(&st, u->pool, path, 0, 1000, NULL, err,
                             sizeof(err)) != APR_SUCCESS)
        fail_msg("writer: %s", err);
    assert_int_equal(q(path, "PRAGMA user_version"), SM_SCHEMA_VERSION);
    assert_string_equal(titles(st), "/a=Title;");
    assert_string_equal(alternates_of(u, st), "");
    apply_alternates(st, "/a", t, DE_A, t + 1);
    assert_string_equal(alternates_of(u, st), "/a=" DE_A ";");
    assert_sound(u, path);
    sm_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_wal_is_bounded, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_schema_created, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_pages_of_interleaved_sites, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_reader_never_upgrades, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_2, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_record_touch_update_forget, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_pages_are_stable, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_titles, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_alternates, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_4, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_page_bytes_limit, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_max_urls_and_sites_apart, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_expire, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_batch_summaries, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_weak_etag_is_same, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_expire_chunks_and_claim, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_1, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_refuses_foreign_files, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_is_current, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_same_as, unit_setup, unit_teardown),
        cmocka_unit_test(test_escaped_len),
        cmocka_unit_test_setup_teardown(test_uri_mask, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
