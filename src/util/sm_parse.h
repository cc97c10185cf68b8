/* SPDX-License-Identifier: Apache-2.0 */
/* sm_parse.h: the values an administrator writes, read the same way by the
 * module's directives and by sitemapctl's options: durations, whole
 * numbers, sizes and query parameter names.  Strict: a value is taken
 * whole or refused (no sign, no spaces, no trailing characters, no
 * overflow); the caller says what is allowed in its own words. */
#ifndef SM_PARSE_H
#define SM_PARSE_H

#include <apr_errno.h>
#include <apr_time.h>

/* sm_parse_duration's flags: the unit d (days) is allowed too. */
#define SM_DURATION_DAYS 1

/* A duration: a whole number with a unit ms, s, mi or h (d too with
 * SM_DURATION_DAYS), a bare number is seconds; from min to max.
 * APR_SUCCESS and *out set, or APR_EINVAL. */
apr_status_t sm_parse_duration(const char *s, int flags,
                               apr_interval_time_t min,
                               apr_interval_time_t max,
                               apr_interval_time_t *out);

/* A whole number from min to max (min >= 0), digits only.  APR_SUCCESS
 * and *out set, or APR_EINVAL. */
apr_status_t sm_parse_count(const char *s, apr_int64_t min, apr_int64_t max,
                            apr_int64_t *out);

/* A size: bytes, or a whole number with K, M, G or T (powers of 1024,
 * either case); from min to max bytes.  APR_SUCCESS and *out set, or
 * APR_EINVAL. */
apr_status_t sm_parse_size(const char *s, apr_int64_t min, apr_int64_t max,
                           apr_int64_t *out);

/* A query parameter name: what may stand before '=' in a query (not
 * empty; no '&', '=', '#', spaces or control characters).  1 or 0. */
int sm_is_param_name(const char *s);

#endif
