/* SPDX-License-Identifier: Apache-2.0 */
/* sm_ctl_util.c: sitemapctl's argument values; see sm_ctl.h. */
#include "ctl/sm_ctl.h"
#include "util/sm_date.h"
#include "util/sm_parse.h"

#include <apr_cstr.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DURATION_SEC (APR_INT64_C(100) * 366 * 86400)
/* 9999-12-31T23:59:59Z: a <lastmod> has four digits of year. */
#define LAST_SECOND APR_INT64_C(253402300799)

const char *sm_ctl_parse_duration(const char *s, apr_interval_time_t *out)
{
    if (sm_parse_duration(s, SM_DURATION_DAYS, 1,
                          apr_time_from_sec(MAX_DURATION_SEC), out)
        == APR_SUCCESS)
        return NULL;
    return "a duration more than 0 and at most 100 years: a whole number "
           "with a unit d, h, mi, s or ms (such as 30d, 12h, 90mi, 3600s; "
           "a bare number is seconds)";
}

static int num(const char **c, int n, int *out)
{
    int v = 0;
    for (; n; n--, (*c)++) {
        if (!apr_isdigit(**c))
            return 0;
        v = v * 10 + (**c - '0');
    }
    *out = v;
    return 1;
}

const char *sm_ctl_parse_time(const char *s, apr_time_t *out)
{
    static const char *const form = "a time such as 2026-11-22, "
        "2026-11-22T10:30:00Z, 2026-11-22T10:30+01:00 or @1795323556";
    static const char *const implausible = "a time from 1990-01-01 to one "
        "day from now";
    apr_time_exp_t tm;
    const char *c = s;
    int y, mo, d, hh = 0, mm = 0, ss = 0, zh = 0, zm = 0, sign = 0;
    apr_time_t t;

    if (!s || !*s)
        return form;
    if (*s == '@') {
        char *end;
        apr_int64_t v;
        apr_set_os_error(0);
        v = apr_strtoi64(s + 1, &end, 10);
        if (!apr_isdigit(s[1]) || *end || apr_get_os_error() || v < 0
            || v > LAST_SECOND)
            return form;
        if (!sm_time_plausible(apr_time_from_sec(v), apr_time_now()))
            return implausible;
        *out = apr_time_from_sec(v);
        return NULL;
    }
    if (!num(&c, 4, &y) || *c++ != '-' || !num(&c, 2, &mo) || *c++ != '-'
        || !num(&c, 2, &d))
        return form;
    if (*c == 'T') {
        c++;
        if (!num(&c, 2, &hh) || *c++ != ':' || !num(&c, 2, &mm))
            return form;
        if (*c == ':' && (c++, !num(&c, 2, &ss)))
            return form;
        if (*c == 'Z') {
            c++;
        }
        else if (*c == '+' || *c == '-') {
            sign = *c++ == '-' ? -1 : 1;
            if (!num(&c, 2, &zh) || *c++ != ':' || !num(&c, 2, &zm)
                || zh > 23 || zm > 59)
                return form;
        }
    }
    if (*c || y < 1970 || mo < 1 || mo > 12 || d < 1 || d > 31 || hh > 23
        || mm > 59 || ss > 60)
        return form;
    memset(&tm, 0, sizeof(tm));
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = hh;
    tm.tm_min = mm;
    tm.tm_sec = ss;
    if (apr_time_exp_gmt_get(&t, &tm) != APR_SUCCESS)
        return form;
    {
        /* A day past the end of its month (2026-02-30) is refused. */
        apr_time_exp_t back;
        apr_time_exp_gmt(&back, t);
        if (back.tm_mday != d || back.tm_mon != mo - 1)
            return form;
    }
    t -= apr_time_from_sec((apr_int64_t)sign * (zh * 3600 + zm * 60));
    if (!sm_time_plausible(t, apr_time_now()))
        return implausible;
    *out = t;
    return NULL;
}

const char *sm_ctl_url(apr_pool_t *p, const char *base, const char *in,
                       const apr_array_header_t *allow, const char **url)
{
    char *path, *u;
    sm_url_status st;

    *url = NULL;
    if (!in || !*in)
        return "an empty URL";
    if (in[0] != '/') {
        const char *auth = strstr(in, "://"), *canon, *err;
        apr_size_t plen;

        if (!auth || (apr_cstr_casecmpn(in, "http://", 7) != 0
                      && apr_cstr_casecmpn(in, "https://", 8) != 0))
            return apr_psprintf(p, "'%s' is neither a path (\"/...\") nor a "
                                "full URL on %s", in, base);
        plen = (apr_size_t)(auth + 3 - in) + strcspn(auth + 3, "/?#");
        canon = sm_url_parse_base(p, apr_pstrmemdup(p, in, plen), &err);
        if (!canon)
            return apr_psprintf(p, "'%s' is not a valid URL: %s", in, err);
        if (strcmp(canon, base) != 0)
            return apr_psprintf(p, "'%s' is not on the site %s (it is on "
                                "%s)", in, base, canon);
    }
    if (!allow) {
        allow = sm_url_query_names(p, in);
        st = sm_url_from_target(p, in, allow, strlen(base), &path, &u);
        /* Every name it holds is allowed: only a NUL byte in one, which
         * no name given as a C string can match, is refused. */
        if (st == SM_URL_QUERY_REFUSED)
            return apr_psprintf(p, "'%s': a query parameter name holds a "
                                "NUL byte (%%00)", in);
    }
    else {
        st = sm_url_from_target(p, in, allow, strlen(base), &path, &u);
    }
    if (st != SM_URL_OK)
        return apr_psprintf(p, "'%s': %s%s", in, sm_url_status_str(st),
                            st == SM_URL_QUERY_REFUSED
                            ? " (name it with --allow-query)" : "");
    *url = u;
    return NULL;
}
