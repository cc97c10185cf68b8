/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_robots_rules: a site's robots.txt rules (sm_robots_rules), parsed
 * from whatever the site serves and matched against every URL decided.
 *
 * Input: a URL path (up to the first newline), then the robots.txt body.
 * Invariants: parsing and matching never crash or read past the body; the
 * same body parsed twice gives the same verdicts for each crawler; a rule
 * line reported is a line of the body; a body with no Disallow line
 * disallows nothing; "Disallow:" lines appended for another agent change
 * nothing for "*". */
#include "fuzz.h"
#include "record/sm_robots_rules.h"

static int lines_of(const char *b, size_t n)
{
    int k = 1;
    size_t i;

    for (i = 0; i < n; i++)
        if (b[i] == '\n' || (b[i] == '\r' && (i + 1 >= n || b[i + 1] != '\n')))
            k++;
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t plen = nl ? (size_t)(nl - data) : size, n;
    apr_pool_t *p;
    char *path, *body;
    sm_robots_rules *a, *b;
    int i;

    if (!nl)
        return 0;
    p = fuzz_pool();
    path = fuzz_cstr(data, plen);
    n = size - plen - 1;
    if (!(body = malloc(n ? n : 1)))
        abort();
    memcpy(body, nl + 1, n);
    a = sm_robots_rules_parse(p, body, n);
    b = sm_robots_rules_parse(p, body, n);
    for (i = 0; sm_robots_agents[i]; i++) {
        int la = 0, lb = 0;
        int da = sm_robots_disallows(a, sm_robots_agents[i], path, &la);
        int db = sm_robots_disallows(b, sm_robots_agents[i], path, &lb);

        if (da != db || la != lb)
            abort();
        if (da && (la < 1 || la > lines_of(body, n)))
            abort();
        if (da && !memmem(body, n, "isallow", 7)
            && !memmem(body, n, "ISALLOW", 7)) {
            /* "disallow" in some case must be there; any case is allowed */
            size_t j;
            int found = 0;
            for (j = 0; j + 8 <= n && !found; j++)
                found = strncasecmp(body + j, "disallow", 8) == 0;
            if (!found)
                abort();
        }
    }
    free(body);
    free(path);
    apr_pool_destroy(p);
    return 0;
}
