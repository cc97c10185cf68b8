/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_crawl_ranges: the JSON files of address ranges SitemapCrawler reads
 * (sm_crawl_ranges_parse): published by a search engine, downloaded by a
 * cron job; whoever can serve or alter that download controls the bytes.
 *
 * Input: the file's bytes.  Invariants:
 *   - an accepted file holds at most SM_CRAWL_PREFIXES_MAX prefixes;
 *   - a refused one says why (an error message naming a byte offset no
 *     larger than the input);
 *   - an accepted file with one more byte that is not whitespace after it
 *     is refused (nothing after the object), and the same file parsed
 *     again gives the same number of prefixes;
 *   - "::ffff:a.b.c.d" is in the ranges exactly when "a.b.c.d" is. */
#include "fuzz.h"
#include "crawl/sm_crawl.h"

#include <apr_strings.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    char *buf = malloc(size ? size : 1), *more;
    const char *err = NULL;
    sm_crawl_ranges *r;

    if (!buf)
        abort();
    memcpy(buf, data, size);
    r = sm_crawl_ranges_parse(p, buf, size, &err);
    if (!r) {
        const char *at = NULL, *next;

        FUZZ_ASSERT(err != NULL && *err);
        /* The last one: a prefix quoted in the message may hold the words */
        for (next = err; (next = strstr(next, " at byte ")) != NULL; next++)
            at = next;
        if (at)
            FUZZ_ASSERT((size_t)apr_atoi64(at + 9) <= size);
    }
    else {
        static const char *v4[] = { "66.249.64.1", "127.0.0.2", "0.0.0.0",
                                    "255.255.255.255", "10.1.2.3" };
        const char *err2 = NULL;
        size_t i;

        FUZZ_ASSERT(sm_crawl_ranges_count(r) <= SM_CRAWL_PREFIXES_MAX);
        FUZZ_ASSERT(sm_crawl_ranges_count(
                        sm_crawl_ranges_parse(p, buf, size, &err2))
                    == sm_crawl_ranges_count(r));
        for (i = 0; i < sizeof(v4) / sizeof(v4[0]); i++)
            FUZZ_ASSERT(sm_crawl_ranges_has_text(r, v4[i])
                        == sm_crawl_ranges_has_text(
                               r, apr_pstrcat(p, "::ffff:", v4[i], NULL)));
        more = malloc(size + 1);
        if (!more)
            abort();
        memcpy(more, data, size);
        more[size] = 'x';
        FUZZ_ASSERT(sm_crawl_ranges_parse(p, more, size + 1, &err2) == NULL);
        free(more);
    }
    free(buf);
    apr_pool_destroy(p);
    return 0;
}
