/* SPDX-License-Identifier: Apache-2.0 */
/* sm_date.c: see sm_date.h. */
#include "util/sm_date.h"

#include <apr_date.h>

static int two_digits(const char *s)
{
    if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
        return -1;
    return (s[0] - '0') * 10 + (s[1] - '0');
}

int sm_time_plausible(apr_time_t t, apr_time_t now)
{
    return t >= SM_TIME_EARLIEST && t <= now + SM_TIME_SKEW;
}

int sm_month_of(const char *m)
{
    static const char names[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    int i;

    for (i = 0; i < 12; i++)
        if (m[0] == names[3 * i] && m[1] == names[3 * i + 1]
            && m[2] == names[3 * i + 2])
            return i + 1;
    return 0;
}

/* H. Hinnant's days_from_civil. */
apr_int64_t sm_days_from_civil(apr_int64_t y, int m, int d)
{
    apr_int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int month_days(int y, int m)
{
    static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31,
                                  30, 31 };
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return days[m] + (m == 1 && leap);
}

/* "Www, DD Mon YYYY HH:MM:SS GMT", exactly; -1 when not. */
static apr_time_t imf_fixdate(const char *s)
{
    int d, mon, yh, yl, h, mi, sec, y;

    if (s[3] != ',' || s[4] != ' ' || s[7] != ' ' || s[11] != ' '
        || s[16] != ' ' || s[19] != ':' || s[22] != ':' || s[25] != ' '
        || s[26] != 'G' || s[27] != 'M' || s[28] != 'T' || s[29] != '\0')
        return -1;
    d = two_digits(s + 5);
    mon = sm_month_of(s + 8) - 1;
    yh = two_digits(s + 12);
    yl = two_digits(s + 14);
    h = two_digits(s + 17);
    mi = two_digits(s + 20);
    sec = two_digits(s + 23);
    if (d < 1 || mon < 0 || yh < 0 || yl < 0 || h < 0 || h > 23 || mi < 0
        || mi > 59 || sec < 0 || sec > 60)
        return -1;
    y = yh * 100 + yl;
    if (y < 1970 || d > month_days(y, mon))
        return -1;
    return apr_time_from_sec(((sm_days_from_civil(y, mon + 1, d) * 24 + h) * 60
                              + mi) * 60 + sec);
}

apr_time_t sm_parse_http_date(const char *s)
{
    apr_time_t t;
    const char *p;

    if (!s)
        return 0;
    /* Exactly 29 characters, checked without reading past the end. */
    for (p = s; *p && p - s < 30; p++)
        ;
    if (p - s == 29 && (t = imf_fixdate(s)) >= 0)
        return t;
    t = apr_date_parse_http(s);
    return t == APR_DATE_BAD ? 0 : t;
}
