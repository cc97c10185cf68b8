/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of SitemapCrawler's dns: sources (src/crawl/sm_crawl_dns.c):
 * reverse-then-forward confirmation with the lookups injected (forward
 * mismatch, suffix mismatch, timeouts, cache expiry), the cache's and the
 * queue's bounds, and a crawler's verify, which never looks up. */
#include "unit.h"

#include "crawl/sm_crawl.h"

static const char googlebot[] =
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
static const char bingbot[] =
    "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)";

static sm_crawl_list *two_crawlers(unit_ctx *u)
{
    sm_crawl_list *l = sm_crawl_list_make(u->pool);
    char *g[] = { "Googlebot", "Googlebot", "dns:googlebot.com,google.com" };
    char *b[] = { "Bingbot", "bingbot", "dns:search.msn.com" };

    assert_null(sm_crawl_add(l, u->pool, 3, g));
    assert_null(sm_crawl_add(l, u->pool, 3, b));
    return l;
}

/* ---- DNS ------------------------------------------------------------------- */

/* The answers the tests give: addr -> name, name -> addresses. */
typedef struct {
    const char *ptr_addr[8], *ptr_name[8];
    const char *a_name[8], *a_addrs[8];
    const char *slow;           /* this address or name times out */
    int reverse_calls, forward_calls;
} fake_dns;

static sm_dns_status fake_reverse(void *baton, const char *addr, char *name,
                                  apr_size_t len)
{
    fake_dns *f = baton;
    int i;

    f->reverse_calls++;
    if (f->slow && strcmp(f->slow, addr) == 0)
        return SM_DNS_TIMEOUT;
    for (i = 0; i < 8 && f->ptr_addr[i]; i++)
        if (strcmp(f->ptr_addr[i], addr) == 0) {
            apr_cpystrn(name, f->ptr_name[i], len);
            return SM_DNS_OK;
        }
    return SM_DNS_NONE;
}

static sm_dns_status fake_forward(void *baton, apr_pool_t *p,
                                  const char *name, apr_array_header_t *out)
{
    fake_dns *f = baton;
    int i;

    f->forward_calls++;
    if (f->slow && strcmp(f->slow, name) == 0)
        return SM_DNS_TIMEOUT;
    for (i = 0; i < 8 && f->a_name[i]; i++)
        if (strcmp(f->a_name[i], name) == 0) {
            char *list = apr_pstrdup(p, f->a_addrs[i]), *last, *tok;
            for (tok = apr_strtok(list, " ", &last); tok;
                 tok = apr_strtok(NULL, " ", &last))
                APR_ARRAY_PUSH(out, const char *) = tok;
            return SM_DNS_OK;
        }
    return SM_DNS_NONE;
}

static fake_dns the_dns = {
    { "66.249.66.1", "6.6.6.6", "7.7.7.7", "2001:4860:4801:10::9",
      "8.8.8.8", "9.9.9.9", NULL, NULL },
    { "crawl-66-249-66-1.googlebot.com", "crawl.googlebot.com.evil.example",
      "fake.googlebot.com", "crawl-x.GOOGLEBOT.com.", "slow.googlebot.com",
      "notgooglebot.com", NULL, NULL },
    { "crawl-66-249-66-1.googlebot.com", "fake.googlebot.com",
      "crawl-x.GOOGLEBOT.com.", "crawl.googlebot.com.evil.example",
      "notgooglebot.com", NULL, NULL, NULL },
    { "66.249.66.1", "1.1.1.1", "2001:4860:4801:0010:0::9", "6.6.6.6",
      "9.9.9.9", NULL, NULL, NULL },
    "slow.googlebot.com", 0, 0,
};

static sm_crawl_dns *make_dns(unit_ctx *u, fake_dns *f, int cache_max,
                              int queue_max)
{
    sm_dns_conf conf;
    const char *err = NULL;
    sm_crawl_dns *d;

    sm_dns_conf_default(&conf);
    conf.reverse = fake_reverse;
    conf.forward = fake_forward;
    conf.baton = f;
    conf.cache_max = cache_max;
    conf.queue_max = queue_max;
    d = sm_crawl_dns_create(u->pool, &conf, &err);
    if (!d)
        fail_msg("%s", err);
    return d;
}

static apr_array_header_t *suffixes(unit_ctx *u, const char *a,
                                    const char *b)
{
    apr_array_header_t *s = apr_array_make(u->pool, 2, sizeof(const char *));

    APR_ARRAY_PUSH(s, const char *) = a;
    if (b)
        APR_ARRAY_PUSH(s, const char *) = b;
    return s;
}

/* first: what the cache answers before the lookup (PENDING for an
 * address it never answered, the expired answer otherwise). */
static sm_crawl_result check_again(sm_crawl_dns *d, const char *addr,
                                   apr_array_header_t *suf, apr_time_t now,
                                   sm_crawl_result first)
{
    assert_int_equal(sm_crawl_dns_check(d, addr, suf, now), first);
    assert_int_equal(sm_crawl_dns_run(d, 10, now), 1);
    return sm_crawl_dns_check(d, addr, suf, now);
}

static sm_crawl_result check_after_run(sm_crawl_dns *d, const char *addr,
                                       apr_array_header_t *suf,
                                       apr_time_t now)
{
    return check_again(d, addr, suf, now, SM_CRAWL_PENDING);
}

static void test_dns_verification(void **state)
{
    unit_ctx *u = *state;
    fake_dns f = the_dns;
    sm_crawl_dns *d = make_dns(u, &f, 64, 16);
    apr_array_header_t *g = suffixes(u, "googlebot.com", "google.com");
    apr_time_t now = apr_time_from_sec(1000000);

    /* Confirmed both ways, under a suffix */
    assert_int_equal(check_after_run(d, "66.249.66.1", g, now),
                     SM_CRAWL_VERIFIED);
    /* The same cache answers for another crawler's suffixes */
    assert_int_equal(sm_crawl_dns_check(d, "66.249.66.1",
                                        suffixes(u, "search.msn.com", NULL),
                                        now), SM_CRAWL_UNVERIFIED);
    /* A PTR under someone else's domain that merely starts alike */
    assert_int_equal(check_after_run(d, "6.6.6.6", g, now),
                     SM_CRAWL_UNVERIFIED);
    /* A PTR in the suffix whose forward lookup does not give the address
     * back (anyone may write a PTR record for their own address) */
    assert_int_equal(check_after_run(d, "7.7.7.7", g, now),
                     SM_CRAWL_UNVERIFIED);
    /* IPv6, a name in capitals with a trailing dot, the address written
     * otherwise in the forward answer */
    assert_int_equal(check_after_run(d, "2001:4860:4801:10::9", g, now),
                     SM_CRAWL_VERIFIED);
    /* "notgooglebot.com" is not under "googlebot.com" */
    assert_int_equal(check_after_run(d, "9.9.9.9", g, now),
                     SM_CRAWL_UNVERIFIED);
    /* No PTR at all */
    assert_int_equal(check_after_run(d, "5.5.5.5", g, now),
                     SM_CRAWL_UNVERIFIED);
    /* Too long to be an address */
    assert_int_equal(sm_crawl_dns_check(d, "1111111111111111111111111111111"
                                        "1111111111111111111111111111111111",
                                        g, now), SM_CRAWL_UNVERIFIED);
}

static void test_dns_timeouts_and_expiry(void **state)
{
    unit_ctx *u = *state;
    fake_dns f = the_dns;
    sm_crawl_dns *d = make_dns(u, &f, 64, 16);
    apr_array_header_t *g = suffixes(u, "googlebot.com", NULL);
    apr_time_t now = apr_time_from_sec(1000000);
    sm_dns_conf def;
    int calls;

    sm_dns_conf_default(&def);
    /* A forward lookup that times out: unverified for ttl_fail only */
    assert_int_equal(check_after_run(d, "8.8.8.8", g, now),
                     SM_CRAWL_UNVERIFIED);
    calls = f.reverse_calls;
    assert_int_equal(sm_crawl_dns_check(d, "8.8.8.8", g,
                                        now + def.ttl_fail - 1),
                     SM_CRAWL_UNVERIFIED);
    assert_int_equal(sm_crawl_dns_run(d, 10, now), 0);
    assert_int_equal(f.reverse_calls, calls);
    /* Expired: asked again (the old answer until then), and now it
     * answers */
    f.slow = NULL;
    f.a_name[5] = "slow.googlebot.com";
    f.a_addrs[5] = "8.8.8.8";
    assert_int_equal(check_again(d, "8.8.8.8", g, now + def.ttl_fail,
                                 SM_CRAWL_UNVERIFIED), SM_CRAWL_VERIFIED);
    /* A confirmed name holds for ttl_ok, a no for ttl_none */
    assert_int_equal(check_after_run(d, "66.249.66.1", g, now),
                     SM_CRAWL_VERIFIED);
    assert_int_equal(check_after_run(d, "5.5.5.5", g, now),
                     SM_CRAWL_UNVERIFIED);
    assert_int_equal(sm_crawl_dns_check(d, "5.5.5.5", g,
                                        now + def.ttl_none - 1),
                     SM_CRAWL_UNVERIFIED);
    assert_int_equal(sm_crawl_dns_check(d, "66.249.66.1", g,
                                        now + def.ttl_ok - 1),
                     SM_CRAWL_VERIFIED);
    assert_int_equal(sm_crawl_dns_check(d, "5.5.5.5", g,
                                        now + def.ttl_none),
                     SM_CRAWL_UNVERIFIED);
    assert_int_equal(sm_crawl_dns_queued(d), 1);
    assert_int_equal(sm_crawl_dns_run(d, 10, now + def.ttl_none), 1);
    /* The address moved out of Google: after ttl_ok, no longer */
    f.ptr_name[0] = "someone.example";
    assert_int_equal(check_again(d, "66.249.66.1", g, now + def.ttl_ok,
                                 SM_CRAWL_VERIFIED), SM_CRAWL_UNVERIFIED);
    /* A reverse lookup that times out */
    f.slow = "66.249.66.1";
    f.ptr_name[0] = "crawl-66-249-66-1.googlebot.com";
    assert_int_equal(check_again(d, "66.249.66.1", g, now + 2 * def.ttl_ok,
                                 SM_CRAWL_UNVERIFIED), SM_CRAWL_UNVERIFIED);
    assert_int_equal(f.reverse_calls, calls + 6);
}

static void test_dns_bounded(void **state)
{
    unit_ctx *u = *state;
    fake_dns f = the_dns;
    sm_crawl_dns *d = make_dns(u, &f, 8, 4);
    apr_array_header_t *g = suffixes(u, "googlebot.com", NULL);
    apr_time_t now = apr_time_from_sec(1000000);
    int i;

    /* The queue holds 4; the others are not queued (asked again later) */
    for (i = 0; i < 10; i++)
        assert_int_equal(sm_crawl_dns_check(d, apr_psprintf(u->pool,
                                            "10.0.0.%d", i), g, now),
                         SM_CRAWL_PENDING);
    assert_int_equal(sm_crawl_dns_queued(d), 4);
    /* Asking again does not queue twice */
    assert_int_equal(sm_crawl_dns_check(d, "10.0.0.0", g, now),
                     SM_CRAWL_PENDING);
    assert_int_equal(sm_crawl_dns_queued(d), 4);
    assert_int_equal(sm_crawl_dns_run(d, 2, now), 2);
    assert_int_equal(sm_crawl_dns_queued(d), 2);
    assert_int_equal(sm_crawl_dns_run(d, 10, now), 2);
    assert_int_equal(f.reverse_calls, 4);
    /* The cache holds 8: the oldest go */
    for (i = 0; i < 40; i++) {
        sm_crawl_dns_check(d, apr_psprintf(u->pool, "10.1.0.%d", i), g, now);
        sm_crawl_dns_run(d, 10, now);
        assert_true(sm_crawl_dns_cached(d) <= 8);
    }
    assert_int_equal(sm_crawl_dns_cached(d), 8);
    assert_int_equal(sm_crawl_dns_check(d, "10.1.0.39", g, now),
                     SM_CRAWL_UNVERIFIED);
    assert_int_equal(sm_crawl_dns_check(d, "10.1.0.0", g, now),
                     SM_CRAWL_PENDING);
}

/* A crawler with a dns: source: pending, then verified, through the
 * crawler's verify; no lookup happens in it. */
static void test_verify_by_dns(void **state)
{
    unit_ctx *u = *state;
    fake_dns f = the_dns;
    sm_crawl_dns *d = make_dns(u, &f, 64, 16);
    sm_crawl_list *l = two_crawlers(u);
    const sm_crawler *c = sm_crawl_match(l, googlebot);
    apr_sockaddr_t *sa;
    apr_time_t now = apr_time_from_sec(1000000);

    assert_int_equal(apr_sockaddr_info_get(&sa, "66.249.66.1", APR_INET, 80,
                                           0, u->pool), APR_SUCCESS);
    assert_int_equal(sm_crawl_verify(c, d, sa, now), SM_CRAWL_PENDING);
    assert_int_equal(f.reverse_calls, 0);
    assert_int_equal(sm_crawl_dns_run(d, 10, now), 1);
    assert_int_equal(sm_crawl_verify(c, d, sa, now), SM_CRAWL_VERIFIED);
    /* Bingbot's suffix does not cover it */
    c = sm_crawl_match(l, bingbot);
    assert_int_equal(sm_crawl_verify(c, d, sa, now), SM_CRAWL_UNVERIFIED);
    /* v4-mapped: looked up as the IPv4 address */
    c = sm_crawl_match(l, googlebot);
    assert_int_equal(apr_sockaddr_info_get(&sa, "::ffff:66.249.66.1",
                                           APR_INET6, 80, 0, u->pool),
                     APR_SUCCESS);
    assert_int_equal(sm_crawl_verify(c, d, sa, now), SM_CRAWL_VERIFIED);
    /* No DNS in this process: pending for ever */
    assert_int_equal(sm_crawl_verify(c, NULL, sa, now), SM_CRAWL_PENDING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_dns_verification, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_dns_timeouts_and_expiry, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_dns_bounded, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_verify_by_dns, unit_setup, unit_teardown),
    };
    int rc;

    apr_initialize();
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    apr_terminate();
    return rc;
}
