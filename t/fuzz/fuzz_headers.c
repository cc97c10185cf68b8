/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_headers: what the module reads from a response to decide whether a
 * page is recorded: X-Robots-Tag and Cache-Control token lists
 * (sm_header_has_token) and the Content-Type, through sm_rules_decide,
 * all set by whatever produced the page (a CGI, a proxied backend).
 *
 * Input: "target\ncontent-type\nx-robots-tag\ncache-control".
 * Invariants:
 *   - tokens are found whatever the case of the value, and a value that
 *     starts with the token as its own element always holds it;
 *   - a page is never recorded with noindex/none in X-Robots-Tag or
 *     private/no-store in Cache-Control, nor with a content type whose
 *     media type is not listed; what is recorded is the target's stored
 *     form (sm_url_from_target). */
#include "fuzz.h"
#include "record/sm_rules.h"
#include "util/sm_url.h"

#include <apr_strings.h>

static const char *tokens[] = { "noindex", "none", "private", "no-store" };

static char *upper(apr_pool_t *p, const char *s)
{
    char *u = apr_pstrdup(p, s), *c;

    for (c = u; *c; c++)
        if (*c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
    return u;
}

/* The next '\n'-separated part of the input, as its own string. */
static char *part(const uint8_t **d, size_t *n)
{
    const uint8_t *nl = memchr(*d, '\n', *n);
    size_t len = nl ? (size_t)(nl - *d) : *n;
    char *s = fuzz_cstr(*d, len);

    *d += len + (nl ? 1 : 0);
    *n -= len + (nl ? 1 : 0);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p = fuzz_pool();
    char *target = part(&data, &size), *ct = part(&data, &size);
    char *xrt = part(&data, &size), *cc = part(&data, &size);
    apr_array_header_t *types = apr_array_make(p, 2, sizeof(char *));
    sm_rules rules;
    sm_response resp;
    const char *url, *why;
    sm_verdict v;
    size_t i;

    for (i = 0; i < sizeof(tokens) / sizeof(tokens[0]); i++) {
        int has = sm_header_has_token(xrt, tokens[i]);

        FUZZ_ASSERT(has == sm_header_has_token(upper(p, xrt), tokens[i]));
        FUZZ_ASSERT(sm_header_has_token(apr_pstrcat(p, tokens[i], ", ", xrt,
                                                    NULL), tokens[i]));
        (void)sm_header_has_token(cc, tokens[i]);
    }

    APR_ARRAY_PUSH(types, const char *) = "text/html";
    APR_ARRAY_PUSH(types, const char *) = "application/xhtml+xml";
    memset(&rules, 0, sizeof(rules));
    rules.content_types = types;
    memset(&resp, 0, sizeof(resp));
    resp.method = "GET";
    resp.status = 200;
    resp.target = target;
    resp.content_type = ct;
    resp.x_robots_tag = xrt;
    resp.cache_control = cc;
    resp.base_len = 23;
    v = sm_rules_decide(p, &rules, &resp, &url, &why);
    if (v == SM_RECORD || v == SM_FORGET) {
        char *path, *u;
        const char *c = ct;
        int noindex = sm_header_has_token(xrt, "noindex")
                      || sm_header_has_token(xrt, "none");

        /* Recorded: nothing says otherwise (private is recorded: this
         * request has no credentials and no session).  Forgotten (a 200):
         * only for a noindex, which wins over a no-store answer. */
        if (v == SM_RECORD)
            FUZZ_ASSERT(!noindex && !sm_header_has_token(cc, "no-store"));
        else
            FUZZ_ASSERT(noindex && why && strcmp(why, "x-robots-tag") == 0);
        while (*c == ' ' || *c == '\t')
            c++;
        FUZZ_ASSERT(strncasecmp(c, "text/html", 9) == 0
                    || strncasecmp(c, "application/xhtml+xml", 21) == 0);
        FUZZ_ASSERT(sm_url_from_target(p, target, NULL, 23, &path, &u)
                    == SM_URL_OK && strcmp(u, url) == 0);
    }
    else {
        FUZZ_ASSERT(v == SM_IGNORE && url == NULL);
    }

    free(target);
    free(ct);
    free(xrt);
    free(cc);
    apr_pool_destroy(p);
    return 0;
}
