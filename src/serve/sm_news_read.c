/* SPDX-License-Identifier: Apache-2.0 */
/* sm_news_read.c: the rows of the news sitemap and llms.txt read from a
 * store into the items sm_news_write and sm_llms_write take, and
 * llms.txt's title: the same for the module and sitemapctl export. */
#include "serve/sm_news.h"
#include "store/sm_store.h"

#include <apr_strings.h>

#include <string.h>

typedef struct {
    apr_pool_t *p;
    apr_array_header_t *items;
    sm_llms_item *filler;
} rows;

static apr_status_t news_row(void *baton, const char *url, const char *title,
                             apr_time_t published)
{
    rows *r = baton;
    sm_news_item *it = apr_array_push(r->items);

    it->url = apr_pstrdup(r->p, url);
    it->title = title ? apr_pstrdup(r->p, title) : NULL;
    it->published = published;
    return APR_SUCCESS;
}

static apr_status_t llms_row(void *baton, const char *url, const char *title,
                             const char *description, apr_time_t lastmod)
{
    rows *r = baton;
    sm_llms_item *it = apr_array_push(r->items);

    it->url = apr_pstrdup(r->p, url);
    it->title = title ? apr_pstrdup(r->p, title) : NULL;
    it->description = description ? apr_pstrdup(r->p, description) : NULL;
    it->lastmod = lastmod;
    return APR_SUCCESS;
}

/* The first row only: the news sitemap's stand-in page. */
static apr_status_t filler_row(void *baton, const char *url,
                               const char *title, const char *description,
                               apr_time_t lastmod)
{
    rows *r = baton;
    (void)title;
    (void)description;
    if (!r->filler->url) {
        r->filler->url = apr_pstrdup(r->p, url);
        r->filler->lastmod = lastmod;
    }
    return APR_SUCCESS;
}

apr_status_t sm_news_read(sm_store *st, apr_pool_t *p, const char *base,
                          apr_time_t now, apr_array_header_t **items,
                          sm_llms_item *filler)
{
    rows r = { p, apr_array_make(p, 64, sizeof(sm_news_item)), filler };
    apr_status_t rv;

    memset(filler, 0, sizeof(*filler));
    *items = r.items;
    rv = sm_store_news_urls(st, base, now - SM_NEWS_WINDOW, SM_NEWS_MAX,
                            news_row, &r);
    if (rv == APR_SUCCESS && !r.items->nelts)
        rv = sm_store_llms_urls(st, base, 1, filler_row, &r);
    return rv;
}

apr_status_t sm_llms_read(sm_store *st, apr_pool_t *p, const char *base,
                          int max, apr_array_header_t **items)
{
    rows r = { p, apr_array_make(p, 64, sizeof(sm_llms_item)), NULL };

    *items = r.items;
    return sm_store_llms_urls(st, base, max > 0 ? max : SM_LLMS_MAX_DEFAULT,
                              llms_row, &r);
}

const char *sm_llms_title(const char *configured,
                          const apr_array_header_t *items, const char *scope,
                          const char *base)
{
    int i;

    if (configured)
        return configured;
    for (i = 0; i < items->nelts; i++) {
        const sm_llms_item *it = &APR_ARRAY_IDX(items, i, sm_llms_item);
        if (strcmp(it->url, scope) == 0 && it->title && *it->title)
            return it->title;
    }
    return base + (strncmp(base, "https://", 8) == 0 ? 8 : 7);
}
