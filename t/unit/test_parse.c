/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of sm_parse: the values the directives and sitemapctl's
 * options share (durations, whole numbers, sizes, parameter names). */
#include "unit.h"

#include "util/sm_parse.h"

#define HOUR apr_time_from_sec(3600)
#define DAY apr_time_from_sec(86400)

static apr_interval_time_t dur(const char *s, int flags,
                               apr_interval_time_t min,
                               apr_interval_time_t max)
{
    apr_interval_time_t t = -2;

    return sm_parse_duration(s, flags, min, max, &t) == APR_SUCCESS ? t : -1;
}

static void test_durations(void **state)
{
    apr_interval_time_t y100 = 100LL * 366 * DAY;
    (void)state;

    assert_int_equal(dur("1", 0, 0, HOUR), apr_time_from_sec(1));
    assert_int_equal(dur("2s", 0, 0, HOUR), apr_time_from_sec(2));
    assert_int_equal(dur("500ms", 0, 0, HOUR), apr_time_from_msec(500));
    assert_int_equal(dur("2mi", 0, 0, HOUR), apr_time_from_sec(120));
    assert_int_equal(dur("1h", 0, 0, HOUR), HOUR);
    assert_int_equal(dur("0", 0, 0, HOUR), 0);
    assert_int_equal(dur("30d", SM_DURATION_DAYS, 0, y100), 30 * DAY);
    assert_int_equal(dur("36600d", SM_DURATION_DAYS, 0, y100), y100);
    /* days only when asked for */
    assert_int_equal(dur("1d", 0, 0, y100), -1);
    /* bounds */
    assert_int_equal(dur("3601s", 0, 0, HOUR), -1);
    assert_int_equal(dur("2h", 0, 0, HOUR), -1);
    assert_int_equal(dur("9ms", 0, apr_time_from_msec(10), HOUR), -1);
    assert_int_equal(dur("10ms", 0, apr_time_from_msec(10), HOUR),
                     apr_time_from_msec(10));
    assert_int_equal(dur("0", SM_DURATION_DAYS, 1, y100), -1);
    assert_int_equal(dur("36601d", SM_DURATION_DAYS, 0, y100), -1);
    /* whole values only */
    assert_int_equal(dur("", 0, 0, HOUR), -1);
    assert_int_equal(dur("s", 0, 0, HOUR), -1);
    assert_int_equal(dur("-1", 0, 0, HOUR), -1);
    assert_int_equal(dur("+1", 0, 0, HOUR), -1);
    assert_int_equal(dur(" 1", 0, 0, HOUR), -1);
    assert_int_equal(dur("1 s", 0, 0, HOUR), -1);
    assert_int_equal(dur("10x", 0, 0, HOUR), -1);
    assert_int_equal(dur("1sx", 0, 0, HOUR), -1);   /* httpd took "1s" */
    assert_int_equal(dur("5m", 0, 0, HOUR), -1);
    assert_int_equal(dur("3weeks", SM_DURATION_DAYS, 0, y100), -1);
    assert_int_equal(dur("1.5h", 0, 0, HOUR), -1);
    /* overflow, with the multiplication or without */
    assert_int_equal(dur("99999999999999999999h", 0, 0, HOUR), -1);
    assert_int_equal(dur("213503983d", SM_DURATION_DAYS, 0, y100), -1);
    assert_int_equal(dur("3162240000000h", 0, 0, y100), -1);
    assert_int_equal(dur("9223372036854775807ms", 0, 0, y100), -1);
    assert_int_equal(dur(NULL, 0, 0, HOUR), -1);
}

static void test_counts(void **state)
{
    apr_int64_t n = -2;
    (void)state;

    assert_int_equal(sm_parse_count("1", 1, 10, &n), APR_SUCCESS);
    assert_int_equal(n, 1);
    assert_int_equal(sm_parse_count("10", 1, 10, &n), APR_SUCCESS);
    assert_int_equal(n, 10);
    assert_int_equal(sm_parse_count("0", 1, 10, &n), APR_EINVAL);
    assert_int_equal(sm_parse_count("11", 1, 10, &n), APR_EINVAL);
    assert_int_equal(sm_parse_count("-3", 0, 10, &n), APR_EINVAL);
    assert_int_equal(sm_parse_count(" 5", 0, 10, &n), APR_EINVAL);
    assert_int_equal(sm_parse_count("5 ", 0, 10, &n), APR_EINVAL);
    assert_int_equal(sm_parse_count("10x", 0, 100, &n), APR_EINVAL);
    assert_int_equal(sm_parse_count("", 0, 100, &n), APR_EINVAL);
    assert_int_equal(sm_parse_count("99999999999999999999999", 0,
                                    APR_INT64_C(1000000000000), &n),
                     APR_EINVAL);
    assert_int_equal(n, 10);            /* untouched when refused */
}

static void test_sizes(void **state)
{
    apr_int64_t n = -2, m = APR_INT64_C(1) << 20, t = APR_INT64_C(1) << 40;
    (void)state;

    assert_int_equal(sm_parse_size("1M", m, t, &n), APR_SUCCESS);
    assert_int_equal(n, m);
    assert_int_equal(sm_parse_size("1m", m, t, &n), APR_SUCCESS);
    assert_int_equal(n, m);
    assert_int_equal(sm_parse_size("1024k", m, t, &n), APR_SUCCESS);
    assert_int_equal(n, m);
    assert_int_equal(sm_parse_size("1048576", m, t, &n), APR_SUCCESS);
    assert_int_equal(n, m);
    assert_int_equal(sm_parse_size("2G", m, t, &n), APR_SUCCESS);
    assert_int_equal(n, APR_INT64_C(2) << 30);
    assert_int_equal(sm_parse_size("1T", m, t, &n), APR_SUCCESS);
    assert_int_equal(n, t);
    assert_int_equal(sm_parse_size("1048575", m, t, &n), APR_EINVAL);
    assert_int_equal(sm_parse_size("1023K", m, t, &n), APR_EINVAL);
    assert_int_equal(sm_parse_size("2T", m, t, &n), APR_EINVAL);
    assert_int_equal(sm_parse_size("1X", m, t, &n), APR_EINVAL);
    assert_int_equal(sm_parse_size("1MB", m, t, &n), APR_EINVAL);
    assert_int_equal(sm_parse_size("M", m, t, &n), APR_EINVAL);
    assert_int_equal(sm_parse_size("-1M", m, t, &n), APR_EINVAL);
    assert_int_equal(sm_parse_size("99999999999999999T", m, t, &n),
                     APR_EINVAL);
    assert_int_equal(n, t);
}

static void test_param_names(void **state)
{
    (void)state;

    assert_true(sm_is_param_name("page"));
    assert_true(sm_is_param_name("sort_by[]"));
    assert_false(sm_is_param_name(""));
    assert_false(sm_is_param_name(NULL));
    assert_false(sm_is_param_name("a=b"));
    assert_false(sm_is_param_name("a&b"));
    assert_false(sm_is_param_name("a#"));
    assert_false(sm_is_param_name("a b"));
    assert_false(sm_is_param_name("a\tb"));
    assert_false(sm_is_param_name("\x7f"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_durations, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_counts, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_sizes, unit_setup, unit_teardown),
        cmocka_unit_test_setup_teardown(test_param_names, unit_setup, unit_teardown),
    };
    apr_initialize();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
