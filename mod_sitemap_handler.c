/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_handler.c: serves SitemapPath and its pages from the store.
 *
 * A document is produced from one read snapshot and streamed as it is
 * read: memory does not grow with its size.  Its ETag is derived from the
 * page summaries (no scan of the URLs), so conditional requests are cheap
 * and a 304 never touches the URL rows. */
#include "mod_sitemap.h"

#include "http_core.h"
#include "http_log.h"
#include "http_main.h"
#include "http_protocol.h"
#include "http_request.h"
#include "ap_mpm.h"

#include <apr_strings.h>

#include "serve/sm_document.h"
#include "util/sm_gzip.h"
#include "util/sm_hash.h"
#include "serve/sm_sitemap.h"

APLOG_USE_MODULE(sitemap);

#define SITEMAP_HANDLER "sitemap"
#define RETRY_AFTER "60"
#define LOG_503_EVERY apr_time_from_sec(60)

/* ---- claiming the URLs --------------------------------------------------- */

/* SitemapPath and its pages belong to the module in vhosts with Sitemap On,
 * whatever the document root or later rewrites would make of them. */
SM_HOT int sitemap_translate_name(request_rec *r)
{
    sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    int gz;

    if (conf->enabled != 1 || !conf->site.base || r->main || !r->uri
        || r->uri[0] != '/')
        return DECLINED;
    if (sm_name_parse_gz(conf->sitemap_path, r->uri, &gz)
        == SM_NAME_NOT_OURS) {
        sitemap_record_prefetch(r, conf);
        return DECLINED;
    }
    return sitemap_claim(r, SITEMAP_HANDLER);
}

/* A 304 answered through the normal filters, not the error path:
 * mod_cache's save filter must see the 304 to its own revalidation (the
 * error path drops it).  OK, or AP_FILTER_ERROR. */
int sitemap_not_modified(request_rec *r)
{
    apr_bucket_brigade *bb = apr_brigade_create(r->pool,
                                                r->connection->bucket_alloc);

    r->status = HTTP_NOT_MODIFIED;
    sitemap_etag_as_sent(r);
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(
                            r->connection->bucket_alloc));
    return ap_pass_brigade(r->output_filters, bb) == APR_SUCCESS
           ? OK : AP_FILTER_ERROR;
}

/* A URL one of our handlers answers, whatever the document root holds:
 * its filename is no file's, so that map_to_storage skips it. */
int sitemap_claim(request_rec *r, const char *handler)
{
    sitemap_decode_etags(r);
    r->handler = handler;
    r->filename = apr_pstrcat(r->pool, "sitemap:", r->uri, NULL);
    return OK;
}

/* Not a file: no directory walk, no stat (as mod_proxy does), for what
 * sitemap_claim claimed (its handler still ours: nothing replaced it). */
SM_HOT int sitemap_map_to_storage(request_rec *r)
{
    if (r->filename && strncmp(r->filename, "sitemap:", 8) == 0
        && r->handler && strncmp(r->handler, "sitemap", 7) == 0)
        return OK;
    return DECLINED;
}

/* ---- reader connections, one pool per store file per process ----------- */

/* ---- answering ----------------------------------------------------------- */

/* The gzip bytes have an ETag of their own (RFC 9110, 8.8.3). */
static void set_etag(request_rec *r, apr_uint64_t h, int gzip)
{
    apr_table_setn(r->headers_out, "ETag",
                   apr_psprintf(r->pool, "\"%016" APR_UINT64_T_HEX_FMT "%s\"",
                                h, gzip ? "-gz" : ""));
}

int sitemap_nothing_yet(request_rec *r)
{
    ap_custom_response(r, HTTP_NOT_FOUND, "No page of this site has been "
                       "recorded yet: mod_sitemap lists the pages this "
                       "server answers with 200 once they are served.\n");
    return HTTP_NOT_FOUND;
}

/* 503 for a store that cannot be read.  Anyone can ask for the sitemap
 * as often as they like, so the fault is logged at most once a minute per
 * process, with the number of 503s since the last line (the other
 * requests log at debug level).  Threads race on the two counters: at
 * worst a line is logged twice or a count is off by a few. */
static int unavailable(request_rec *r, sitemap_server_conf *conf,
                       const char *why)
{
    static apr_time_t last_logged;
    static apr_uint32_t unlogged;
    apr_time_t now = apr_time_now();

    if (!last_logged || now - last_logged >= LOG_503_EVERY) {
        last_logged = now;
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, "store %s cannot be read "
                      "(%s): answering 503 (%u more times in the last "
                      "minute; logged at most once a minute per process)",
                      conf->db_shown, why, unlogged);
        unlogged = 0;
    }
    else {
        unlogged++;
        ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, "store %s cannot be "
                      "read (%s): answering 503", conf->db_shown, why);
    }
    apr_table_setn(r->err_headers_out, "Retry-After", RETRY_AFTER);
    return HTTP_SERVICE_UNAVAILABLE;
}

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

typedef struct {
    request_rec *r;
    apr_status_t out;       /* the first failure writing to the client */
    int sent;               /* bytes went to the output filters */
} stream_ctx;

static apr_status_t to_client(void *baton, const char *data, apr_size_t len)
{
    stream_ctx *ctx = baton;
    ctx->sent = 1;
    if (ap_rwrite(data, (int)len, ctx->r) < 0) {
        ctx->out = APR_ECONNABORTED;
        return ctx->out;
    }
    return APR_SUCCESS;
}

/* The body could not be finished after the headers went out: make the
 * response visibly broken (no last chunk, connection closed), as
 * mod_proxy does for a backend that fails mid-body. */
static void abort_response(request_rec *r)
{
    conn_rec *c = r->connection;
    apr_bucket_brigade *bb = apr_brigade_create(r->pool, c->bucket_alloc);

    ap_rflush(r);
    APR_BRIGADE_INSERT_TAIL(bb, ap_bucket_error_create(HTTP_BAD_GATEWAY, NULL,
                                                       r->pool,
                                                       c->bucket_alloc));
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_eos_create(c->bucket_alloc));
    ap_pass_brigade(r->output_filters, bb);
    c->keepalive = AP_CONN_CLOSE;
}

/* A request for the sitemap (r->handler is ours). */
static SM_NOINLINE int serve(request_rec *r)
{
    sitemap_server_conf *conf;
    const sm_site_conf *own;
    apr_int64_t name;
    sm_store *st;
    sm_site_info info;
    sm_doc doc;
    sm_doc_site site;
    sm_doc_stats stats;
    sitemap_doc_req dr;
    sitemap_file file;
    apr_uint64_t tag, tag2;
    apr_time_t mtime = 0;
    stream_ctx ctx;
    sm_gzip *gz = NULL;
    char err[256];
    int status, i, gz_file, gzip, cached;
    apr_status_t rv;

    conf = SITEMAP_CONF(r->server);
    if (conf->enabled != 1 || !conf->proc->readers)
        return DECLINED;
    name = sm_name_parse_gz(conf->sitemap_path, r->uri, &gz_file);
    if (name < 0)
        return HTTP_NOT_FOUND;
    /* A mass vhost's Host that is not allowed has no sitemap; an allowed
     * one without a place here has what the store has of it. */
    if (!(own = sitemap_site_to_read(r, conf)))
        return HTTP_NOT_FOUND;
    if ((status = sitemap_methods(r)) != DECLINED)
        return status;

    if (!(st = sm_readers_acquire(conf->proc->readers, err, sizeof(err))))
        return unavailable(r, conf, err);
    if (sm_store_read_begin(st) != APR_SUCCESS
        || sm_store_site_info(st, r->pool, own->base, name, &info)
           != APR_SUCCESS) {
        const char *why = apr_pstrdup(r->pool, sm_store_error(st));
        sm_store_read_end(st);
        sm_readers_invalidate(conf->proc->readers, st);
        return unavailable(r, conf, why);
    }

    /* Which document: a page, the one page at SitemapPath, the index, or
     * (nothing recorded yet) none. */
    sm_doc_choose(&info, name, &doc);
    tag = sm_hash_bytes(SM_HASH_SEED, info.store_id,
              strlen(info.store_id));
    tag = sm_hash_bytes(tag, &conf->config_tag, sizeof(conf->config_tag));
    /* A second, independent hash of the same, for the renditions' key. */
    tag2 = sm_hash_str(SM_HASH_SEED, info.store_id);
    tag2 = sm_hash_u64(tag2, conf->config_tag);
    tag2 = sm_hash_u64(tag2, (apr_uint64_t)doc.kind);
    switch (doc.kind) {
    case SM_DOC_NONE:
        sm_store_read_end(st);
        sm_readers_release(conf->proc->readers, st);
        return HTTP_NOT_FOUND;
    case SM_DOC_URLSET:
        tag = sm_hash_bytes(tag, "page", 4);
        tag = sm_hash_bytes(tag, &doc.page->page, sizeof(doc.page->page));
        tag = sm_hash_bytes(tag, &doc.page->version, sizeof(doc.page->version));
        tag2 = sm_hash_u64(tag2, (apr_uint64_t)doc.page->page);
        tag2 = sm_hash_u64(tag2, (apr_uint64_t)doc.page->version);
        mtime = doc.page->changed;
        if (info.settings_changed > mtime)
            mtime = info.settings_changed;
        break;
    case SM_DOC_EMPTY:
        sm_store_read_end(st);
        sm_readers_release(conf->proc->readers, st);
        return sitemap_nothing_yet(r);
    case SM_DOC_INDEX:
        tag = sm_hash_bytes(tag, "index", 5);
        for (i = 0; i < doc.entries; i++) {
            const sm_page_info *pi = &APR_ARRAY_IDX(info.pages, i,
                                                    sm_page_info);
            tag = sm_hash_bytes(tag, &pi->page, sizeof(pi->page));
            tag = sm_hash_bytes(tag, &pi->lastmod, sizeof(pi->lastmod));
            tag2 = sm_hash_u64(tag2, (apr_uint64_t)pi->page);
            tag2 = sm_hash_u64(tag2, (apr_uint64_t)pi->lastmod);
        }
        tag2 = sm_hash_u64(tag2, (apr_uint64_t)doc.entries);
        mtime = info.index_changed > info.settings_changed
              ? info.index_changed : info.settings_changed;
        break;
    }

    /* Settings not stored yet (this generation's writer is starting):
     * they are at most as old as this configuration. */
    if ((!info.settings || strcmp(info.settings, own->settings) != 0)
        && conf->loaded > mtime)
        mtime = conf->loaded;
    /* Which bytes: the .xml.gz forms are gzip files; with renditions on, a
     * client accepting gzip gets the gzip rendition as Content-Encoding. */
    cached = conf->cache == 1;
    gzip = gz_file || (cached && sm_accepts_gzip(apr_table_get(
                                     r->headers_in, "Accept-Encoding")));
    if (cached && !gz_file)
        apr_table_mergen(r->headers_out, "Vary", "Accept-Encoding");
    if (gzip) {
        /* Already compressed: mod_deflate must leave it alone. */
        apr_table_setn(r->subprocess_env, "no-gzip", "1");
        if (!gz_file)
            apr_table_setn(r->headers_out, "Content-Encoding", "gzip");
    }
    ap_set_content_type(r, gz_file ? "application/gzip"
                                   : "application/xml; charset=utf-8");
    apr_table_setn(r->headers_out, "X-Robots-Tag", "noindex");
    set_etag(r, tag, gzip);
    if (mtime) {
        ap_update_mtime(r, mtime);
        ap_set_last_modified(r);
    }
    status = ap_meets_conditions(r);
    /* A HEAD with renditions goes on: the file gives its Content-Length
     * (httpd sends no body for a HEAD). */
    if (status != OK || (r->header_only && !cached)) {
        sm_store_read_end(st);
        sm_readers_release(conf->proc->readers, st);
        if (status == HTTP_NOT_MODIFIED)
            return sitemap_not_modified(r);
        return status;
    }

    ctx.r = r;
    ctx.out = APR_SUCCESS;
    ctx.sent = 0;
    site.base = own->base;
    site.sitemap_path = conf->sitemap_path;
    site.changefreq = conf->changefreq;
    site.priority = conf->priority;
    site.stylesheet = conf->stylesheet;
    site.max_bytes = 0;                 /* the protocol's */
    if (cached) {
        /* From its rendition: the snapshot is let go before the bytes
         * are sent, however slow the client. */
        dr.site = &site;
        dr.doc = &doc;
        dr.info = &info;
        dr.key.a = tag;
        dr.key.b = tag2;
        dr.gzip = gzip;
        if (sitemap_rendition(r, conf, st, &dr, &file, &stats)
            == APR_SUCCESS) {
            document_notes(r, conf, own->base, &doc, &stats);
            sm_store_read_end(st);
            sm_readers_release(conf->proc->readers, st);
            return sitemap_send_file(r, &file);
        }
    }
    if (r->header_only) {       /* no rendition: the length is unknown */
        sm_store_read_end(st);
        sm_readers_release(conf->proc->readers, st);
        return OK;
    }
    /* Streamed as it is read; gzip as the rendition would be. */
    if (gzip && sm_gzip_create(&gz, r->pool, SM_GZIP_LEVEL, to_client, &ctx)
                != APR_SUCCESS) {
        sm_store_read_end(st);
        sm_readers_release(conf->proc->readers, st);
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    rv = sm_doc_write(r->pool, st, &site, &doc, &info,
                      gz ? sm_gzip_write : to_client,
                      gz ? (void *)gz : (void *)&ctx, &stats);
    if (gz && rv == APR_SUCCESS)
        rv = sm_gzip_finish(gz);
    document_notes(r, conf, own->base, &doc, &stats);
    if (rv != APR_SUCCESS && ctx.out == APR_SUCCESS && !ctx.sent) {
        /* The store failed before a byte left the XML writer's buffer
         * (16 KiB): nothing is sent yet, so the answer can still be a
         * clean 503. */
        const char *why = apr_pstrdup(r->pool, sm_store_error(st));
        sm_store_read_end(st);
        sm_readers_invalidate(conf->proc->readers, st);
        r->content_type = NULL;
        apr_table_unset(r->headers_out, "ETag");
        apr_table_unset(r->headers_out, "Last-Modified");
        apr_table_unset(r->headers_out, "X-Robots-Tag");
        apr_table_unset(r->headers_out, "Vary");
        apr_table_unset(r->headers_out, "Content-Encoding");
        return unavailable(r, conf, why);
    }
    if (rv != APR_SUCCESS && ctx.out == APR_SUCCESS) {
        /* The store failed after the headers went out. */
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, "store %s failed while "
                      "streaming %s: %s", conf->db_shown, r->uri,
                      sm_store_error(st));
        sm_store_read_end(st);
        sm_readers_invalidate(conf->proc->readers, st);
        abort_response(r);
        return OK;
    }
    sm_store_read_end(st);
    sm_readers_release(conf->proc->readers, st);
    return OK;
}

/* Every request asks: only the sitemap's own go further (serve). */
SM_HOT int sitemap_handler(request_rec *r)
{
    if (!r->handler || strcmp(r->handler, SITEMAP_HANDLER) != 0)
        return DECLINED;
    return serve(r);
}
