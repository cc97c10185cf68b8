/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of IndexNow's core: the key and endpoint checks, the JSON body,
 * and the pending list in the SQLite store (what is queued, the claim that
 * lets one sender at a time have a batch, what finishing removes). */
#include "unit_store.h"

#include "indexnow/sm_indexnow.h"
#include "store/sm_store_backend.h"

#include <string.h>

static const sm_site_conf site_on = {
    "http://on.example", 50000, 0, 0, NULL, 1
};
static const sm_site_conf site_off = {
    "http://off.example", 50000, 0, 0, NULL, 0
};

/* One change, served to client (sm_change.client) at seen; *held: whether
 * it left its URL held (NULL: not asked). */
static void apply_from(sm_store *st, sm_change_op op,
                       const sm_site_conf *site, const char *url,
                       apr_time_t lm, unsigned client, apr_time_t seen,
                       int *held)
{
    sm_change c = { op, site, url, lm, NULL, seen, NULL, NULL, NULL, NULL,
                    NULL, 0, client, NULL, 0, NULL, NULL, NULL, 0, 0 };
    sm_apply_stats stats;
    unsigned char held_v[1] = { 9 };

    if (sm_store_apply_held(st, &c, 1, &stats, held_v) != APR_SUCCESS)
        fail_msg("apply %s: %s", url, sm_store_error(st));
    assert_int_equal(stats.held, held_v[0]);
    if (held)
        *held = held_v[0];
}

/* A change as two clients see it: a new URL is corroborated (a RECORD
 * from client 1, then client 2), as IndexNow's rule wants. */
static void apply1(sm_store *st, sm_change_op op, const sm_site_conf *site,
                   const char *url, apr_time_t lm)
{
    apr_time_t now = apr_time_now();

    apply_from(st, op, site, url, lm, 1, now, NULL);
    if (op == SM_CHANGE_RECORD)
        apply_from(st, op, site, url, lm, 2, now, NULL);
}

static sqlite3_int64 pending(const char *path, const char *site)
{
    char sql[256];
    apr_snprintf(sql, sizeof(sql), "SELECT count(*) FROM indexnow_pending"
                 " WHERE site = '%s'", site);
    return sql_int(path, sql);
}

static void test_key_and_endpoint_checks(void **state)
{
    apr_pool_t *p;
    char long_key[130];
    (void)state;

    apr_pool_create(&p, NULL);
    assert_null(sm_indexnow_key_problem("abcdEFGH-0123"));
    assert_null(sm_indexnow_key_problem("abcdefgh"));
    assert_non_null(sm_indexnow_key_problem("abcdefg"));
    assert_non_null(sm_indexnow_key_problem("abcdefgh_"));
    assert_non_null(sm_indexnow_key_problem("abcd efgh"));
    memset(long_key, 'a', 128);
    long_key[128] = '\0';
    assert_null(sm_indexnow_key_problem(long_key));
    long_key[128] = 'a';
    long_key[129] = '\0';
    assert_non_null(sm_indexnow_key_problem(long_key));
    assert_null(sm_indexnow_endpoint_problem(p, SM_INDEXNOW_DEFAULT_ENDPOINT));
    assert_null(sm_indexnow_endpoint_problem(p, "http://127.0.0.1:8080/x"));
    assert_non_null(sm_indexnow_endpoint_problem(p, "ftp://example.com/"));
    assert_non_null(sm_indexnow_endpoint_problem(p, "/indexnow"));
    apr_pool_destroy(p);
}

static void test_json_body(void **state)
{
    apr_pool_t *p;
    apr_array_header_t *items;
    sm_indexnow_site site = { "https://www.example.com:8443", "key-12345678",
                              "https://x/", 0, NULL };
    sm_indexnow_item *it;
    (void)state;

    apr_pool_create(&p, NULL);
    items = apr_array_make(p, 2, sizeof(sm_indexnow_item));
    it = apr_array_push(items);
    it->url = "/a?q=1";
    it = apr_array_push(items);
    it->url = "/b\"\\\x01";
    assert_string_equal(sm_indexnow_json(p, &site, items),
        "{\"host\":\"www.example.com\",\"key\":\"key-12345678\","
        "\"keyLocation\":\"https://www.example.com:8443/key-12345678.txt\","
        "\"urlList\":[\"https://www.example.com:8443/a?q=1\","
        "\"https://www.example.com:8443/b\\\"\\\\\\u0001\"]}");
    site.base = "http://[::1]:80";
    apr_array_clear(items);
    assert_string_equal(sm_indexnow_json(p, &site, items),
        "{\"host\":\"[::1]\",\"key\":\"key-12345678\","
        "\"keyLocation\":\"http://[::1]:80/key-12345678.txt\","
        "\"urlList\":[]}");
    apr_pool_destroy(p);
}

/* Added, lastmod moved, removed, expired: queued once each; a repeat or a
 * site with IndexNow Off queues nothing. */
static void test_changes_are_queued(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/s.db", NULL);
    sm_store *st = unit_sqlite_open(u, path);
    apr_time_t t1 = apr_time_from_sec(1700000000);
    sm_site_conf expiring = site_on;
    int removed;

    apply1(st, SM_CHANGE_RECORD, &site_on, "/a", t1);
    apply1(st, SM_CHANGE_RECORD, &site_on, "/b", t1);
    apply1(st, SM_CHANGE_RECORD, &site_off, "/a", t1);
    assert_int_equal(pending(path, "http://on.example"), 2);
    assert_int_equal(pending(path, "http://off.example"), 0);
    /* Sent: the list empties; then the same response again is no change. */
    assert_int_equal(sql_int(path, "SELECT count(*) FROM indexnow_state"), 0);
    {
        sqlite3 *db;
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, "DELETE FROM indexnow_pending",
                                      NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(db);
    }
    apply1(st, SM_CHANGE_RECORD, &site_on, "/a", t1);
    assert_int_equal(pending(path, "http://on.example"), 0);
    apply1(st, SM_CHANGE_RECORD, &site_on, "/a", t1 + apr_time_from_sec(60));
    assert_int_equal(pending(path, "http://on.example"), 1);
    /* Changed twice while pending: still one row. */
    apply1(st, SM_CHANGE_RECORD, &site_on, "/a", t1 + apr_time_from_sec(120));
    assert_int_equal(pending(path, "http://on.example"), 1);
    apply1(st, SM_CHANGE_FORGET, &site_on, "/b", 0);
    assert_int_equal(pending(path, "http://on.example"), 2);
    /* Expiry: everything not seen for an hour from two hours on. */
    expiring.expire = apr_time_from_sec(3600);
    assert_int_equal(sm_store_expire(st, &expiring,
                                     apr_time_now() + apr_time_from_sec(7200),
                                     0, &removed), APR_SUCCESS);
    assert_int_equal(removed, 1);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM indexnow_pending"
                             " WHERE url IN ('/a', '/b')"), 2);
    sm_store_close(st);
}

/* One claim at a time; finishing removes what was sent, except a URL that
 * changed again meanwhile. */
static void test_claim_and_finish(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/s.db", NULL);
    sm_store *one = unit_sqlite_open(u, path), *two = unit_sqlite_open(u, path);
    sm_indexnow_batch b1, b2;
    sm_indexnow_result res;
    apr_time_t now = apr_time_now();
    apr_time_t lease = apr_time_from_sec(60);

    apply1(one, SM_CHANGE_RECORD, &site_on, "/a", 0);
    apply1(one, SM_CHANGE_RECORD, &site_on, "/b", 0);
    assert_int_equal(sm_store_indexnow_claim(one, u->pool, site_on.base, now,
                                             lease, &b1), APR_SUCCESS);
    assert_int_equal(b1.items->nelts, 2);
    assert_string_equal(APR_ARRAY_IDX(b1.items, 0, sm_indexnow_item).url,
                        "/a");
    /* Held: the other connection (another process) gets nothing. */
    assert_int_equal(sm_store_indexnow_claim(two, u->pool, site_on.base, now,
                                             lease, &b2), APR_SUCCESS);
    assert_int_equal(b2.items->nelts, 0);
    /* /b changes while the batch is on its way. */
    apply1(two, SM_CHANGE_RECORD, &site_on, "/b",
           apr_time_from_sec(1700000000));
    memset(&res, 0, sizeof(res));
    res.outcome = SM_INDEXNOW_SENT;
    res.status = 200;
    res.now = now;
    res.next_try = now;
    assert_int_equal(sm_store_indexnow_finish(one, site_on.base, &b1, &res),
                     APR_SUCCESS);
    assert_int_equal(pending(path, site_on.base), 1);
    assert_int_equal(sql_int(path, "SELECT sent FROM indexnow_state"), 2);
    /* Released: the other may claim now, and gets /b. */
    assert_int_equal(sm_store_indexnow_claim(two, u->pool, site_on.base,
                                             now + 1, lease, &b2),
                     APR_SUCCESS);
    assert_int_equal(b2.items->nelts, 1);
    /* A lease that ran out (its sender died) is taken over. */
    assert_int_equal(sm_store_indexnow_claim(one, u->pool, site_on.base,
                                             now + 2 + lease, lease, &b1),
                     APR_SUCCESS);
    assert_int_equal(b1.items->nelts, 1);
    /* Retry: kept, not before next_try. */
    res.outcome = SM_INDEXNOW_RETRY;
    res.status = 429;
    res.next_try = now + apr_time_from_sec(30);
    assert_int_equal(sm_store_indexnow_finish(one, site_on.base, &b1, &res),
                     APR_SUCCESS);
    assert_int_equal(pending(path, site_on.base), 1);
    assert_int_equal(sm_store_indexnow_claim(two, u->pool, site_on.base,
                                             now + apr_time_from_sec(29),
                                             lease, &b2), APR_SUCCESS);
    assert_int_equal(b2.items->nelts, 0);
    sm_store_close(one);
    sm_store_close(two);
}

/* Corroboration: one client's new URL is listed but not queued, whatever
 * it does with it; a second client or a later day queues it, once; a
 * URL never queued is not queued when removed. */
static void test_corroboration(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/s.db", NULL);
    sm_store *st = unit_sqlite_open(u, path);
    apr_time_t day = apr_time_from_sec(86400);
    apr_time_t t = apr_time_from_sec(1700000000 / 86400 * 86400) + day / 2;
    int held;

    apply_from(st, SM_CHANGE_RECORD, &site_on, "/x", 0, 7, t, &held);
    assert_true(held);
    assert_int_equal(sql_int(path, "SELECT count(*) FROM urls"
                             " WHERE url = '/x'"), 1);
    /* The same client again, its lastmod moved, an unknown client: held. */
    apply_from(st, SM_CHANGE_RECORD, &site_on, "/x", t, 7, t + 1, &held);
    assert_true(held);
    apply_from(st, SM_CHANGE_RECORD, &site_on, "/x", t, 0, t + 2, &held);
    assert_true(held);
    assert_int_equal(pending(path, site_on.base), 0);
    /* Removed while held: nothing was submitted, nothing is. */
    apply_from(st, SM_CHANGE_FORGET, &site_on, "/x", 0, 7, t + 3, &held);
    assert_false(held);
    assert_int_equal(pending(path, site_on.base), 0);
    /* A second client: queued once, and held no more. */
    apply_from(st, SM_CHANGE_RECORD, &site_on, "/y", 0, 7, t, &held);
    apply_from(st, SM_CHANGE_RECORD, &site_on, "/y", 0, 8, t + 1, &held);
    assert_false(held);
    assert_int_equal(pending(path, site_on.base), 1);
    assert_int_equal(sql_int(path, "SELECT held FROM urls WHERE url = '/y'"),
                     0);
    /* The same client on a later UTC day (not 24 hours later). */
    apply_from(st, SM_CHANGE_RECORD, &site_on, "/z", 0, 7, t, &held);
    apply_from(st, SM_CHANGE_RECORD, &site_on, "/z", 0, 7, t + day / 4,
               &held);
    assert_true(held);
    apply_from(st, SM_CHANGE_RECORD, &site_on, "/z", 0, 7, t + day * 3 / 4,
               &held);
    assert_false(held);
    assert_int_equal(pending(path, site_on.base), 2);
    /* A site with IndexNow Off holds nothing (nothing to submit). */
    apply_from(st, SM_CHANGE_RECORD, &site_off, "/x", 0, 7, t, &held);
    assert_false(held);
    sm_store_close(st);
}

static void test_queue_by_hand_is_bounded(void **state)
{
    unit_ctx *u = *state;
    char *path = apr_pstrcat(u->pool, u->dir, "/s.db", NULL);
    sm_store *st = unit_sqlite_open(u, path);
    int n = SM_INDEXNOW_BACKLOG_MAX + 5, i, queued;
    const char **urls = apr_palloc(u->pool, sizeof(char *) * (apr_size_t)n);

    for (i = 0; i < n; i++)
        urls[i] = apr_psprintf(u->pool, "/u%d", i);
    assert_int_equal(sm_store_indexnow_queue(st, site_on.base, urls, n,
                                             &queued), APR_SUCCESS);
    assert_int_equal(queued, SM_INDEXNOW_BACKLOG_MAX);
    /* The module's changes beyond the bound are counted, not queued. */
    apply1(st, SM_CHANGE_RECORD, &site_on, "/new", 0);
    assert_int_equal(pending(path, site_on.base), SM_INDEXNOW_BACKLOG_MAX);
    assert_int_equal(sql_int(path, "SELECT overflow FROM indexnow_state"), 1);
    sm_store_close(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_and_endpoint_checks),
        cmocka_unit_test(test_json_body),
        cmocka_unit_test_setup_teardown(test_changes_are_queued, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_claim_and_finish, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_corroboration, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_queue_by_hand_is_bounded, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
