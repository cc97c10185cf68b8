/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_directives: the core's parsers of directive values (SitemapExclude,
 * SitemapChangefreq and SitemapPriority regexes and values, SitemapPath),
 * of sitemap request paths (sm_name_parse, asked of every request), and
 * of the settings text kept with a site in the store (sm_settings_parse).
 *
 * Input: the text, given to each.  Invariants:
 *   - a regex that compiles runs (on its own text) and keeps its pattern;
 *   - a priority's canonical form is one of 0.0 .. 1.0 and canonical again;
 *   - a valid SitemapPath names itself as the index, and page n's path
 *     names page n; a request path read as page n is page n's path;
 *   - settings read, written and read again give the same text;
 *   - a SitemapRobotsExtra URL accepted is http(s), of printable ASCII
 *     without '#', at most SM_URL_MAX long;
 *   - a SitemapStylesheet URL accepted holds no quote, '<', '>' or "?>";
 *   - a duration, count or size accepted (sm_parse.h) is within its
 *     bounds and spelt with digits then a unit only; a parameter name
 *     accepted holds no '&', '=', '#' or space. */
#include "fuzz.h"
#include "serve/sm_robots.h"
#include "record/sm_rules.h"
#include "serve/sm_sitemap.h"
#include "util/sm_parse.h"
#include "util/sm_url.h"

#include <apr_strings.h>

static void check_settings(apr_pool_t *p, const char *text)
{
    sm_settings a, b;
    const char *fa, *fb;

    if (sm_settings_parse(p, text, &a) != NULL)
        return;
    FUZZ_ASSERT(sm_sitemap_path_check(a.path) == NULL);
    FUZZ_ASSERT(a.page_size >= 1
                && a.page_size <= SM_SETTINGS_DEFAULT_PAGE_SIZE);
    fa = sm_settings_format(p, a.path, a.page_size, a.changefreq,
                            a.priority, a.stylesheet);
    FUZZ_ASSERT(sm_settings_parse(p, fa, &b) == NULL);
    fb = sm_settings_format(p, b.path, b.page_size, b.changefreq,
                            b.priority, b.stylesheet);
    FUZZ_ASSERT(strcmp(fa, fb) == 0);
}

/* The values the directives and sitemapctl share (sm_parse.h). */
static void check_values(const char *s)
{
    apr_interval_time_t t;
    apr_int64_t n;
    const char *c;

    if (sm_parse_duration(s, SM_DURATION_DAYS, 1,
                          apr_time_from_sec(100LL * 366 * 86400), &t)
        == APR_SUCCESS) {
        FUZZ_ASSERT(t >= 1 && t <= apr_time_from_sec(100LL * 366 * 86400));
        for (c = s; *c >= '0' && *c <= '9'; c++)
            ;
        FUZZ_ASSERT(c > s && (!*c || !strcmp(c, "s") || !strcmp(c, "ms")
                              || !strcmp(c, "mi") || !strcmp(c, "h")
                              || !strcmp(c, "d")));
    }
    if (sm_parse_duration(s, 0, 0, apr_time_from_sec(3600), &t)
        == APR_SUCCESS)
        FUZZ_ASSERT(t >= 0 && t <= apr_time_from_sec(3600)
                    && !strchr(s, 'd'));
    if (sm_parse_count(s, 1, 1000000, &n) == APR_SUCCESS)
        FUZZ_ASSERT(n >= 1 && n <= 1000000 && s[0] >= '0' && s[0] <= '9');
    if (sm_parse_size(s, APR_INT64_C(1) << 20, APR_INT64_C(1) << 40, &n)
        == APR_SUCCESS)
        FUZZ_ASSERT(n >= APR_INT64_C(1) << 20 && n <= APR_INT64_C(1) << 40);
    if (sm_is_param_name(s))
        FUZZ_ASSERT(*s && !strpbrk(s, "&=# \t\r\n"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    char *s = fuzz_cstr(data, size);
    const char *err, *canon;
    apr_int64_t n;
    sm_regex *re;

    /* Regexes: PCRE2's own code mostly; short ones are enough to reach
     * ours, long ones only cost PCRE2's time. */
    if (size <= 256 && (re = sm_regex_compile(p, s, &err)) != NULL) {
        (void)sm_regex_match(re, s);
        FUZZ_ASSERT(strcmp(sm_regex_pattern(re), s) == 0);
    }

    if ((canon = sm_priority_canon(p, s)) != NULL) {
        FUZZ_ASSERT(strlen(canon) == 3 && canon[1] == '.'
                    && (canon[0] == '0' || strcmp(canon, "1.0") == 0)
                    && canon[2] >= '0' && canon[2] <= '9');
        FUZZ_ASSERT(strcmp(sm_priority_canon(p, canon), canon) == 0);
    }
    if (sm_changefreq_check(s) == NULL)
        FUZZ_ASSERT(strlen(s) <= 7);

    if (sm_sitemap_path_check(s) == NULL) {
        FUZZ_ASSERT(sm_name_parse(s, s) == SM_NAME_INDEX);
        n = 1 + (apr_int64_t)(size * 7919 % 999999999);
        FUZZ_ASSERT(sm_name_parse(s, sm_page_path(p, s, n)) == n);
    }
    n = sm_name_parse("/sitemap.xml", s);
    FUZZ_ASSERT(n >= SM_NAME_BAD && n <= 999999999);
    if (n > 0)
        FUZZ_ASSERT(strcmp(sm_page_path(p, "/sitemap.xml", n), s) == 0);
    if (n == SM_NAME_INDEX)
        FUZZ_ASSERT(strcmp(s, "/sitemap.xml") == 0);

    if (size <= 1024)
        check_settings(p, s);

    /* SitemapStylesheet: nothing that could end the processing
     * instruction or its quoted href. */
    if (sm_stylesheet_url_check(s) == NULL) {
        const char *c;

        FUZZ_ASSERT(*s && strlen(s) <= 2048 && !strstr(s, "?>"));
        for (c = s; *c; c++)
            FUZZ_ASSERT(*c > ' ' && *c < 0x7F && !strchr("\"<>", *c));
    }

    /* SitemapRobotsExtra: a URL fit for a robots.txt line. */
    if (sm_robots_url_problem(p, s) == NULL) {
        const char *c;

        FUZZ_ASSERT(strlen(s) <= SM_URL_MAX && !strchr(s, '#'));
        FUZZ_ASSERT(strncasecmp(s, "http://", 7) == 0
                    || strncasecmp(s, "https://", 8) == 0);
        for (c = s; *c; c++)
            FUZZ_ASSERT(*c > ' ' && *c < 0x7F);
    }

    check_values(s);
    free(s);
    apr_pool_destroy(p);
    return 0;
}
