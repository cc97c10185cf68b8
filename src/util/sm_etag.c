/* SPDX-License-Identifier: Apache-2.0 */
/* sm_etag.c: see sm_etag.h. */
#include "util/sm_etag.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_tables.h>
#include <string.h>
#include <strings.h>

/* What encoding filters append inside the quotes (mod_deflate, mod_brotli). */
static const char *const suffixes[] = { "-gzip", "-br", NULL };

/* The length of the opaque tag without an encoding suffix, or 0. */
static apr_size_t decoded_len(const char *opaque, apr_size_t len)
{
    int i;

    for (i = 0; suffixes[i]; i++) {
        apr_size_t n = strlen(suffixes[i]);
        if (len > n && memcmp(opaque + len - n, suffixes[i], n) == 0)
            return len - n;
    }
    return 0;
}

int sm_etag_is_encoded_n(const char *etag, apr_size_t n,
                         const char *encoded)
{
    apr_size_t m;
    int i;

    if (!etag || !encoded)
        return 0;
    m = strlen(encoded);
    /* the same up to etag's closing quote, which ends both */
    if (n < 2 || m <= n || etag[n - 1] != '"' || encoded[m - 1] != '"'
        || memcmp(etag, encoded, n - 1) != 0)
        return 0;
    for (i = 0; suffixes[i]; i++)
        if (strlen(suffixes[i]) == m - n
            && memcmp(encoded + n - 1, suffixes[i], m - n) == 0)
            return 1;
    return 0;
}

int sm_etag_is_encoded(const char *etag, const char *encoded)
{
    return etag && sm_etag_is_encoded_n(etag, strlen(etag), encoded);
}

const char *sm_etag_list_decoded(apr_pool_t *p, const char *list)
{
    apr_array_header_t *out;
    const char *s = list;
    int added = 0;

    if (!list)
        return NULL;
    out = apr_array_make(p, 4, sizeof(const char *));
    for (;;) {
        const char *start, *q, *end;
        apr_size_t n;

        while (*s == ',' || apr_isspace(*s))
            s++;
        if (!*s)
            break;
        start = s;
        if (s[0] == 'W' && s[1] == '/')
            s += 2;
        if (*s != '"')
            return NULL;                /* "*", or not entity tags */
        q = s + 1;
        if (!(end = strchr(q, '"')))
            return NULL;
        APR_ARRAY_PUSH(out, const char *) =
            apr_pstrmemdup(p, start, (apr_size_t)(end + 1 - start));
        if ((n = decoded_len(q, (apr_size_t)(end - q))) != 0) {
            APR_ARRAY_PUSH(out, const char *) =
                apr_psprintf(p, "%.*s%.*s\"", (int)(q - start), start,
                             (int)n, q);
            added = 1;
        }
        s = end + 1;
    }
    if (!added)
        return NULL;
    return apr_array_pstrcat(p, out, ',');
}

const char *sm_etag_encoded_in(apr_pool_t *p, const char *list,
                               const char *etag)
{
    const char *s = list, *want;
    apr_size_t want_len;

    if (!list || !etag)
        return NULL;
    want = etag[0] == 'W' && etag[1] == '/' ? etag + 2 : etag;
    want_len = strlen(want);
    if (want_len < 2 || want[0] != '"' || want[want_len - 1] != '"')
        return NULL;
    want++;                     /* the opaque part, without its quotes */
    want_len -= 2;
    for (;;) {
        const char *start, *q, *end;
        apr_size_t n;

        while (*s == ',' || apr_isspace(*s))
            s++;
        if (!*s)
            return NULL;
        start = s;
        if (s[0] == 'W' && s[1] == '/')
            s += 2;
        if (*s != '"' || !(end = strchr(s + 1, '"')))
            return NULL;
        q = s + 1;
        n = decoded_len(q, (apr_size_t)(end - q));
        if (n && n == want_len && memcmp(q, want, n) == 0)
            return apr_pstrmemdup(p, start, (apr_size_t)(end + 1 - start));
        s = end + 1;
    }
}

const char *sm_vary_dedup(apr_pool_t *p, const char *vary)
{
    apr_array_header_t *seen;
    char *list, *tok, *state;
    int repeat = 0, i;

    if (!vary)
        return NULL;
    seen = apr_array_make(p, 4, sizeof(const char *));
    list = apr_pstrdup(p, vary);
    for (tok = apr_strtok(list, ", \t", &state); tok;
         tok = apr_strtok(NULL, ", \t", &state)) {
        for (i = 0; i < seen->nelts; i++)
            if (strcasecmp(APR_ARRAY_IDX(seen, i, const char *), tok) == 0)
                break;
        if (i < seen->nelts)
            repeat = 1;
        else
            APR_ARRAY_PUSH(seen, const char *) = tok;
    }
    if (!repeat)
        return NULL;
    /* apr_array_pstrcat separates with one character: ", " by hand. */
    {
        const char *out = APR_ARRAY_IDX(seen, 0, const char *);
        for (i = 1; i < seen->nelts; i++)
            out = apr_pstrcat(p, out, ", ", APR_ARRAY_IDX(seen, i,
                                                          const char *), NULL);
        return out;
    }
}
