/* SPDX-License-Identifier: Apache-2.0 */
/* sm_head_resolve.c: what a page's canonical names (see sm_head.h):
 * hrefs resolved against the page's URL as browsers do (RFC 3986 section
 * 5), then normalised as stored URLs are (sm_url); an internationalised
 * host becomes its A-label (xn--) form with libidn2.  Written by hand: APR
 * parses URIs (apr_uri_parse) but does not resolve references. */
#include "head/sm_head.h"

#include <string.h>

#include <idn2.h>

#include <apr_lib.h>
#include <apr_strings.h>

#include "util/sm_url.h"

/* The value of a hex digit already checked with apr_isxdigit. */
static int hexval(int c)
{
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* The authority a[0..n) with its host in ASCII, as browsers write it
 * (the WHATWG URL standard's host parser): a host holding a non-ASCII
 * byte or an escape is percent-decoded and mapped to its A-label (xn--)
 * form by UTS #46 nontransitional processing (libidn2, as browsers and
 * crawlers do: "b%C3%BCcher.example", in
 * UTF-8 or escaped, is "xn--bcher-kva.example").  NULL when it
 * cannot be (a bad escape, a name IDNA refuses); an ASCII host is left to
 * sm_url_parse_base, as is an IPv6 literal or a user name (refused). */
static const char *ascii_authority(apr_pool_t *p, const char *a,
                                   apr_size_t n)
{
    const char *colon;
    char *raw, *ascii, *o, *out;
    apr_size_t i, hn;

    for (i = 0; i < n && (unsigned char)a[i] < 0x80 && a[i] != '%'; i++)
        ;
    if (i == n || a[0] == '[' || memchr(a, '@', n))
        return apr_pstrmemdup(p, a, n);
    colon = memchr(a, ':', n);
    hn = colon ? (apr_size_t)(colon - a) : n;
    raw = o = apr_palloc(p, hn + 1);
    for (i = 0; i < hn; i++) {
        if (a[i] != '%') {
            *o++ = a[i];
            continue;
        }
        if (hn - i < 3 || !apr_isxdigit(a[i + 1]) || !apr_isxdigit(a[i + 2]))
            return NULL;
        *o++ = (char)(hexval(a[i + 1]) << 4 | hexval(a[i + 2]));
        i += 2;
    }
    *o = '\0';
    if (o == raw || strlen(raw) != (apr_size_t)(o - raw)
        || idn2_to_ascii_8z(raw, &ascii, IDN2_NONTRANSITIONAL
                                         | IDN2_NFC_INPUT) != IDN2_OK)
        return NULL;
    out = apr_pstrcat(p, ascii, apr_pstrmemdup(p, a + hn, n - hn), NULL);
    idn2_free(ascii);
    return out;
}

/* "scheme://authority" of an absolute http(s) href, canonical; *rest after
 * the authority.  NULL when it is not one.  An href on the page's own
 * base, written as that base is (canonical already), is not parsed
 * again: the common case, and most of what a hreflang alternate cost. */
static const char *href_base(apr_pool_t *p, const char *href,
                             const char *scheme, const char *page_base,
                             const char **rest)
{
    const char *a = href + 2, *end = a + strcspn(a, "/?#"), *err, *auth;
    apr_size_t sn = strlen(scheme), an = (apr_size_t)(end - a);

    *rest = end;
    if (strncmp(page_base, scheme, sn) == 0
        && strncmp(page_base + sn, "://", 3) == 0
        && strncmp(page_base + sn + 3, a, an) == 0
        && page_base[sn + 3 + an] == '\0')
        return page_base;
    auth = ascii_authority(p, a, an);
    return auth ? sm_url_parse_base(p, apr_pstrcat(p, scheme, "://", auth,
                                                   NULL), &err)
                : NULL;
}

int sm_head_resolve(apr_pool_t *p, const char *page_base,
                    const char *page_path, const char *href,
                    const char **base, const char **target)
{
    char *h = apr_palloc(p, strlen(href) + 1), *o = h;
    const char *c, *rest, *scheme_end;
    char *t;
    apr_size_t n;

    for (c = href; *c; c++)         /* as URL parsers: tabs, newlines */
        if (*c != '\t' && *c != '\n' && *c != '\r')
            *o++ = *c;
    *o = '\0';
    if (page_path[0] != '/') {      /* absolute-form request target */
        const char *a = strstr(page_path, "://");
        page_path = a ? a + 3 + strcspn(a + 3, "/?#") : "";
        if (page_path[0] != '/')
            page_path = apr_pstrcat(p, "/", page_path, NULL);
    }

    scheme_end = h + strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"
                               "RSTUVWXYZ0123456789+.-");
    if (scheme_end > h && *scheme_end == ':' && apr_isalpha(h[0])) {
        char *scheme = apr_pstrmemdup(p, h, (apr_size_t)(scheme_end - h));
        for (o = scheme; *o; o++)
            *o = (char)apr_tolower(*o);
        if ((strcmp(scheme, "http") && strcmp(scheme, "https"))
            || strncmp(scheme_end + 1, "//", 2) != 0)
            return 0;
        if (!(*base = href_base(p, scheme_end + 1, scheme, page_base,
                                     &rest)))
            return 0;
    }
    else if (h[0] == '/' && h[1] == '/') {
        char *scheme = apr_pstrmemdup(p, page_base,
                                      strcspn(page_base, ":"));
        if (!(*base = href_base(p, h, scheme, page_base, &rest)))
            return 0;
    }
    else {
        *base = page_base;
        if (h[0] == '/') {
            rest = h;
        }
        else if (h[0] == '?') {
            rest = apr_pstrcat(p, apr_pstrmemdup(p, page_path,
                                                 strcspn(page_path, "?#")),
                               h, NULL);
        }
        else if (h[0] == '#' || h[0] == '\0') {
            rest = page_path;
        }
        else {
            n = strcspn(page_path, "?#");
            while (n && page_path[n - 1] != '/')
                n--;
            rest = apr_pstrcat(p, apr_pstrmemdup(p, page_path, n), h, NULL);
        }
    }
    n = strcspn(rest, "#");
    t = apr_palloc(p, n + 2);
    t[0] = '/';
    memcpy(t + (rest[0] != '/'), rest, n);
    t[n + (rest[0] != '/')] = '\0';
    for (o = t; *o && *o != '?'; o++)   /* '\' is '/' in http(s) URLs */
        if (*o == '\\')
            *o = '/';
    *target = t;
    return 1;
}

int sm_head_names_other(apr_pool_t *p, const sm_head_result *res,
                        const char *site_base, const char *page_target,
                        const char *page_url,
                        const apr_array_header_t *allow)
{
    const char *base = site_base, *path = page_target, *cbase, *ctarget;
    char *cpath, *curl;

    if (!res->canonical)
        return 0;
    if (res->base_href
        && !sm_head_resolve(p, site_base, page_target, res->base_href,
                            &base, &path))
        base = site_base, path = page_target;
    if (!sm_head_resolve(p, base, path, res->canonical, &cbase, &ctarget))
        return 0;                   /* not an http(s) URL: ignored */
    if (strcmp(cbase, site_base) != 0)
        return 1;                   /* another site */
    if (sm_url_from_target(p, ctarget, allow, 0, &cpath, &curl) != SM_URL_OK)
        return 1;                   /* a URL this page cannot be */
    return strcmp(curl, page_url) != 0;
}

/* Does a rel value (space-separated link relation types, any case) hold
 * "canonical"? */
static int rel_has_canonical(const char *v, apr_size_t n)
{
    apr_size_t i = 0;

    while (i < n) {
        apr_size_t j;

        while (i < n && apr_isspace(v[i]))
            i++;
        for (j = i; j < n && !apr_isspace(v[j]); j++)
            ;
        if (j - i == 9 && strncasecmp(v + i, "canonical", 9) == 0)
            return 1;
        i = j;
    }
    return 0;
}

const char *sm_link_canonical(apr_pool_t *p, const char *value)
{
    const char *s = value, *found = NULL;

    while (s && *s) {
        const char *lt = strchr(s, '<'), *gt, *e;
        int canonical = 0;

        if (!lt || !(gt = strchr(lt + 1, '>')))
            break;
        /* the link's parameters run to the next ',' outside quotes */
        for (e = gt + 1; *e && *e != ','; e++) {
            const char *name, *v;
            apr_size_t nlen, vlen;

            if (*e != ';')
                continue;
            for (name = e + 1; *name == ' ' || *name == '\t'; name++)
                ;
            for (nlen = 0; name[nlen] && name[nlen] != '='
                           && name[nlen] != ';' && name[nlen] != ','
                           && name[nlen] != ' ' && name[nlen] != '\t'; nlen++)
                ;
            v = name + nlen;
            while (*v == ' ' || *v == '\t')
                v++;
            if (*v != '=')
                continue;
            for (v++; *v == ' ' || *v == '\t'; v++)
                ;
            if (*v == '"') {
                const char *q = strchr(v + 1, '"');
                if (!q)
                    return found;
                vlen = (apr_size_t)(q - v - 1);
                v++;
                e = q;
            }
            else {
                for (vlen = 0; v[vlen] && v[vlen] != ';' && v[vlen] != ','
                               && v[vlen] != ' '; vlen++)
                    ;
                e = v + vlen - 1;
            }
            if (nlen == 3 && strncasecmp(name, "rel", 3) == 0
                && rel_has_canonical(v, vlen))
                canonical = 1;
        }
        if (canonical) {
            const char *href = apr_pstrmemdup(p, lt + 1,
                                              (apr_size_t)(gt - lt - 1));
            if (found && strcmp(found, href) != 0)
                return NULL;        /* two that differ: neither counts */
            found = href;
        }
        s = *e ? e + 1 : e;
    }
    return found;
}
