/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_date: the date and duration parsers: Last-Modified values
 * (sm_parse_http_date, what any backend sends), and sitemapctl's --lastmod
 * and --older-than values (sm_ctl_parse_time, sm_ctl_parse_duration).
 *
 * Input: the text, given to each parser.  Invariants:
 *   - a time accepted lies in years 1970 to 9999, so its W3C form in a
 *     <lastmod> is the 25 characters "YYYY-MM-DDThh:mm:ss+00:00";
 *   - the fast path for IMF-fixdate gives what APR's parser gives;
 *   - read back, that form (as sitemapctl writes it) and "@SECONDS" give
 *     the same second; an HTTP date written back by APR parses to itself;
 *   - a duration accepted is more than 0 and at most 100 years. */
#include "fuzz.h"
#include "ctl/sm_ctl.h"
#include "util/sm_date.h"
#include "serve/sm_xml.h"

#include <apr_date.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_time.h>

/* 9999-12-31T23:59:59Z */
#define LAST_SECOND APR_INT64_C(253402300799)

static void check_w3c(apr_pool_t *p, apr_time_t t)
{
    char w3c[SM_W3C_DATETIME_LEN];
    apr_time_t back;
    const char *at = apr_psprintf(p, "@%" APR_INT64_T_FMT, apr_time_sec(t));

    FUZZ_ASSERT(t >= 0 && apr_time_sec(t) <= LAST_SECOND);
    sm_w3c_datetime(w3c, t);
    FUZZ_ASSERT(strlen(w3c) == SM_W3C_DATETIME_LEN - 1);
    /* "YYYY-MM-DDThh:mm:ss+00:00" -> "YYYY-MM-DDThh:mm:ssZ", read back
     * when sitemapctl takes that second at all (it may refuse times it
     * finds implausible). */
    memcpy(w3c + 19, "Z", 2);
    if (sm_ctl_parse_time(at, &back) == NULL) {
        FUZZ_ASSERT(sm_ctl_parse_time(w3c, &back) == NULL);
        FUZZ_ASSERT(apr_time_sec(back) == apr_time_sec(t));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    char *s = fuzz_cstr(data, size);
    apr_interval_time_t d;
    apr_time_t t, back;

    /* The fast path for IMF-fixdate agrees with APR's parser, which
     * checks no more of the day name than that it is a word. */
    if (size >= 3 && apr_isalpha(s[0]) && apr_isalpha(s[1])
        && apr_isalpha(s[2])) {
        t = apr_date_parse_http(s);
        FUZZ_ASSERT(sm_parse_http_date(s) == (t == APR_DATE_BAD ? 0 : t));
    }
    if ((t = sm_parse_http_date(s)) != 0) {
        char rfc[APR_RFC822_DATE_LEN];

        check_w3c(p, t);
        FUZZ_ASSERT(apr_rfc822_date(rfc, t) == APR_SUCCESS);
        FUZZ_ASSERT(sm_parse_http_date(rfc)
                    == apr_time_from_sec(apr_time_sec(t)));
    }

    if (sm_ctl_parse_time(s, &t) == NULL) {
        char *at;

        check_w3c(p, t);
        at = apr_psprintf(p, "@%" APR_INT64_T_FMT, apr_time_sec(t));
        FUZZ_ASSERT(sm_ctl_parse_time(at, &back) == NULL && back == t);
    }

    if (sm_ctl_parse_duration(s, &d) == NULL)
        FUZZ_ASSERT(d > 0 && d <= apr_time_from_sec(APR_INT64_C(100) * 366
                                                    * 86400));

    free(s);
    apr_pool_destroy(p);
    return 0;
}
