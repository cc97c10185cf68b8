/* SPDX-License-Identifier: Apache-2.0 */
/* sm_html_map.c: see sm_html_map.h. */
#include "serve/sm_html_map.h"
#include "head/sm_alternates.h"
#include "util/sm_html.h"
#include "serve/sm_sitemap.h"
#include "util/sm_url.h"

#include <apr_hash.h>
#include <apr_strings.h>
#include <stdlib.h>
#include <string.h>

/* Pages listed one by one in the navigation; more get first, previous,
 * next and last. */
#define NAV_ALL 30

int sm_html_locate(const sm_site_info *info, apr_int64_t n,
                   sm_html_page *out)
{
    apr_int64_t total = 0, first = (n - 1) * SM_HTML_LINKS;
    int i;

    memset(out, 0, sizeof(*out));
    out->number = n;
    for (i = 0; i < info->pages->nelts; i++) {
        const sm_page_info *pi = &APR_ARRAY_IDX(info->pages, i, sm_page_info);
        if (!out->store_page && n >= 1 && first < total + pi->url_count) {
            out->store_page = pi->page;
            out->skip = first - total;
        }
        total += pi->url_count;
    }
    out->total = total ? (total + SM_HTML_LINKS - 1) / SM_HTML_LINKS : 1;
    return n >= 1 && n <= out->total;
}

/* A URL of the slice, with its stored alternates (NULL: none). */
typedef struct {
    const char *url;
    const char *alternates;
} slice_url;

typedef struct {
    apr_pool_t *p;
    apr_int64_t skip, left;
    apr_array_header_t *urls;   /* slice_url */
    apr_size_t alt_bytes;       /* of the alternates kept */
    int alt_left_out;           /* some were not (SM_HTML_ALTERNATES_BYTES) */
} collect_ctx;

/* Keep the page's slice; rows not in the stored form are left out, as in
 * the XML (sm_document.c). */
static apr_status_t collect(void *baton, const char *url, apr_time_t lastmod,
                            const char *alternates)
{
    collect_ctx *c = baton;
    (void)lastmod;

    if (c->skip > 0) {
        c->skip--;
        return APR_SUCCESS;
    }
    if (c->left <= 0)
        return APR_EOF;     /* the slice is complete: stop reading */
    c->left--;
    if (sm_url_is_stored_form(url)) {
        slice_url *u = apr_array_push(c->urls);
        u->url = apr_pstrdup(c->p, url);
        u->alternates = NULL;
        if (alternates && *alternates) {
            apr_size_t len = strlen(alternates);
            if (len <= SM_HTML_ALTERNATES_BYTES - c->alt_bytes) {
                u->alternates = apr_pstrmemdup(c->p, alternates, len);
                c->alt_bytes += len;
            }
            else {
                c->alt_left_out = 1;
            }
        }
    }
    return APR_SUCCESS;
}

/* Does the path have a directory (a '/' after the first, before any
 * query)? */
static int in_dir(const char *url)
{
    const char *slash = strchr(url + 1, '/'), *q = strchr(url, '?');
    return slash && (!q || slash < q);
}

/* The top level's files first (one "Top level" section), then by path:
 * the URLs of a first segment are then side by side. */
static int by_path(const void *a, const void *b)
{
    const char *x = ((const slice_url *)a)->url;
    const char *y = ((const slice_url *)b)->url;
    int dx = in_dir(x), dy = in_dir(y);
    return dx != dy ? dx - dy : strcmp(x, y);
}

/* The directory segments of a stored path ("/a/b/c?q" -> "a", "b"; the
 * query is part of the leaf). */
static int dir_segments(apr_pool_t *p, const char *url, const char **segs,
                        int room)
{
    const char *end = strchr(url, '?');
    const char *s = url + 1, *slash;
    int n = 0;

    if (!end)
        end = url + strlen(url);
    while (n < room && (slash = memchr(s, '/', (apr_size_t)(end - s)))) {
        segs[n++] = apr_pstrmemdup(p, s, (apr_size_t)(slash - s));
        s = slash + 1;
    }
    return n;
}

#define MAX_DEPTH 32

typedef struct {
    sm_xml_writer *w;
    const sm_html_site *site;
    const char *open[MAX_DEPTH];    /* the nested lists open in a section */
    int depth;
    const char *section;            /* NULL: none open */
    int sections;
    apr_hash_t *titles;             /* url -> const char ** of the slice */
    apr_pool_t *scratch;            /* a link's alternates, read and
                                       written, then cleared */
} tree;

static void out(tree *t, const char *s) { sm_xml_raw(t->w, s); }
static void text(tree *t, const char *s) { sm_xml_text(t->w, s); }

/* A stored path or segment as text: its UTF-8 decoded (sm_url_shown). */
static void shown(tree *t, const char *s)
{
    text(t, sm_url_shown(t->scratch, s));
    apr_pool_clear(t->scratch);         /* the writer has copied it */
}

static void close_to(tree *t, int depth)
{
    while (t->depth > depth) {
        out(t, "</ul></li>\n");
        t->depth--;
    }
}

static void close_section(tree *t)
{
    if (!t->section)
        return;
    close_to(t, 0);
    out(t, "</ul>\n</section>\n");
    t->section = NULL;
}

static void open_section(tree *t, const char *name)
{
    char id[32];

    close_section(t);
    apr_snprintf(id, sizeof(id), "s%d", ++t->sections);
    out(t, "<section aria-labelledby=\"");
    out(t, id);
    out(t, "\">\n<h2 id=\"");
    out(t, id);
    out(t, "\">");
    if (*name) {
        out(t, "/");
        shown(t, name);
        out(t, "/");
    }
    else {
        out(t, "Top level");
    }
    out(t, "</h2>\n<ul>\n");
    t->section = name;
}

/* A page's other languages (its hreflang alternates, as the XML lists
 * them, but for the page itself, self_href: search engines want it
 * among its own alternates, people want only the others): "also in"
 * links labelled with their language tags, marked with hreflang (and
 * lang, but for x-default, the page for no language in particular:
 * labelled "default"). */
static void alternates_of(tree *t, const char *stored, const char *self_href)
{
    apr_array_header_t *alts;
    int i, shown_n = 0;

    sm_alternates_parse(t->scratch, stored, &alts);
    for (i = 0; i < alts->nelts; i++) {
        const sm_alternate *a = &APR_ARRAY_IDX(alts, i, sm_alternate);
        int dflt = strcmp(a->hreflang, "x-default") == 0;
        if (strcmp(a->href, self_href) == 0)
            continue;
        out(t, shown_n++ ? ", <a href=\""
                         : " <small class=\"alternates\">also in <a href=\"");
        text(t, a->href);
        out(t, "\" hreflang=\"");
        text(t, a->hreflang);
        if (!dflt) {
            out(t, "\" lang=\"");
            text(t, a->hreflang);
        }
        out(t, "\">");
        text(t, dflt ? "default" : a->hreflang);
        out(t, "</a>");
    }
    if (shown_n)
        out(t, "</small>");
    apr_pool_clear(t->scratch);       /* the writer has copied them */
}

static void link_to(tree *t, const slice_url *u)
{
    const char **slot = apr_hash_get(t->titles, u->url, APR_HASH_KEY_STRING);
    const char *title = slot && *slot && **slot ? *slot : NULL;

    out(t, "<li><a href=\"");
    text(t, t->site->base);
    text(t, u->url);
    out(t, "\">");
    if (title)
        text(t, title);
    else
        shown(t, u->url);
    out(t, "</a>");
    if (u->alternates)
        alternates_of(t, u->alternates,
                      apr_pstrcat(t->scratch, t->site->base, u->url, NULL));
    out(t, "</li>\n");
}

static void tree_add(apr_pool_t *p, tree *t, const slice_url *u)
{
    const char *url = u->url;
    const char *segs[MAX_DEPTH + 1];
    int n = dir_segments(p, url, segs, MAX_DEPTH + 1), i, common = 0;
    const char *section = n ? segs[0] : "";

    if (!t->section || strcmp(t->section, section) != 0)
        open_section(t, section);
    /* Lists below the section: segs[1..n-1]. */
    for (i = 1; i < n && common < t->depth
                && strcmp(t->open[common], segs[i]) == 0; i++)
        common++;
    close_to(t, common);
    for (i = common + 1; i < n && t->depth < MAX_DEPTH; i++) {
        out(t, "<li><span class=\"dir\">");
        shown(t, segs[i]);
        out(t, "/</span><ul>\n");
        t->open[t->depth++] = segs[i];
    }
    link_to(t, u);
}

static const char *page_path(apr_pool_t *p, const sm_html_site *site,
                             apr_int64_t n)
{
    return n == 1 ? site->html_path : sm_page_path(p, site->html_path, n);
}

static void nav_item(apr_pool_t *p, tree *t, const sm_html_page *page,
                     apr_int64_t n, const char *label)
{
    char num[24];

    if (!label) {
        apr_snprintf(num, sizeof(num), "%" APR_INT64_T_FMT, n);
        label = num;
    }
    if (n == page->number) {
        out(t, "<span aria-current=\"page\">");
        out(t, label);
        out(t, "</span>\n");
        return;
    }
    out(t, "<a href=\"");
    text(t, page_path(p, t->site, n));
    out(t, "\">");
    out(t, label);
    out(t, "</a>\n");
}

static void nav(apr_pool_t *p, tree *t, const sm_html_page *page)
{
    apr_int64_t n;

    if (page->total < 2)
        return;
    out(t, "<nav class=\"pages\" aria-label=\"Pages of the site map\">\n");
    if (page->total <= NAV_ALL) {
        for (n = 1; n <= page->total; n++)
            nav_item(p, t, page, n, NULL);
    }
    else {
        nav_item(p, t, page, 1, "First");
        if (page->number > 1)
            nav_item(p, t, page, page->number - 1, "Previous");
        nav_item(p, t, page, page->number, NULL);
        if (page->number < page->total)
            nav_item(p, t, page, page->number + 1, "Next");
        nav_item(p, t, page, page->total, "Last");
    }
    out(t, "</nav>\n");
}

/* Titles of the slice's URLs only: a store page has up to 50,000. */
typedef struct {
    apr_pool_t *p;
    apr_hash_t *slice;              /* url -> const char ** */
} title_ctx;

static apr_status_t keep_title(void *baton, const char *url,
                               const char *title)
{
    title_ctx *tc = baton;
    const char **slot = apr_hash_get(tc->slice, url, APR_HASH_KEY_STRING);

    if (slot)
        *slot = apr_pstrdup(tc->p, title);
    return APR_SUCCESS;
}

/* The stored titles of the slice c->urls, read from the store pages it
 * was cut from (first .. last). */
static apr_status_t read_titles(apr_pool_t *p, sm_store *st,
                                const sm_html_site *site,
                                const collect_ctx *c, apr_int64_t first,
                                apr_int64_t last, apr_hash_t **out)
{
    title_ctx tc = { p, apr_hash_make(p) };
    apr_status_t rv = APR_SUCCESS;
    apr_int64_t n;
    int i;

    for (i = 0; i < c->urls->nelts; i++)
        apr_hash_set(tc.slice, APR_ARRAY_IDX(c->urls, i, slice_url).url,
                     APR_HASH_KEY_STRING, apr_pcalloc(p, sizeof(char *)));
    *out = tc.slice;
    for (n = first; c->urls->nelts && n <= last && rv == APR_SUCCESS; n++)
        rv = sm_store_page_titles(st, site->base, n, keep_title, &tc);
    return rv == APR_ENOTIMPL ? APR_SUCCESS : rv;
}

apr_status_t sm_html_write(apr_pool_t *p, sm_store *st,
                           const sm_html_site *site, const sm_site_info *info,
                           const sm_html_page *page, sm_xml_sink *sink,
                           void *baton)
{
    collect_ctx c;
    tree t;
    char heading[160];
    apr_status_t rv = APR_SUCCESS;
    apr_int64_t last = 0;
    int i;

    memset(&t, 0, sizeof(t));
    t.w = sm_xml_writer_create(p, sink, baton);
    t.site = site;
    if ((rv = apr_pool_create(&t.scratch, p)) != APR_SUCCESS)
        return rv;
    c.p = p;
    c.skip = page->skip;
    c.left = SM_HTML_LINKS;
    c.urls = apr_array_make(p, 64, sizeof(slice_url));
    c.alt_bytes = 0;
    c.alt_left_out = 0;
    /* From the first page's skip on, through the next pages until the
     * slice is full. */
    for (i = 0; page->store_page && i < info->pages->nelts && c.left > 0;
         i++) {
        apr_int64_t n = APR_ARRAY_IDX(info->pages, i, sm_page_info).page;
        if (n < page->store_page)
            continue;
        last = n;
        rv = sm_store_page_urls(st, site->base, n, collect, &c);
        if (rv == APR_EOF)
            rv = APR_SUCCESS;
        if (rv != APR_SUCCESS)
            return rv;
    }
    if ((rv = read_titles(p, st, site, &c, page->store_page, last,
                          &t.titles)) != APR_SUCCESS)
        return rv;
    if (c.urls->nelts) {
        qsort(c.urls->elts, (size_t)c.urls->nelts, sizeof(slice_url),
              by_path);
    }

    heading[0] = '\0';
    if (page->total > 1)
        apr_snprintf(heading, sizeof(heading), " (page %" APR_INT64_T_FMT
                     " of %" APR_INT64_T_FMT ")", page->number, page->total);
    out(&t, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
            "<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, "
            "initial-scale=1\">\n<title>Site map of ");
    text(&t, site->server_name ? site->server_name : site->base);
    out(&t, heading);
    out(&t, "</title>\n");
    if (page->number == 1) {
        out(&t, "<link rel=\"canonical\" href=\"");
        text(&t, site->base);
        text(&t, site->html_path);
        out(&t, "\">\n");
    }
    if (site->stylesheet) {
        out(&t, "<link rel=\"stylesheet\" href=\"");
        text(&t, site->stylesheet);
        out(&t, "\">\n");
    }
    out(&t, "</head>\n<body class=\"sitemap-html\">\n<header>\n"
            "<h1>Site map</h1>\n<p>The pages of <a href=\"");
    text(&t, site->base);
    out(&t, "/\">");
    text(&t, site->base);
    out(&t, "</a>");
    out(&t, heading);
    out(&t, ".</p>\n");
    nav(p, &t, page);
    out(&t, "</header>\n<main>\n");
    if (!c.urls->nelts)
        out(&t, "<p>No page has been recorded yet.</p>\n");
    for (i = 0; i < c.urls->nelts; i++)
        tree_add(p, &t, &APR_ARRAY_IDX(c.urls, i, slice_url));
    close_section(&t);
    if (c.alt_left_out)
        out(&t, "<p>Some pages' other languages are not shown here (too "
                "many for one page); the XML sitemap lists them all.</p>\n");
    out(&t, "</main>\n<footer>\n<p>Made by mod_sitemap from the pages "
            "this server has served.</p>\n</footer>\n</body>\n</html>\n");
    return sm_xml_flush(t.w);
}
