/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_handler.c: SitemapPath and its pages, served from the store
 * through the serving layer (mod_sitemap_serve.c).
 *
 * A document is produced from one read snapshot and streamed as it is
 * read, or sent from its rendition: memory does not grow with its size.
 * Its ETag is derived from the page summaries (no scan of the URLs), so
 * conditional requests are cheap and a 304 never touches the URL rows. */
#include "mod_sitemap.h"

#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"

#include <apr_strings.h>

#include "serve/sm_document.h"
#include "util/sm_gzip.h"
#include "util/sm_hash.h"
#include "serve/sm_sitemap.h"

APLOG_USE_MODULE(sitemap);

/* Say at most once a minute (per process; a race only logs twice) what
 * a document left out: pages past what an index may list (the
 * configuration check, SitemapMaxURLs <= 50,000 x SitemapPageSize, keeps
 * this away unless removals left many pages nearly empty), and rows of the
 * store that are not in the stored form (written by hand or corrupt), hreflang
 * alternates likewise, and alternates the document's bound left out. */
static void document_notes(request_rec *r, const sitemap_server_conf *conf,
                           const char *base, const sm_doc *doc,
                           const sm_doc_stats *stats)
{
    static apr_time_t last;
    apr_time_t now;

    if (!doc->overflow && !stats->skipped && !stats->alternates_skipped
        && !stats->urls_dropped)
        return;
    now = apr_time_now();
    if (last && now - last < apr_time_from_sec(60))
        return;
    last = now;
    if (doc->overflow)
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, "%s has %d non-empty "
                      "pages; the index lists the first %d (raise "
                      "SitemapPageSize)", r->uri,
                      doc->entries + doc->overflow, doc->entries);
    if (stats->skipped)
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, "store %s: %"
                      APR_INT64_T_FMT " row%s of %s left out of %s, not "
                      "being a URL as the module stores them (first: "
                      "\"%s\"); run sitemapctl check", conf->db_shown,
                      stats->skipped, stats->skipped == 1 ? "" : "s",
                      base, r->uri, stats->first_skipped);
    if (stats->alternates_skipped)
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, "store %s: %"
                      APR_INT64_T_FMT " hreflang alternate%s of %s left out "
                      "of %s, not being one as the module stores them; run "
                      "sitemapctl check", conf->db_shown,
                      stats->alternates_skipped,
                      stats->alternates_skipped == 1 ? "" : "s", base,
                      r->uri);
    if (stats->urls_dropped)
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r, "%s: %" APR_INT64_T_FMT
                      " URL%s written without their %" APR_INT64_T_FMT
                      " hreflang alternates, which would take the document "
                      "past %d bytes (lower SitemapPageSize)", r->uri,
                      stats->urls_dropped, stats->urls_dropped == 1 ? "" : "s",
                      stats->alternates_dropped, SM_PAGE_MAX_BYTES);
}

/* What the sitemap's steps share. */
typedef struct {
    int gz_file;                /* a .xml.gz name: a gzip file */
    int cached;                 /* renditions on */
    apr_uint64_t tag2;          /* the renditions' second key */
    sm_doc_stats stats;
} xml_doc;

/* The ETag from the store's id, the configuration and the chosen pages'
 * versions; a second, independent hash of the same, for the renditions'
 * key; and when the document last changed. */
static void xml_validators(sitemap_reply *rp, xml_doc *x)
{
    const sm_site_info *info = &rp->info;
    const sm_doc *doc = &rp->doc;
    apr_uint64_t tag, tag2;
    apr_time_t mtime = 0;
    int i;

    tag = sm_hash_bytes(SM_HASH_SEED, info->store_id,
              strlen(info->store_id));
    tag = sm_hash_bytes(tag, &rp->conf->config_tag,
                        sizeof(rp->conf->config_tag));
    tag2 = sm_hash_str(SM_HASH_SEED, info->store_id);
    tag2 = sm_hash_u64(tag2, rp->conf->config_tag);
    tag2 = sm_hash_u64(tag2, (apr_uint64_t)doc->kind);
    if (doc->kind == SM_DOC_URLSET) {
        tag = sm_hash_bytes(tag, "page", 4);
        tag = sm_hash_bytes(tag, &doc->page->page, sizeof(doc->page->page));
        tag = sm_hash_bytes(tag, &doc->page->version,
                            sizeof(doc->page->version));
        tag2 = sm_hash_u64(tag2, (apr_uint64_t)doc->page->page);
        tag2 = sm_hash_u64(tag2, (apr_uint64_t)doc->page->version);
        mtime = doc->page->changed;
        if (info->settings_changed > mtime)
            mtime = info->settings_changed;
    }
    else {
        tag = sm_hash_bytes(tag, "index", 5);
        for (i = 0; i < doc->entries; i++) {
            const sm_page_info *pi = &APR_ARRAY_IDX(info->pages, i,
                                                    sm_page_info);
            tag = sm_hash_bytes(tag, &pi->page, sizeof(pi->page));
            tag = sm_hash_bytes(tag, &pi->lastmod, sizeof(pi->lastmod));
            tag2 = sm_hash_u64(tag2, (apr_uint64_t)pi->page);
            tag2 = sm_hash_u64(tag2, (apr_uint64_t)pi->lastmod);
        }
        tag2 = sm_hash_u64(tag2, (apr_uint64_t)doc->entries);
        mtime = info->index_changed > info->settings_changed
              ? info->index_changed : info->settings_changed;
    }
    /* Settings not stored yet (this generation's writer is starting):
     * they are at most as old as this configuration. */
    if ((!info->settings || strcmp(info->settings, rp->own->settings) != 0)
        && rp->conf->loaded > mtime)
        mtime = rp->conf->loaded;
    rp->tagged = 1;
    rp->tag = tag;
    rp->mtime = mtime;
    x->tag2 = tag2;
}

/* Which document (a page, the one page at SitemapPath, the index, or none
 * recorded yet) and which bytes: the .xml.gz forms are gzip files; with
 * renditions on, a client accepting gzip gets the gzip rendition as
 * Content-Encoding (the gzip bytes have an ETag of their own, RFC 9110,
 * 8.8.3). */
static int xml_head(sitemap_reply *rp)
{
    request_rec *r = rp->r;
    xml_doc *x = rp->ctx;

    if (rp->doc.kind == SM_DOC_NONE)
        return HTTP_NOT_FOUND;
    if (rp->doc.kind == SM_DOC_EMPTY)
        return sitemap_nothing_yet(r);
    xml_validators(rp, x);
    x->cached = rp->conf->cache == 1;
    rp->gzip = x->gz_file || (x->cached && sm_accepts_gzip(apr_table_get(
                                  r->headers_in, "Accept-Encoding")));
    if (x->cached && !x->gz_file)
        apr_table_mergen(r->headers_out, "Vary", "Accept-Encoding");
    if (rp->gzip) {
        /* Already compressed: mod_deflate must leave it alone. */
        apr_table_setn(r->subprocess_env, "no-gzip", "1");
        if (!x->gz_file)
            apr_table_setn(r->headers_out, "Content-Encoding", "gzip");
        rp->tag_suffix = "-gz";
    }
    ap_set_content_type(r, x->gz_file ? "application/gzip"
                                      : "application/xml; charset=utf-8");
    apr_table_setn(r->headers_out, "X-Robots-Tag", "noindex");
    return OK;
}

/* From its rendition (renditions on); a HEAD too: the file gives its
 * Content-Length (httpd sends no body for a HEAD). */
static apr_status_t xml_file(sitemap_reply *rp, sitemap_file *out)
{
    xml_doc *x = rp->ctx;
    sitemap_doc_req dr;
    apr_status_t rv;

    if (!x->cached)
        return APR_ENOTIMPL;
    dr.site = &rp->site;
    dr.doc = &rp->doc;
    dr.info = &rp->info;
    dr.key.a = rp->tag;
    dr.key.b = x->tag2;
    dr.gzip = rp->gzip;
    rv = sitemap_rendition(rp->r, rp->conf, rp->st, &dr, out, &x->stats);
    if (rv == APR_SUCCESS)
        document_notes(rp->r, rp->conf, rp->own->base, &rp->doc, &x->stats);
    return rv;
}

static apr_status_t xml_body(sitemap_reply *rp, sm_sink *sink, void *baton)
{
    xml_doc *x = rp->ctx;
    apr_status_t rv = sm_doc_write(rp->r->pool, rp->st, &rp->site, &rp->doc,
                                   &rp->info, sink, baton, &x->stats);

    document_notes(rp->r, rp->conf, rp->own->base, &rp->doc, &x->stats);
    return rv;
}

static const sitemap_doc_type xml_type = { 1, xml_head, xml_file, xml_body };

/* A request for the sitemap (r->handler is ours). */
int sitemap_xml_serve(request_rec *r)
{
    sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    apr_int64_t name;
    xml_doc x;

    if (conf->enabled != 1)
        return DECLINED;
    name = sm_name_parse_gz(conf->sitemap_path, r->uri, &x.gz_file);
    if (name < 0)
        return HTTP_NOT_FOUND;
    x.cached = 0;
    memset(&x.stats, 0, sizeof(x.stats));
    return sitemap_serve(r, &xml_type, name, &x);
}
