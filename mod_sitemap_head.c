/* SPDX-License-Identifier: Apache-2.0 */
/* mod_sitemap_head.c: the output filter that reads a page's own <head>
 * (sm_head) as the body streams past, for log_transaction to act on
 * (mod_sitemap_record.c: noindex and a foreign canonical are not listed).
 *
 * Inserted for main GET requests of vhosts with Sitemap On and
 * SitemapReadHead On, unless the request's static file is the one of a
 * repeat before (mod_sitemap_known.c) or an image file with SitemapImages
 * On (mod_sitemap_images.c: its 200 reads no head); then log_transaction
 * has the head read from the file if it needs it after all
 * (sitemap_head_read_file).  When the body begins it asks whether
 * log_transaction would decide this response (200, a listed type, not a
 * repeat of what the recorder knows) and, when not, passes everything on
 * untouched from then on.
 * log_transaction takes that answer when the headers it hashed are still
 * the same, so a repeat is checked once; filters after this one may change
 * them (mod_deflate's ETag suffix), and mod_sitemap_record.c remembers the
 * facts seen here as well as the final ones.  It never holds a byte:
 * every brigade is passed on as it came, and before it waits on a slow
 * source (a CGI's pipe, a proxied socket) it passes what it has read with
 * a FLUSH.  Once the head is over it removes itself, unless the response
 * has no ETag: then it reads on to the end of the body for the content's
 * fingerprint (sm_fingerprint), which stands in for the missing validator. */
#include "mod_sitemap_images.h"
#include "mod_sitemap_record.h"

#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"
#include "util_filter.h"

#include <apr_strings.h>

#include "head/sm_fingerprint.h"
#include "head/sm_head.h"
#include "util/sm_inflate.h"

APLOG_USE_MODULE(sitemap);

#define HEAD_FILTER "SITEMAP_HEAD"

static ap_filter_rec_t *head_filter_handle;

typedef struct {
    sitemap_head_note *note;    /* the request's (sitemap_request_note) */
    apr_bucket_brigade *rest;   /* reused for the split before a wait */
    sm_inflate *z;              /* a gzip or deflate body (sm_inflate.h) */
    int over;
} head_ctx;

/* 0: none; 1, 2: gzip, deflate (read decoded); -1: another coding. */
static int content_coding(const request_rec *r)
{
    const char *ce = apr_table_get(r->headers_out, "Content-Encoding");

    if (!ce)
        ce = apr_table_get(r->err_headers_out, "Content-Encoding");
    if (!ce || !*ce || strcasecmp(ce, "identity") == 0)
        return 0;
    return sm_inflate_coding(ce) ? sm_inflate_coding(ce) : -1;
}

/* The body's bytes (decoded): the head scanner until the head is over,
 * the fingerprint (a page without an ETag) to the end.  1 when nothing
 * more is wanted. */
static int take(head_ctx *ctx, const char *data, apr_size_t len)
{
    if (ctx->note->state != SITEMAP_HEAD_READ
        && sm_head_feed(ctx->note->scanner, data, len))
        ctx->note->state = SITEMAP_HEAD_READ;
    if (ctx->note->fp)
        return sm_fingerprint_feed(ctx->note->fp, data, len);
    return ctx->note->state == SITEMAP_HEAD_READ;
}

/* The decoder's sink. */
static apr_status_t head_decoded(void *baton, const char *data,
                                 apr_size_t len)
{
    head_ctx *ctx = baton;

    ctx->over = take(ctx, data, len);
    return ctx->over ? APR_EOF : APR_SUCCESS;
}

/* Does a filter that may make the body (AP_FTYPE_RESOURCE: INCLUDES,
 * SUBSTITUTE) run before the head reader's place?  mod_expires' own
 * (AP_FTYPE_CONTENT_SET - 2) only sets headers. */
int sitemap_body_made_by_filters(const request_rec *r)
{
    const ap_filter_t *f;

    for (f = r->output_filters; f; f = f->next)
        if (f->frec->ftype < AP_FTYPE_CONTENT_SET - 2)
            return 1;
    return 0;
}

/* What the filter would have read as the file is: not a body the
 * filters make, nor one with a coding other than gzip (1).  A gzip one is
 * mod_deflate's, made after the filter's place from the file as it is,
 * unless the file itself is gzip (mod_mime's AddEncoding; its first bytes
 * are checked as it is read). */
int sitemap_head_readable(const request_rec *last)
{
    int coding = content_coding(last);

    return !sitemap_body_made_by_filters(last)
           && (!coding || (coding == 1 && !last->content_encoding));
}

int sitemap_head_read_file(request_rec *last, sitemap_head_note *note,
                           const sitemap_response_headers *h)
{
    apr_file_t *f;
    apr_finfo_t fi;
    sm_head *scanner;
    char buf[8192];
    apr_size_t len;
    apr_status_t rv;
    int coding;

    /* Not one to fingerprint (no ETag), nor what the filter would not
     * have read as the file is (sitemap_head_readable). */
    if (!h->etag || !last->filename || !sitemap_head_readable(last))
        return 0;
    coding = content_coding(last);
    if (apr_file_open(&f, last->filename, APR_READ | APR_BINARY, 0,
                      last->pool) != APR_SUCCESS)
        return 0;
    /* The file the core served, not another swapped in at its path
     * since: the same device and inode (an inode number alone repeats
     * across file systems), mtime and size. */
    if (apr_file_info_get(&fi, APR_FINFO_IDENT | APR_FINFO_MTIME
                                   | APR_FINFO_SIZE | APR_FINFO_TYPE, f)
            != APR_SUCCESS
        || fi.filetype != APR_REG || fi.inode != last->finfo.inode
        || fi.device != last->finfo.device
        || fi.mtime != last->finfo.mtime || fi.size != last->finfo.size) {
        apr_file_close(f);
        return 0;
    }
    scanner = sm_head_create(last->pool);
    len = sizeof(buf);
    rv = apr_file_read(f, buf, &len);
    /* A file that is gzip itself (a precompressed one served as such):
     * its bytes are not its head. */
    if (coding && rv == APR_SUCCESS && len >= 2
        && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b) {
        apr_file_close(f);
        return 0;
    }
    while (rv == APR_SUCCESS && len && !sm_head_feed(scanner, buf, len)) {
        len = sizeof(buf);
        rv = apr_file_read(f, buf, &len);
    }
    apr_file_close(f);
    if (rv != APR_SUCCESS && rv != APR_EOF)
        return 0;
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, last, "read the head of %s "
                  "from its file", last->unparsed_uri);
    note->state = SITEMAP_HEAD_READ;
    note->scanner = scanner;
    note->fp = NULL;
    note->raw = 0;
    return 1;
}

SM_HOT void sitemap_head_insert_filter(request_rec *r)
{
    const sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    sitemap_head_note *n;

    if (conf->enabled != 1 || conf->read_head != 1 || !conf->proc->recorder
        || r->main || r->method_number != M_GET || r->header_only)
        return;
    n = ap_get_module_config(r->request_config, &sitemap_module);
    if (n && n->state == SITEMAP_HEAD_NONE
        && (sitemap_image_file(r, conf) || sitemap_known_file(r, n))) {
        n->state = SITEMAP_HEAD_SKIPPED;
        return;
    }
    ap_add_output_filter_handle(head_filter_handle, NULL, r, r->connection);
}

/* What the scanner reads beyond robots, the canonical, the alternates,
 * <base> and the title: only what the record will keep (page_details in
 * mod_sitemap_record.c: images with SitemapImages On, the description and
 * publication time with a news sitemap or llms.txt). */
static unsigned head_wants(const sitemap_server_conf *conf)
{
    return (conf->images == 1 ? SM_HEAD_WANT_IMAGES : 0)
           | (conf->news_path || conf->llms_path ? SM_HEAD_WANT_NEWS : 0);
}

/* The first call: read this response's head?  The note is the request's
 * (made by the prefetch at translate_name, usually): a repeat allocates
 * nothing more here. */
static head_ctx *head_begin(ap_filter_t *f)
{
    request_rec *r = f->r;
    sitemap_head_note *note = sitemap_request_note(r);
    head_ctx *ctx;
    int repeat, coding;

    if (!sitemap_record_wants_head(r, &repeat, note)) {
        note->state = repeat ? SITEMAP_HEAD_REPEAT : SITEMAP_HEAD_UNREAD;
        return NULL;
    }
    if ((coding = content_coding(r)) < 0) {
        note->state = SITEMAP_HEAD_UNREADABLE;
        return NULL;
    }
    f->ctx = ctx = apr_pcalloc(r->pool, sizeof(*ctx));
    ctx->note = note;
    if (coding && sm_inflate_create(&ctx->z, r->pool, coding, head_decoded,
                                    ctx) != APR_SUCCESS) {
        note->state = SITEMAP_HEAD_UNREADABLE;
        return NULL;
    }
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "reading the head of %s",
                  r->unparsed_uri);
    note->state = SITEMAP_HEAD_UNREAD;     /* until the head is over */
    note->scanner = sm_head_create_ex(r->pool,
                                       head_wants(SITEMAP_CONF(r->server)));
    if (note->fingerprinting)
        note->fp = sm_fingerprint_create(r->pool);
    ctx->rest = apr_brigade_create(r->pool, f->c->bucket_alloc);
    return ctx;
}

/* The ctx of a filter that decided at the body's start not to read (a
 * repeat, a response not to be recorded): it passes every brigade on as
 * it came.  It stays in the chain: ap_remove_output_filter (a walk of the
 * request's filters) cost a steady request more than the one or two
 * further calls a file's or a short page's body makes. */
static char passing;

static apr_status_t head_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    head_ctx *ctx = f->ctx;
    apr_bucket *e, *next;
    apr_status_t rv;
    int over = 0;

    if (ctx == (head_ctx *)&passing)
        return ap_pass_brigade(f->next, bb);
    if (!ctx && !(ctx = head_begin(f))) {
        f->ctx = &passing;
        return ap_pass_brigade(f->next, bb);
    }
    for (e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb) && !over;
         e = next) {
        const char *data;
        apr_size_t len;

        if (APR_BUCKET_IS_EOS(e)) {
            over = 1;
            break;
        }
        if (APR_BUCKET_IS_METADATA(e)) {
            next = APR_BUCKET_NEXT(e);
            continue;
        }
        rv = apr_bucket_read(e, &data, &len, APR_NONBLOCK_READ);
        if (APR_STATUS_IS_EAGAIN(rv)) {
            /* The source has nothing yet: what came before goes on now. */
            apr_brigade_split_ex(bb, e, ctx->rest);
            APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_flush_create(
                                            f->c->bucket_alloc));
            rv = ap_pass_brigade(f->next, bb);
            apr_brigade_cleanup(bb);
            APR_BRIGADE_CONCAT(bb, ctx->rest);
            if (rv != APR_SUCCESS)
                return rv;
            rv = apr_bucket_read(e, &data, &len, APR_BLOCK_READ);
        }
        if (rv != APR_SUCCESS) {
            /* A broken body: not judged (SITEMAP_HEAD_UNREAD); whoever
             * reads next sees the same error. */
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, bb);
        }
        next = APR_BUCKET_NEXT(e);
        if (!ctx->z)
            over = take(ctx, data, len);
        else if ((rv = sm_inflate_feed(ctx->z, data, len)) != APR_SUCCESS
                 && rv != APR_EOF) {
            /* Not gzip after all: judged by its headers alone. */
            ctx->note->state = SITEMAP_HEAD_UNREADABLE;
            ctx->note->fp = NULL;
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, bb);
        }
        else
            over = ctx->over || sm_inflate_done(ctx->z);
    }
    if (over) {
        ctx->note->state = SITEMAP_HEAD_READ;
        if (ctx->note->fp)
            ctx->note->fingerprint = sm_fingerprint_end(ctx->note->fp);
        ap_remove_output_filter(f);
    }
    return ap_pass_brigade(f->next, bb);
}

void sitemap_head_register(apr_pool_t *p)
{
    (void)p;
    /* After the filters that make the body (INCLUDES, SUBSTITUTE:
     * AP_FTYPE_RESOURCE), before those that encode it (DEFLATE:
     * AP_FTYPE_CONTENT_SET), whatever order they are added in. */
    head_filter_handle = ap_register_output_filter(HEAD_FILTER, head_filter,
                                                   NULL,
                                                   AP_FTYPE_CONTENT_SET - 1);
}
