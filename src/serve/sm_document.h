/* SPDX-License-Identifier: Apache-2.0 */
/* sm_document.h: which document a sitemap URL names, and writing it.
 *
 * The one place that chooses between a page's <urlset>, the
 * <sitemapindex> and the empty site's root, and writes it from a read
 * snapshot of the store: the module's handler and sitemapctl export both
 * call it, so export writes exactly what the module serves.  Every URL
 * row read back is checked (sm_url_is_stored_form) before it is written:
 * a row the normaliser could not have stored (a tampered or corrupt store)
 * is skipped, so the document stays valid XML; so is each stored hreflang
 * alternate (sm_alternates_parse).
 *
 * The bound: a <urlset> never passes max_bytes (the protocol's
 * SM_PAGE_MAX_BYTES, 50 MiB).  The store keeps a page's <url> entries
 * without alternates within it (sm_page_info.xml_bytes, an upper bound of
 * their bytes); alternates get what that leaves, URL by URL in page order:
 * a URL whose alternates do not all fit in what remains is written without
 * them (its <loc> always is), and that is counted (sm_doc_stats). */
#ifndef SM_DOCUMENT_H
#define SM_DOCUMENT_H

#include <apr_pools.h>
#include <apr_hash.h>
#include <apr_tables.h>

#include "store/sm_store.h"
#include "serve/sm_xml.h"

/* The sitemaps.org limit on a <sitemapindex>. */
#define SM_INDEX_MAX_ENTRIES 50000

typedef enum {
    SM_DOC_NONE = 0,    /* no such document: answer 404 */
    SM_DOC_URLSET,      /* the URLs of one page */
    SM_DOC_INDEX,       /* a <sitemapindex> of the non-empty pages */
    SM_DOC_EMPTY        /* no URL recorded yet: nothing to list (404; a
                           placeholder would list a URL nobody has seen
                           answer 200) */
} sm_doc_kind;

typedef struct {
    sm_doc_kind kind;
    const sm_page_info *page;   /* SM_DOC_URLSET: its page */
    int entries;                /* SM_DOC_INDEX: pages listed (at most
                                   SM_INDEX_MAX_ENTRIES) */
    int overflow;               /* SM_DOC_INDEX: non-empty pages not listed */
} sm_doc;

/* What shapes a site's documents besides the store. */
typedef struct {
    const char *base;                       /* the site's base URL */
    const char *sitemap_path;               /* SitemapPath */
    const apr_array_header_t *changefreq;   /* sm_annotation */
    const apr_array_header_t *priority;     /* sm_annotation */
    const char *stylesheet;                 /* the PI's href, NULL: none */
    apr_int64_t max_bytes;                  /* 0: SM_PAGE_MAX_BYTES (less
                                               only in tests) */
    int images;                             /* SitemapImages On: each
                                               <url> with its stored
                                               images (sm_doc_images.c) */
} sm_doc_site;

/* The document that name (SM_NAME_INDEX, 0, or a page number) stands for,
 * given the site's pages as sm_store_site_info read them for that name:
 * a page number its page (SM_DOC_NONE when it is empty or gone);
 * SitemapPath the only page's <urlset>, the index of two or more pages
 * (the first SM_INDEX_MAX_ENTRIES), or SM_DOC_EMPTY for a site without
 * URLs. */
void sm_doc_choose(const sm_site_info *info, apr_int64_t name, sm_doc *doc);

/* What writing a document found. */
typedef struct {
    apr_int64_t urls;           /* <url> entries written */
    apr_int64_t skipped;        /* rows skipped as not in the stored form */
    char first_skipped[128];    /* the first of them, made printable */
    apr_int64_t alternates;     /* <xhtml:link> alternates written */
    apr_int64_t alternates_skipped;  /* stored entries not in the stored
                                        form (skipped, as rows are) */
    apr_int64_t alternates_dropped;  /* valid ones left out by the bound */
    apr_int64_t urls_dropped;   /* URLs written without their alternates */
    apr_int64_t images;         /* <image:image> written */
    apr_int64_t images_dropped; /* stored ones left out: not in the
                                   stored form, or past the bound */
} sm_doc_stats;

/* Write doc to sink, reading the URLs of a page from st (inside the read
 * snapshot info came from).  Returns the first failure of the store or of
 * the sink (the writer stops at the sink's first failure); stats (may be
 * NULL) says what was written and skipped. */
apr_status_t sm_doc_write(apr_pool_t *p, sm_store *st,
                          const sm_doc_site *site, const sm_doc *doc,
                          const sm_site_info *info, sm_xml_sink *sink,
                          void *baton, sm_doc_stats *stats);

/* The same document in the sitemaps.org text format (SitemapTextPath): one
 * absolute URL a line, UTF-8 (stored URLs are ASCII), nothing else.  Only
 * SM_DOC_URLSET has a text form (the protocol has no text
 * index): APR_EINVAL for the others. */
apr_status_t sm_doc_write_text(apr_pool_t *p, sm_store *st,
                               const sm_doc_site *site, const sm_doc *doc,
                               sm_xml_sink *sink, void *baton,
                               sm_doc_stats *stats);

/* SitemapImages: a page's stored images (sm_store_page_images), read
 * before its URLs, by page URL, from p; each checked as an alternate's
 * href is (sm_alternate_href_ok: a row no writer could have made is
 * skipped), and only while their <image:image> elements fit in budget
 * (bytes: what the page's bound leaves after its entries; lowered by what
 * they take), so that memory and the document both stay bounded. */
apr_status_t sm_doc_images_load(apr_pool_t *p, sm_store *st,
                                const char *base, apr_int64_t page,
                                apr_int64_t *budget, sm_doc_stats *stats,
                                apr_hash_t **out);

#endif
