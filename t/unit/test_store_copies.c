/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of a file's own URL stored after its copies under path info
 * (sm_change.file_url; sm_store_sqlite_copies.c): the copies with its
 * ETag leave, with a verdict; nothing else under it or beside it does. */
#include "unit.h"

#include "store/sm_store_backend.h"

#include <string.h>

static const sm_site_conf site_a = {
    "http://a.example", 50000, 0, 0, NULL, 0
};

static sm_change change(const char *url, const char *etag, int file_url)
{
    sm_change c;

    memset(&c, 0, sizeof(c));
    c.op = SM_CHANGE_RECORD;
    c.site = &site_a;
    c.url = url;
    c.etag = etag;
    c.seen = apr_time_now();
    c.status = 200;
    c.file_url = file_url;
    return c;
}

static void test_copies_leave(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/copies.db", NULL);
    /* Recorded before /s was: copies (the same fingerprint, a weak tag of
     * it), another page under it, URLs beside it. */
    sm_change before[] = {
        change("/s/x", "fp:1", 0), change("/s/a/b", "W/fp:1", 0),
        change("/s/", "fp:1", 0), change("/s/other", "fp:2", 0),
        change("/sx", "fp:1", 0), change("/s0", "fp:1", 0),
        change("/s.cgi/x", "fp:1", 0),
    };
    sm_change own = change("/s", "fp:1", 1);
    sm_apply_stats stats;
    sm_store *st;
    char err[512];

    if (sm_store_open_sqlite(&st, u->pool, path, SM_STORE_CREATE, 1000,
                             NULL, err, sizeof(err)) != APR_SUCCESS)
        fail_msg("open: %s", err);
    assert_int_equal(sm_store_apply(st, before, 7, &stats), APR_SUCCESS);
    assert_int_equal(stats.added, 7);
    /* Not the file's own URL (a rewrite, a query): nothing leaves. */
    own.file_url = 0;
    own.url = "/s";
    assert_int_equal(sm_store_apply(st, &own, 1, &stats), APR_SUCCESS);
    assert_int_equal(stats.removed, 0);
    /* Once stored, later records do not look again (the writer's
     * same_as keeps new copies out). */
    own.file_url = 1;
    assert_int_equal(sm_store_apply(st, &own, 1, &stats), APR_SUCCESS);
    assert_int_equal(stats.removed, 0);
    own.url = "/s?q=1";
    assert_int_equal(sm_store_apply(st, &own, 1, &stats), APR_SUCCESS);
    assert_int_equal(stats.removed, 0);
    /* The file's own URL added: its three copies leave. */
    own.url = "/s.cgi";
    own.etag = "fp:9";
    assert_int_equal(sm_store_apply(st, &own, 1, &stats), APR_SUCCESS);
    assert_int_equal(stats.removed, 0);             /* other content */
    own.op = SM_CHANGE_FORGET;
    own.url = "/s";
    assert_int_equal(sm_store_apply(st, &own, 1, &stats), APR_SUCCESS);
    assert_int_equal(stats.removed, 1);
    own.op = SM_CHANGE_RECORD;
    own.etag = "fp:1";
    assert_int_equal(sm_store_apply(st, &own, 1, &stats), APR_SUCCESS);
    assert_int_equal(stats.added, 1);
    assert_int_equal(stats.removed, 3);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls WHERE url IN"
                             " ('/s/x', '/s/a/b', '/s/')"), 0);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls WHERE url IN"
                             " ('/s', '/s/other', '/sx', '/s0', '/s.cgi/x',"
                             " '/s.cgi', '/s?q=1')"), 7);
    /* Each with its verdict, naming the file's URL. */
    assert_int_equal(sql_int(path, "SELECT count(*) FROM verdicts WHERE"
                             " verdict = 'removed' AND reason = 'path info'"
                             " AND detail = '/s'"), 3);
    sm_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_copies_leave, unit_setup,
                                        unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
