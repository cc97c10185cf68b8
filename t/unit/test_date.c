/* SPDX-License-Identifier: Apache-2.0 */
/* Unit tests of sm_parse_http_date: the same times as apr_date_parse_http,
 * for IMF-fixdate (its own parser) and the other formats (APR's). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include <apr_date.h>
#include <apr_general.h>

#include "util/sm_date.h"

static void test_same_as_apr_over_many_times(void **state)
{
    char buf[APR_RFC822_DATE_LEN];
    apr_int64_t sec;
    (void)state;

    /* 1970 to 2100, every 7,777,777 s (odd hours, minutes and seconds),
     * leap days and year ends included by the step's drift. */
    for (sec = 0; sec < APR_INT64_C(4102444800); sec += 7777777) {
        apr_time_t t = apr_time_from_sec(sec);
        assert_int_equal(apr_rfc822_date(buf, t), APR_SUCCESS);
        assert_int_equal(sm_parse_http_date(buf), t);
        assert_int_equal(sm_parse_http_date(buf), apr_date_parse_http(buf));
    }
}

static void test_plausible(void **state)
{
    apr_time_t now = apr_time_from_sec(APR_INT64_C(1795323556));
    (void)state;
    assert_true(sm_time_plausible(SM_TIME_EARLIEST, now));
    assert_false(sm_time_plausible(SM_TIME_EARLIEST - 1, now));
    assert_false(sm_time_plausible(0, now));
    assert_true(sm_time_plausible(now, now));
    assert_true(sm_time_plausible(now + SM_TIME_SKEW, now));
    assert_false(sm_time_plausible(now + SM_TIME_SKEW + 1, now));
    /* 10000-01-05: the issue's <lastmod>, cut short when written. */
    assert_false(sm_time_plausible(apr_time_from_sec(APR_INT64_C(253402656000)
                                                     + 14339), now));
}

/* Whatever the string, the same answer as APR's (its "bad" is 0). */
static void test_edges(void **state)
{
    static const char *const cases[] = {
        "Thu, 01 Jan 1970 00:00:00 GMT", "Thu, 29 Feb 2024 23:59:59 GMT",
        "Tue, 29 Feb 2000 12:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT",
        "Sun, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:60 GMT",
        /* other formats, and leniencies: APR's */
        "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
        "Sun, 06 Nov 1994 08:49:37 GMTX", "Sun, 06 Nov 1994 08:49:37 GM",
        "Wed, 31 Dec 1969 23:59:59 GMT",
        /* not dates */
        "", "Sun, 32 Jan 1994 08:49:37 GMT", "Sun, 29 Feb 2023 08:49:37 GMT",
        "Sun, 29 Feb 1900 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 24:49:37 GMT", "Sun, 06 Nov 1994 08:60:37 GMT",
        "Sun, 0x Nov 1994 08:49:37 GMT", "Sun, 06 Nov 19x4 08:49:37 GMT",
        "yesterday",
    };
    size_t i;
    (void)state;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        apr_time_t want = apr_date_parse_http(cases[i]);
        if (sm_parse_http_date(cases[i]) != (want == APR_DATE_BAD ? 0 : want))
            fail_msg("%s: %" APR_TIME_T_FMT " != %" APR_TIME_T_FMT, cases[i],
                     sm_parse_http_date(cases[i]), want);
    }
    assert_int_equal(sm_parse_http_date("Thu, 29 Feb 2024 23:59:59 GMT"),
                     apr_time_from_sec(1709251199));
    assert_int_equal(sm_parse_http_date("Sun, 29 Feb 2023 08:49:37 GMT"), 0);
    assert_int_equal(sm_parse_http_date("Sun, 06 Nov 1994 24:49:37 GMT"), 0);
    assert_int_equal(sm_parse_http_date(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_apr_over_many_times),
        cmocka_unit_test(test_edges),
        cmocka_unit_test(test_plausible),
    };
    apr_initialize();
    atexit(apr_terminate);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
