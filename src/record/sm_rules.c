/* SPDX-License-Identifier: Apache-2.0 */
/* sm_rules.c: which responses are recorded, which are forgotten.
 *
 * sm_rules_decide runs after every request: it looks at the cheap facts
 * first (subrequest, method, status, content type, headers) and only then
 * normalises the URL and runs the exclude patterns.  Nothing here is
 * mutable after start-up, so it is safe to call from many threads. */
#define PCRE2_CODE_UNIT_WIDTH 8

#include "record/sm_rules.h"
#include "util/sm_hot.h"

#include <apr_cstr.h>
#include <apr_strings.h>

#include <pcre2.h>
#include <string.h>

/* ---- regular expressions ------------------------------------------------ */

struct sm_regex {
    pcre2_code *code;
    const char *pattern;
};

static apr_status_t regex_cleanup(void *data)
{
    pcre2_code_free((pcre2_code *)data);
    return APR_SUCCESS;
}

static sm_regex *regex_compile(apr_pool_t *p, const char *pattern,
                               uint32_t extra, const char **err)
{
    sm_regex *re;
    pcre2_code *code;
    int errcode;
    PCRE2_SIZE erroffset;

    if (!pattern) {
        *err = "no pattern";
        return NULL;
    }
    /* httpd's ap_regcomp adds AP_REG_DOTALL | AP_REG_DOLLAR_ENDONLY by
     * default (AP_REG_DEFAULT): the same here, for the same meaning. */
    code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                         PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY | extra,
                         &errcode,
                         &erroffset, NULL);
    if (!code) {
        PCRE2_UCHAR msg[256];

        if (pcre2_get_error_message(errcode, msg, sizeof(msg)) < 0)
            apr_cpystrn((char *)msg, "unknown error", sizeof(msg));
        *err = apr_psprintf(p, "'%s' at offset %" APR_SIZE_T_FMT ": %s",
                            pattern, (apr_size_t)erroffset,
                            (const char *)msg);
        return NULL;
    }
    /* Faster matching where the JIT is available; without it (not built
     * in, or no executable memory) pcre2_match interprets the pattern. */
    (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);

    re = apr_palloc(p, sizeof(*re));
    re->code = code;
    re->pattern = apr_pstrdup(p, pattern);
    apr_pool_cleanup_register(p, code, regex_cleanup,
                              apr_pool_cleanup_null);
    return re;
}

sm_regex *sm_regex_compile(apr_pool_t *p, const char *pattern,
                           const char **err)
{
    return regex_compile(p, pattern, 0, err);
}

sm_regex *sm_regex_compile_caseless(apr_pool_t *p, const char *pattern,
                                    const char **err)
{
    return regex_compile(p, pattern, PCRE2_CASELESS, err);
}

/* 1: match, 0: no match, -1: matching failed (out of memory, a limit). */
static int regex_exec(const sm_regex *re, const char *subject)
{
    pcre2_match_data *md;
    int rc;

    /* Match data is per call: the compiled pattern is shared between
     * threads, match data may not be.  One pair is enough to know whether
     * it matched (rc 0 means "matched, ovector too small"). */
    if (!(md = pcre2_match_data_create(1, NULL)))
        return -1;
    rc = pcre2_match(re->code, (PCRE2_SPTR)subject, PCRE2_ZERO_TERMINATED,
                     0, 0, md, NULL);
    pcre2_match_data_free(md);
    if (rc >= 0)
        return 1;
    return rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

int sm_regex_match(const sm_regex *re, const char *subject)
{
    return regex_exec(re, subject) == 1;
}

const char *sm_regex_pattern(const sm_regex *re)
{
    return re->pattern;
}

/* ---- header tokens --------------------------------------------------------- */

static int is_ows(char c)
{
    return c == ' ' || c == '\t';
}

/* The end of the list element starting at s: the next ',' outside a
 * quoted string, or the NUL. */
static const char *element_end(const char *s)
{
    int quoted = 0;

    for (; *s; s++) {
        if (quoted) {
            if (*s == '\\' && s[1])
                s++;
            else if (*s == '"')
                quoted = 0;
        }
        else if (*s == '"')
            quoted = 1;
        else if (*s == ',')
            break;
    }
    return s;
}

/* Does s[..e) hold token, alone or followed by '=' (whitespace around)? */
static int is_token_at(const char *s, const char *e, const char *token,
                       apr_size_t tlen)
{
    while (s < e && is_ows(*s))
        s++;
    if ((apr_size_t)(e - s) < tlen || apr_cstr_casecmpn(s, token, tlen))
        return 0;
    s += tlen;
    while (s < e && is_ows(*s))
        s++;
    return s == e || *s == '=';
}

int sm_header_has_token(const char *value, const char *token)
{
    apr_size_t tlen;
    const char *s;

    if (!value || !token || !(tlen = strlen(token)))
        return 0;
    for (s = value; *s; ) {
        const char *e = element_end(s), *name, *c;

        if (is_token_at(s, e, token, tlen))
            return 1;
        /* "agent: token": a name without space, quote or '=' before ':' */
        for (name = s; name < e && is_ows(*name); name++)
            ;
        for (c = name; c < e && !is_ows(*c) && *c != ':' && *c != '='
                       && *c != '"'; c++)
            ;
        if (c > name) {
            while (c < e && is_ows(*c))
                c++;
            if (c < e && *c == ':' && is_token_at(c + 1, e, token, tlen))
                return 1;
        }
        s = *e ? e + 1 : e;
    }
    return 0;
}

/* ---- the decision ---------------------------------------------------------- */

/* Is the media type of ct (parameters and whitespace ignored) listed?  The
 * listed types are lowercase.  Runs on every response: most name a listed
 * type in lowercase, which strncmp (vectorised) decides at once; the byte
 * loop folding case is for the rest. */
SM_HOT static int type_listed(const apr_array_header_t *types,
                              const char *ct)
{
    const char *s = ct;
    int i;

    if (!types || !ct)
        return 0;
    while (is_ows(*s))
        s++;
    if (!*s || *s == ';')
        return 0;
    for (i = 0; i < types->nelts; i++) {
        const char *t = APR_ARRAY_IDX(types, i, const char *);
        apr_size_t len = strlen(t);
        const char *c = s;

        if (strncmp(s, t, len) == 0)
            c = s + len;
        else {
            for (; *t && (*c >= 'A' && *c <= 'Z' ? *c + ('a' - 'A') : *c)
                          == *t; t++, c++)
                ;
            if (*t)
                continue;
        }
        while (is_ows(*c))
            c++;
        if (!*c || *c == ';')
            return 1;
    }
    return 0;
}

static const char *url_why(sm_url_status st)
{
    switch (st) {
    case SM_URL_QUERY_REFUSED: return "query";
    case SM_URL_TOO_LONG:      return "too long";
    default:                   return "bad url";
    }
}

static sm_verdict ignore(const char **url, const char **why, const char *r)
{
    if (url)
        *url = NULL;
    if (why && r)
        *why = r;
    return SM_IGNORE;
}

/* The statuses that make a stored URL go. */
static int forgets(int status)
{
    return status == 404 || status == 410 || status == 301;
}

/* For sm_rules_worth_deciding: "no", and why. */
static int refuse(const char **why, const char *r)
{
    if (why)
        *why = r;
    return 0;
}

SM_HOT int sm_rules_worth_deciding(const sm_rules *rules,
                                   const sm_response *resp, const char **why)
{
    int get;

    if (resp->is_subrequest)
        return refuse(why, "subrequest");
    get = resp->method && resp->method[0] == 'G' && resp->method[1] == 'E'
          && resp->method[2] == 'T' && !resp->method[3];
    if (forgets(resp->status)) {
        if (!get && !(resp->method && !strcmp(resp->method, "HEAD")))
            return refuse(why, "not GET");
        return 1;
    }
    if (!get)
        return refuse(why, "not GET");
    if (resp->status != 200)
        return refuse(why, "status");
    if (!type_listed(rules->content_types, resp->content_type))
        return refuse(why, "content type");
    if (resp->authenticated)
        return refuse(why, "authenticated");
    if (resp->session)
        return refuse(why, "session");
    if (resp->has_path_info)
        return refuse(why, "path info");
    return 1;
}

sm_verdict sm_rules_decide(apr_pool_t *p, const sm_rules *rules,
                           const sm_response *resp, const char **url,
                           const char **why)
{
    char *path, *u;
    sm_url_status st;
    int forget, noindex;

    if (!sm_rules_worth_deciding(rules, resp, why))
        return ignore(url, NULL, NULL);
    forget = forgets(resp->status);
    /* A noindex says the page must not be listed, as its <head> may
     * (sm_head): it goes if stored.  Cache-Control no-store says only that
     * this answer was for one visitor: left alone.  "private" is left
     * alone too when credentials or a session came (refused above); without
     * them it is what every anonymous visitor gets (MediaWiki's default). */
    noindex = !forget
              && (sm_header_has_token(resp->x_robots_tag, "noindex")
                  || sm_header_has_token(resp->x_robots_tag, "none"));
    if (!forget && !noindex
        && sm_header_has_token(resp->cache_control, "no-store"))
        return ignore(url, why, "cache-control no-store");

    st = sm_url_from_target(p, resp->target, rules->allow_query,
                            resp->base_len, &path, &u);
    if (st != SM_URL_OK)
        return ignore(url, why, url_why(st));

    if (!forget && !noindex && rules->excludes) {
        int i;
        for (i = 0; i < rules->excludes->nelts; i++) {
            /* A pattern that fails to run excludes: better to miss a page
             * than to publish one the administrator meant to hide. */
            if (regex_exec(APR_ARRAY_IDX(rules->excludes, i, sm_regex *),
                           path) != 0)
                return ignore(url, why, "excluded");
        }
    }

    if (url)
        *url = u;
    if (why)
        *why = noindex ? "x-robots-tag" : NULL;
    return forget || noindex ? SM_FORGET : SM_RECORD;
}

const char *sm_rules_note_url(apr_pool_t *p, const sm_rules *rules,
                              const sm_response *resp)
{
    char *path, *u;
    sm_url_status st;

    if (!resp->target)
        return NULL;
    st = sm_url_from_target(p, resp->target, rules->allow_query,
                            resp->base_len, &path, &u);
    if (st == SM_URL_QUERY_REFUSED)
        st = sm_url_from_target(p, resp->target,
                                sm_url_query_names(p, resp->target),
                                resp->base_len, &path, &u);
    return st == SM_URL_OK ? u : NULL;
}

int sm_rules_page_like(const char *ct)
{
    apr_size_t n;

    if (!ct)
        return 1;
    while (is_ows(*ct))
        ct++;
    n = strcspn(ct, "; \t");
    if (!n)
        return 1;
    if (n > 5 && !apr_cstr_casecmpn(ct, "text/", 5))
        return !(n == 8 && !apr_cstr_casecmpn(ct, "text/css", 8))
               && !(n == 15 && !apr_cstr_casecmpn(ct, "text/javascript", 15));
    return (n == 21 && !apr_cstr_casecmpn(ct, "application/xhtml+xml", 21));
}

/* ---- session cookies ---------------------------------------------------- */

static int pattern_matches(const char *pat, const char *name, apr_size_t n)
{
    apr_size_t plen = strlen(pat);

    if (plen && pat[plen - 1] == '*')           /* prefix* */
        return n >= plen - 1 && memcmp(name, pat, plen - 1) == 0;
    if (plen && pat[0] == '*')                  /* *suffix */
        return n >= plen - 1
               && memcmp(name + n - (plen - 1), pat + 1, plen - 1) == 0;
    return n == plen && memcmp(name, pat, n) == 0;
}

int sm_has_session(const apr_array_header_t *patterns, const char *cookies)
{
    const char *s = cookies;

    if (!patterns || !patterns->nelts || !s)
        return 0;
    while (*s) {
        const char *name, *e;
        int i;

        while (*s == ' ' || *s == '\t' || *s == ';' || *s == ',')
            s++;
        name = s;
        while (*s && *s != '=' && *s != ';' && *s != ',')
            s++;
        e = s;
        while (e > name && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        /* a cookie with an empty value is no session (a logout's) */
        if (*s == '=' && e > name && s[1] && s[1] != ';' && s[1] != ',') {
            for (i = 0; i < patterns->nelts; i++)
                if (pattern_matches(APR_ARRAY_IDX(patterns, i, const char *),
                                    name, (apr_size_t)(e - name)))
                    return 1;
        }
        while (*s && *s != ';' && *s != ',')
            s++;
    }
    return 0;
}
