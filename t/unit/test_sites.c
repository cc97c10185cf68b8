/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of sm_sites: a Host's normal form (case, trailing dot, the
 * vhost's port, IP literals, invalid names, length) and the bounded
 * registry (found, added, the cap, the rate-limited warning). */
#include "unit.h"

#include "record/sm_sites.h"

static void expect_name(const char *host, int port, int allow_ip,
                        const char *want)
{
    char out[SM_HOST_MAX + 1];

    assert_int_equal(sm_host_normalise(host, port, allow_ip, out),
                     SM_HOST_OK);
    assert_string_equal(out, want);
}

static void expect_refused(const char *host, int port, int allow_ip,
                           sm_host_status why)
{
    char out[SM_HOST_MAX + 1];

    assert_int_equal(sm_host_normalise(host, port, allow_ip, out), why);
    assert_string_equal(out, "");
}

static void test_normal_forms(void **state)
{
    (void)state;
    expect_name("a.example", 80, 0, "a.example");
    expect_name("A.Example", 80, 0, "a.example");
    expect_name("a.example.", 80, 0, "a.example");
    expect_name("a.example:80", 80, 0, "a.example");
    expect_name("A.EXAMPLE.:443", 443, 0, "a.example");
    expect_name("x-1.b2.example", 80, 0, "x-1.b2.example");
    expect_name("localhost", 80, 0, "localhost");
    expect_name("127.0.0.1", 80, 1, "127.0.0.1");
    expect_name("127.0.0.1:80", 80, 1, "127.0.0.1");
    expect_name("[::1]", 80, 1, "[::1]");
    expect_name("[::1]:80", 80, 1, "[::1]");
}

static void test_refused(void **state)
{
    char long_name[400];
    int i;

    (void)state;
    expect_refused(NULL, 80, 0, SM_HOST_EMPTY);
    expect_refused("", 80, 0, SM_HOST_EMPTY);
    expect_refused(".", 80, 0, SM_HOST_EMPTY);
    expect_refused(":80", 80, 0, SM_HOST_EMPTY);
    expect_refused("a.example:8080", 80, 0, SM_HOST_PORT);
    expect_refused("a.example:", 80, 0, SM_HOST_PORT);
    expect_refused("a.example:+80", 80, 0, SM_HOST_PORT);
    expect_refused("a.example:80x", 80, 0, SM_HOST_PORT);
    expect_refused("127.0.0.1", 80, 0, SM_HOST_IP);
    expect_refused("[::1]", 80, 0, SM_HOST_IP);
    expect_refused("[::1]:80", 80, 0, SM_HOST_IP);
    expect_refused("[zz]", 80, 1, SM_HOST_INVALID);
    expect_refused("1.2.3.4.5", 80, 1, SM_HOST_INVALID);
    expect_refused("a..example", 80, 0, SM_HOST_INVALID);
    expect_refused("a.example..", 80, 0, SM_HOST_INVALID);
    expect_refused("-a.example", 80, 0, SM_HOST_INVALID);
    expect_refused("a-.example", 80, 0, SM_HOST_INVALID);
    expect_refused("a_b.example", 80, 0, SM_HOST_INVALID);
    expect_refused("a.example/x", 80, 0, SM_HOST_INVALID);
    expect_refused("a b.example", 80, 0, SM_HOST_INVALID);
    expect_refused("user@a.example", 80, 0, SM_HOST_INVALID);
    expect_refused("<script>", 80, 0, SM_HOST_INVALID);
    expect_refused("a.123", 80, 0, SM_HOST_INVALID);
    /* A 64-byte label; a 254-byte name. */
    memset(long_name, 'a', 64);
    strcpy(long_name + 64, ".example");
    expect_refused(long_name, 80, 0, SM_HOST_INVALID);
    for (i = 0; i < 254; i++)
        long_name[i] = (i % 10 == 9) ? '.' : 'a';
    long_name[254] = '\0';
    expect_refused(long_name, 80, 0, SM_HOST_TOO_LONG);
    long_name[253] = '\0';
    expect_name(long_name, 80, 0, long_name);
}

static void test_registry_cap(void **state)
{
    apr_pool_t *p = ((unit_ctx *)*state)->pool;
    sm_sites *reg;
    sm_site_conf proto = { 0 };
    const sm_site_conf *site, *first;
    sm_sites_result res;
    int warn;
    apr_time_t t = apr_time_from_sec(1000);
    apr_interval_time_t minute = apr_time_from_sec(60);

    proto.page_size = 123;
    proto.settings = "s";
    assert_int_equal(sm_sites_create(p, 2, &proto, "https://", ":8443", &reg),
                     APR_SUCCESS);
    first = sm_sites_get(reg, "a.example", t, minute, &warn, &res);
    assert_int_equal(res, SM_SITES_ADDED);
    assert_string_equal(first->base, "https://a.example:8443");
    assert_int_equal(first->page_size, 123);
    assert_string_equal(first->settings, "s");
    assert_int_equal(warn, 0);
    site = sm_sites_get(reg, "a.example", t, minute, &warn, &res);
    assert_int_equal(res, SM_SITES_FOUND);
    assert_ptr_equal(site, first);
    site = sm_sites_get(reg, "b.example", t, minute, &warn, &res);
    assert_int_equal(res, SM_SITES_ADDED);
    assert_string_equal(site->base, "https://b.example:8443");
    assert_int_equal(sm_sites_count(reg), 2);
    /* The cap: refused, warned once per interval. */
    site = sm_sites_get(reg, "c.example", t, minute, &warn, &res);
    assert_int_equal(res, SM_SITES_FULL);
    assert_null(site);
    assert_int_equal(warn, 1);
    sm_sites_get(reg, "d.example", t + apr_time_from_sec(59), minute, &warn,
                 &res);
    assert_int_equal(res, SM_SITES_FULL);
    assert_int_equal(warn, 0);
    sm_sites_get(reg, "d.example", t + minute, minute, &warn, &res);
    assert_int_equal(res, SM_SITES_FULL);
    assert_int_equal(warn, 1);
    /* Known sites still found at the cap. */
    site = sm_sites_get(reg, "b.example", t, minute, &warn, &res);
    assert_int_equal(res, SM_SITES_FOUND);
    assert_non_null(site);
    assert_int_equal(sm_sites_count(reg), 2);
}

/* Finding and making take no place. */
static void test_find_and_make(void **state)
{
    apr_pool_t *p = ((unit_ctx *)*state)->pool;
    sm_sites *reg;
    sm_site_conf proto = { 0 };
    const sm_site_conf *site, *made;
    sm_sites_result res;
    int warn;
    apr_time_t t = apr_time_from_sec(1000);

    proto.page_size = 7;
    assert_int_equal(sm_sites_create(p, 1, &proto, "http://", "", &reg),
                     APR_SUCCESS);
    assert_null(sm_sites_find(reg, "a.example"));
    made = sm_sites_make(reg, p, "a.example");
    assert_string_equal(made->base, "http://a.example");
    assert_int_equal(made->page_size, 7);
    assert_null(sm_sites_find(reg, "a.example"));
    assert_int_equal(sm_sites_count(reg), 0);
    /* The one place is still free for b. */
    site = sm_sites_get(reg, "b.example", t, 0, &warn, &res);
    assert_int_equal(res, SM_SITES_ADDED);
    assert_ptr_equal(sm_sites_find(reg, "b.example"), site);
    assert_null(sm_sites_find(reg, "a.example"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normal_forms),
        cmocka_unit_test(test_refused),
        cmocka_unit_test_setup_teardown(test_registry_cap, unit_setup,
                                        unit_teardown),
        cmocka_unit_test_setup_teardown(test_find_and_make, unit_setup,
                                        unit_teardown),
    };

    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
