/* SPDX-License-Identifier: Apache-2.0 */
/* sm_date.h: Last-Modified values to times.
 *
 * apr_date_parse_http accepts every HTTP date format, trying each in turn
 * (about 700 instructions); nearly every server sends the one RFC 9110
 * prefers, IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), and httpd always
 * does.  That one is read directly; anything else goes to APR. */
#ifndef SM_DATE_H
#define SM_DATE_H

#include <apr_time.h>

/* The time of an HTTP date, or 0 when it is not one. */
apr_time_t sm_parse_http_date(const char *s);

/* A time a page can plausibly have been served or changed at: not before
 * 1990-01-01 (there was no web to record), and not more than a day after
 * now (clocks of two machines disagree by less; anything later, a year
 * past 9999 included, is a broken clock or a forged line). */
#define SM_TIME_EARLIEST apr_time_from_sec(APR_INT64_C(631152000))
#define SM_TIME_SKEW     apr_time_from_sec(86400)
int sm_time_plausible(apr_time_t t, apr_time_t now);

/* "Jan".."Dec" (case-sensitive, the first 3 bytes of m): 1..12, or 0. */
int sm_month_of(const char *m);

/* Days from 1970-01-01 to y-m-d (m 1..12), proleptic Gregorian. */
apr_int64_t sm_days_from_civil(apr_int64_t y, int m, int d);

#endif
