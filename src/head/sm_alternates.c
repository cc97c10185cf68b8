/* SPDX-License-Identifier: Apache-2.0 */
/* sm_alternates.c: see sm_alternates.h. */
#include "head/sm_alternates.h"
#include "util/sm_url.h"

#include <apr_strings.h>
#include <string.h>

const char *sm_hreflang_canon(apr_pool_t *p, const char *in)
{
    apr_size_t len = strlen(in), sub = 0, i;
    int first = 1;
    char *out;

    if (len == 0 || len > SM_HREFLANG_MAX)
        return NULL;
    out = apr_palloc(p, len + 1);
    for (i = 0; i < len; i++)           /* ASCII only: no locale here */
        out[i] = in[i] >= 'A' && in[i] <= 'Z' ? (char)(in[i] - 'A' + 'a')
                                              : in[i];
    out[len] = '\0';
    if (strcmp(out, "x-default") == 0)
        return out;
    for (i = 0; i <= len; i++) {
        char c = out[i];
        if (c == '-' || c == '\0') {
            if (sub == 0 || sub > 8 || (first && sub < 2))
                return NULL;
            first = 0;
            sub = 0;
            continue;
        }
        if (!(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9' && !first))
            return NULL;
        sub++;
    }
    return out;
}

int sm_alternate_href_ok(apr_pool_t *p, const char *href)
{
    const char *rest, *base, *canon, *err = NULL;
    apr_size_t len = strlen(href);

    if (len > SM_URL_MAX)
        return 0;
    if (strncmp(href, "http://", 7) == 0)
        rest = href + 7;
    else if (strncmp(href, "https://", 8) == 0)
        rest = href + 8;
    else
        return 0;
    rest = strchr(rest, '/');
    if (!rest || !sm_url_is_stored_form(rest))
        return 0;
    /* The base as sm_url_parse_base writes it: canonical already. */
    base = apr_pstrmemdup(p, href, (apr_size_t)(rest - href));
    canon = strpbrk(base, "?#@") ? NULL : sm_url_parse_base(p, base, &err);
    return canon && strcmp(canon, base) == 0;
}

/* sm_alternate_href_ok for href = base + url, where base came out of
 * sm_head_resolve: a base already found good for this page is not
 * parsed again (verified holds them), so a page's alternates on one site
 * cost one parse of its base, not one an alternate. */
static int href_ok_once(apr_pool_t *p, const char *base, const char *href,
                        apr_array_header_t *verified)
{
    apr_size_t bn = strlen(base);
    int i;

    for (i = 0; i < verified->nelts; i++)
        if (strcmp(APR_ARRAY_IDX(verified, i, const char *), base) == 0)
            return strlen(href) <= SM_URL_MAX && href[bn] == '/'
                   && sm_url_is_stored_form(href + bn);
    if (!sm_alternate_href_ok(p, href))
        return 0;
    APR_ARRAY_PUSH(verified, const char *) = base;
    return 1;
}

const char *sm_alternates_from_head(apr_pool_t *p,
                                    const apr_array_header_t *found,
                                    const char *page_base,
                                    const char *page_target,
                                    const apr_array_header_t *allow)
{
    apr_array_header_t *parts = apr_array_make(p, 4, sizeof(char *));
    apr_array_header_t *langs = apr_array_make(p, 4, sizeof(char *));
    apr_array_header_t *verified = apr_array_make(p, 2, sizeof(char *));
    int i, j;

    for (i = 0; found && i < found->nelts
                && langs->nelts < SM_ALTERNATES_MAX; i++) {
        const sm_head_alternate *a = &APR_ARRAY_IDX(found, i,
                                                    sm_head_alternate);
        const char *lang = sm_hreflang_canon(p, a->hreflang);
        const char *base, *target, *href;
        char *path, *url;
        int dup = 0;

        if (!lang
            || !sm_head_resolve(p, page_base, page_target, a->href, &base,
                                &target)
            || sm_url_from_target(p, target, allow, strlen(base), &path,
                                  &url) != SM_URL_OK)
            continue;
        href = apr_pstrcat(p, base, url, NULL);
        if (!href_ok_once(p, base, href, verified))
            continue;
        for (j = 0; j < langs->nelts && !dup; j++)
            dup = strcmp(APR_ARRAY_IDX(langs, j, const char *), lang) == 0;
        if (dup)
            continue;
        APR_ARRAY_PUSH(langs, const char *) = lang;
        APR_ARRAY_PUSH(parts, const char *) =
            apr_pstrcat(p, parts->nelts ? "\n" : "", lang, " ", href, NULL);
    }
    return apr_array_pstrcat(p, parts, '\0');
}

int sm_alternates_parse(apr_pool_t *p, const char *text,
                        apr_array_header_t **out)
{
    char *l, *nl;
    int bad = 0, j;

    *out = apr_array_make(p, 4, sizeof(sm_alternate));
    if (!text || !*text)
        return 0;
    /* Each line in place, in a copy: "hreflang href". */
    for (l = apr_pstrdup(p, text); l; l = nl ? nl + 1 : NULL) {
        char *sp;
        const char *lang;
        int ok;

        if ((nl = strchr(l, '\n')) != NULL)
            *nl = '\0';
        sp = strchr(l, ' ');
        ok = sp != NULL && (*out)->nelts < SM_ALTERNATES_MAX;
        if (ok) {
            *sp = '\0';
            lang = sm_hreflang_canon(p, l);
            /* Stored lowercased: another spelling is no writer's. */
            ok = lang && strcmp(lang, l) == 0
                 && sm_alternate_href_ok(p, sp + 1);
            for (j = 0; ok && j < (*out)->nelts; j++)
                ok = strcmp(APR_ARRAY_IDX(*out, j, sm_alternate).hreflang,
                            l) != 0;
        }
        if (!ok) {
            bad++;
            continue;
        }
        APR_ARRAY_PUSH(*out, sm_alternate).hreflang = l;
        APR_ARRAY_IDX(*out, (*out)->nelts - 1, sm_alternate).href = sp + 1;
    }
    return bad;
}

int sm_alternates_count(const char *text)
{
    int n;

    if (!text || !*text)
        return 0;
    for (n = 1; *text; text++)
        n += *text == '\n';
    return n;
}

int sm_alternates_valid(apr_pool_t *p, const char *text)
{
    apr_array_header_t *alts;
    return sm_alternates_parse(p, text, &alts) == 0;
}
