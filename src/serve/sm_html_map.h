/* SPDX-License-Identifier: Apache-2.0 */
/* sm_html_map.h: the HTML site map for visitors (SitemapHTMLPath).
 *
 * Built from the same store as the XML: the site's URLs in sitemap order
 * (page by page), cut into HTML pages of SM_HTML_LINKS links, so an HTML
 * page keeps its URLs as long as the sitemap pages before it keep their
 * counts; each is sorted by path and shown as a tree of sections (first
 * path segment) and nested lists (deeper segments), each link named by the
 * page's stored <title> (SitemapReadHead) or else its path (paths shown
 * with their UTF-8 decoded, sm_url_shown), its hreflang alternates but for
 * itself after it.  Plain HTML with landmarks, headings and lang; no script. */
#ifndef SM_HTML_MAP_H
#define SM_HTML_MAP_H

#include <apr_pools.h>

#include "store/sm_store.h"
#include "serve/sm_xml.h"

#define SM_HTML_LINKS 2000
/* The stored alternates an HTML page holds while it sorts its links: past
 * this many bytes, the links read after (in sitemap order) show none, and
 * the page says so. */
#define SM_HTML_ALTERNATES_BYTES (2 * 1024 * 1024)

typedef struct {
    const char *base;           /* the site's base URL */
    const char *html_path;      /* SitemapHTMLPath */
    const char *stylesheet;     /* the <link rel=stylesheet>, NULL: none */
    const char *server_name;    /* shown in the heading */
} sm_html_site;

/* Where HTML page `number` comes from. */
typedef struct {
    apr_int64_t number;         /* 1.. */
    apr_int64_t total;          /* HTML pages of the site (1 at least) */
    apr_int64_t store_page;     /* where it starts (0: the site has no
                                   URL yet) */
    apr_int64_t skip;           /* URLs of store_page before it */
} sm_html_page;

/* Find HTML page n in the site's pages (sm_store_site_info, page 0):
 * 1 and *out filled, or 0 when there is no such page. */
int sm_html_locate(const sm_site_info *info, apr_int64_t n,
                   sm_html_page *out);

/* Write the page, reading its URLs from st inside info's snapshot. */
apr_status_t sm_html_write(apr_pool_t *p, sm_store *st,
                           const sm_html_site *site, const sm_site_info *info,
                           const sm_html_page *page, sm_xml_sink *sink,
                           void *baton);

#endif
