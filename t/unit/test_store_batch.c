/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of new URLs written several to one INSERT
 * (sm_store_sqlite_batch.c): the same changes applied in one write (runs
 * of 32, 16 and 4) and one change a write (never a run) leave the same URLs
 * with the same ids on the same pages, the same summaries, verdicts and
 * counts, whatever the run
 * meets: URLs stored already, one URL twice, a page filling up, the site
 * full, a file's own URL with a copy under it, a forget, a same_as; runs
 * with and without the rarely set columns (plain), with ids SQLite
 * chooses and with ids of their own. */
#include "unit_store.h"

#include "store/sm_store_backend.h"

#include <stdio.h>
#include <string.h>

#define N 220

static const sm_site_conf site_a = {
    "http://a.example", 3, 200, 0, NULL, 0
};

/* with IndexNow: its new URLs are held (not plain runs) */
static const sm_site_conf site_b = {
    "http://b.example", 3, 200, 0, NULL, 1
};

static sm_change change(apr_pool_t *p, int op, const char *url, int k)
{
    sm_change c;

    memset(&c, 0, sizeof(c));
    c.op = op;
    c.site = &site_a;
    c.url = url;
    c.etag = apr_psprintf(p, "\"e%d\"", k % 3);
    c.seen = apr_time_from_sec(1700000000 + k);
    c.status = 200;
    c.title = k % 5 ? apr_psprintf(p, "T %d", k) : NULL;
    /* the rarely set columns, in some runs (not plain ones) */
    if (k % 37 == 5) {
        c.description = apr_psprintf(p, "D %d", k);
        c.published = apr_time_from_sec(1690000000 + k);
    }
    if (k % 53 == 9)
        c.alternates = "fr http://a.example/fr/";
    return c;
}

/* The changes: new URLs in long runs, with the awkward cases among them
 * (see the top of this file). */
static int changes(apr_pool_t *p, sm_change *out, int plain)
{
    int n = 0, k;

    for (k = 0; k < N; k++) {
        const char *url = apr_psprintf(p, "/u/%03d", k);
        int op = SM_CHANGE_RECORD;

        if (plain) {            /* new URLs only: runs of 32 */
            out[n++] = change(p, op, url, k);
            continue;
        }

        /* a conflict turns runs off for the next 64 changes: few here */
        if (k == 3 || k == 215)
            url = apr_psprintf(p, "/u/%03d", k - 2);       /* twice */
        else if (k == 150)
            url = "/old/1";                                /* stored */
        else if (k % 41 == 20)
            op = SM_CHANGE_FORGET, url = apr_psprintf(p, "/u/%03d", k - 9);
        if ((k % 31 == 7 || k == 120) && k % 2 == 0) {  /* a copy, its file */
            out[n] = change(p, SM_CHANGE_RECORD,
                            apr_pstrcat(p, url, "/x", NULL), k);
            out[n++].etag = "\"f\"";
        }
        out[n] = change(p, op, url, k);
        if (k % 31 == 7 || k == 120) {       /* a file's own URL */
            out[n].file_url = 1;
            out[n].etag = "\"f\"";
        }
        if (k % 31 == 7 && k % 2) {
            out[++n] = change(p, SM_CHANGE_RECORD,
                              apr_pstrcat(p, url, "/x", NULL), k);
            out[n].etag = "\"f\"";
        }
        if (k % 43 == 30)
            out[n].same_as = "/old/2";
        n++;
    }
    return n;
}

/* What two stores must agree on, as text. */
static char *dump(apr_pool_t *p, const char *path)
{
    static const char *const q[] = {
        "SELECT url, page, id, lastmod, etag, coalesce(title, '-'), xml_len,"
        " first_seen, last_seen, coalesce(alternates, '-'),"
        " coalesce(description, '-'), published, held FROM urls ORDER BY url",
        /* a removal's time is the wall clock's: "now" for both */
        "SELECT page, url_count, xml_bytes, CASE WHEN lastmod > 1750000000"
        " THEN 'now' ELSE lastmod END, CASE WHEN oldest_seen > 1750000000"
        " THEN 'now' ELSE oldest_seen END FROM pages ORDER BY page",
        "SELECT url_count, last_page FROM sites",
        /* every URL inside its page's range of ids */
        "SELECT count(*) FROM urls u JOIN pages p ON p.page = u.page"
        " WHERE u.id < p.first_id OR u.id >= coalesce((SELECT min(first_id)"
        " FROM pages n WHERE n.page > p.page), 1 << 62)",
        "SELECT url, verdict, reason FROM verdicts ORDER BY url",
    };
    sqlite3 *db;
    char *out = "";
    size_t i;

    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                     SQLITE_OK);
    for (i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
        sqlite3_stmt *s;
        assert_int_equal(sqlite3_prepare_v2(db, q[i], -1, &s, NULL),
                         SQLITE_OK);
        while (sqlite3_step(s) == SQLITE_ROW) {
            int c;
            for (c = 0; c < sqlite3_column_count(s); c++) {
                const char *v = (const char *)sqlite3_column_text(s, c);
                out = apr_pstrcat(p, out, c ? "|" : "", v ? v : "NULL",
                                  NULL);
            }
            out = apr_pstrcat(p, out, "\n", NULL);
        }
        sqlite3_finalize(s);
        out = apr_pstrcat(p, out, "--\n", NULL);
    }
    sqlite3_close(db);
    return out;
}

static void runs_as_one_by_one(void **state, int plain)
{
    unit_ctx *u = *state;
    char *pa = apr_pstrcat(u->pool, u->dir, "/runs.db", NULL);
    char *pb = apr_pstrcat(u->pool, u->dir, "/one.db", NULL);
    sm_change *c = apr_pcalloc(u->pool, sizeof(*c) * 2 * N), old[4];
    sm_apply_stats sa, sb, one;
    sm_store *a, *b;
    int n = changes(u->pool, c, plain), i;
    char *da, *db;

    a = unit_sqlite_open(u, pa);
    b = unit_sqlite_open(u, pb);
    old[0] = change(u->pool, SM_CHANGE_RECORD, "/old/1", 1);
    old[1] = change(u->pool, SM_CHANGE_RECORD, "/old/2", 2);
    old[1].etag = "\"e0\"";
    /* copies stored before their file's own URL comes (k = 38, 69) */
    old[2] = change(u->pool, SM_CHANGE_RECORD, "/u/038/x", 3);
    old[3] = change(u->pool, SM_CHANGE_RECORD, "/u/069/y", 4);
    old[2].etag = old[3].etag = "\"f\"";
    for (i = 0; i < 4; i++) {
        assert_int_equal(sm_store_apply(a, &old[i], 1, &sa), APR_SUCCESS);
        assert_int_equal(sm_store_apply(b, &old[i], 1, &sb), APR_SUCCESS);
    }
    assert_int_equal(sm_store_apply(a, c, n, &sa), APR_SUCCESS);
    memset(&sb, 0, sizeof(sb));
    for (i = 0; i < n; i++) {
        assert_int_equal(sm_store_apply(b, &c[i], 1, &one), APR_SUCCESS);
        sb.added += one.added;
        sb.updated += one.updated;
        sb.touched += one.touched;
        sb.removed += one.removed;
        sb.refused_full += one.refused_full;
    }
    assert_int_equal(sa.added, sb.added);
    assert_int_equal(sa.updated, sb.updated);
    assert_int_equal(sa.touched, sb.touched);
    assert_int_equal(sa.removed, sb.removed);
    assert_int_equal(sa.refused_full, sb.refused_full);
    /* the cases were met: the site filled up, copies left, twins */
    assert_true(sa.refused_full > 0);
    assert_int_equal(sql_int(pa, "SELECT count(*) FROM urls"), 200);
    if (!plain) {
        assert_true(sa.removed > 2);
        assert_true(sa.touched + sa.updated >= 2);
        assert_true(sql_int(pa, "SELECT count(*) FROM verdicts"
                            " WHERE reason = 'path info'") >= 1);
    }
    sm_store_close(a);
    sm_store_close(b);
    da = dump(u->pool, pa);
    db = dump(u->pool, pb);
    if (strcmp(da, db) != 0) {
        fprintf(stderr, "runs:\n%s\none by one:\n%s\n", da, db);
        fail_msg("the stores differ");
    }
}

static void test_runs_as_one_by_one(void **state)
{
    runs_as_one_by_one(state, 0);
}

/* New URLs only: runs of 32 and 16 fill pages of 3 and the site. */
static void test_long_runs_as_one_by_one(void **state)
{
    runs_as_one_by_one(state, 1);
}

/* Runs whose first id does not follow the largest stored, where the rows
 * must not take SQLite's largest id plus one: a site below another (a
 * later site's ids are larger), and a site whose latest URL was forgotten
 * (its next id above the largest stored plus one).  Site b's later run
 * follows again. */
static void test_runs_below_the_largest_id(void **state)
{
    unit_ctx *u = *state;
    char *pa = apr_pstrcat(u->pool, u->dir, "/runs.db", NULL);
    char *pb = apr_pstrcat(u->pool, u->dir, "/one.db", NULL);
    sm_change old[4], c[4 * 40];
    sm_apply_stats st;
    sm_store *a = unit_sqlite_open(u, pa), *b = unit_sqlite_open(u, pb);
    int i, n = 0;
    char *da, *db;

    old[0] = change(u->pool, SM_CHANGE_RECORD, "/a0", 1);
    old[1] = change(u->pool, SM_CHANGE_RECORD, "/b0", 2);
    old[2] = change(u->pool, SM_CHANGE_RECORD, "/b1", 3);
    old[3] = change(u->pool, SM_CHANGE_FORGET, "/b1", 4);
    old[1].site = old[2].site = old[3].site = &site_b;
    for (i = 0; i < 4; i++) {
        assert_int_equal(sm_store_apply(a, &old[i], 1, &st), APR_SUCCESS);
        assert_int_equal(sm_store_apply(b, &old[i], 1, &st), APR_SUCCESS);
    }
    for (i = 0; i < 40; i++) {
        c[n++] = change(u->pool, SM_CHANGE_RECORD,
                        apr_psprintf(u->pool, "/u/%03d", i), 10 + i);
        c[n] = change(u->pool, SM_CHANGE_RECORD,
                      apr_psprintf(u->pool, "/v/%03d", i), 10 + i);
        c[n++].site = &site_b;
    }
    /* a, b, a, b...: one by one; sorted by site: runs of 32 */
    for (i = 0; i < 40; i++)
        c[n + i] = c[2 * i];
    for (i = 0; i < 40; i++)
        c[n + 40 + i] = c[2 * i + 1];
    assert_int_equal(sm_store_apply(a, c + n, 80, &st), APR_SUCCESS);
    assert_int_equal(st.added, 80);
    for (i = 0; i < 80; i++)
        assert_int_equal(sm_store_apply(b, &c[n + i], 1, &st), APR_SUCCESS);
    sm_store_close(a);
    sm_store_close(b);
    assert_int_equal(sql_int(pa, "SELECT count(*) FROM urls"), 82);
    /* site b's are held: not plain runs */
    assert_int_equal(sql_int(pa, "SELECT count(*) FROM urls WHERE held > 0"),
                     41);
    da = dump(u->pool, pa);
    db = dump(u->pool, pb);
    if (strcmp(da, db) != 0) {
        fprintf(stderr, "runs:\n%s\none by one:\n%s\n", da, db);
        fail_msg("the stores differ");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_runs_as_one_by_one, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_long_runs_as_one_by_one,
                                        unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_runs_below_the_largest_id,
                                        unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
