/* SPDX-License-Identifier: Apache-2.0 */
/* sm_robots_rules.c: a site's robots.txt rules (see sm_robots_rules.h).
 *
 * Written by hand: no C library of RFC 9309 is packaged for Debian 12
 * (Google's robotstxt is C++ and not packaged); the parsing is line by
 * line and the matching a bounded wildcard match. */
#include "record/sm_robots_rules.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_tables.h>

#include <string.h>

const char *const sm_robots_agents[] = { "*", "googlebot", "bingbot", NULL };

typedef struct {
    const char *pattern;        /* normalised; may end in '$' */
    apr_size_t len;
    int allow;
    int line;
} rule;

typedef struct {
    apr_array_header_t *agents;     /* const char *, lowercase tokens */
    apr_array_header_t *rules;      /* rule */
} group;

struct sm_robots_rules {
    apr_array_header_t *groups;     /* group */
};

static const char *trim(const char *s, const char *e, const char **end)
{
    while (s < e && (*s == ' ' || *s == '\t'))
        s++;
    while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
        e--;
    *end = e;
    return s;
}

static int unreserved(int c)
{
    return apr_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~';
}

static int hexval(int c)
{
    return c >= '0' && c <= '9' ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A pattern in the form stored URLs have (sm_url, RFC 3986 6.2.2):
 * escapes of unreserved characters decoded, other escapes uppercase,
 * non-ASCII bytes and blanks %-encoded. */
static const char *normalise(apr_pool_t *p, const char *s, apr_size_t n,
                             apr_size_t *outlen)
{
    char *out = apr_palloc(p, n * 3 + 1), *o = out;
    static const char hex[] = "0123456789ABCDEF";
    apr_size_t i;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int hi, lo;

        if (c == '%' && i + 2 < n && (hi = hexval(s[i + 1])) >= 0
            && (lo = hexval(s[i + 2])) >= 0) {
            int v = hi * 16 + lo;
            if (unreserved(v))
                *o++ = (char)v;
            else {
                *o++ = '%';
                *o++ = hex[hi];
                *o++ = hex[lo];
            }
            i += 2;
        }
        else if (c >= 0x80 || c <= ' ' || c == 0x7f) {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
        else
            *o++ = (char)c;
    }
    *o = '\0';
    *outlen = (apr_size_t)(o - out);
    return out;
}

static int key_is(const char *k, const char *ke, const char *name)
{
    apr_size_t n = strlen(name);

    return (apr_size_t)(ke - k) == n && strncasecmp(k, name, n) == 0;
}

sm_robots_rules *sm_robots_rules_parse(apr_pool_t *p, const char *body,
                                       apr_size_t len)
{
    sm_robots_rules *rr = apr_pcalloc(p, sizeof(*rr));
    const char *s = body, *end;
    group *g = NULL;
    int lineno = 0, in_agents = 0;

    rr->groups = apr_array_make(p, 4, sizeof(group));
    if (len > SM_ROBOTS_RULES_MAX)
        len = SM_ROBOTS_RULES_MAX;
    end = body + len;
    /* a UTF-8 byte order mark is not part of the first line */
    if (len >= 3 && !memcmp(s, "\xEF\xBB\xBF", 3))
        s += 3;
    while (s < end) {
        const char *eol = s, *hash, *colon, *k, *ke, *v, *ve;

        while (eol < end && *eol != '\n' && *eol != '\r')
            eol++;
        lineno++;
        hash = memchr(s, '#', (apr_size_t)(eol - s));
        ve = hash ? hash : eol;
        colon = memchr(s, ':', (apr_size_t)(ve - s));
        if (colon) {
            k = trim(s, colon, &ke);
            v = trim(colon + 1, ve, &ve);
            if (key_is(k, ke, "user-agent")) {
                const char *te = v;
                if (!in_agents || !g) {
                    g = apr_array_push(rr->groups);
                    g->agents = apr_array_make(p, 2, sizeof(char *));
                    g->rules = apr_array_make(p, 8, sizeof(rule));
                }
                while (te < ve && *te != ' ' && *te != '\t' && *te != '/')
                    te++;
                if (te > v) {
                    char *a = apr_pstrmemdup(p, v, (apr_size_t)(te - v)), *c;
                    for (c = a; *c; c++)
                        *c = (char)apr_tolower(*c);
                    APR_ARRAY_PUSH(g->agents, const char *) = a;
                }
                in_agents = 1;
            }
            else if (key_is(k, ke, "allow") || key_is(k, ke, "disallow")) {
                in_agents = 0;
                if (g && ve > v && (*v == '/' || *v == '*')) {
                    rule *r = apr_array_push(g->rules);
                    r->pattern = normalise(p, v, (apr_size_t)(ve - v),
                                           &r->len);
                    r->allow = key_is(k, ke, "allow");
                    r->line = lineno;
                }
            }
            else if (!key_is(k, ke, "sitemap"))
                in_agents = 0;      /* another field ends the UA lines */
        }
        /* CRLF is one line end */
        if (eol < end && *eol == '\r' && eol + 1 < end && eol[1] == '\n')
            eol++;
        s = eol + 1;
    }
    return rr;
}

/* Does pattern (with '*' and a final '$') match the start of s (all of s
 * with '$')?  Backtracks to the last '*' only: O(len(pattern) * len(s)). */
static int matches(const rule *r, const char *s)
{
    apr_size_t pl = r->len, sl = strlen(s), pi = 0, si = 0;
    apr_size_t star_pi = (apr_size_t)-1, star_si = 0;
    const char *pat = r->pattern;
    int anchored = pl && pat[pl - 1] == '$';

    if (anchored)
        pl--;
    for (;;) {
        if (pi == pl) {
            if (!anchored || si == sl)
                return 1;
        }
        else if (pat[pi] == '*') {
            star_pi = pi++;
            star_si = si;
            continue;
        }
        else if (si < sl && pat[pi] == s[si]) {
            pi++;
            si++;
            continue;
        }
        if (star_pi == (apr_size_t)-1 || star_si >= sl)
            return 0;
        pi = star_pi + 1;
        si = ++star_si;
    }
}

static int names(const group *g, const char *agent)
{
    int i;

    for (i = 0; i < g->agents->nelts; i++)
        if (strcmp(APR_ARRAY_IDX(g->agents, i, const char *), agent) == 0)
            return 1;
    return 0;
}

int sm_robots_disallows(const sm_robots_rules *rules, const char *agent,
                        const char *path_query, int *line)
{
    const rule *best = NULL;
    int i, j, specific = 0;

    /* The agent's own groups when there are any, else those of "*". */
    if (strcmp(agent, "*") != 0)
        for (i = 0; i < rules->groups->nelts && !specific; i++)
            specific = names(&APR_ARRAY_IDX(rules->groups, i, group), agent);
    for (i = 0; i < rules->groups->nelts; i++) {
        const group *g = &APR_ARRAY_IDX(rules->groups, i, group);

        if (!names(g, specific ? agent : "*"))
            continue;
        for (j = 0; j < g->rules->nelts; j++) {
            const rule *r = &APR_ARRAY_IDX(g->rules, j, rule);

            if (!matches(r, path_query))
                continue;
            if (!best || r->len > best->len
                || (r->len == best->len && r->allow && !best->allow))
                best = r;
        }
    }
    if (!best || best->allow)
        return 0;
    if (line)
        *line = best->line;
    return 1;
}

int sm_robots_disallows_any(const sm_robots_rules *rules,
                            const char *path_query, const char **agent,
                            int *line)
{
    int i;

    for (i = 0; sm_robots_agents[i]; i++)
        if (sm_robots_disallows(rules, sm_robots_agents[i], path_query,
                                line)) {
            if (agent)
                *agent = sm_robots_agents[i];
            return 1;
        }
    return 0;
}
