/* SPDX-License-Identifier: Apache-2.0 */
/* sm_crawl.c: the crawler list (SitemapCrawler), the pre-check every
 * request passes, the User-Agent patterns and the verification of a
 * claim.
 *
 * Every pattern's matches hold a literal (the longest run of plain
 * characters outside groups, classes and optional parts:
 * sm_crawl_required_literal, here); the pre-check looks for pieces of
 * them (sm_crawl_precheck.c).  A crawler whose pattern has no literal of
 * 2 bytes or more (an alternation at the top: "Google(?:bot|Other)" is
 * fine, "Googlebot|Slurp" is not) turns the pre-check off: every request
 * then runs the patterns. */
#include "crawl/sm_crawl_int.h"

#include <apr_lib.h>
#include <apr_strings.h>

#include <string.h>

#define LITERAL_MAX 255

/* ---- the literal a pattern's matches hold ------------------------------- */

/* Past a character class starting at s ('['); NULL when unterminated. */
static const char *skip_class(const char *s)
{
    s++;
    if (*s == '^')
        s++;
    if (*s == ']')
        s++;
    for (; *s; s++) {
        if (*s == '\\') {
            if (!*++s)
                return NULL;
        }
        else if (*s == '[' && s[1] == ':') {
            const char *e = strstr(s + 2, ":]");
            if (!e)
                return NULL;
            s = e + 1;
        }
        else if (*s == ']')
            return s + 1;
    }
    return NULL;
}

/* Past a group starting at s ('('); NULL when unbalanced, or when it is
 * one whose text does not read as the rest (a comment, an option that
 * changes how whitespace reads, a verb). */
static const char *skip_group(const char *s)
{
    int depth = 0;

    for (; *s; s++) {
        if (*s == '\\') {
            if (!*++s)
                return NULL;
        }
        else if (*s == '[') {
            if (!(s = skip_class(s)))
                return NULL;
            s--;
        }
        else if (*s == '(') {
            if (s[1] == '*' || (s[1] == '?' && s[2] == '#'))
                return NULL;
            if (s[1] == '?') {
                const char *f = s + 2;
                for (; *f && *f != ':' && *f != ')'; f++)
                    if (*f == 'x')
                        return NULL;
            }
            depth++;
        }
        else if (*s == ')' && --depth == 0)
            return s + 1;
    }
    return NULL;
}

typedef struct {
    char run[LITERAL_MAX + 1], best[LITERAL_MAX + 1];
    apr_size_t rl, bl;
} lit;

static void flush(lit *l)
{
    if (l->rl > l->bl) {
        memcpy(l->best, l->run, l->rl);
        l->bl = l->rl;
    }
    l->rl = 0;
}

static void append(lit *l, char c)
{
    if (l->rl == LITERAL_MAX)
        flush(l);
    l->run[l->rl++] = (char)apr_tolower(c);
}

/* Escapes that match one character of a class or a position and change
 * nothing after them; any other (\Q, \c, \x, \g, back references...) makes
 * the literal unknown. */
static const char plain_escapes[] = "dDwWsSbBAzZGhHvVR";

const char *sm_crawl_required_literal(apr_pool_t *p, const char *pat)
{
    lit l;
    const char *s = pat;

    l.rl = l.bl = 0;
    if (!pat || (pat[0] == '(' && pat[1] == '*'))
        return "";
    while (*s) {
        unsigned char c = (unsigned char)*s;

        if (c == '|' || c == ')')
            return "";
        if (c == '\\') {
            unsigned char n = (unsigned char)s[1];
            if (!n || n >= 0x80)
                return "";
            if (apr_isalnum(n)) {
                if (!strchr(plain_escapes, n))
                    return "";
                flush(&l);
            }
            else
                append(&l, (char)n);
            s += 2;
            continue;
        }
        if (c == '(' || c == '[') {
            flush(&l);
            if (!(s = c == '(' ? skip_group(s) : skip_class(s)))
                return "";
            continue;
        }
        if (c == '?' || c == '*' || c == '{') {
            /* The character before is optional (or counted: "{0,"). */
            if (l.rl)
                l.rl--;
            flush(&l);
            if (c == '{') {
                const char *e = s + 1;
                while (apr_isdigit(*e) || *e == ',' || *e == ' ')
                    e++;
                if (*e == '}')
                    s = e;
            }
            s++;
            continue;
        }
        if (c == '+' || c == '.' || c == '^' || c == '$' || c < 0x20
            || c >= 0x80) {
            flush(&l);
            s++;
            continue;
        }
        append(&l, (char)c);
        s++;
    }
    flush(&l);
    return apr_pstrmemdup(p, l.best, l.bl);
}

/* ---- the list and the directive ------------------------------------------ */

sm_crawl_list *sm_crawl_list_make(apr_pool_t *p)
{
    sm_crawl_list *l = apr_pcalloc(p, sizeof(*l));

    l->crawlers = apr_array_make(p, 4, sizeof(sm_crawler));
    sm_crawl_choose_needles(l);
    return l;
}

int sm_crawl_count(const sm_crawl_list *l)
{
    return l ? l->crawlers->nelts : 0;
}

const sm_crawler *sm_crawl_get(const sm_crawl_list *l, int i)
{
    return &APR_ARRAY_IDX(l->crawlers, i, sm_crawler);
}

/* A host name suffix: two labels or more of letters, digits and '-'. */
static int valid_suffix(const char *s)
{
    apr_size_t len = strlen(s), label = 0;
    int labels = 1;

    if (len == 0 || len > 253 || s[0] == '.' || s[len - 1] == '.')
        return 0;
    for (; *s; s++) {
        if (*s == '.') {
            if (label == 0 || s[-1] == '-')
                return 0;
            labels++;
            label = 0;
        }
        else if (apr_isalnum(*s) || (*s == '-' && label > 0)) {
            if (++label > 63)
                return 0;
        }
        else
            return 0;
    }
    return labels >= 2 && s[-1] != '-';
}

static const char *add_source(apr_pool_t *p, sm_crawler *c, const char *arg)
{
    sm_crawl_source *src = apr_array_push(c->sources);

    memset(src, 0, sizeof(*src));
    if (strncmp(arg, "dns:", 4) == 0) {
        char *list = apr_pstrdup(p, arg + 4), *last, *tok;

        src->suffixes = apr_array_make(p, 2, sizeof(const char *));
        for (tok = apr_strtok(list, ",", &last); tok;
             tok = apr_strtok(NULL, ",", &last)) {
            if (!valid_suffix(tok) || src->suffixes->nelts
                                      >= SM_CRAWL_SUFFIXES_MAX)
                return apr_psprintf(p, "SitemapCrawler %s: '%s' is not "
                                    "allowed: dns: takes up to %d host name "
                                    "suffixes of two labels or more, "
                                    "separated by commas "
                                    "(dns:googlebot.com,google.com)",
                                    c->name, arg, SM_CRAWL_SUFFIXES_MAX);
            APR_ARRAY_PUSH(src->suffixes, const char *) =
                apr_pstrdup(p, tok);
        }
        if (!src->suffixes->nelts || strstr(arg + 4, ",,")
            || arg[strlen(arg) - 1] == ',')
            return apr_psprintf(p, "SitemapCrawler %s: '%s' is not allowed: "
                                "dns: takes host name suffixes separated by "
                                "commas (dns:googlebot.com,google.com)",
                                c->name, arg);
        return NULL;
    }
    if (arg[0] != '/' || strlen(arg) > 4096)
        return apr_psprintf(p, "SitemapCrawler %s: '%s' is not allowed: a "
                            "source is dns:SUFFIX[,SUFFIX...] or the absolute "
                            "path of a JSON file of address ranges",
                            c->name, arg);
    src->path = apr_pstrdup(p, arg);
    return NULL;
}

const char *sm_crawl_add(sm_crawl_list *l, apr_pool_t *p, int argc,
                         char *const *argv)
{
    sm_crawler *c;
    const char *err, *name;
    int i;

    if (argc < 3)
        return "SitemapCrawler takes a name, a User-Agent pattern and one "
               "source or more (dns:SUFFIX[,SUFFIX...] or the path of a JSON "
               "file of address ranges)";
    name = argv[0];
    for (i = 0; name[i]; i++)
        if (!apr_isalnum(name[i]) && name[i] != '-' && name[i] != '_')
            break;
    if (i == 0 || name[i] || i > SM_CRAWL_NAME_MAX)
        return apr_psprintf(p, "SitemapCrawler: '%s' is not allowed: a name "
                            "is 1 to %d letters, digits, '-' or '_'", name,
                            SM_CRAWL_NAME_MAX);
    for (i = 0; i < l->crawlers->nelts; i++)
        if (strcasecmp(sm_crawl_get(l, i)->name, name) == 0)
            return apr_psprintf(p, "SitemapCrawler: '%s' is not allowed: "
                                "that name is taken already (names are "
                                "compared case-insensitively)", name);
    if (l->crawlers->nelts >= SM_CRAWL_MAX)
        return apr_psprintf(p, "SitemapCrawler: '%s' is not allowed: at most "
                            "%d crawlers", name, SM_CRAWL_MAX);
    if (argc - 2 > SM_CRAWL_SOURCES_MAX)
        return apr_psprintf(p, "SitemapCrawler %s: %d sources is not "
                            "allowed: at most %d", name, argc - 2,
                            SM_CRAWL_SOURCES_MAX);
    if (!argv[1][0])
        return apr_psprintf(p, "SitemapCrawler %s: '' is not allowed: the "
                            "User-Agent pattern must not be empty", name);

    c = apr_array_push(l->crawlers);
    memset(c, 0, sizeof(*c));
    c->name = apr_pstrdup(p, name);
    c->pattern = apr_pstrdup(p, argv[1]);
    c->sources = apr_array_make(p, argc - 2, sizeof(sm_crawl_source));
    if (!(c->ua = sm_regex_compile_caseless(p, c->pattern, &err))) {
        l->crawlers->nelts--;
        return apr_psprintf(p, "SitemapCrawler %s: the User-Agent pattern "
                            "is not allowed: a regular expression (PCRE, "
                            "matched case-insensitively) is: %s", name, err);
    }
    for (i = 2; i < argc; i++)
        if ((err = add_source(p, c, argv[i])) != NULL) {
            l->crawlers->nelts--;
            return err;
        }
    c->literal = sm_crawl_required_literal(p, c->pattern);
    sm_crawl_choose_needles(l);
    return NULL;
}

const char *sm_crawl_list_open(sm_crawl_list *l, apr_pool_t *p,
                               apr_time_t now)
{
    int i, j;

    for (i = 0; i < l->crawlers->nelts; i++) {
        sm_crawler *c = &APR_ARRAY_IDX(l->crawlers, i, sm_crawler);
        for (j = 0; j < c->sources->nelts; j++) {
            sm_crawl_source *s = &APR_ARRAY_IDX(c->sources, j,
                                                sm_crawl_source);
            const char *err = NULL;
            if (!s->path || s->file)
                continue;
            if (!(s->file = sm_crawl_file_open(p, s->path, now, &err)))
                return apr_psprintf(p, "SitemapCrawler %s: %s", c->name,
                                    err);
        }
    }
    return NULL;
}

void sm_crawl_list_refresh(sm_crawl_list *l, apr_pool_t *p, apr_time_t now,
                           apr_array_header_t *errs)
{
    int i, j;

    for (i = 0; i < l->crawlers->nelts; i++) {
        sm_crawler *c = &APR_ARRAY_IDX(l->crawlers, i, sm_crawler);
        for (j = 0; j < c->sources->nelts; j++) {
            sm_crawl_source *s = &APR_ARRAY_IDX(c->sources, j,
                                                sm_crawl_source);
            const char *err = NULL;
            if (s->file && sm_crawl_file_refresh(s->file, p, now, &err))
                APR_ARRAY_PUSH(errs, const char *) =
                    apr_psprintf(p, "SitemapCrawler %s: %s (the ranges read "
                                 "before are kept)", c->name, err);
        }
    }
}

const sm_crawler *sm_crawl_match(const sm_crawl_list *l, const char *ua)
{
    int i;

    if (!ua)
        return NULL;
    for (i = 0; i < l->crawlers->nelts; i++) {
        const sm_crawler *c = sm_crawl_get(l, i);
        if (sm_regex_match(c->ua, ua))
            return c;
    }
    return NULL;
}

sm_crawl_result sm_crawl_verify(const sm_crawler *c, sm_crawl_dns *dns,
                                const apr_sockaddr_t *sa, apr_time_t now)
{
    sm_crawl_result res = SM_CRAWL_UNVERIFIED;
    char addr[64];
    int i, have_text = 0;

    for (i = 0; i < c->sources->nelts; i++) {
        const sm_crawl_source *s = &APR_ARRAY_IDX(c->sources, i,
                                                  sm_crawl_source);
        if (s->file) {
            if (sm_crawl_file_has(s->file, sa))
                return SM_CRAWL_VERIFIED;
            continue;
        }
        if (!s->suffixes)
            continue;
        if (!dns) {
            res = SM_CRAWL_PENDING;
            continue;
        }
        if (!have_text) {
            if (apr_sockaddr_ip_getbuf(addr, sizeof(addr),
                                       (apr_sockaddr_t *)sa) != APR_SUCCESS)
                continue;
            /* A v4-mapped address is looked up as the IPv4 one. */
            if (strncasecmp(addr, "::ffff:", 7) == 0 && strchr(addr, '.'))
                memmove(addr, addr + 7, strlen(addr + 7) + 1);
            have_text = 1;
        }
        switch (sm_crawl_dns_check(dns, addr, s->suffixes, now)) {
        case SM_CRAWL_VERIFIED:
            return SM_CRAWL_VERIFIED;
        case SM_CRAWL_PENDING:
            res = SM_CRAWL_PENDING;
            break;
        default:
            break;
        }
    }
    return res;
}
