/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of verdicts ("why is my page not listed?"): the store keeps
 * the latest verdict of a URL left out (SM_CHANGE_NOTE) or forgotten with
 * a why, at most SM_VERDICTS_MAX a site; sm_store_why and
 * sm_store_left_out read them back; the recorder drops repeated notes
 * without a lock and keeps notes apart from a URL's own change; the rules
 * say which content types are worth a note and which URL a note names. */
#include "unit.h"

#include "util/sm_hash.h"
#include "record/sm_recorder.h"
#include "record/sm_rules.h"
#include "store/sm_store_backend.h"

#include <string.h>

static sm_site_conf site = { "https://w.example", 50000, 0, 0, NULL, 0 };
static sm_logger logger = { NULL, NULL, SM_LOG_ERR };

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

static sm_change change(sm_change_op op, const char *url, const char *why,
                        const char *detail, int status, apr_int64_t sec)
{
    sm_change c;

    memset(&c, 0, sizeof(c));
    c.op = op;
    c.site = &site;
    c.url = url;
    c.seen = apr_time_from_sec(sec);
    c.why = why;
    c.detail = detail;
    c.status = status;
    return c;
}

static void apply(sm_store *st, sm_change c)
{
    sm_apply_stats stats;

    if (sm_store_apply(st, &c, 1, &stats) != APR_SUCCESS)
        fail_msg("apply %s: %s", c.url, sm_store_error(st));
}

static sm_why_info why(unit_ctx *u, sm_store *st, const char *url)
{
    sm_why_info w;

    assert_int_equal(sm_store_why(st, u->pool, site.base, url, &w),
                     APR_SUCCESS);
    return w;
}

static void test_note_kept_and_read(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "n.db", &path);
    sm_why_info w;

    apply(st, change(SM_CHANGE_NOTE, "/s", "session", NULL, 200, 1000));
    w = why(u, st, "/s");
    assert_false(w.listed);
    assert_true(w.has_verdict);
    assert_string_equal(w.verdict.verdict, "left out");
    assert_string_equal(w.verdict.reason, "session");
    assert_null(w.verdict.detail);
    assert_int_equal(w.verdict.status, 200);
    assert_true(w.verdict.at == apr_time_from_sec(1000));
    /* Nothing of the listing changed. */
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls"), 0);
    /* A later note replaces it; an older one does not. */
    apply(st, change(SM_CHANGE_NOTE, "/s", "excluded", NULL, 200, 2000));
    apply(st, change(SM_CHANGE_NOTE, "/s", "query", NULL, 200, 1500));
    w = why(u, st, "/s");
    assert_string_equal(w.verdict.reason, "excluded");
    assert_int_equal(sql_int(path, "SELECT count(*) FROM verdicts"), 1);
    /* Never seen. */
    w = why(u, st, "/never");
    assert_false(w.listed);
    assert_false(w.has_verdict);
    sm_store_close(st);
}

static void test_forget_says_removed_or_left_out(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "f.db", &path);
    sm_why_info w;

    apply(st, change(SM_CHANGE_RECORD, "/a", NULL, NULL, 200, 1000));
    w = why(u, st, "/a");
    assert_true(w.listed);
    assert_false(w.has_verdict);
    assert_true(w.last_seen == apr_time_from_sec(1000));
    apply(st, change(SM_CHANGE_FORGET, "/a", "canonical names another URL",
                     "https://w.example/b", 200, 1100));
    w = why(u, st, "/a");
    assert_false(w.listed);
    assert_string_equal(w.verdict.verdict, "removed");
    assert_string_equal(w.verdict.detail, "https://w.example/b");
    /* A forget of a URL not stored: left out. */
    apply(st, change(SM_CHANGE_FORGET, "/c", "status 404", NULL, 404, 1200));
    w = why(u, st, "/c");
    assert_string_equal(w.verdict.verdict, "left out");
    assert_int_equal(w.verdict.status, 404);
    /* Without a why (sitemapctl remove): no verdict kept. */
    apply(st, change(SM_CHANGE_RECORD, "/d", NULL, NULL, 200, 1000));
    apply(st, change(SM_CHANGE_FORGET, "/d", NULL, NULL, 0, 1300));
    assert_false(why(u, st, "/d").has_verdict);
    sm_store_close(st);
}

static void test_left_out_skips_listed(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "l.db", &path);
    apr_array_header_t *v;

    apply(st, change(SM_CHANGE_NOTE, "/x", "excluded", NULL, 200, 1000));
    apply(st, change(SM_CHANGE_NOTE, "/y", "session", NULL, 200, 1001));
    apply(st, change(SM_CHANGE_NOTE, "/z", "query", NULL, 200, 1002));
    /* /y is listed since: not left out. */
    apply(st, change(SM_CHANGE_RECORD, "/y", NULL, NULL, 200, 1003));
    assert_int_equal(sm_store_left_out(st, u->pool, site.base, 10, &v),
                     APR_SUCCESS);
    assert_int_equal(v->nelts, 2);
    assert_string_equal(APR_ARRAY_IDX(v, 0, sm_verdict_row).url, "/z");
    assert_string_equal(APR_ARRAY_IDX(v, 1, sm_verdict_row).url, "/x");
    assert_int_equal(sm_store_left_out(st, u->pool, site.base, 1, &v),
                     APR_SUCCESS);
    assert_int_equal(v->nelts, 1);
    assert_int_equal(sm_store_left_out(st, u->pool, "https://none.example",
                                       10, &v), APR_SUCCESS);
    assert_int_equal(v->nelts, 0);
    sm_store_close(st);
}

/* The status page looks among the newest SM_VERDICTS_SCAN verdicts only:
 * a site whose latest verdicts are all of URLs listed since costs that
 * many lookups, not ten times more. */
static void test_left_out_scan_bounded(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "scan.db", &path);
    int n = SM_VERDICTS_SCAN, i;
    sm_change *cs = apr_pcalloc(u->pool, sizeof(*cs) * (apr_size_t)n * 2);
    apr_array_header_t *v;
    sm_apply_stats stats;

    apply(st, change(SM_CHANGE_NOTE, "/old", "excluded", NULL, 200, 900));
    for (i = 0; i < n; i++) {
        const char *url = apr_psprintf(u->pool, "/y%d", i);
        cs[i] = change(SM_CHANGE_NOTE, url, "session", NULL, 200, 1000 + i);
        cs[n + i] = change(SM_CHANGE_RECORD, url, NULL, NULL, 200, 3000);
    }
    assert_int_equal(sm_store_apply(st, cs, 2 * n, &stats), APR_SUCCESS);
    assert_int_equal(sm_store_left_out(st, u->pool, site.base, 10, &v),
                     APR_SUCCESS);
    assert_int_equal(v->nelts, 0);
    /* sitemapctl why still finds it. */
    assert_true(why(u, st, "/old").has_verdict);
    sm_store_close(st);
}

static void test_bounded_per_site(void **state)
{
    unit_ctx *u = *state;
    char *path;
    sm_store *st = open_store(u, "b.db", &path);
    int n = SM_VERDICTS_MAX + 5, i;
    sm_change *cs = apr_pcalloc(u->pool, sizeof(*cs) * (apr_size_t)n);
    sm_apply_stats stats;

    for (i = 0; i < n; i++)
        cs[i] = change(SM_CHANGE_NOTE, apr_psprintf(u->pool, "/p%d", i),
                       "excluded", NULL, 200, 1000 + i);
    assert_int_equal(sm_store_apply(st, cs, n, &stats), APR_SUCCESS);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM verdicts"),
                     SM_VERDICTS_MAX);
    /* The oldest went. */
    assert_false(why(u, st, "/p4").has_verdict);
    assert_true(why(u, st, "/p5").has_verdict);
    assert_true(why(u, st, apr_psprintf(u->pool, "/p%d", n - 1))
                .has_verdict);
    sm_store_close(st);
}

/* A schema-5 store (no verdicts) gets the table from the first writer;
 * read-only, its URLs are answered with no verdict. */
static void test_upgrade_from_5(void **state)
{
    unit_ctx *u = *state;
    char *path, err[512];
    sm_store *st = open_store(u, "v5.db", &path);
    sm_why_info w;

    apply(st, change(SM_CHANGE_RECORD, "/a", NULL, NULL, 200, 1000));
    sm_store_close(st);
    sql_exec(path, "DROP TABLE verdicts;" SM_UNIT_DROP_CRAWLS
                   " ALTER TABLE urls DROP COLUMN held;"
                   " PRAGMA user_version = 5;");
    if (sm_store_open_sqlite(&st, u->pool, path,
                             SM_STORE_READONLY | SM_STORE_PROBE, 1000, NULL,
                             err, sizeof(err)) != APR_SUCCESS)
        fail_msg("probe: %s", err);
    w = why(u, st, "/a");
    assert_true(w.listed);
    assert_false(w.has_verdict);
    sm_store_close(st);
    st = open_store(u, "v5.db", &path);
    assert_int_equal(sql_int(path, "PRAGMA user_version"), SM_SCHEMA_VERSION);
    apply(st, change(SM_CHANGE_NOTE, "/b", "session", NULL, 200, 1000));
    assert_true(why(u, st, "/b").has_verdict);
    sm_store_close(st);
}

/* ---- the recorder --------------------------------------------------------- */

static sm_recorder *make(unit_ctx *u, const char *path)
{
    sm_recorder *rec;
    sm_recorder_conf conf = { path, apr_time_from_sec(60), 100, 1000, 200,
                              &logger, NULL, NULL, NULL, 0, 0, 0, 0 };

    assert_int_equal(sm_recorder_create(&rec, u->pool, &conf), APR_SUCCESS);
    sm_recorder_add_site(rec, &site);
    return rec;
}

static void test_recorder_note_skip(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/r.db", NULL);
    sm_recorder *rec = make(u, path);
    apr_time_t t = apr_time_from_sec(1800000000);
    sm_recorder_stats stats;
    int i, taken = 0;

    /* The same facts: once within the hour. */
    assert_false(sm_recorder_note_skip(rec, 42, t));
    for (i = 0; i < 1000; i++)
        assert_true(sm_recorder_note_skip(rec, 42, t + i * 1000));
    assert_true(sm_recorder_note_skip(rec, 42, t + apr_time_from_sec(59)));
    /* Other facts are new. */
    assert_false(sm_recorder_note_skip(rec, 43, t));
    /* The next hour notes it again. */
    assert_false(sm_recorder_note_skip(rec, 42, t + apr_time_from_sec(3600)));
    /* At most SM_REC_NOTES_PER_SEC (100) new notes a second. */
    for (i = 0; i < 300; i++)
        taken += !sm_recorder_note_skip(rec, 1000 + (apr_uint64_t)i,
                                        t + apr_time_from_sec(7200));
    assert_int_equal(taken, 100);
    assert_false(sm_recorder_note_skip(rec, 5000,
                                       t + apr_time_from_sec(7201)));
    sm_recorder_get_stats(rec, &stats);
    assert_int_equal(stats.notes_skipped, 1001 + 200);
    sm_recorder_stop(rec);
}

static void test_recorder_note_beside_record(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/nb.db", NULL);
    sm_recorder *rec = make(u, path);
    sm_change r = change(SM_CHANGE_RECORD, "/a", NULL, NULL, 200,
                         1800000000);
    sm_change n = change(SM_CHANGE_NOTE, "/a", "session", NULL, 200,
                         1800000001);
    sm_recorder_stats stats;

    sm_recorder_add(rec, &r, 0);
    sm_recorder_note(rec, &n);
    assert_int_equal(sm_recorder_flush(rec), APR_SUCCESS);
    /* Both went in: the note took nothing's place. */
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls"), 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM verdicts"), 1);
    sm_recorder_get_stats(rec, &stats);
    assert_int_equal(stats.noted, 1);
    /* A forget for another reason is not a repeat of the first. */
    {
        sm_change f1 = change(SM_CHANGE_FORGET, "/a", "meta robots noindex",
                              NULL, 200, 1800000002);
        sm_change f2 = change(SM_CHANGE_FORGET, "/a", "x-robots-tag", NULL,
                              200, 1800000003);
        sm_recorder_add(rec, &f1, 0);
        assert_int_equal(sm_recorder_flush(rec), APR_SUCCESS);
        sm_recorder_add(rec, &f2, 0);
        assert_int_equal(sm_recorder_flush(rec), APR_SUCCESS);
        assert_int_equal(sql_int(path, "SELECT count(*) FROM verdicts WHERE"
                                 " reason = 'x-robots-tag'"), 1);
    }
    sm_recorder_stop(rec);
}

/* Notes are not kept across a stop: a store that cannot be written
 * spills its URLs' changes, not its notes. */
static void test_notes_not_spilled(void **state)
{
    unit_ctx *u = *state;
    const char *path = apr_pstrcat(u->pool, u->dir, "/none/s.db", NULL);
    const char *spill = apr_pstrcat(u->pool, u->dir, "/s.db", NULL);
    sm_recorder_conf conf = { path, apr_time_from_sec(60), 100, 1000, 200,
                              &logger, NULL, spill, NULL, 0, 0, 0, 0 };
    sm_change r = change(SM_CHANGE_RECORD, "/recorded", NULL, NULL, 200,
                         1800000000);
    sm_change n = change(SM_CHANGE_NOTE, "/noted", "session", NULL, 200,
                         1800000000);
    sm_recorder *rec;
    apr_dir_t *dir;
    apr_finfo_t fi;
    int files = 0;

    assert_int_equal(sm_recorder_create(&rec, u->pool, &conf), APR_SUCCESS);
    sm_recorder_add_site(rec, &site);
    sm_recorder_add(rec, &r, 0);
    sm_recorder_note(rec, &n);
    sm_recorder_stop(rec);
    assert_int_equal(apr_dir_open(&dir, u->dir, u->pool), APR_SUCCESS);
    while (apr_dir_read(&fi, APR_FINFO_NAME, dir) == APR_SUCCESS) {
        char *text;
        apr_file_t *f;
        apr_size_t len = 65536;

        if (strncmp(fi.name, "s.db.spill-", 11) != 0)
            continue;
        files++;
        text = apr_pcalloc(u->pool, len + 1);
        assert_int_equal(apr_file_open(&f, apr_pstrcat(u->pool, u->dir, "/",
                                                       fi.name, NULL),
                                       APR_FOPEN_READ, 0, u->pool),
                         APR_SUCCESS);
        apr_file_read(f, text, &len);
        apr_file_close(f);
        assert_non_null(strstr(text, "/recorded"));
        assert_null(strstr(text, "/noted"));
    }
    apr_dir_close(dir);
    assert_int_equal(files, 1);
}

/* ---- the rules ------------------------------------------------------------ */

static void test_page_like(void **state)
{
    (void)state;
    assert_true(sm_rules_page_like(NULL));
    assert_true(sm_rules_page_like("text/plain"));
    assert_true(sm_rules_page_like("Text/Plain; charset=utf-8"));
    assert_true(sm_rules_page_like("text/markdown"));
    assert_true(sm_rules_page_like("application/xhtml+xml"));
    assert_false(sm_rules_page_like("text/css"));
    assert_false(sm_rules_page_like("text/javascript; charset=utf-8"));
    assert_false(sm_rules_page_like("image/png"));
    assert_false(sm_rules_page_like("application/pdf"));
    assert_false(sm_rules_page_like("text/"));
}

static void test_note_url(void **state)
{
    unit_ctx *u = *state;
    sm_rules rules = { NULL, NULL, NULL };
    sm_response resp;
    apr_array_header_t *allow = apr_array_make(u->pool, 1, sizeof(char *));

    memset(&resp, 0, sizeof(resp));
    resp.base_len = strlen(site.base);
    resp.target = "/a/./b.html";
    assert_string_equal(sm_rules_note_url(u->pool, &rules, &resp),
                        "/a/b.html");
    /* A refused query: every name it holds is kept. */
    resp.target = "/a.html?utm_source=x&&b=2#f";
    assert_string_equal(sm_rules_note_url(u->pool, &rules, &resp),
                        "/a.html?utm_source=x&b=2");
    APR_ARRAY_PUSH(allow, const char *) = "b";
    rules.allow_query = allow;
    resp.target = "/a.html?b=2";
    assert_string_equal(sm_rules_note_url(u->pool, &rules, &resp),
                        "/a.html?b=2");
    resp.target = "not a path";
    assert_null(sm_rules_note_url(u->pool, &rules, &resp));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_note_kept_and_read, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_forget_says_removed_or_left_out, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_left_out_skips_listed, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_left_out_scan_bounded, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_bounded_per_site, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_5, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_recorder_note_skip, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_recorder_note_beside_record, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_notes_not_spilled, unit_setup, unit_teardown),
        cmocka_unit_test(test_page_like),
        cmocka_unit_test_setup_teardown(test_note_url, unit_setup, unit_teardown),
    };

    UNIT_STORE_RUN(tests);
}
