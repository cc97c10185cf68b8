/* SPDX-License-Identifier: Apache-2.0 */
/* sm_news.h: the news sitemap (SitemapNewsPath: Google News, the pages
 * published in the last SM_NEWS_WINDOW) and llms.txt (SitemapLLMsPath:
 * llmstxt.org), written to a sink from what the store gives
 * (sm_store_news_urls, sm_store_llms_urls), so that the module and any
 * other writer produce the same bytes. */
#ifndef SM_NEWS_H
#define SM_NEWS_H

#include <apr_pools.h>
#include <apr_tables.h>
#include <apr_time.h>

#include "util/sm_sink.h"

#define SM_NEWS_NS "http://www.google.com/schemas/sitemap-news/0.9"
#define SM_NEWS_WINDOW apr_time_from_sec(48 * 3600)   /* Google News' */
#define SM_NEWS_MAX 1000                              /* likewise */
#define SM_LLMS_MAX_DEFAULT 500
#define SM_LLMS_MAX_LIMIT 50000
/* The section of the pages right under the site's root. */
#define SM_LLMS_ROOT_SECTION "Pages"

typedef struct {
    const char *url;            /* stored: path[?query] */
    const char *title;          /* NULL: none (the path stands in) */
    apr_time_t published;
} sm_news_item;

typedef struct {
    const char *url;
    const char *title;          /* NULL: none (the path stands in) */
    const char *description;    /* NULL: none */
    apr_time_t lastmod;
} sm_llms_item;

/* Is lang a language Google News takes (ISO 639: 2 or 3 lowercase
 * letters, or zh-cn, zh-tw)?  NULL if so, else what is wrong. */
const char *sm_news_language_problem(const char *lang);
/* Is s fit for a one-line text directive (a publication's name, llms.txt's
 * title or summary): 1 to 1024 bytes of UTF-8 without control characters?
 * NULL if so, else what is wrong. */
const char *sm_news_text_problem(const char *s);

/* The news sitemap: a <urlset> with the news namespace, one <url> per
 * item (in the order given) with news:publication (name, language),
 * news:publication_date and news:title.  No item: the schema wants at
 * least one <url>, so filler (a listed page; NULL: none) is written as a
 * plain <url> without news:news, which Google News reads as no article. */
apr_status_t sm_news_write(apr_pool_t *p, sm_sink *sink, void *baton,
                           const char *base, const char *name,
                           const char *lang, const apr_array_header_t *items,
                           const sm_llms_item *filler);

/* Markdown text: '\\', '[', ']', '(', ')' and the other characters
 * Markdown would read as markup escaped with '\\', line breaks as
 * spaces. */
char *sm_md_text(apr_pool_t *p, const char *s);
/* A URL fit for a Markdown link's (destination): bytes that would end
 * or break it (blanks, '(', ')', '<', '>', '\\', '[', ']', controls)
 * %-encoded. */
char *sm_md_url(apr_pool_t *p, const char *url);

/* llms.txt: "# title", "> summary" (NULL: none), then "## section" per
 * first path segment (the pages right under the root first, as
 * SM_LLMS_ROOT_SECTION; then the others by name), each page a line
 * "- [title](url): description" in path order.  items is reordered. */
apr_status_t sm_llms_write(apr_pool_t *p, sm_sink *sink, void *baton,
                           const char *base, const char *title,
                           const char *summary, apr_array_header_t *items);

/* ---- reading them (sm_news_read.c) --------------------------------- */

struct sm_store;

/* The news sitemap's rows in st (read in the caller's snapshot): the
 * pages published in the SM_NEWS_WINDOW before now, newest first, at
 * most SM_NEWS_MAX, as sm_news_item in *items (from p); when there is
 * none, the site's first listed page in *filler (url NULL: none). */
apr_status_t sm_news_read(struct sm_store *st, apr_pool_t *p,
                          const char *base, apr_time_t now,
                          apr_array_header_t **items, sm_llms_item *filler);
/* llms.txt's rows: at most max pages (0: SM_LLMS_MAX_DEFAULT), as
 * sm_llms_item in *items (from p). */
apr_status_t sm_llms_read(struct sm_store *st, apr_pool_t *p,
                          const char *base, int max,
                          apr_array_header_t **items);
/* llms.txt's title: configured (SitemapLLMsTitle), else the title of the
 * page at scope (the site's home) among items, else base's host. */
const char *sm_llms_title(const char *configured,
                          const apr_array_header_t *items, const char *scope,
                          const char *base);

#endif
