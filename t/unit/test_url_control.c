/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of the URL normaliser's refusal of control characters
 * (issue 33): decoded below 0x20, or 0x7F, literal or escaped ("%00"), in
 * the path or an allowed query field, the URL is refused, never stored.
 * (test_url.c has the rest of the normaliser's tests.) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <apr_general.h>
#include <apr_pools.h>
#include <apr_strings.h>
#include <apr_tables.h>

#include <string.h>

#include "util/sm_url.h"

static int setup(void **state)
{
    apr_pool_t *p;

    if (apr_pool_create(&p, NULL) != APR_SUCCESS)
        return -1;
    *state = p;
    return 0;
}

static int teardown(void **state)
{
    apr_pool_destroy(*state);
    return 0;
}

static apr_array_header_t *allow_q(apr_pool_t *p)
{
    apr_array_header_t *a = apr_array_make(p, 1, sizeof(const char *));

    APR_ARRAY_PUSH(a, const char *) = "q";
    return a;
}

/* The path raw[0..len) refused as a control character. */
static void path_refused(apr_pool_t *p, const char *raw, apr_size_t len)
{
    char *out = (char *)"unset";
    sm_url_status st = sm_url_normalize_path(p, raw, len, &out);

    if (st != SM_URL_CONTROL)
        fail_msg("path '%s': %s, want refused", raw, sm_url_status_str(st));
    assert_null(out);
}
#define PATH_REFUSED(raw) path_refused(p, raw, sizeof(raw) - 1)

static void query_refused(apr_pool_t *p, const char *raw)
{
    char *out = (char *)"unset";
    sm_url_status st = sm_url_normalize_query(p, raw, allow_q(p), &out);

    if (st != SM_URL_CONTROL)
        fail_msg("query '%s': %s, want refused", raw,
                 sm_url_status_str(st));
    assert_null(out);
}

static void test_control_characters_refused(void **state)
{
    apr_pool_t *p = *state;
    char *path, *url, *out;

    PATH_REFUSED("/%00");
    PATH_REFUSED("/a%00b");
    PATH_REFUSED("/a%0Ab");
    PATH_REFUSED("/a%0db");
    PATH_REFUSED("/a%1F");
    PATH_REFUSED("/a%7f");
    PATH_REFUSED("/tab\there");
    PATH_REFUSED("/\x01\x1f\x7f");
    query_refused(p, "q=a%00");
    query_refused(p, "q=a%0D%0Ab");
    query_refused(p, "q=\x7f");
    query_refused(p, "q%00=1");
    /* the bytes around them are fine */
    assert_int_equal(sm_url_normalize_path(p, "/a%20b%80", 9, &out),
                     SM_URL_OK);
    assert_string_equal(out, "/a%20b%80");
    assert_int_equal(sm_url_normalize_query(p, "q=%7E%21", allow_q(p), &out),
                     SM_URL_OK);
    assert_string_equal(out, "q=~%21");
    assert_int_equal(sm_url_from_target(p, "/a?q=%00", allow_q(p), 0, &path,
                                        &url), SM_URL_CONTROL);
    assert_string_equal(sm_url_status_str(SM_URL_CONTROL),
                        "control character (%00-%1F, %7F)");
    /* the stored-form check (rows read back) refuses them too */
    assert_false(sm_url_is_stored_form("/a%00"));
    assert_false(sm_url_is_stored_form("/a?q=%0A"));
    assert_false(sm_url_is_stored_form("/a%7F"));
    assert_true(sm_url_is_stored_form("/a%20"));
}

/* Every byte, escaped in the path and in the query: refused exactly when
 * it is a control character; nothing stored holds one. */
static void test_every_escaped_byte(void **state)
{
    apr_pool_t *p = *state;
    char *path, *url;
    int b;

    for (b = 1; b < 256; b++) {
        char t[32];
        sm_url_status st;
        apr_snprintf(t, sizeof(t), "/a%%%02X?q=%%%02x", b, b);
        st = sm_url_from_target(p, t, allow_q(p), 0, &path, &url);
        if ((b < 0x20 || b == 0x7f) != (st == SM_URL_CONTROL))
            fail_msg("%s: %s", t, sm_url_status_str(st));
        if (st == SM_URL_OK && (strstr(url, "%0") || strstr(url, "%1")
                                || strstr(url, "%7F")))
            fail_msg("%s stored as %s", t, url);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_control_characters_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_every_escaped_byte, setup,
                                        teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
