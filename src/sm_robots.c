/* sm_robots.c: see sm_robots.h. */
#include "sm_robots.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <string.h>

/* Longer lines cannot be a Sitemap line for one of our URLs (at most 2,048
 * characters each), so only their start is kept. */
#define LINE_MAX_KEEP 4096

struct sm_robots {
    const apr_array_header_t *urls;
    char *present;          /* one flag per URL */
    char line[LINE_MAX_KEEP];
    apr_size_t line_len;
    int line_too_long;
    int bytes_seen;         /* the body is not empty */
    int at_line_start;      /* the last byte was '\n' (or nothing yet) */
    int crlf;               /* the last line ended with CRLF */
    int prev_cr;
    int first_line;         /* to skip a UTF-8 byte order mark */
};

sm_robots *sm_robots_create(apr_pool_t *p, const apr_array_header_t *urls)
{
    sm_robots *rb = apr_pcalloc(p, sizeof(*rb));
    rb->urls = urls;
    rb->present = apr_pcalloc(p, urls->nelts ? urls->nelts : 1);
    rb->at_line_start = 1;
    rb->first_line = 1;
    return rb;
}

/* "Sitemap : URL" in any case: mark URL present. */
static void check_line(sm_robots *rb)
{
    const char *s = rb->line, *end = rb->line + rb->line_len;
    int i;

    if (rb->first_line && end - s >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
        s += 3;
    rb->first_line = 0;
    if (rb->line_too_long)
        return;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    if (end - s < 8 || strncasecmp(s, "sitemap", 7) != 0)
        return;
    s += 7;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    if (s == end || *s != ':')
        return;
    s++;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
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

    if (!len)
        return;
    rb->bytes_seen = 1;
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
        check_line(rb);
        rb->line_len = 0;
        rb->line_too_long = 0;
        rb->prev_cr = 0;
        rb->at_line_start = 1;
        data = nl + 1;
    }
}

const char *sm_robots_tail(sm_robots *rb, apr_pool_t *p, apr_size_t *len)
{
    const char *eol = rb->crlf ? "\r\n" : "\n";
    apr_array_header_t *parts = apr_array_make(p, 8, sizeof(char *));
    const char *out;
    int i;

    if (!rb->at_line_start) {
        /* The last line has no line end: it still counts. */
        check_line(rb);
        rb->line_len = 0;
    }
    for (i = 0; i < rb->urls->nelts; i++) {
        if (rb->present[i])
            continue;
        APR_ARRAY_PUSH(parts, const char *) =
            apr_pstrcat(p, "Sitemap: ", APR_ARRAY_IDX(rb->urls, i,
                                                      const char *), eol,
                        NULL);
    }
    if (parts->nelts && rb->bytes_seen && !rb->at_line_start) {
        /* Put the line end first. */
        APR_ARRAY_PUSH(parts, const char *) = NULL;
        memmove(parts->elts + sizeof(char *), parts->elts,
                (parts->nelts - 1) * sizeof(char *));
        APR_ARRAY_IDX(parts, 0, const char *) = eol;
    }
    out = apr_array_pstrcat(p, parts, '\0');
    *len = strlen(out);
    return out;
}
