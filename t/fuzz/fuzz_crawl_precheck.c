/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_crawl_precheck: SitemapCrawler's User-Agent patterns (the
 * administrator's) and the pre-check that spares an ordinary visitor's
 * request the patterns (sm_crawl_required_literal, sm_crawl_precheck), on
 * User-Agents any client chooses.
 *
 * Input: a pattern, a newline, a User-Agent (an embedded NUL ends it).
 * Invariants:
 *   - the pre-check never says no to a User-Agent the pattern matches: the
 *     literal taken from the pattern is in every match of it;
 *   - sm_crawl_visitor, given the User-Agent as a header field, answers
 *     as the pre-check;
 *   - the literal is lowercase ASCII, at most as long as the pattern. */
#include "fuzz.h"
#include "crawl/sm_crawl.h"

#include <apr_lib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    char *s = fuzz_cstr(data, size), *nl = strchr(s, '\n');
    const char *lit, *ua = "";
    char *argv[3];
    sm_crawl_list *l;
    size_t i;

    if (nl) {
        *nl = '\0';
        ua = nl + 1;
    }
    lit = sm_crawl_required_literal(p, s);
    FUZZ_ASSERT(strlen(lit) <= strlen(s));
    for (i = 0; lit[i]; i++)
        FUZZ_ASSERT((unsigned char)lit[i] < 0x80 && !apr_isupper(lit[i]));
    l = sm_crawl_list_make(p);
    argv[0] = "C";
    argv[1] = s;
    argv[2] = "dns:example.com";
    if (sm_crawl_add(l, p, 3, argv) == NULL) {
        /* The request path's one call answers as the pre-check does, for
         * the User-Agent field among others (the key in any case). */
        apr_table_t *t = apr_table_make(p, 3);
        const char *v;
        apr_table_addn(t, "Host", "example.com");
        apr_table_addn(t, size % 2 ? "user-agent" : "User-Agent", ua);
        apr_table_addn(t, "Upgrade-Insecure-Requests", "1");
        v = sm_crawl_visitor(l, apr_table_elts(t));
        FUZZ_ASSERT(v == (sm_crawl_precheck(l, ua) ? ua : NULL));
        if (sm_crawl_match(l, ua))
            FUZZ_ASSERT(v == ua);
    }
    free(s);
    apr_pool_destroy(p);
    return 0;
}
