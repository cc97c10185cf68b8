/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_log: access-log lines, as sitemapctl import reads them
 * (sm_log_parse_line, sm_import_not_a_page, sm_import_line and the
 * changes an import amounts to).
 *
 * Input: log text, cut into lines at '\n'.  Invariants:
 *   - a line parses the same with and without the timestamp cache, the
 *     cache holding whatever the lines before left in it;
 *   - a parsed line has a time, a status of three digits, and its strings
 *     point into the line and end inside it;
 *   - every URL the import keeps is a stored form: read back as a target
 *     it gives itself. */
#include "fuzz.h"
#include "ctl/sm_import.h"
#include "util/sm_url.h"

#include <apr_strings.h>

static int inside(const char *s, const char *buf, size_t n)
{
    return !s || (s >= buf && s < buf + n + 1 && memchr(s, '\0',
                                                   (size_t)(buf + n + 1 - s)));
}

static void parse_both(const char *text, size_t n, sm_log_time_cache *tc)
{
    char *a = fuzz_cstr((const uint8_t *)text, n);
    char *b = fuzz_cstr((const uint8_t *)text, n);
    sm_log_entry ea, eb;
    const char *ra = sm_log_parse_line(a, n, &ea, tc);
    const char *rb = sm_log_parse_line(b, n, &eb, NULL);

    FUZZ_ASSERT((ra == NULL) == (rb == NULL));
    if (!ra) {
        FUZZ_ASSERT(ea.time == eb.time && ea.status == eb.status);
        FUZZ_ASSERT(ea.time > 0);
        FUZZ_ASSERT(ea.status >= 100 && ea.status <= 999);
        FUZZ_ASSERT(inside(ea.user, a, n) && inside(ea.method, a, n)
                    && inside(ea.target, a, n));
        FUZZ_ASSERT((ea.method == NULL) == (ea.target == NULL));
        FUZZ_ASSERT(!ea.user == !eb.user
                    && (!ea.user || strcmp(ea.user, eb.user) == 0));
        FUZZ_ASSERT(!ea.method || (strcmp(ea.method, eb.method) == 0
                                   && strcmp(ea.target, eb.target) == 0));
        if (ea.target)
            (void)sm_import_not_a_page(ea.target);
    }
    free(a);
    free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    const char *text = (const char *)data, *end = text + size, *s, *err;
    sm_log_time_cache tc;
    sm_rules rules;
    apr_array_header_t *allow = apr_array_make(p, 1, sizeof(char *));
    apr_array_header_t *excludes = apr_array_make(p, 1, sizeof(void *));
    apr_array_header_t *changes;
    sm_site_conf site;
    sm_import *im;
    sm_regex *re;
    int i;

    memset(&tc, 0, sizeof(tc));
    memset(&rules, 0, sizeof(rules));
    APR_ARRAY_PUSH(allow, const char *) = "page";
    if (!(re = sm_regex_compile(p, "^/private(/|$)", &err)))
        abort();
    APR_ARRAY_PUSH(excludes, sm_regex *) = re;
    rules.allow_query = allow;
    rules.excludes = excludes;
    im = sm_import_create(p, &rules, "https://www.example.com", 1);

    for (s = text; s < end; ) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = (size_t)((nl ? nl : end) - s);
        char *line;

        parse_both(s, n, &tc);
        line = fuzz_cstr((const uint8_t *)s, n);
        sm_import_line(im, line, n, "fuzz");
        free(line);
        s += n + 1;
    }

    memset(&site, 0, sizeof(site));
    changes = sm_import_changes(im, p, &site);
    for (i = 0; i < changes->nelts; i++) {
        const sm_change *c = &APR_ARRAY_IDX(changes, i, sm_change);
        char *path, *url;

        FUZZ_ASSERT(sm_url_from_target(p, c->url, allow, 23, &path, &url)
                    == SM_URL_OK && strcmp(url, c->url) == 0);
        FUZZ_ASSERT(strncmp(path, "/private", 8) != 0
                    || (path[8] != '\0' && path[8] != '/')
                    || c->op == SM_CHANGE_FORGET);
    }
    FUZZ_ASSERT(sm_import_get_stats(im)->urls == (apr_uint64_t)changes->nelts);
    apr_pool_destroy(p);
    return 0;
}
