/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of sm_etag: entity tags as encoding filters change them, and
 * Vary without repeats. */
#include "unit.h"

#include "util/sm_etag.h"

static void test_list_decoded(void **state)
{
    apr_pool_t *p = ((unit_ctx *)*state)->pool;

    assert_null(sm_etag_list_decoded(p, NULL));
    assert_null(sm_etag_list_decoded(p, "*"));
    assert_null(sm_etag_list_decoded(p, "\"abc\""));
    assert_null(sm_etag_list_decoded(p, "\"abc-gz\", W/\"x\""));
    assert_null(sm_etag_list_decoded(p, "\"-gzip\""));     /* nothing left */
    assert_null(sm_etag_list_decoded(p, "\"abc-gzip"));    /* unterminated */
    assert_string_equal(sm_etag_list_decoded(p, "\"abc-gzip\""),
                        "\"abc-gzip\",\"abc\"");
    assert_string_equal(sm_etag_list_decoded(p, " \"a,b-br\" , W/\"x-gzip\","
                                                "\"y\""),
                        "\"a,b-br\",\"a,b\",W/\"x-gzip\",W/\"x\",\"y\"");
}

static void test_encoded_in(void **state)
{
    apr_pool_t *p = ((unit_ctx *)*state)->pool;

    assert_null(sm_etag_encoded_in(p, NULL, "\"abc\""));
    assert_null(sm_etag_encoded_in(p, "\"abc-gzip\"", NULL));
    assert_null(sm_etag_encoded_in(p, "\"abc\"", "\"abc\""));
    assert_null(sm_etag_encoded_in(p, "\"abd-gzip\"", "\"abc\""));
    assert_null(sm_etag_encoded_in(p, "\"xabc-gzip\"", "\"abc\""));
    assert_string_equal(sm_etag_encoded_in(p, "\"q\", \"abc-gzip\"",
                                           "\"abc\""), "\"abc-gzip\"");
    assert_string_equal(sm_etag_encoded_in(p, "W/\"abc-br\"", "W/\"abc\""),
                        "W/\"abc-br\"");
}

static void test_is_encoded(void **state)
{
    (void)state;
    assert_true(sm_etag_is_encoded("\"abc\"", "\"abc-gzip\""));
    assert_true(sm_etag_is_encoded("W/\"abc\"", "W/\"abc-br\""));
    assert_false(sm_etag_is_encoded("\"abc\"", "\"abc\""));
    assert_false(sm_etag_is_encoded("\"abc\"", "\"abd-gzip\""));
    assert_false(sm_etag_is_encoded("\"abc\"", "\"abc-zip\""));
    assert_false(sm_etag_is_encoded("\"abc\"", "\"abc-gzipx\""));
    assert_false(sm_etag_is_encoded("\"abc\"", "W/\"abc-gzip\""));
    assert_false(sm_etag_is_encoded("abc", "abc-gzip"));
    assert_false(sm_etag_is_encoded("\"abc\"", "\"abc\"-gzip\""));
    assert_false(sm_etag_is_encoded(NULL, "\"abc-gzip\""));
    assert_false(sm_etag_is_encoded("\"abc\"", NULL));
    /* a slot's value: not NUL-terminated where it ends */
    assert_true(sm_etag_is_encoded_n("\"abc\"W/\"x\"", 5, "\"abc-gzip\""));
    assert_false(sm_etag_is_encoded_n("\"abc\"W/\"x\"", 6, "\"abc-gzip\""));
    assert_false(sm_etag_is_encoded_n("\"abc\"", 4, "\"abc-gzip\""));
}

static void test_vary_dedup(void **state)
{
    apr_pool_t *p = ((unit_ctx *)*state)->pool;

    assert_null(sm_vary_dedup(p, NULL));
    assert_null(sm_vary_dedup(p, "Accept-Encoding"));
    assert_null(sm_vary_dedup(p, "Accept-Encoding, Cookie"));
    assert_string_equal(sm_vary_dedup(p, "Accept-Encoding,accept-encoding"),
                        "Accept-Encoding");
    assert_string_equal(sm_vary_dedup(p, "Accept-Encoding, Cookie,  "
                                         "Accept-Encoding"),
                        "Accept-Encoding, Cookie");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_list_decoded, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_encoded_in, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_is_encoded, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_vary_dedup, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
