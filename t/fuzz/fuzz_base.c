/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_base: base URLs (SitemapBaseURL, sitemapctl --site:
 * sm_url_parse_base) and the URLs an administrator names to sitemapctl
 * add/remove (sm_ctl_url, on the base).
 *
 * Input: the text, given to each.  Invariants:
 *   - a canonical base is "http://" or "https://", then a host of
 *     lowercase letters, digits, '-', '.', '_' (or an IPv6 literal), then
 *     an optional port 1-65535 other than the scheme's; and it is its own
 *     canonical form;
 *   - a URL sitemapctl accepts is its own stored form; and with no
 *     --allow-query, no URL is refused for its query's names (every name
 *     it holds is allowed). */
#include "fuzz.h"
#include "ctl/sm_ctl.h"
#include "util/sm_url.h"

#include <apr_strings.h>

#define BASE "https://www.example.com"

static void check_base(apr_pool_t *p, const char *canon)
{
    const char *c = canon, *err, *again;
    unsigned long port = 0;

    if (strncmp(c, "http://", 7) == 0)
        c += 7;
    else {
        FUZZ_ASSERT(strncmp(c, "https://", 8) == 0);
        c += 8;
    }
    if (*c == '[') {
        c = strchr(c, ']');
        FUZZ_ASSERT(c != NULL);
        c++;
    }
    else {
        FUZZ_ASSERT(*c && *c != ':');
        for (; *c && *c != ':'; c++)
            FUZZ_ASSERT((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')
                        || *c == '-' || *c == '.' || *c == '_');
    }
    if (*c == ':') {
        for (c++; *c; c++) {
            FUZZ_ASSERT(*c >= '0' && *c <= '9');
            port = port * 10 + (unsigned long)(*c - '0');
            FUZZ_ASSERT(port <= 65535);
        }
        FUZZ_ASSERT(port != 0 && port != (canon[4] == 's' ? 443UL : 80UL));
    }
    FUZZ_ASSERT(*c == '\0');
    again = sm_url_parse_base(p, canon, &err);
    FUZZ_ASSERT(again && strcmp(again, canon) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    char *s = fuzz_cstr(data, size);
    const char *canon, *err, *url, *again;

    if ((canon = sm_url_parse_base(p, s, &err)) != NULL)
        check_base(p, canon);
    else
        FUZZ_ASSERT(err && *err);

    if ((err = sm_ctl_url(p, BASE, s, NULL, &url)) == NULL) {
        FUZZ_ASSERT(url[0] == '/');
        FUZZ_ASSERT(sm_ctl_url(p, BASE, url, NULL, &again) == NULL
                    && strcmp(again, url) == 0);
    }
    else {
        static const char refused[] = ": query parameter not allowed "
                                      "(name it with --allow-query)";
        size_t el = strlen(err), rl = sizeof(refused) - 1;

        FUZZ_ASSERT(el < rl || strcmp(err + el - rl, refused) != 0);
    }

    free(s);
    apr_pool_destroy(p);
    return 0;
}
