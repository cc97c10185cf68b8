/* SPDX-License-Identifier: Apache-2.0 */
/* sm_robots.c: see sm_robots.h. */
#include "serve/sm_robots.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <apr_uri.h>
#include <string.h>

/* Longer lines cannot be a Sitemap line for one of our URLs (at most 2,048
 * characters each), so only their start is kept. */
#define LINE_MAX_KEEP 4096
#define URL_MAX 2048

static const char BOM[] = "\xEF\xBB\xBF";

struct sm_robots {
    const apr_array_header_t *urls;
    char *present;          /* one flag per URL */
    char line[LINE_MAX_KEEP];
    apr_size_t line_len;
    int line_too_long;
    apr_size_t fed;         /* body bytes so far */
    int bom;                /* the body starts with a byte order mark:
                               1, or -1 once a byte differs, 0 until
                               known */
    int at_line_start;      /* the last byte was '\n' (or nothing yet) */
    int crlf;               /* the last line ended with CRLF */
    int first_crlf;         /* the first line did (-1: not ended yet) */
    int prev_cr;
};

sm_robots *sm_robots_create(apr_pool_t *p, const apr_array_header_t *urls)
{
    sm_robots *rb = apr_pcalloc(p, sizeof(*rb));
    rb->urls = urls;
    rb->present = apr_pcalloc(p, urls->nelts ? urls->nelts : 1);
    rb->at_line_start = 1;
    rb->first_crlf = -1;
    return rb;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* "sitemap:URL" with blanks where every parser allows them (see
 * sm_robots_tail): mark URL present. */
static void check_line(sm_robots *rb)
{
    const char *s = rb->line, *end = rb->line + rb->line_len;
    int i;

    /* (A byte order mark before the first line is left in it: no
     * match.) */
    if (rb->line_too_long)
        return;
    while (s < end && is_blank(*s))
        s++;
    if (end - s < 8 || strncasecmp(s, "sitemap:", 8) != 0)
        return;
    s += 8;
    while (s < end && is_blank(*s))
        s++;
    while (end > s && (is_blank(end[-1]) || end[-1] == '\r'))
        end--;
    for (i = 0; i < rb->urls->nelts; i++) {
        const char *url = APR_ARRAY_IDX(rb->urls, i, const char *);
        if (strlen(url) == (apr_size_t)(end - s)
            && memcmp(url, s, end - s) == 0)
            rb->present[i] = 1;
    }
}

void sm_robots_feed(sm_robots *rb, const char *data, apr_size_t len)
{
    const char *end = data + len;
    apr_size_t i;

    /* The first three bytes of the body, in whatever pieces they come: a
     * byte that differs settles it, whatever the pieces after it hold. */
    for (i = 0; rb->bom == 0 && rb->fed + i < 3 && i < len; i++)
        if (data[i] != BOM[rb->fed + i])
            rb->bom = -1;
    if (rb->bom == 0 && rb->fed + i == 3)
        rb->bom = 1;
    rb->fed += len;
    while (data < end) {
        const char *nl = memchr(data, '\n', end - data);
        const char *stop = nl ? nl : end;
        apr_size_t n = stop - data;

        if (rb->line_len + n > LINE_MAX_KEEP) {
            rb->line_too_long = 1;
            n = LINE_MAX_KEEP - rb->line_len;
        }
        memcpy(rb->line + rb->line_len, data, n);
        rb->line_len += n;
        if (stop > data)
            rb->prev_cr = stop[-1] == '\r';
        if (!nl) {
            rb->at_line_start = 0;
            return;
        }
        rb->crlf = rb->prev_cr;
        if (rb->first_crlf < 0)
            rb->first_crlf = rb->crlf;
        check_line(rb);
        rb->line_len = 0;
        rb->line_too_long = 0;
        rb->prev_cr = 0;
        rb->at_line_start = 1;
        data = nl + 1;
    }
}

/* "Sitemap: URL" + eol for every URL not present. */
static apr_array_header_t *missing_lines(sm_robots *rb, apr_pool_t *p,
                                         const char *eol)
{
    apr_array_header_t *parts = apr_array_make(p, 8, sizeof(char *));
    int i;

    for (i = 0; i < rb->urls->nelts; i++) {
        if (rb->present[i])
            continue;
        APR_ARRAY_PUSH(parts, const char *) =
            apr_pstrcat(p, "Sitemap: ", APR_ARRAY_IDX(rb->urls, i,
                                                      const char *), eol,
                        NULL);
    }
    return parts;
}

const char *sm_robots_tail(sm_robots *rb, apr_pool_t *p, apr_size_t *len)
{
    const char *eol = rb->crlf ? "\r\n" : "\n";
    apr_array_header_t *parts;
    const char *out;

    if (!rb->at_line_start) {
        /* The last line has no line end: it still counts. */
        check_line(rb);
        rb->line_len = 0;
    }
    parts = missing_lines(rb, p, eol);
    out = apr_array_pstrcat(p, parts, '\0');
    if (*out && rb->fed && !rb->at_line_start)
        out = apr_pstrcat(p, eol, out, NULL);       /* the line end first */
    *len = strlen(out);
    return out;
}

const char *sm_robots_head(sm_robots *rb, apr_pool_t *p, apr_size_t *len,
                           apr_size_t *offset)
{
    const char *eol = rb->first_crlf == 1 ? "\r\n" : "\n";
    const char *out = apr_array_pstrcat(p, missing_lines(rb, p, eol), '\0');

    *offset = 0;
    if (rb->bom == 1) {
        /* urllib and Protego keep the BOM as part of the first line's
         * field name: give it a line of its own. */
        *offset = 3;
        if (*out)
            out = apr_pstrcat(p, eol, out, NULL);
    }
    *len = strlen(out);
    return out;
}

/* The characters RFC 3986 allows in a URI, '%' aside (checked with its two
 * hex digits) and '#' aside (a comment in robots.txt). */
static int uri_char(unsigned char c)
{
    return apr_isalnum(c) || (c < 0x80 && strchr("-._~:/?[]@!$&'()*+,;=", c)
                              && c != '\0');
}

const char *sm_robots_url_problem(apr_pool_t *p, const char *url)
{
    apr_uri_t uri;
    const unsigned char *c;

    if (strlen(url) > URL_MAX)
        return "it is longer than 2,048 characters";
    for (c = (const unsigned char *)url; *c; c++) {
        if (*c == '#')
            return "'#' starts a comment in robots.txt (and a fragment has "
                   "no place in a sitemap URL)";
        if (*c == '%') {
            if (!apr_isxdigit(c[1]) || !apr_isxdigit(c[2]))
                return "'%' must start a %-escape of two hex digits";
            continue;
        }
        if (!uri_char(*c))
            return apr_psprintf(p, "the character 0x%02X is not allowed in a "
                                "URL (spaces, control characters, non-ASCII "
                                "characters and \"<>\\^`{|} must be "
                                "%%-encoded)", *c);
    }
    if (apr_uri_parse(p, url, &uri) != APR_SUCCESS || !uri.scheme
        || !uri.hostname || !*uri.hostname
        || (strcasecmp(uri.scheme, "http") && strcasecmp(uri.scheme, "https")))
        return "it is not an absolute http:// or https:// URL with a host";
    return NULL;
}
