/* mod_sitemap_robots.c: advertise the sitemap in /robots.txt.
 *
 * An output filter (just after the content-setting filters) appends
 * "Sitemap:" lines to whatever produces the site's robots.txt (a file, a
 * script, a proxy), streaming: the body
 * passes through untouched and the scan (src/sm_robots.c) keeps only the
 * line in progress.  When the site has no robots.txt, a last-resort
 * handler answers a permissive one and the same filter adds the lines. */
#include "mod_sitemap.h"

#include "http_core.h"
#include "http_log.h"
#include "http_protocol.h"
#include "http_request.h"

#include <apr_lib.h>
#include <apr_strings.h>

#include "sm_robots.h"

APLOG_USE_MODULE(sitemap);

#define ROBOTS_FILTER "SITEMAP_ROBOTS"
#define ROBOTS_PATH "/robots.txt"

#define PASS_EVERY (64 * 1024)

typedef struct {
    sm_robots *scan;
    apr_bucket_brigade *out;    /* reused for every pass */
    apr_size_t pending;         /* bytes in out */
    apr_off_t seen;             /* body bytes so far */
} robots_ctx;

/* Is this the answer to a client's /robots.txt?  Decided on the request
 * the client made, so robots.txt produced through a rewrite (to a script,
 * or an internal redirect) counts; an ErrorDocument does not. */
SM_HOT static int robots_wanted(request_rec *r,
                                const sitemap_server_conf **out)
{
    const sitemap_server_conf *conf = SITEMAP_CONF(r->server);
    request_rec *orig = r;

    if (conf->enabled != 1 || conf->robots != 1 || !conf->robots_urls
        || r->main)
        return 0;
    for (; orig->prev; orig = orig->prev)
        if (ap_is_HTTP_ERROR(orig->prev->status))
            return 0;
    /* Runs three times a request: "/r" rules out most before strcmp. */
    if (!orig->parsed_uri.path || orig->parsed_uri.path[0] != '/'
        || orig->parsed_uri.path[1] != 'r'
        || strcmp(orig->parsed_uri.path, ROBOTS_PATH))
        return 0;
    *out = conf;
    return 1;
}

/* "abc" -> "abc-sitemapXXXXXXXX": differs from the resource's own ETag,
 * and the same for the 200 and the 304. */
static const char *altered_etag(request_rec *r,
                                const sitemap_server_conf *conf,
                                const char *etag)
{
    apr_size_t len = strlen(etag);

    if (len < 2 || etag[len - 1] != '"')
        return NULL;
    return apr_psprintf(r->pool, "%.*s-%s\"", (int)(len - 1), etag,
                        conf->robots_etag_suffix);
}

/* Conditional requests carry our altered ETags: give the handler back its
 * own; a tag we did not make names a body without our lines, so it becomes
 * one that matches nothing (the condition stays, and fails).  If-Range is
 * left alone: httpd checks it against the response's (altered) ETag. */
static void restore_etags(request_rec *r, const sitemap_server_conf *conf,
                          const char *header)
{
    const char *value = apr_table_get(r->headers_in, header);
    apr_array_header_t *kept;
    char *list, *tok, *state;
    const char *suffix;
    apr_size_t slen;

    if (!value || strcmp(value, "*") == 0)
        return;
    suffix = apr_pstrcat(r->pool, "-", conf->robots_etag_suffix, "\"", NULL);
    slen = strlen(suffix);
    kept = apr_array_make(r->pool, 2, sizeof(char *));
    list = apr_pstrdup(r->pool, value);
    for (tok = apr_strtok(list, ",", &state); tok;
         tok = apr_strtok(NULL, ",", &state)) {
        apr_size_t len;
        while (apr_isspace(*tok))
            tok++;
        len = strlen(tok);
        while (len && apr_isspace(tok[len - 1]))
            len--;
        if (len > slen && strncmp(tok + len - slen, suffix, slen) == 0)
            APR_ARRAY_PUSH(kept, const char *) =
                apr_pstrcat(r->pool, apr_pstrmemdup(r->pool, tok, len - slen),
                            "\"", NULL);
        else
            APR_ARRAY_PUSH(kept, const char *) = "\"sitemap-matches-nothing\"";
    }
    apr_table_setn(r->headers_in, header,
                   apr_array_pstrcat(r->pool, kept, ','));
}

/* Just before the handler runs: the ETags are restored here rather than in
 * a fixup, so the other requests pay for one hook of ours, not two. */
SM_HOT void sitemap_robots_insert_filter(request_rec *r)
{
    const sitemap_server_conf *conf;
    request_rec *orig = r;

    if (!robots_wanted(r, &conf))
        return;
    ap_add_output_filter(ROBOTS_FILTER, NULL, r, r->connection);
    /* Internal redirects share headers_in: restore only once. */
    while (orig->prev)
        orig = orig->prev;
    if (apr_table_get(orig->notes, "sitemap-etags-restored"))
        return;
    apr_table_setn(orig->notes, "sitemap-etags-restored", "1");
    restore_etags(r, conf, "If-None-Match");
    restore_etags(r, conf, "If-Match");
}

/* The site has no robots.txt: answer one that allows everything (the
 * filter adds the Sitemap lines). */
SM_HOT int sitemap_robots_fallback(request_rec *r)
{
    const sitemap_server_conf *conf;

    /* Cheapest first: every request with a file declines here. */
    if (r->finfo.filetype != APR_NOFILE || !robots_wanted(r, &conf)
        || conf->robots_fallback != 1
        || (r->handler && strcmp(r->handler, "default-handler") != 0
            && !ap_strchr_c(r->handler, '/'))
        || r->method_number != M_GET)
        return DECLINED;
    ap_set_content_type(r, "text/plain; charset=utf-8");
    ap_rputs(SM_ROBOTS_PERMISSIVE, r);
    return OK;
}

static apr_status_t robots_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    request_rec *r = f->r;
    robots_ctx *ctx = f->ctx;
    const sitemap_server_conf *conf = SITEMAP_CONF(r->server);

    if (!ctx) {
        const char *etag = apr_table_get(r->headers_out, "ETag");

        if (r->status != HTTP_OK && r->status != HTTP_NOT_MODIFIED) {
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, bb);
        }
        /* Already compressed (by a script, a backend or mod_mime's
         * AddEncoding): the bytes are not text we can append to. */
        if (r->content_encoding
            || apr_table_get(r->headers_out, "Content-Encoding")
            || apr_table_get(r->err_headers_out, "Content-Encoding")) {
            ap_log_rerror(APLOG_MARK, APLOG_DEBUG, 0, r, "robots.txt has a "
                          "Content-Encoding: passed through without Sitemap "
                          "lines");
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, bb);
        }
        /* The ETag is altered for the 304 too, so it matches the 200's. */
        if (etag) {
            const char *altered = altered_etag(r, conf, etag);
            if (altered)
                apr_table_setn(r->headers_out, "ETag", altered);
            else
                apr_table_unset(r->headers_out, "ETag");
        }
        if (r->status != HTTP_OK) {
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, bb);
        }
        f->ctx = ctx = apr_pcalloc(r->pool, sizeof(*ctx));
        ctx->scan = sm_robots_create(r->pool, conf->robots_urls);
        ctx->out = apr_brigade_create(r->pool, f->c->bucket_alloc);
        apr_table_unset(r->headers_out, "Content-Length");
        apr_table_unset(r->headers_out, "Content-MD5");
    }

    /* Look at every byte as it passes; pass on at least every
     * PASS_EVERY bytes, so a big robots.txt is never held whole. */
    while (!APR_BRIGADE_EMPTY(bb)) {
        apr_bucket *b = APR_BRIGADE_FIRST(bb);
        const char *data;
        apr_size_t len;
        apr_status_t rv;

        if (APR_BUCKET_IS_EOS(b)) {
            const char *tail = sm_robots_tail(ctx->scan, r->pool, &len);
            /* A HEAD answered without a body (a script or backend that
             * skips it): adding lines would make a wrong length. */
            if (r->header_only && !ctx->seen)
                len = 0;
            if (len)
                APR_BRIGADE_INSERT_TAIL(ctx->out, apr_bucket_pool_create(
                                        tail, len, r->pool,
                                        f->c->bucket_alloc));
            APR_BUCKET_REMOVE(b);
            APR_BRIGADE_INSERT_TAIL(ctx->out, b);
            ap_remove_output_filter(f);
            return ap_pass_brigade(f->next, ctx->out);
        }
        if (!APR_BUCKET_IS_METADATA(b)) {
            rv = apr_bucket_read(b, &data, &len, APR_BLOCK_READ);
            if (rv != APR_SUCCESS) {
                ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, "cannot read the "
                              "robots.txt body");
                return rv;
            }
            sm_robots_feed(ctx->scan, data, len);
            ctx->pending += len;
            ctx->seen += len;
        }
        APR_BUCKET_REMOVE(b);
        APR_BRIGADE_INSERT_TAIL(ctx->out, b);
        if (ctx->pending >= PASS_EVERY || APR_BUCKET_IS_FLUSH(b)) {
            rv = ap_pass_brigade(f->next, ctx->out);
            apr_brigade_cleanup(ctx->out);
            ctx->pending = 0;
            if (rv != APR_SUCCESS)
                return rv;
        }
    }
    if (!APR_BRIGADE_EMPTY(ctx->out)) {
        apr_status_t rv = ap_pass_brigade(f->next, ctx->out);
        apr_brigade_cleanup(ctx->out);
        ctx->pending = 0;
        return rv;
    }
    return APR_SUCCESS;
}

void sitemap_robots_register(apr_pool_t *p)
{
    (void)p;
    /* After mod_headers' FIXUP_HEADERS_OUT (AP_FTYPE_CONTENT_SET), so a
     * Content-Encoding it sets is seen; mod_deflate, in the same slot, is
     * added later (by type, in the handler) and so runs after us. */
    ap_register_output_filter(ROBOTS_FILTER, robots_filter, NULL,
                              AP_FTYPE_CONTENT_SET + 1);
    ap_hook_insert_filter(sitemap_robots_insert_filter, NULL, NULL,
                          APR_HOOK_MIDDLE);
    ap_hook_handler(sitemap_robots_fallback, NULL, NULL, APR_HOOK_LAST);
}
