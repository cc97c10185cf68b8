/* SPDX-License-Identifier: Apache-2.0 */
/* sm_document.c: see sm_document.h. */
#include "serve/sm_document.h"
#include "head/sm_alternates.h"
#include "serve/sm_sitemap.h"
#include "util/sm_url.h"

#include <apr_strings.h>
#include <string.h>

void sm_doc_choose(const sm_site_info *info, apr_int64_t name, sm_doc *doc)
{
    const apr_array_header_t *pages = info->pages;
    int i;

    memset(doc, 0, sizeof(*doc));
    if (name > 0) {
        for (i = 0; i < pages->nelts; i++) {
            const sm_page_info *pi = &APR_ARRAY_IDX(pages, i, sm_page_info);
            if (pi->page == name) {
                doc->kind = SM_DOC_URLSET;
                doc->page = pi;
            }
        }
        return;
    }
    if (pages->nelts == 1) {
        doc->kind = SM_DOC_URLSET;
        doc->page = &APR_ARRAY_IDX(pages, 0, sm_page_info);
    }
    else if (pages->nelts == 0) {
        doc->kind = SM_DOC_EMPTY;
    }
    else {
        doc->kind = SM_DOC_INDEX;
        doc->entries = pages->nelts < SM_INDEX_MAX_ENTRIES
                     ? pages->nelts : SM_INDEX_MAX_ENTRIES;
        doc->overflow = pages->nelts - doc->entries;
    }
}

typedef struct {
    sm_xml_writer *w;
    const sm_doc_site *site;
    apr_size_t base_len;
    sm_doc_stats *stats;
    int text;               /* the text format, not XML */
    apr_pool_t *scratch;    /* a URL's alternates, cleared after each */
    apr_int64_t budget;     /* bytes alternates may still take */
    apr_hash_t *images;     /* SitemapImages: the page's, by URL; NULL:
                               none written */
} url_ctx;

/* A row as a log can show it: printable ASCII kept, other bytes as \xHH. */
static void printable(char *out, apr_size_t room, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    apr_size_t n = 0;

    for (; *s && n + 5 < room; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f && c != '\\') {
            out[n++] = (char)c;
        }
        else {
            out[n++] = '\\';
            out[n++] = 'x';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    if (*s && n + 3 < room) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
}

/* One line of the text format: the URL as it is (no entities). */
static apr_status_t text_line(sm_xml_writer *w, const char *base,
                              const char *path)
{
    sm_xml_raw(w, base);
    sm_xml_raw(w, path);
    return sm_xml_raw(w, "\n");
}

/* The URL's stored alternates that may be written: the valid ones, when
 * all of them fit in what the document has left; NULL otherwise. */
static const apr_array_header_t *alternates_of(url_ctx *ctx,
                                               const char *stored)
{
    apr_array_header_t *alts;
    apr_int64_t len;

    if (!stored || !*stored)
        return NULL;
    ctx->stats->alternates_skipped += sm_alternates_parse(ctx->scratch,
                                                          stored, &alts);
    if (alts->nelts == 0)
        return NULL;
    len = (apr_int64_t)sm_xml_alternates_len(alts);
    if (len > ctx->budget) {
        ctx->stats->alternates_dropped += alts->nelts;
        ctx->stats->urls_dropped++;
        return NULL;
    }
    ctx->budget -= len;
    ctx->stats->alternates += alts->nelts;
    return alts;
}

static apr_status_t one_url(void *baton, const char *url, apr_time_t lastmod,
                            const char *alternates)
{
    url_ctx *ctx = baton;
    apr_status_t rv;

    /* The stored form includes its length: the recorder never stores a
     * URL longer than SM_URL_MAX with its base, the schema's limit. */
    if (!sm_url_is_stored_form(url)
        || ctx->base_len + strlen(url) > SM_URL_MAX) {
        if (ctx->stats->skipped++ == 0)
            printable(ctx->stats->first_skipped,
                      sizeof(ctx->stats->first_skipped), url);
        return APR_SUCCESS;
    }
    ctx->stats->urls++;
    if (ctx->text)
        return text_line(ctx->w, ctx->site->base, url);
    rv = sm_xml_url_images(ctx->w, ctx->site->base, url, lastmod,
                           sm_annotation_find(ctx->site->changefreq, url),
                           sm_annotation_find(ctx->site->priority, url),
                           alternates_of(ctx, alternates),
                           ctx->images ? apr_hash_get(ctx->images, url,
                                                      APR_HASH_KEY_STRING)
                                       : NULL);
    apr_pool_clear(ctx->scratch);
    return rv;
}

/* stats may be NULL: then own counts. */
static void ctx_init(url_ctx *ctx, apr_pool_t *p, const sm_doc_site *site,
                     sm_xml_sink *sink, void *baton, sm_doc_stats *stats,
                     sm_doc_stats *own, int text)
{
    ctx->stats = stats ? stats : own;
    memset(ctx->stats, 0, sizeof(*ctx->stats));
    ctx->w = sm_xml_writer_create(p, sink, baton);
    ctx->site = site;
    ctx->base_len = strlen(site->base);
    ctx->text = text;
    ctx->budget = 0;
    ctx->images = NULL;
    apr_pool_create(&ctx->scratch, p);
}

/* What a <urlset> of page leaves to alternates, once begun (its prolog
 * written): the bound, less what is written, what the page's entries may
 * take and the end tag. */
static apr_int64_t alternates_budget(const url_ctx *ctx,
                                     const sm_page_info *page)
{
    apr_int64_t max = ctx->site->max_bytes > 0 ? ctx->site->max_bytes
                                               : SM_PAGE_MAX_BYTES;
    apr_int64_t left = max - (apr_int64_t)sm_xml_bytes(ctx->w)
                       - page->xml_bytes
                       - (apr_int64_t)sizeof("</urlset>\n");

    return left > 0 ? left : 0;
}

apr_status_t sm_doc_write(apr_pool_t *p, sm_store *st,
                          const sm_doc_site *site, const sm_doc *doc,
                          const sm_site_info *info, sm_xml_sink *sink,
                          void *baton, sm_doc_stats *stats)
{
    sm_doc_stats own;
    url_ctx ctx;
    apr_status_t rv;
    int i;

    ctx_init(&ctx, p, site, sink, baton, stats, &own, 0);
    sm_xml_set_stylesheet(ctx.w, site->stylesheet);
    switch (doc->kind) {
    case SM_DOC_URLSET:
        if (site->images)
            sm_xml_urlset_begin_images(ctx.w);
        else
            sm_xml_urlset_begin(ctx.w);
        ctx.budget = alternates_budget(&ctx, doc->page);
        /* The images first: they take their part of the bound before
         * alternates do. */
        if (site->images
            && (rv = sm_doc_images_load(p, st, site->base, doc->page->page,
                                        &ctx.budget, ctx.stats,
                                        &ctx.images)) != APR_SUCCESS)
            return rv;
        rv = sm_store_page_urls(st, site->base, doc->page->page, one_url,
                                &ctx);
        return rv == APR_SUCCESS ? sm_xml_urlset_end(ctx.w) : rv;
    case SM_DOC_INDEX:
        sm_xml_index_begin(ctx.w);
        for (i = 0; i < doc->entries; i++) {
            const sm_page_info *pi = &APR_ARRAY_IDX(info->pages, i,
                                                    sm_page_info);
            sm_xml_index_entry(ctx.w, site->base,
                               sm_page_path(p, site->sitemap_path, pi->page),
                               pi->lastmod);
        }
        return sm_xml_index_end(ctx.w);
    case SM_DOC_NONE:
    case SM_DOC_EMPTY:
        break;
    }
    return APR_EINVAL;
}

apr_status_t sm_doc_write_text(apr_pool_t *p, sm_store *st,
                               const sm_doc_site *site, const sm_doc *doc,
                               sm_xml_sink *sink, void *baton,
                               sm_doc_stats *stats)
{
    sm_doc_stats own;
    url_ctx ctx;
    apr_status_t rv;

    ctx_init(&ctx, p, site, sink, baton, stats, &own, 1);
    switch (doc->kind) {
    case SM_DOC_URLSET:
        rv = sm_store_page_urls(st, site->base, doc->page->page, one_url,
                                &ctx);
        return rv == APR_SUCCESS ? sm_xml_flush(ctx.w) : rv;
    default:
        return APR_EINVAL;
    }
}
