/* SPDX-License-Identifier: Apache-2.0 */
/* sm_parse.c: administrators' values; see sm_parse.h. */
#include "util/sm_parse.h"

#include <apr_lib.h>
#include <string.h>

/* The digits at *s as a number no more than cap; *s moved past them.  0
 * when there are none or the number is over cap. */
static int digits(const char **s, apr_int64_t cap, apr_int64_t *out)
{
    const char *c = *s;
    apr_int64_t n = 0;

    if (!c || !apr_isdigit(*c))
        return 0;
    for (; apr_isdigit(*c); c++) {
        /* Checked before multiplying: a signed overflow is undefined. */
        if (n > (cap - (*c - '0')) / 10)
            return 0;
        n = n * 10 + (*c - '0');
    }
    *s = c;
    *out = n;
    return 1;
}

/* Larger than any bound a caller gives. */
#define DIGITS_CAP (APR_INT64_C(1) << 60)

apr_status_t sm_parse_duration(const char *s, int flags,
                               apr_interval_time_t min,
                               apr_interval_time_t max,
                               apr_interval_time_t *out)
{
    static const struct {
        const char *unit;
        apr_int64_t usec;
        int flag;
    } units[] = {
        { "", APR_INT64_C(1000000), 0 }, { "s", APR_INT64_C(1000000), 0 },
        { "ms", APR_INT64_C(1000), 0 }, { "mi", APR_INT64_C(60000000), 0 },
        { "h", APR_INT64_C(3600000000), 0 },
        { "d", APR_INT64_C(86400000000), SM_DURATION_DAYS },
    };
    const char *c = s;
    apr_int64_t n;
    apr_size_t i;

    if (max < 0 || !digits(&c, DIGITS_CAP, &n))
        return APR_EINVAL;
    for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(c, units[i].unit) != 0
            || (units[i].flag && !(flags & units[i].flag)))
            continue;
        /* Bounded before multiplying: a signed overflow is undefined (an
         * optimiser may drop a check made after it). */
        if (n > max / units[i].usec || n * units[i].usec < min)
            return APR_EINVAL;
        *out = n * units[i].usec;
        return APR_SUCCESS;
    }
    return APR_EINVAL;
}

apr_status_t sm_parse_count(const char *s, apr_int64_t min, apr_int64_t max,
                            apr_int64_t *out)
{
    apr_int64_t n;

    if (!digits(&s, DIGITS_CAP, &n) || *s || n < min || n > max)
        return APR_EINVAL;
    *out = n;
    return APR_SUCCESS;
}

apr_status_t sm_parse_size(const char *s, apr_int64_t min, apr_int64_t max,
                           apr_int64_t *out)
{
    apr_int64_t n, unit = 1;

    if (!digits(&s, DIGITS_CAP, &n))
        return APR_EINVAL;
    if (*s && !s[1]) {
        const char *units = "KMGT", *u = strchr(units, apr_toupper(*s));
        if (u && *u) {
            unit = APR_INT64_C(1) << (10 * (u - units + 1));
            s++;
        }
    }
    if (*s || n > max / unit || n * unit < min)
        return APR_EINVAL;
    *out = n * unit;
    return APR_SUCCESS;
}

int sm_is_param_name(const char *s)
{
    if (!s || !*s)
        return 0;
    for (; *s; s++)
        if (!apr_isgraph(*s) || *s == '&' || *s == '=' || *s == '#')
            return 0;
    return 1;
}
