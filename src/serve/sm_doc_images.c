/* SPDX-License-Identifier: Apache-2.0 */
/* sm_doc_images.c: a page's images for its <urlset> (SitemapImages; see
 * sm_document.h, sm_doc_images_load). */
#include "serve/sm_document.h"
#include "head/sm_alternates.h"

#include <string.h>

#include <apr_strings.h>

typedef struct {
    apr_pool_t *p;
    apr_hash_t *by_url;
    apr_int64_t *budget;
    sm_doc_stats *stats;
} load_ctx;

static apr_status_t one_image(void *baton, const char *url,
                              const char *image)
{
    load_ctx *l = baton;
    apr_array_header_t *list;
    apr_int64_t len;

    len = (apr_int64_t)sm_xml_image_len(image);
    if (!url || !image || len > *l->budget
        || !sm_alternate_href_ok(l->p, image)) {
        l->stats->images_dropped++;
        return APR_SUCCESS;
    }
    *l->budget -= len;
    list = apr_hash_get(l->by_url, url, APR_HASH_KEY_STRING);
    if (!list) {
        list = apr_array_make(l->p, 2, sizeof(const char *));
        apr_hash_set(l->by_url, apr_pstrdup(l->p, url), APR_HASH_KEY_STRING,
                     list);
    }
    APR_ARRAY_PUSH(list, const char *) = apr_pstrdup(l->p, image);
    l->stats->images++;
    return APR_SUCCESS;
}

apr_status_t sm_doc_images_load(apr_pool_t *p, sm_store *st,
                                const char *base, apr_int64_t page,
                                apr_int64_t *budget, sm_doc_stats *stats,
                                apr_hash_t **out)
{
    load_ctx l = { p, apr_hash_make(p), budget, stats };
    apr_status_t rv = sm_store_page_images(st, base, page, one_image, &l);

    *out = l.by_url;
    return rv;
}
